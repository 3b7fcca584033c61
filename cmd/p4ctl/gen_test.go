package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gen config writes a configuration the other commands load; compiled for
// the v1model program, one that overflows a table is refused (exit 2)
// naming the table, its need and its limit, and one that fits is planned;
// partitioned among switches, one switch's state is planned with --target.
func TestGenConfig(t *testing.T) {
	dir := t.TempDir()
	small, big := filepath.Join(dir, "small.yaml"), filepath.Join(dir, "big.yaml")
	code, out, errOut := p4ctl(t, "gen", "config", "--sites", "20", "--regions", "12", "--switches", "2", "--file", small, "-o", "json")
	if code != 0 {
		t.Fatalf("gen: exit %d: %s", code, errOut)
	}
	var rep struct {
		File    string `json:"file"`
		Sites   int    `json:"sites"`
		Regions int    `json:"regions"`
		Model   struct {
			Stretch float64 `json:"stretch"`
		} `json:"latency_model"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.File != small || rep.Sites != 20 || rep.Regions != 12 || rep.Model.Stretch <= 0 {
		t.Fatalf("report %q (%v)", out, err)
	}
	if code, out, errOut := p4ctl(t, "plan", "-c", small, "--table", "client_site"); code != 0 || strings.Count(out, "client_site") < 20 {
		t.Fatalf("plan of the small configuration: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, _, errOut := p4ctl(t, "gen", "config", "--sites", "400", "--regions", "32", "--file", big); code != 0 {
		t.Fatalf("gen: %s", errOut)
	}
	code, _, errOut = p4ctl(t, "plan", "-c", big)
	if code != 2 || !strings.Contains(errOut, "sla_feasibility needs") || !strings.Contains(errOut, "the table holds 4096") {
		t.Fatalf("plan of 400 sites × 32 regions: exit %d (want 2: the configuration does not fit): %s", code, errOut)
	}
	// Partitioned among 8 switches, each switch's state fits: plan one.
	part := filepath.Join(dir, "part.yaml")
	if code, out, errOut := p4ctl(t, "gen", "config", "--sites", "400", "--regions", "32", "--switches", "8", "--partition", "--file", part); code != 0 || !strings.Contains(out, "sites partitioned among the switches") {
		t.Fatalf("gen --partition: exit %d: %s%s", code, out, errOut)
	}
	if code, out, errOut := p4ctl(t, "plan", "-c", part, "--target", "edge-0000", "--table", "client_site"); code != 0 || strings.Count(out, "client_site") == 0 || strings.Count(out, "client_site") >= 400 {
		t.Fatalf("plan --target edge-0000: exit %d, %d client_site entries\n%s", code, strings.Count(out, "client_site"), errOut)
	}
	if code, _, errOut := p4ctl(t, "plan", "-c", part, "--target", "edge-9999"); code != 2 || !strings.Contains(errOut, "no such target") {
		t.Errorf("unknown --target: exit %d: %s", code, errOut)
	}
	if code, _, errOut := p4ctl(t, "gen", "config", "--sites", "0"); code != 2 || !strings.Contains(errOut, "--sites 0") {
		t.Errorf("--sites 0: exit %d: %s", code, errOut)
	}
}

// gen config -o json prints the configuration as JSON (it printed YAML),
// which the other commands load as they load the YAML.
func TestGenConfigJSON(t *testing.T) {
	code, out, errOut := p4ctl(t, "gen", "config", "--sites", "5", "--regions", "3", "-o", "json")
	if code != 0 {
		t.Fatalf("gen -o json: exit %d: %s", code, errOut)
	}
	var v struct {
		Regions []struct {
			ID string `json:"id"`
		} `json:"regions"`
		Sites []json.RawMessage `json:"sites"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || len(v.Regions) != 3 || len(v.Sites) != 5 {
		t.Fatalf("not the configuration as JSON (%v):\n%.500s", err, out)
	}
	f := filepath.Join(t.TempDir(), "gen.json")
	if err := os.WriteFile(f, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := p4ctl(t, "plan", "-c", f); code != 0 || !strings.Contains(out, "policy C") {
		t.Fatalf("plan of the JSON configuration: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, _ = p4ctl(t, "gen", "config", "--sites", "5", "--regions", "3", "-o", "yaml")
	if code != 0 || !strings.HasPrefix(out, "# GENERATED") {
		t.Fatalf("gen -o yaml: exit %d\n%.300s", code, out)
	}
}
