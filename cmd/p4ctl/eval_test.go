package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/p4ctl/p4ctl/pkg/regions"
)

func TestEvalCarbonQuick(t *testing.T) {
	dir := t.TempDir()
	code, out, errb := p4ctl(t, "eval", "carbon", "--quick", "--out-dir", dir, "-o", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	var res struct {
		CarbonSource string           `json:"carbon_source"`
		Rows         []map[string]any `json:"rows"`
		Plots        []string         `json:"plots"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if !strings.Contains(res.CarbonSource, "synthetic model (seed 1), not measured data") || len(res.Rows) == 0 || len(res.Plots) != 14 {
		t.Fatalf("source %q, %d rows, plots %v", res.CarbonSource, len(res.Rows), res.Plots)
	}
	if _, err := os.Stat(filepath.Join(dir, "carbon_heatmap.svg")); err != nil {
		t.Error(err)
	}
	// Without a TTY stderr holds the plot files alone, in one line (as for
	// every command that plots).
	if errb != "plots: "+strings.Join(res.Plots, ", ")+"\n" {
		t.Errorf("stderr without a TTY: %q", errb)
	}
}

func TestEvalCarbonErrors(t *testing.T) {
	sites := filepath.Join(t.TempDir(), "sites.yaml")
	if err := os.WriteFile(sites, []byte("sites:\n  - name: x\n    latencies:\n      - {region: nowhere, p95_ms: 3}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args    []string
		code    int
		wantErr string
	}{
		{[]string{"eval", "carbon", "--period", "2022-13", "--no-plots"}, exitUsage, "--period"},
		{[]string{"eval", "carbon", "--period", "2022-01", "--from", "2022-01-01", "--no-plots"}, exitUsage, "exclusive"},
		{[]string{"eval", "carbon", "--metric", "scope3", "--no-plots"}, exitUsage, "--metric"},
		{[]string{"eval", "carbon", "--latency-model", "x", "--no-plots"}, exitUsage, "--latency-model"},
		{[]string{"eval", "carbon", "--w", "2", "--no-plots"}, exitUsage, "w 2"},
		{[]string{"eval", "carbon", "--site", "paris", "--no-plots"}, exitUsage, "only the built-in site"},
		{[]string{"eval", "carbon", "--traces", "/nonexistent-dir", "--no-plots"}, exitUsage, "directory /nonexistent-dir does not exist"},
		{[]string{"eval", "carbon", "--traces", t.TempDir(), "--no-plots"}, exitUsage, "no *.csv files"}, // unusable input: 2 (issue 27 item 9)
		{[]string{"eval", "carbon", "--sites", sites, "--site", "x", "--no-plots"}, exitUsage, sites + ":4: unknown region"},
		{[]string{"eval", "carbon", "extra"}, exitUsage, "unknown command"},
	}
	for _, c := range cases {
		if code, _, errb := p4ctl(t, c.args...); code != c.code || !strings.Contains(errb, c.wantErr) {
			t.Errorf("%v: exit %d stderr %q; want %d and %q", c.args, code, errb, c.code, c.wantErr)
		}
	}
}

func TestEvalCarbonSharedTraces(t *testing.T) {
	dir, ok := regions.FindSharedCarbonData(".")
	if !ok {
		t.Skip("shared carbon data not found (set " + regions.SharedDataEnv + ")")
	}
	code, out, errb := p4ctl(t, "eval", "carbon", "--quick", "--traces", dir, "--period", "2022-01", "--no-plots")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	if !strings.Contains(out, "measured hourly traces 2022 from "+dir+" (normalized CSV; 12 zones") {
		t.Errorf("output does not name the traces:\n%s", out[:400])
	}
}

// A --traces directory that does not exist is named as such, with what to
// do without the shared data set (issue 15 item 7).
func TestEvalCarbonMissingTraces(t *testing.T) {
	code, out, errs := p4ctl(t, "eval", "carbon", "--traces", "/nonexistent", "--no-plots")
	expect(t, "eval carbon --traces /nonexistent", code, exitUsage, out, errs, "directory /nonexistent does not exist", "../shared/data/carbon", "leave out --traces")
}

// TestEvalCarbonLimits: every size flag is bounded (a run's requests, the
// runs, the period's hours: what the memory grows with) and the other
// checks exit 2 naming their flag, before anything is allocated.
func TestEvalCarbonLimits(t *testing.T) {
	cases := []struct {
		args    []string
		code    int
		wantErr string
	}{
		{[]string{"--requests", "2000000000", "--runs", "2"}, exitUsage, "--requests 2000000000: want 1..2000000"},
		{[]string{"--requests", "2000001"}, exitUsage, "--requests 2000001: want 1..2000000"},
		{[]string{"--requests", "0"}, exitUsage, "--requests 0: want 1..2000000"},
		{[]string{"--mixed-requests", "2000000000"}, exitUsage, "--mixed-requests 2000000000: want 1..2000000"},
		{[]string{"--runs", "2000000000"}, exitUsage, "--runs 2000000000: want 2..10000"},
		{[]string{"--runs", "1"}, exitUsage, "--runs 1: want 2..10000"},
		{[]string{"--runs", "10000", "--requests", "1", "--mixed-requests", "1", "--pools", "5"}, exitOK, ""},
		{[]string{"--from", "1000-01-01", "--to", "9000-01-01"}, exitUsage, "--from/--to 1000-01-01T00:00Z/9000-01-01T00:00Z: longer than 87840 hours"},
		{[]string{"--from", "2022-01-01", "--to", "2032-02-01"}, exitUsage, "longer than 87840 hours"},
		{[]string{"--pools", "5,5"}, exitUsage, "--pools: pool size 5 given twice"},
		{[]string{"--latency-sigma", "-1"}, exitUsage, "--latency-sigma -1: want 0 < sigma < 3"},
		{[]string{"--latency-model", "sampled", "--latency-sigma", "0"}, exitUsage, "--latency-sigma 0: want 0 < sigma < 3"},
		{[]string{"--latency-model", "sampled", "--latency-sigma", "3"}, exitUsage, "--latency-sigma 3: want 0 < sigma < 3"},
		{[]string{"--latency-sigma", "0.3"}, exitUsage, "--latency-sigma applies to sampled latencies"},
		{[]string{"--metric", "direct"}, exitUsage, "--metric direct: the synthetic model is of lifecycle (LCA) intensities; give --traces"},
		{[]string{"--metric", "lca"}, exitOK, ""},
		{[]string{"--fill", "x"}, exitUsage, "--fill: fill policy \"x\""},
		{[]string{"--fill", "previous"}, exitUsage, "--fill previous: it fills gaps in --traces"},
	}
	for _, c := range cases {
		args := append([]string{"eval", "carbon", "--quick", "--no-plots", "-o", "json"}, c.args...)
		code, _, errb := p4ctl(t, args...)
		if code != c.code || !strings.Contains(errb, c.wantErr) || c.code == exitUsage && strings.Count(strings.TrimSpace(errb), "\n") != 0 {
			t.Errorf("%v: exit %d stderr %q; want %d and one line with %q", c.args, code, errb, c.code, c.wantErr)
		}
	}
}

// TestEvalCarbonSitesFormat: the --sites example of docs/CONFIG.md and the
// one of the help load and run; a controller configuration, or a site in
// its schema, is refused at file:line saying which format is expected.
func TestEvalCarbonSitesFormat(t *testing.T) {
	doc, err := os.ReadFile("../../docs/CONFIG.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(doc), "<!-- eval-sites-example: cmd/p4ctl/eval_test.go loads this block -->\n```yaml\n")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 {
		t.Fatal("docs/CONFIG.md: the eval carbon --sites example block is missing")
	}
	long := newEvalCarbonCmd(&streams{}).Long
	_, help, ok := strings.Cut(long, "\"eval carbon --sites\"):\n\n")
	help, _, ok2 = strings.Cut(help, "\n\nregion is")
	if !ok || !ok2 {
		t.Fatalf("the help's --sites example is missing:\n%s", long)
	}
	help = strings.ReplaceAll("\n"+help, "\n  ", "\n")
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for name, text := range map[string]string{"doc.yaml": block, "help.yaml": help} {
		path := write(name, text)
		code, out, errb := p4ctl(t, "eval", "carbon", "--quick", "--no-plots", "--sites", path, "--site", "frankfurt-office", "--pools", "5", "-o", "json")
		if code != exitOK || !strings.Contains(out, `"site": "frankfurt-office"`) {
			t.Errorf("%s example: exit %d\n%s\n%.300s", name, code, errb, out)
		}
	}

	cfgSites := write("cfg-sites.yaml", "sites:\n  - name: x\n    id: 1\n    prefixes: [10.1.0.0/16]\n    latency:\n      ap-south-1: {p95_ms: 3}\n")
	code, _, errb := p4ctl(t, "eval", "carbon", "--quick", "--no-plots", "--sites", cfgSites, "--site", "x")
	expect(t, "a configuration's sites: block", code, exitUsage, "", errb, cfgSites+`:3: site key "id" is the controller configuration's sites: schema`,
		"latencies: [{region: ap-south-1, p95_ms: 196, cold_ms: 423}", `docs/CONFIG.md, "eval carbon --sites"`)
	code, _, errb = p4ctl(t, "eval", "carbon", "--quick", "--no-plots", "--sites", "../../examples/mumbai.yaml")
	expect(t, "a whole configuration", code, exitUsage, "", errb, "../../examples/mumbai.yaml:", "this is a controller configuration, not a sites file")
	// Issue 27: a sites file's own errors were blamed on its being a
	// controller configuration.
	for name, text := range map[string]string{
		"bad-prefix.yaml": "sites:\n  - name: x\n    prefixes: [1.2.3.4/40]\n    latencies: [{region: ap-south-1, p95_ms: 50}]\n",
		"two-docs.yaml":   "sites:\n  - name: x\n    prefixes: [10.0.0.0/8]\n    latencies: [{region: ap-south-1, p95_ms: 50}]\n---\nsites: []\n",
	} {
		path := write(name, text)
		code, _, errb = p4ctl(t, "eval", "carbon", "--quick", "--no-plots", "--sites", path, "--site", "x")
		if code != exitUsage || !strings.Contains(errb, path+":") || strings.Contains(errb, "controller configuration") {
			t.Errorf("%s: exit %d, %q: want its own error at file:line, not \"a controller configuration\"", name, code, errb)
		}
	}
}
