package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/p4ctl/p4ctl/pkg/regions"
)

func TestEvalStabilityQuick(t *testing.T) {
	dir := t.TempDir()
	code, out, errb := p4ctl(t, "eval", "stability", "--quick", "--out-dir", dir, "-o", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	var res struct {
		CarbonSource string           `json:"carbon_source"`
		Signal       string           `json:"signal"`
		SignalType   string           `json:"signal_type"`
		Hours        int              `json:"hours"`
		Sites        []string         `json:"sites"`
		Rows         []map[string]any `json:"rows"`
		Sweep        []map[string]any `json:"sweep"`
		Hysteresis   map[string]any   `json:"hysteresis"`
		Acceptance   map[string]any   `json:"acceptance"`
		Plots        []string         `json:"plots"`
		Notes        []string         `json:"notes"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("json: %v\n%.500s", err, out)
	}
	if !strings.Contains(res.CarbonSource, "synthetic model (seed 1), not measured data") || res.Signal != "average (lifecycle)" || res.SignalType != "average" {
		t.Errorf("source %q signal %q %q", res.CarbonSource, res.Signal, res.SignalType)
	}
	if res.Hours != 28*24 || strings.Join(res.Sites, ",") != "mumbai,singapore" || len(res.Rows) != 8 || len(res.Sweep) != 5 || len(res.Plots) != 8 {
		t.Errorf("%d hours, sites %v, %d rows, %d sweep points, plots %v", res.Hours, res.Sites, len(res.Rows), len(res.Sweep), res.Plots)
	}
	if res.Hysteresis["min_gain"] != "10%" || res.Acceptance["met"] == nil {
		t.Errorf("hysteresis %v acceptance %v", res.Hysteresis, res.Acceptance)
	}
	if errb != "plots: "+strings.Join(res.Plots, ", ")+"\n" {
		t.Errorf("stderr without a TTY: %q", errb)
	}
	if _, err := os.Stat(filepath.Join(dir, "stability_pareto.svg")); err != nil {
		t.Error(err)
	}
	// Flags override the evaluated hysteresis; the table output names the
	// source and the signal.
	code, out, errb = p4ctl(t, "eval", "stability", "--quick", "--no-plots", "--min-gain", "25g/kWh", "--min-hold", "6h", "--horizon", "2h")
	if code != exitOK || !strings.Contains(out, "hysteresis evaluated: min_gain 25g/kWh, min_hold 6h, horizon 2h") || !strings.Contains(out, "signal: average (lifecycle)") {
		t.Fatalf("exit %d\n%.900s\n%s", code, out, errb)
	}
}

// TestEvalStabilityConfig: the evaluated hysteresis is the configuration's.
func TestEvalStabilityConfig(t *testing.T) {
	ex, err := os.ReadFile("../../examples/mumbai.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Replace(string(ex), "  # hysteresis:               #", "  hysteresis: {min_gain: 5%}  #", 1)
	path := filepath.Join(t.TempDir(), "h.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errb := p4ctl(t, "eval", "stability", "-c", path, "--quick", "--no-plots")
	if code != exitOK || !strings.Contains(out, "hysteresis evaluated: min_gain 5%, min_hold 3h, horizon 1h") || !strings.Contains(out, "the configuration's policy.hysteresis") {
		t.Fatalf("exit %d\n%.600s\n%s", code, out, errb)
	}
}

func TestEvalStabilityErrors(t *testing.T) {
	cases := []struct {
		args    []string
		code    int
		wantErr string
	}{
		{[]string{"--min-gain", "5"}, exitUsage, "--min-gain: gain \"5\": give a unit"},
		{[]string{"--min-hold", "90m"}, exitUsage, "--min-hold 1h30m0s: want whole hours"},
		{[]string{"--horizon", "100h"}, exitUsage, "horizon 100h out of range"},
		{[]string{"--sweep-gain", "x%"}, exitUsage, "--sweep-gain"},
		{[]string{"--year", "2030"}, exitUsage, "--year 2030: the carbon data covers"},
		{[]string{"--year", "2022", "--from", "2022-01-01"}, exitUsage, "exclusive"},
		{[]string{"--signal", "marginal"}, exitUsage, "the synthetic model is of average (lifecycle) intensities"},
		{[]string{"--signal", "moer"}, exitUsage, "--signal: signal \"moer\""},
		{[]string{"--traces", "/nonexistent-dir"}, exitUsage, "directory /nonexistent-dir does not exist"},
		{[]string{"--requests-per-hour", "0"}, exitUsage, "--requests-per-hour 0"},
		{[]string{"-c", "/nonexistent.yaml"}, exitUsage, "read config"},
		{[]string{"--fill", "x"}, exitUsage, "--fill: fill policy \"x\": want none, previous or linear"},
		{[]string{"--fill", "linear"}, exitUsage, "--fill linear: it fills gaps in --traces"},
		{[]string{"--latency-sigma", "-1"}, exitUsage, "--latency-sigma -1: want 0 < sigma < 3"},
		{[]string{"--sweep-horizon", "0s"}, exitUsage, "--sweep-horizon 0s: hysteresis: horizon 0h out of range 1..72h"},
		{[]string{"--sweep-horizon", "1h,100h"}, exitUsage, "--sweep-horizon 100h0m0s: hysteresis: horizon 100h out of range"},
		{[]string{"--sweep-hold", "200h"}, exitUsage, "--sweep-hold 200h0m0s: hysteresis: min_hold 200h out of range"},
		{[]string{"--sweep-hold", "-3h"}, exitUsage, "--sweep-hold -3h0m0s: want whole hours"},
		{[]string{"--requests-per-hour", "10001"}, exitUsage, "--requests-per-hour 10001: want 1..10000"},
	}
	for _, c := range cases {
		args := append([]string{"eval", "stability", "--quick", "--no-plots"}, c.args...)
		if code, _, errb := p4ctl(t, args...); code != c.code || !strings.Contains(errb, c.wantErr) {
			t.Errorf("%v: exit %d stderr %q; want %d and %q", c.args, code, errb, c.code, c.wantErr)
		}
	}
}

func TestEvalStabilitySharedTraces(t *testing.T) {
	dir, ok := regions.FindSharedCarbonData(".")
	if !ok {
		t.Skip("shared carbon data not found (set " + regions.SharedDataEnv + ")")
	}
	code, out, errb := p4ctl(t, "eval", "stability", "--traces", dir, "--no-plots", "-o", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	var res struct {
		Hours      int `json:"hours"`
		Acceptance struct {
			Met bool `json:"met"`
		} `json:"acceptance"`
		CarbonSource string `json:"carbon_source"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Hours != 8760 || !res.Acceptance.Met || !strings.Contains(res.CarbonSource, "measured hourly traces 2022") {
		t.Errorf("%d hours, acceptance met %v, source %q", res.Hours, res.Acceptance.Met, res.CarbonSource)
	}
}

// TestEvalStabilitySampleBound: the sampled requests (hours × sites ×
// --requests-per-hour, all held in memory) are bounded, naming the flag.
func TestEvalStabilitySampleBound(t *testing.T) {
	path := filepath.Join(t.TempDir(), "40.yaml")
	if code, out, errb := p4ctl(t, "gen", "config", "--sites", "40", "--file", path); code != exitOK {
		t.Fatalf("gen config: exit %d\n%s%s", code, out, errb)
	}
	// 28 days (--quick) × 40 sites × 10000 = 268.8 M > 200 M.
	code, out, errb := p4ctl(t, "eval", "stability", "-c", path, "--quick", "--no-plots", "--requests-per-hour", "10000")
	expect(t, "eval stability 40 sites × 10000/h", code, exitUsage, out, errb,
		"--requests-per-hour 10000: 672 hours × 40 sites × 10000 = 268800000 sampled requests, at most 200000000")
}
