package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPlan(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("regions:\n  - id: mars-1\n    next_hop: {remote: {port: 1, mac: \"02:00:00:00:00:01\", ip: 10.0.0.1}}\nsites: [{name: s, id: 1, prefixes: [10.1.0.0/16], profile: mumbai}]\npolicy: {name: C}\ncarbon: {source: offline}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const ex = "../../examples/mumbai.yaml"
	cases := []struct {
		name    string
		args    []string
		code    int
		wantOut string
		wantErr string
	}{
		{"default replay start", []string{"plan", "--config", ex}, exitOK, "# carbon at 2022-01-10T00:00:00Z", ""},
		{"hour of replay", []string{"plan", "--config", ex, "--hour", "5", "--table", "active_epoch"}, exitOK, "# carbon at 2022-01-10T05:00:00Z", ""},
		{"at, mapped", []string{"plan", "-c", ex, "--at", "2025-01-15T10", "--table", "carbon_rank"}, exitOK, "requested 2025-01-15T10:00:00Z", ""},
		{"policy override", []string{"plan", "-c", ex, "--policy", "c+", "--table", "carbon_rank"}, exitOK, "# policy C+ (alpha 0.8", ""},
		{"epoch", []string{"plan", "-c", ex, "--epoch", "7", "--table", "active_epoch"}, exitOK, "set_active_epoch(epoch=7)", ""},
		{"invalid config", []string{"plan", "--config", bad}, exitUsage, "", bad + ":2: regions[0].id: unknown region \"mars-1\""},
		{"missing config flag", []string{"plan"}, exitUsage, "", "--config is required"},
		{"missing file", []string{"plan", "-c", "/nonexistent.yaml"}, exitUsage, "", "read config"},
		{"both times", []string{"plan", "-c", ex, "--at", "2022-01-01T00", "--hour", "1"}, exitUsage, "", "not both"},
		{"bad time", []string{"plan", "-c", ex, "--at", "noon"}, exitUsage, "", "--at"},
		{"negative hour", []string{"plan", "-c", ex, "--hour", "-5"}, exitUsage, "", `"--hour" flag: want an integer ≥ 0`},
		{"bad table", []string{"plan", "-c", ex, "--table", "nope"}, exitUsage, "", "no such table"},
		{"bad policy", []string{"plan", "-c", ex, "--policy", "Z"}, exitUsage, "", "--policy"},
		{"bad output", []string{"plan", "-c", ex, "-o", "xml"}, exitUsage, "", "unknown output format"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errb := p4ctl(t, c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d (stderr %q)", code, c.code, errb)
			}
			if !strings.Contains(out, c.wantOut) || !strings.Contains(errb, c.wantErr) {
				t.Fatalf("stdout %.400q\nstderr %q", out, errb)
			}
		})
	}
}

func TestPlanJSON(t *testing.T) {
	code, out, errb := p4ctl(t, "plan", "-c", "../../examples/mumbai.yaml", "-o", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	var got struct {
		Meta struct {
			Policy  string `json:"policy"`
			Source  string `json:"source"`
			Ranking []struct {
				Region string `json:"region"`
			} `json:"ranking"`
		} `json:"meta"`
		Entries []struct {
			Table string `json:"table"`
		} `json:"entries"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.Meta.Policy != "C" || !strings.Contains(got.Meta.Source, "synthetic") || len(got.Meta.Ranking) != 12 || len(got.Entries) == 0 {
		t.Fatalf("unexpected plan: %+v", got.Meta)
	}
}

// TestPlanHysteresis: with policy.hysteresis, plan prints what the daemon
// would install at that hour (the ranking replayed from the carbon
// history) and says so; a --policy that does not rank by carbon drops it.
func TestPlanHysteresis(t *testing.T) {
	ex, err := os.ReadFile("../../examples/mumbai.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Replace(string(ex), "  # hysteresis:               #", "  hysteresis:                 #", 1)
	doc = strings.Replace(doc, "  #   min_gain: 10%           #", "    min_gain: 10%             #", 1)
	path := filepath.Join(t.TempDir(), "h.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errb := p4ctl(t, "plan", "-c", path, "--hour", "30", "--table", "carbon_rank")
	if code != exitOK || !strings.Contains(out, "# hysteresis: min_gain 10%, min_hold 3h, horizon 1h") || !strings.Contains(out, "# signal: average (lifecycle)") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errb)
	}
	code, out, _ = p4ctl(t, "plan", "-c", path, "--hour", "30", "--policy", "D", "--table", "carbon_rank")
	if code != exitOK || strings.Contains(out, "# hysteresis") {
		t.Fatalf("--policy D: exit %d\n%s", code, out)
	}
	code, out, _ = p4ctl(t, "plan", "-c", path, "--at", "2025-03-01T10", "-o", "json")
	if code != exitOK || !strings.Contains(out, `"hysteresis": "min_gain 10%, min_hold 3h, horizon 1h"`) || !strings.Contains(out, `"requested": "2025-03-01T10:00:00Z"`) {
		t.Fatalf("json: exit %d\n%.600s", code, out)
	}
}
