package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestSimMicroRunJSONAndPlots(t *testing.T) {
	dir := t.TempDir()
	args := []string{"sim", "micro", "run", "--quick", "--requests", "3000", "--seeds", "2",
		"--policy", "random", "--policy", "jbsq", "-o", "json", "--out-dir", dir}
	code, out, errs := p4ctl(t, args...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var res struct {
		Cells []struct {
			Policy    string `json:"policy"`
			Violation struct {
				N    int     `json:"n"`
				Mean float64 `json:"mean"`
			} `json:"violation_rate"`
		} `json:"cells"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if len(res.Cells) != 2 || res.Cells[0].Policy != "random" || res.Cells[1].Policy != "jbsq:23" || res.Cells[0].Violation.N != 2 {
		t.Fatalf("cells %+v", res.Cells)
	}
	for _, f := range []string{"run_violations.png", "run_violations.svg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("plot %s: %v", f, err)
		}
	}
	if !strings.Contains(errs, "plots:") {
		t.Errorf("stderr %q does not list the plots", errs)
	}
	// Same seed, same output.
	if _, again, _ := p4ctl(t, args...); again != out {
		t.Fatal("same seed gave different output")
	}
}

func TestSimMicroE1Table(t *testing.T) {
	code, out, errs := p4ctl(t, "sim", "micro", "e1", "--quick", "--requests", "2000", "--no-plots")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"E1", "STUDY (REPORTED)", "> 35 %", "random+ideal", "jiq"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestTuneJBSQCommand(t *testing.T) {
	code, out, errs := p4ctl(t, "tune", "jbsq", "--delay", "4.5us", "--service-mean", "5us", "--cores", "128",
		"--load", "0.85", "--slo", "50us", "--target", "0.05", "--quick", "--requests", "3000", "-o", "json", "--no-plots")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var res struct {
		Bound  int  `json:"bound"`
		Met    bool `json:"met"`
		Stable int  `json:"stability_limit"`
		Curve  []struct {
			Bound int `json:"bound"`
		} `json:"curve"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if !res.Met || res.Bound < res.Stable || res.Stable != 20 || len(res.Curve) < 3 {
		t.Fatalf("result %+v", res)
	}
}

func TestSimMicroUsageErrors(t *testing.T) {
	cases := [][]string{
		{"sim", "micro"},
		{"sim", "micro", "nope"},
		{"sim", "micro", "run", "--load", "9"},
		{"sim", "micro", "run", "--policy", "bogus"},
		{"sim", "micro", "run", "--policy", "hash"},
		{"sim", "micro", "run", "--seeds", "-3"},
		{"sim", "micro", "run", "--service", "pareto"},
		{"sim", "micro", "search"},
		{"sim", "micro", "run", "--forward-hops", "-2"},
		{"sim", "micro", "run", "--flows-per-core", "-1"},
		{"sim", "micro", "gateway", "--loads", "0"},
		{"sim", "micro", "gateway", "--dispatcher-cores", "0"},
		{"sim", "micro", "gateway", "--costs", "0s"},
		{"tune", "jbsq", "--cores", "100"},
		{"tune", "jbsq", "--target", "0"},
		{"tune", "jbsq", "--delay", "soon"},
		{"sim", "micro", "e1", "--scenario", "bogus"},
		{"sim", "micro", "run", "--granularity", "rack"},
		{"tune", "jbsq", "--scenario", "bogus"},
		{"sim", "serverless", "--scenario", "bogus"},
		{"sim", "serverless", "ratios", "--hops", "later"},
	}
	for _, args := range cases {
		if code, _, errs := p4ctl(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, code, exitUsage, errs)
		}
	}
	if code, _, errs := p4ctl(t, "sim", "micro", "run", "--load", "9", "--quick"); code != exitUsage || !strings.Contains(errs, "--load 9") {
		t.Errorf("--load 9: exit %d, want the flag named: %s", code, errs)
	}
}

// TestSimMicroScenarioStudy: --scenario study runs the study's structure;
// a flag given explicitly still overrides it, and every experiment and
// tune take the flag.
func TestSimMicroScenarioStudy(t *testing.T) {
	code, out, errs := p4ctl(t, "sim", "micro", "e1", "--scenario", "study", "--quick", "--requests", "3000", "--no-plots")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "per-core RSS queues") || !strings.Contains(out, "1 flow per core") || strings.Contains(out, "bursts") {
		t.Errorf("study scenario line missing:\n%s", out)
	}
	_, out, _ = p4ctl(t, "sim", "micro", "e1", "--scenario", "study", "--granularity", "host", "--quick", "--requests", "3000", "--no-plots")
	if strings.Contains(out, "RSS") || !strings.Contains(out, "flow per core") {
		t.Errorf("--granularity host did not override the study's rss:\n%s", out)
	}
	_, out, _ = p4ctl(t, "sim", "micro", "e1", "--scenario", "study-burst", "--quick", "--requests", "3000", "--no-plots")
	if !strings.Contains(out, "bursts ×1.25") {
		t.Errorf("the exploration has no bursts:\n%s", out)
	}
	_, def, _ := p4ctl(t, "sim", "micro", "e1", "--quick", "--requests", "3000", "--no-plots")
	_, pooled, _ := p4ctl(t, "sim", "micro", "e1", "--scenario", "pooled", "--quick", "--requests", "3000", "--no-plots")
	if def != pooled || strings.Contains(def, "bursts") {
		t.Error("the default scenario is not pooled")
	}
	for _, args := range [][]string{
		{"sim", "micro", "e2"}, {"sim", "micro", "e3"}, {"sim", "micro", "t40b"}, {"sim", "micro", "gateway"},
		{"sim", "micro", "ttl"}, {"sim", "micro", "switch"}, {"sim", "micro", "run"}, {"tune", "jbsq"},
	} {
		args = append(args, "--scenario", "study", "--quick", "--requests", "2000", "--no-plots")
		if code, _, errs := p4ctl(t, args...); code != exitOK {
			t.Errorf("%v: exit %d: %s", args, code, errs)
		}
	}
}

func TestSimMicroE3AxisFlags(t *testing.T) {
	base := []string{"sim", "micro", "e3", "--scenario", "study", "--quick", "--requests", "2000", "--no-plots"}
	code, out, errs := p4ctl(t, append(base, "--axis", "delay", "--slo-rule", "round-trip-hop", "--points", "4")...)
	// The study scenario's own axis: D = 4.5 µs and SLO 50 µs, S = D/x.
	if _, own, _ := p4ctl(t, append(base, "--points", "4")...); !regexp.MustCompile(`(?m)^4\s+4\.5\s+1\.125\s+50\s+random\s`).MatchString(own) {
		t.Errorf("D/S = 4 on the study's axis is not D 4.5 µs, S 1.125 µs, SLO 50 µs:\n%s", own)
	}
	if code != exitOK || !strings.Contains(out, "SLO = 50 µs + 4(D − 4.5 µs)") || !strings.Contains(out, "\n4 ") || strings.Contains(out, "\n0.9 ") {
		t.Errorf("--axis delay --slo-rule round-trip-hop --points 4: exit %d %s\n%s", code, errs, out)
	}
	if !regexp.MustCompile(`(?m)^4\s+20\s+5\s+112\s+random\s`).MatchString(out) {
		t.Errorf("D/S = 4 on the delay axis is not D 20 µs, S 5 µs, SLO 112 µs:\n%s", out)
	}
	// Naming the scenario's own axis keeps its SLO rule; another axis brings its own.
	for axis, title := range map[string]string{"delay": "SLO = 50 µs + 2(D − 4.5 µs)", "service": "SLO 50 µs fixed", "product": "SLO = 50 µs + 2(D − 4.5 µs)"} {
		if code, out, errs := p4ctl(t, append(base, "--axis", axis, "--points", "4")...); code != exitOK || !strings.Contains(out, title) {
			t.Errorf("--axis %s on the study scenario: exit %d %s, want %q in\n%s", axis, code, errs, title, out)
		}
	}
	for _, bad := range [][]string{{"--axis", "diagonal"}, {"--slo-rule", "loose"}, {"--burst-scale", "x"}, {"--points", "0"}} {
		if code, _, errs := p4ctl(t, append(base, bad...)...); code != exitUsage || !strings.Contains(errs, bad[0]) {
			t.Errorf("%v: exit %d: %s", bad, code, errs)
		}
	}
	// Flags of one experiment given to another are refused, not ignored.
	for _, args := range [][]string{
		{"e2", "--points", "4"}, {"t40b", "--costs", "200ns"}, {"e3", "--policy", "random"},
		{"figures", "--points", "4"}, {"e1", "--axis", "delay"},
	} {
		full := append([]string{"sim", "micro"}, append(args, "--quick", "--no-plots")...)
		if code, _, errs := p4ctl(t, full...); code != exitUsage || !strings.Contains(errs, args[1]+" applies to") {
			t.Errorf("%v: exit %d: %s", args, code, errs)
		}
	}
}

// TestSimMicroFigures: the seed-figure table in JSON, each figure with
// the study's value, ours with its CI, the rule and a verdict, and the
// fitted values: none for the study scenario, listed for the exploration.
func TestSimMicroFigures(t *testing.T) {
	type figures struct {
		Fitted []struct {
			Name      string `json:"name"`
			ChosenFor string `json:"chosen_for"`
		} `json:"fitted"`
		Figures []struct {
			Figure, Source, Ours, Verdict, Why, Section string
			RuleText                                    string `json:"rule_text"`
			Value                                       *struct {
				Mean float64 `json:"mean"`
				CI95 float64 `json:"ci95"`
			} `json:"value"`
		} `json:"figures"`
		Count map[string]int `json:"count"`
	}
	code, out, errs := p4ctl(t, "sim", "micro", "figures", "--scenario", "study", "--quick", "--no-plots", "-o", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var res figures
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if res.Fitted == nil || len(res.Fitted) != 0 || len(res.Figures) < 30 {
		t.Fatalf("fitted %v, %d figures", res.Fitted, len(res.Figures))
	}
	n, values := 0, 0
	for _, f := range res.Figures {
		if f.Source == "" || f.Ours == "" || f.Why == "" || f.RuleText == "" || f.Section == "" ||
			!slices.Contains([]string{"reproduced", "not reproduced", "inconclusive"}, f.Verdict) {
			t.Errorf("figure %+v", f)
		}
		if f.Value != nil {
			values++
		}
	}
	for _, c := range res.Count {
		n += c
	}
	if n != len(res.Figures) || values < 25 {
		t.Errorf("count %v for %d figures, %d with a value and CI", res.Count, len(res.Figures), values)
	}
	code, out, errs = p4ctl(t, "sim", "micro", "figures", "--scenario", "study-burst", "--quick", "--no-plots", "-o", "json")
	if code != exitOK {
		t.Fatalf("study-burst: exit %d: %s", code, errs)
	}
	res = figures{}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("json: %v", err)
	}
	if len(res.Fitted) < 3 || res.Fitted[0].ChosenFor == "" || res.Count["fitted (not counted)"] != len(res.Figures) {
		t.Errorf("the exploration's fitted values %+v, counts %v of %d", res.Fitted, res.Count, len(res.Figures))
	}
}

// TestSimMicroNonFinite: NaN and ±Inf are refused, naming the flag, in
// every float flag of sim micro and tune jbsq (a NaN fails no range check:
// --burst-factor NaN used to switch bursts off silently).
func TestSimMicroNonFinite(t *testing.T) {
	for _, args := range [][]string{
		{"sim", "micro", "run", "--policy", "jsq", "--burst-factor", "NaN"},
		{"sim", "micro", "run", "--load", "NaN"},
		{"sim", "micro", "run", "--arrival-cv", "Inf"},
		{"sim", "micro", "run", "--sigma", "NaN"},
		{"sim", "micro", "run", "--bimodal-p", "NaN", "--service", "bimodal"},
		{"sim", "micro", "run", "--bimodal-ratio", "+Inf", "--service", "bimodal"},
		{"sim", "micro", "run", "--burst-on-fraction", "NaN"},
		{"sim", "micro", "run", "--notify-loss", "NaN"},
		{"sim", "micro", "run", "--zipf-alpha", "NaN"},
		{"sim", "micro", "e3", "--points", "1,NaN"},
		{"sim", "micro", "gateway", "--loads", "0.5,Inf"},
		{"tune", "jbsq", "--load", "NaN"},
		{"tune", "jbsq", "--target", "NaN"},
		{"tune", "jbsq", "--burst-factor", "Inf"},
	} {
		flag := ""
		for _, a := range args {
			if strings.HasPrefix(a, "--") {
				flag = a
			}
			if a == "NaN" || strings.Contains(a, "Inf") || strings.Contains(a, "NaN") {
				break
			}
		}
		code, _, errs := p4ctl(t, append(args, "--quick", "--no-plots")...)
		if code != exitUsage || !strings.Contains(errs, flag+" ") || !strings.Contains(errs, "finite") {
			t.Errorf("%v: exit %d, want %d naming %s: %q", args, code, exitUsage, flag, errs)
		}
	}
}

// TestSimMicroRequestsRange: --requests beyond micro.MaxRequests is a usage
// error stating the range (it used to exit 1 saying "must be ≥ 1").
func TestSimMicroRequestsRange(t *testing.T) {
	for _, args := range [][]string{
		{"sim", "micro", "run", "--requests", "2000000000"},
		{"sim", "micro", "run", "--requests", "8388609"},
		{"sim", "micro", "run", "--requests", "-1"},
		{"tune", "jbsq", "--requests", "2000000000"},
	} {
		code, _, errs := p4ctl(t, append(args, "--quick", "--no-plots")...)
		if code != exitUsage || !strings.Contains(errs, "--requests") || !strings.Contains(errs, "[0, 8388608]") || strings.Contains(errs, "≥ 1") {
			t.Errorf("%v: exit %d: %q", args, code, errs)
		}
	}
}

// TestSimMicroPolicyBoundZero: jbsq:0 is documented as unbounded (as the
// switch's bound 0, docs/CONFIG.md), so it runs as jsq = jbsq:inf; the
// error for a bad bound and the help say so.
func TestSimMicroPolicyBoundZero(t *testing.T) {
	_, inf, _ := p4ctl(t, "sim", "micro", "run", "--policy", "jbsq:inf", "--quick", "--requests", "2000", "--no-plots")
	code, zero, errs := p4ctl(t, "sim", "micro", "run", "--policy", "jbsq:0", "--quick", "--requests", "2000", "--no-plots")
	if code != exitOK || zero != inf || !strings.Contains(zero, "jsq") {
		t.Errorf("jbsq:0: exit %d %s\n%s\nwant as jbsq:inf:\n%s", code, errs, zero, inf)
	}
	code, _, errs = p4ctl(t, "sim", "micro", "run", "--policy", "jbsq:-1", "--quick", "--no-plots")
	if code != exitUsage || !strings.Contains(errs, "--policy") || !strings.Contains(errs, "or 0, unbounded") {
		t.Errorf("jbsq:-1: exit %d: %q", code, errs)
	}
	if _, help, _ := p4ctl(t, "sim", "micro", "--help"); !strings.Contains(help, "inf or 0 = unbounded") {
		t.Errorf("help does not document jbsq:0:\n%s", help)
	}
}

// TestTuneJBSQRanges: loads ρ ≥ 1 (no bound carries them; tune used to
// report a "best" n below the stability limit with negative headroom), a
// stability limit beyond the switch's 16-bit bound, and the switch-only
// flags given with --algorithm ideal are usage errors naming the flag.
func TestTuneJBSQRanges(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--load", "3"}, "--load 3 must be in (0, 1)"},
		{[]string{"--load", "1"}, "--load 1 must be in (0, 1)"},
		{[]string{"--load", "0"}, "--load 0 must be in (0, 1)"},
		{[]string{"--load", "-0.5"}, "--load -0.5"},
		{[]string{"--delay", "1s", "--service-mean", "1ns"}, "--delay"},
		{[]string{"--cores", "0"}, "--cores 0"},
		{[]string{"--cores-per-host", "0"}, "--cores"},
		{[]string{"--target", "1"}, "--target 1"},
		{[]string{"--max-holds", "256"}, "--max-holds 256"},
		{[]string{"--on-full", "drop"}, "--on-full"},
		{[]string{"--algorithm", "best"}, "--algorithm"},
		{[]string{"--seeds", "2000"}, "--seeds"},
		{[]string{"--algorithm", "ideal", "--max-holds", "3"}, "--max-holds applies to --algorithm switch only, not ideal"},
		{[]string{"--algorithm", "ideal", "--on-full", "nack"}, "--on-full applies to --algorithm switch only, not ideal"},
	} {
		args := append([]string{"tune", "jbsq", "--quick", "--no-plots"}, c.args...)
		if code, out, errs := p4ctl(t, args...); code != exitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, want %d with %q: %q\n%s", c.args, code, exitUsage, c.want, errs, out)
		}
	}
	// The switch takes both; ideal runs without them.
	for _, args := range [][]string{
		{"--max-holds", "3", "--on-full", "nack"},
		{"--algorithm", "ideal"},
	} {
		args = append([]string{"tune", "jbsq", "--quick", "--requests", "2000", "--no-plots"}, args...)
		if code, _, errs := p4ctl(t, args...); code != exitOK {
			t.Errorf("%v: exit %d: %s", args, code, errs)
		}
	}
}
