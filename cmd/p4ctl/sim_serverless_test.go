package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
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
	for _, want := range []string{"exp:1000", "late", "pathfinder", "P99 RESPONSE VS LATE", "PathFinder paper (reported", "100 ms, 100 ms"} {
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
	// Its text says it simulated nothing, not the seeds it cannot take.
	_, out, _ = p4ctl(t, "sim", "serverless", "bound", "--dist", "azure")
	if first, _, _ := strings.Cut(out, "\n"); !strings.Contains(first, "no simulation") || strings.Contains(first, "seeds") {
		t.Errorf("bound's first line: %q", first)
	}
}

// A deprecated flag spelling still works and warns on stderr only, so
// -o json stays parseable.
func TestSimServerlessDeprecatedFlags(t *testing.T) {
	// bound simulates nothing and refuses --request-timeout: a tiny sweep.
	code, out, errb := p4ctl(t, "sim", "serverless", "--dist", "exp:100", "--lambda", "1", "--policy", "late", "--seeds", "1",
		"--requests", "100", "--no-plots", "--timeout", "2s", "-o", "json")
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

// TestSimServerlessLimits: sizes that would exhaust memory (a pool of
// hundreds of millions of pods sized for an enormous mean or time scale,
// too many pods given, too many stages per run, too many seeds) and
// non-finite numbers are usage errors naming the flag, refused before
// anything is simulated; an overloaded pool within the limits runs.
func TestSimServerlessLimits(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--dist", "exp:1e10", "--pods", "0"}, "--dist exp:1e10"},
		{[]string{"--dist", "exp:1e9", "--pods", "0"}, "--dist exp:1e9"},
		{[]string{"--dist", "exp:1e13", "--pods", "8", "--container-concurrency", "1"}, "--dist"},
		{[]string{"--pods", "100000000"}, "--pods 100000000"},
		{[]string{"--pods", "2000", "--container-concurrency", "1000"}, "--pods 2000 × --container-concurrency 1000"},
		{[]string{"--container-concurrency", "70000", "--pods", "4"}, "--container-concurrency 70000"},
		{[]string{"--time-scale", "1e9"}, "--time-scale"},
		{[]string{"--time-scale", "0"}, "--time-scale 0"},                // issue 27: ran as 1
		{[]string{"--time-scale", "1e5", "--pods", "0"}, "--dist azure"}, // in range, but sizes 45 M pods
		{[]string{"--scenario", "knative", "--dist", "exp:1e9"}, "--dist exp:1e9"},
		{[]string{"--requests", "9000000"}, "--requests 9000000"},
		{[]string{"--requests", "5000000", "--chain", "1-3"}, "--requests 5000000"},
		{[]string{"figures", "--scenario", "knative"}, "figures judges"},
		{[]string{"ratios", "--scenario", "pathfinder"}, "knative"},
		{[]string{"--requests", "200000", "--chain", "64"}, "--requests 200000"},
		{[]string{"--seeds", "5000"}, "--seeds 5000"},
		{[]string{"ratios", "--time-scales", "1,1e9"}, "--time-scales"},
		{[]string{"ratios", "--time-scales", "0"}, "--time-scales"},
	} {
		args := append([]string{"sim", "serverless", "--quick", "--no-plots"}, c.args...)
		if c.args[0] == "ratios" || c.args[0] == "figures" {
			args = append([]string{"sim", "serverless", c.args[0], "--quick"}, c.args[1:]...)
		}
		code, _, errb := p4ctl(t, args...)
		if code != exitUsage || !strings.Contains(errb, c.want) || strings.Count(strings.TrimSpace(errb), "\n") != 0 {
			t.Errorf("%v: exit %d, want %d and one line naming %q: %q", c.args, code, exitUsage, c.want, errb)
		}
	}
	// Overloaded (ρ = 5·10^6) but bounded: runs, in little memory.
	code, out, errb := p4ctl(t, "sim", "serverless", "--scenario", "knative", "--dist", "exp:1e9", "--pods", "8", "--container-concurrency", "1",
		"--lambda", "20", "--policy", "late,pathfinder", "--seeds", "1", "--requests", "2000", "--no-plots")
	if code != exitOK || !strings.Contains(out, "exp:1e9") {
		t.Errorf("overloaded pool within the limits: exit %d: %s\n%s", code, errb, out)
	}
}

// TestSimServerlessExperimentFlags: a flag only some experiments read,
// given to another, is refused (exit 2) rather than ignored.
func TestSimServerlessExperimentFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"--hops", "x"}, "--hops"},
		{[]string{"--time-scales", "x"}, "--time-scales"},
		{[]string{"notify", "--hops", "5ms"}, "--hops"},
		{[]string{"bound", "--time-scales", "0.1"}, "--time-scales"},
		{[]string{"ratios", "--time-scale", "2"}, "--time-scale"},
		{[]string{"ratios", "--notify-delay", "1s"}, "--notify-delay"},
		{[]string{"ratios", "--forward-delay", "1s"}, "--forward-delay"},
		{[]string{"ratios", "--out-dir", "x"}, "--out-dir"},
		{[]string{"bound", "--seeds", "3"}, "--seeds"},
		{[]string{"bound", "--requests", "1000"}, "--requests"},
		{[]string{"bound", "--quick"}, "--quick"},
		{[]string{"bound", "--policy", "late"}, "--policy"},
		{[]string{"bound", "--timeout", "2s"}, "--request-timeout"}, // a deprecated spelling, named by its current one
	} {
		args := append([]string{"sim", "serverless"}, c.args...)
		if code, _, errb := p4ctl(t, args...); code != exitUsage || !strings.Contains(errb, c.flag+" applies to") {
			t.Errorf("%v: exit %d, want %d naming %s: %q", c.args, code, exitUsage, c.flag, errb)
		}
	}
}

// TestSimServerlessNonFinite: NaN and ±Inf are refused in every float
// flag and in the number lists.
func TestSimServerlessNonFinite(t *testing.T) {
	for _, c := range [][]string{
		{"--time-scale", "NaN"}, {"--warmup", "NaN"}, {"--estimate-noise", "Inf"}, {"--rho-max", "NaN"},
		{"--delta", "-Inf"}, {"--lambda", "NaN"}, {"--lambda", "10,+Inf"}, {"ratios", "--time-scales", "NaN"},
	} {
		args := append([]string{"sim", "serverless", "--no-plots"}, c...)
		flag := c[0]
		if c[0] == "ratios" {
			args, flag = append([]string{"sim", "serverless"}, c...), c[1]
		}
		if code, _, errb := p4ctl(t, args...); code != exitUsage || !strings.Contains(errb, flag) || !strings.Contains(errb, "finite") {
			t.Errorf("%v: exit %d, want %d naming %s: %q", c, code, exitUsage, flag, errb)
		}
	}
}

// TestSimServerlessFigures: PathFinder's headline claims in JSON, each with
// its section, the paper's value, ours, the rule and a verdict, nothing
// fitted, the headline on end-to-end latency; --markdown writes the table.
func TestSimServerlessFigures(t *testing.T) {
	md := filepath.Join(t.TempDir(), "figures.md")
	code, out, errb := p4ctl(t, "sim", "serverless", "figures", "--quick", "--seeds", "2", "--requests", "1500", "-o", "json", "--markdown", md)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	var res struct {
		Fitted  []string `json:"fitted"`
		Figures []struct {
			Figure, Section, Source, Ours, Verdict, Why string
			RuleText                                    string `json:"rule_text"`
			Cells                                       []struct {
				Figure, Verdict string
				Value           *struct {
					Mean float64 `json:"mean"`
					CI95 float64 `json:"ci95"`
				} `json:"value"`
			} `json:"cells"`
		} `json:"figures"`
		Runs []struct {
			Config struct {
				Pods      int     `json:"pods"`
				Slots     int     `json:"container_concurrency"`
				Benchmark string  `json:"benchmark"`
				ChainMax  int     `json:"chain_max"`
				MaxWait   float64 `json:"max_wait_ms"`
			} `json:"config"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if res.Fitted == nil || len(res.Fitted) != 0 || len(res.Figures) < 10 || len(res.Runs) != 2 {
		t.Fatalf("fitted %v, %d figures, %d runs", res.Fitted, len(res.Figures), len(res.Runs))
	}
	if c := res.Runs[0].Config; c.Pods != 8 || c.Slots != 1 || c.Benchmark != "alu" || c.ChainMax != 1 || c.MaxWait != 100 {
		t.Errorf("ALU run %+v: want 8 one-core pods, single calls, waits capped at 100 ms", c)
	}
	if res.Runs[1].Config.Benchmark != "chain" {
		t.Errorf("second run %+v: want the function chain", res.Runs[1].Config)
	}
	for _, f := range res.Figures {
		if f.Section == "" || f.Source == "" || f.Ours == "" || f.RuleText == "" || f.Why == "" ||
			!slices.Contains([]string{"reproduced", "not reproduced", "inconclusive"}, f.Verdict) {
			t.Errorf("figure %+v", f)
		}
	}
	if !strings.Contains(res.Figures[0].Figure, "P99 latency") {
		t.Errorf("the headline %q is not the P99 latency", res.Figures[0].Figure)
	}
	// The headline's cells: every distribution × λ with our mean, CI and verdict.
	if cells := res.Figures[0].Cells; len(cells) != 15 || cells[0].Value == nil || !(cells[0].Value.Mean > 0) || cells[0].Verdict == "" {
		t.Errorf("headline cells %+v", cells)
	}
	if b, err := os.ReadFile(md); err != nil || !strings.Contains(string(b), "| figure | PathFinder § |") {
		t.Errorf("markdown (%v):\n%s", err, b)
	}
}
