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
		{[]string{"eval", "carbon", "--traces", t.TempDir(), "--no-plots"}, exitError, "no *.csv files"},
		{[]string{"eval", "carbon", "--sites", sites, "--site", "x", "--no-plots"}, exitError, sites + ":4: unknown region"},
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
