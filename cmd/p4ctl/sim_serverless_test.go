package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSimServerlessQuickJSON(t *testing.T) {
	dir := t.TempDir()
	code, out, errb := p4ctl(t, "sim", "serverless", "--quick", "--dist", "zipf,azure", "--lambda", "20",
		"-o", "json", "--out-dir", dir)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	var res struct {
		Config struct {
			Seeds    int `json:"seeds"`
			Requests int `json:"requests"`
		} `json:"config"`
		Scenarios []struct {
			Policy  string `json:"policy"`
			Metrics struct {
				P99 struct {
					N    int     `json:"n"`
					Mean float64 `json:"mean"`
				} `json:"p99_response_ms"`
			} `json:"metrics"`
		} `json:"scenarios"`
		Ratios []json.RawMessage `json:"ratios"`
		Paper  []json.RawMessage `json:"paper"`
		Plots  []string          `json:"plots"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if res.Config.Seeds != 3 || res.Config.Requests != 4000 || len(res.Scenarios) != 8 || len(res.Ratios) != 12 || len(res.Paper) != 2 {
		t.Fatalf("unexpected result shape: %+v", res.Config)
	}
	for _, s := range res.Scenarios {
		if s.Metrics.P99.N != 3 || !(s.Metrics.P99.Mean > 0) {
			t.Errorf("%s: %+v", s.Policy, s.Metrics.P99)
		}
	}
	if len(res.Plots) != 16 { // 2 bar plots + 3 per distribution, PNG and SVG
		t.Fatalf("plots %v", res.Plots)
	}
	for _, f := range res.Plots {
		if _, err := os.Stat(f); err != nil || filepath.Dir(f) != dir {
			t.Errorf("plot %s: %v", f, err)
		}
	}
}

func TestSimServerlessSingleScenarioTable(t *testing.T) {
	code, out, errb := p4ctl(t, "sim", "serverless", "--dist", "exp:1000", "--lambda", "5", "--policy", "late,pathfinder",
		"--seeds", "2", "--requests", "2000", "--pods", "8", "--chain", "2", "--wait-bound", "500ms", "--no-plots")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	for _, want := range []string{"exp:1000", "late", "pathfinder", "P99 RESPONSE VS LATE", "PathFinder paper (reported", "500 ms, 500 ms"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if len(errb) != 0 {
		t.Errorf("stderr not empty (no TTY, so no progress bar): %q", errb)
	}
}

func TestSimServerlessBound(t *testing.T) {
	code, out, errb := p4ctl(t, "sim", "serverless", "bound", "--dist", "azure", "--lambda", "20", "-o", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	if !strings.Contains(out, `"long_max_holds": 21`) || strings.Contains(out, `"scenarios": [`) {
		t.Fatalf("bound output:\n%s", out)
	}
}

// A deprecated flag spelling still works and warns on stderr only, so
// -o json stays parseable.
func TestSimServerlessDeprecatedFlags(t *testing.T) {
	code, out, errb := p4ctl(t, "sim", "serverless", "bound", "--dist", "azure", "--lambda", "20", "--timeout", "2s", "-o", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	var res struct {
		Config struct {
			TimeoutMS float64 `json:"timeout_ms"`
		} `json:"config"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Config.TimeoutMS != 2000 {
		t.Fatalf("timeout_ms %v (%v)\n%s", res.Config.TimeoutMS, err, out)
	}
	if !strings.Contains(errb, "--timeout is deprecated, use --request-timeout") {
		t.Fatalf("stderr %q", errb)
	}
}

func TestSimServerlessUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"sim", "serverless", "nope"},
		{"sim", "serverless", "--dist", "pareto"},
		{"sim", "serverless", "--lambda", "x"},
		{"sim", "serverless", "--lambda", "-3"},
		{"sim", "serverless", "--policy", "fastest"},
		{"sim", "serverless", "--chain", "a-b"},
		{"sim", "serverless", "--chain", "3-1"},
		{"sim", "serverless", "--wait-bound", "soon"},
		{"sim", "serverless", "--notify-delay", "x"},
		{"sim", "serverless", "--seeds", "0"},
		{"sim", "serverless", "--parallel", "-1"},
		{"sim", "serverless", "--workers", "-1"}, // deprecated spelling
		{"sim", "serverless", "-o", "xml"},
		{"sim", "serverless", "sweep", "extra"},
	} {
		if code, _, errb := p4ctl(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d (stderr %q)", args, code, exitUsage, errb)
		}
	}
}

func TestSimServerlessKnative(t *testing.T) {
	code, out, errs := p4ctl(t, "sim", "serverless", "--scenario", "knative", "--quick", "--dist", "azure", "--lambda", "20", "--requests", "1500", "--no-plots")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, `Setting "knative"`) || !strings.Contains(out, "16×") {
		t.Errorf("knative setting missing:\n%s", out)
	}
	code, out, errs = p4ctl(t, "sim", "serverless", "ratios", "--quick", "--dist", "zipf", "--lambda", "20", "--requests", "1500", "--hops", "5ms", "--time-scales", "0.1")
	if code != exitOK || !strings.Contains(out, "P99 RESPONSE VS LATE") {
		t.Fatalf("exit %d: %s\n%s", code, errs, out)
	}
}
