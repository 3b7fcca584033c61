package micro

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/p4ctl/p4ctl/internal/testing/figcheck"
)

// tiny keeps experiment tests fast: quick grids, few requests.
func tiny() Options { return Options{Quick: true, Requests: 4000} }

// checkPlots writes p's plots and checks that every name was written as
// PNG and SVG, each with a short title and the scenario c and the seeds of
// o in its caption (issue 27 item 19: a title ran to three lines of
// scenario; provenance goes to figure.Caption, whole in the SVG's <desc>).
func checkPlots(t *testing.T, p Plotter, c Config, o Options, names ...string) {
	t.Helper()
	dir := t.TempDir()
	files, err := p.Plots(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2*len(names) {
		t.Fatalf("plots %v, want %d files", files, 2*len(names))
	}
	for _, n := range names {
		for _, ext := range []string{".png", ".svg"} {
			st, err := os.Stat(filepath.Join(dir, n+ext))
			if err != nil || st.Size() < 1000 {
				t.Fatalf("plot %s%s: %v (%v bytes)", n, ext, err, st)
			}
		}
		svg, err := os.ReadFile(filepath.Join(dir, n+".svg"))
		if err != nil {
			t.Fatal(err)
		}
		if pr := figcheck.SVGProblem(svg, "scenario: "+scenarioLine(c), seedsLine(o)); pr != "" {
			t.Errorf("%s.svg: %s", n, pr)
		}
	}
}

func TestE1(t *testing.T) {
	ctx := context.Background()
	a, err := E1(ctx, Scenario(), nil, tiny())
	if err != nil {
		t.Fatal(err)
	}
	one := tiny()
	one.Parallel = 1
	b, err := E1(ctx, Scenario(), nil, one)
	if err != nil {
		t.Fatal(err)
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if !bytes.Equal(ja, jb) {
		t.Fatal("E1 differs between runs or with the number of workers")
	}
	if len(a.Cells) != len(E1Policies()) || a.Options.Seeds != 3 {
		t.Fatalf("%d cells, %d seeds", len(a.Cells), a.Options.Seeds)
	}
	var buf bytes.Buffer
	if err := a.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"STUDY (REPORTED)", StudyE1Random, StudyE1Late, "jbsq:23"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("E1 table lacks %q:\n%s", want, buf.String())
		}
	}
	checkPlots(t, a, a.Scenario, a.Options, "e1_violations")
}

func TestE2PoolingAbsorbsImbalance(t *testing.T) {
	r, err := E2(context.Background(), Scenario(), tiny())
	if err != nil {
		t.Fatal(err)
	}
	delta := map[int]float64{}
	for _, x := range r.Rows {
		if x.Ingress == "random" {
			delta[x.CoresPerHost] = x.Delta.Mean
		}
		if x.Ideal.Violation.Mean > x.None.Violation.Mean {
			t.Errorf("m=%d %s: ideal movement worse than none", x.CoresPerHost, x.Ingress)
		}
	}
	if !(delta[1] > 0.1 && delta[16] < delta[1]/10) {
		t.Fatalf("random Δ by m: %v", delta)
	}
	checkPlots(t, r, r.Scenario, r.Options, "e2_delta")
}

func TestE3BoundMustGrowWithDelay(t *testing.T) {
	r, err := E3(context.Background(), Scenario(), tiny())
	if err != nil {
		t.Fatal(err)
	}
	at := func(x float64, label string) E3Point {
		for _, p := range r.Points {
			if p.DelayOverService == x && p.Label == label {
				return p
			}
		}
		t.Fatalf("no point %g %s", x, label)
		return E3Point{}
	}
	fixed, little := at(4, "jbsq fixed n"), at(4, "jbsq Little n")
	if !(fixed.Cell.Violation.Mean > 0.5 && little.Cell.Violation.Mean < 0.05) {
		t.Fatalf("D/S=4: fixed n %s %.3f, Little n %s %.3f", fixed.Cell.Policy, fixed.Cell.Violation.Mean, little.Cell.Policy, little.Cell.Violation.Mean)
	}
	if tuned := at(4, "jbsq tuned n"); tuned.Cell.Bound < StabilityBound(8, 0.85, 20, 5) {
		t.Fatalf("tuned bound %d below the stability limit", tuned.Cell.Bound)
	}
	checkPlots(t, r, r.Scenario, r.Options, "e3_delay")
}

func TestT40bCreditsBeatStaticHash(t *testing.T) {
	r, err := T40b(context.Background(), Scenario(), Options{Quick: true, Requests: 20000})
	if err != nil {
		t.Fatal(err)
	}
	v := map[string]Cell{}
	for _, c := range r.Cells {
		v[t40bName(c.Policy)] = c
	}
	hash, credits, pulled := v["static hash"], v["request-level credits, one per completion"], v["request-level credits, one per idle core (a reading chosen after the study's 0.351 msgs/RPC)"]
	if !(credits.Violation.Mean < hash.Violation.Mean) || hash.MessagesPerRPC.Mean != 0 || credits.MessagesPerRPC.Mean != 1 {
		t.Fatalf("hash %+v\ncredits %+v", hash.Violation, credits.Violation)
	}
	// Idle-core credits are sent only by a core that frees with nothing
	// queued: fewer than one per RPC at ρ = 0.85, and they beat the hash too.
	if m := pulled.MessagesPerRPC.Mean; !(m > 0 && m < 1) || !(pulled.Violation.Mean < hash.Violation.Mean) {
		t.Fatalf("idle-core credits %+v at %.3f msgs/RPC, hash %+v", pulled.Violation, m, hash.Violation)
	}
	checkPlots(t, r, r.Scenario, r.Options, "t40b_violations")
}

func TestGatewayCliff(t *testing.T) {
	r, err := GatewaySweep(context.Background(), Scenario(), []float64{200}, []int{1, 4}, []float64{0.05, 0.3, 0.6}, tiny())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range r.Cliffs {
		want := float64(c.Cores) / (2 * 0.2 * 128 / 5)
		if d := c.Analytic - want; d > 1e-9 || d < -1e-9 {
			t.Errorf("analytic %v want %v", c.Analytic, want)
		}
		// The measured cliff is the first grid load above the analytic one
		// (1 core: 0.098 → 0.3; 4 cores: 0.39 → 0.6).
		want = 0.3
		if c.Cores == 4 {
			want = 0.6
		}
		if c.Measured != want {
			t.Errorf("%d cores: measured cliff %v, want %v (analytic %.3f)", c.Cores, c.Measured, want, c.Analytic)
		}
	}
	checkPlots(t, r, r.Scenario, r.Options, "gateway_saturation")
}

func TestTTLAblationRuns(t *testing.T) {
	r, err := TTLAblation(context.Background(), Scenario(), tiny())
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Points) != 2*(1+2*2) {
		t.Fatalf("%d points", len(r.Points))
	}
	checkPlots(t, r, r.Scenario, r.Options, "ttl_ablation")
}

func TestTuneJBSQ(t *testing.T) {
	sc := Scenario()
	r, err := TuneJBSQ(context.Background(), TuneConfig{Scenario: sc, Target: 0.05, Options: Options{Quick: true, Requests: 5000}})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Met || r.Bound < r.Stable || r.Stable != StabilityBound(8, 0.85, 4.5, 5) || r.Little != 23 {
		t.Fatalf("bound %d met %v stable %d little %d", r.Bound, r.Met, r.Stable, r.Little)
	}
	for _, p := range r.Curve {
		if !p.Unstable && p.Bound < r.Bound && p.Meets {
			t.Fatalf("n=%d meets the target below the chosen %d", p.Bound, r.Bound)
		}
	}
	checkPlots(t, r, r.Scenario, r.Options, "tune_jbsq")
	// An unreachable target is reported, not hidden.
	r, err = TuneJBSQ(context.Background(), TuneConfig{Scenario: sc, Target: 1e-9, Options: Options{Quick: true, Requests: 2000}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Met || r.Bound < r.Stable {
		t.Fatalf("impossible target: met %v bound %d", r.Met, r.Bound)
	}
	if _, err := TuneJBSQ(context.Background(), TuneConfig{Scenario: sc, Target: 2}); err == nil {
		t.Fatal("target 2 accepted")
	}
}

// TestTuneJBSQRefusesUntunable: at ρ ≥ 1 no bound carries the load, and a
// stability limit above 65535 is beyond the switch's bound; both are
// errors, not a "best" bound with negative headroom.
func TestTuneJBSQRefusesUntunable(t *testing.T) {
	for name, mut := range map[string]func(*Config){
		"load 3":   func(c *Config) { c.Load = 3 },
		"load 1":   func(c *Config) { c.Load = 1 },
		"stable>n": func(c *Config) { c.Delay, c.Service.Mean = 1e6, 1e-3 },
	} {
		sc := Scenario()
		mut(&sc)
		if err := TuneLimits(sc); err == nil {
			t.Errorf("%s: TuneLimits accepted it", name)
		}
		if r, err := TuneJBSQ(context.Background(), TuneConfig{Scenario: sc, Options: Options{Quick: true, Requests: 1000}}); err == nil {
			t.Errorf("%s: tuned to %d (headroom %.2f)", name, r.Bound, r.Headroom)
		}
	}
	if err := TuneLimits(Scenario()); err != nil {
		t.Fatal(err)
	}
}

// TestRequestLimit: a run's requests are bounded by MaxRequests (it may
// hold all of them in memory), with a message saying the range; and the
// concurrency of runMany shrinks to fit MemoryBudget.
func TestRequestLimit(t *testing.T) {
	_, err := RunSet(context.Background(), Scenario(), []Policy{MustPolicy("jsq")}, Options{Seeds: 1, Requests: 2000000000})
	if err == nil || !strings.Contains(err.Error(), "[1, 8388608]") {
		t.Fatalf("2e9 requests: %v", err)
	}
	c := Scenario()
	c.Requests, c.Warmup = MaxRequests+1, 0
	if err := c.Validate(); err == nil || strings.Contains(err.Error(), "≥ 1 and") {
		t.Fatalf("Config.Validate with %d requests: %v", c.Requests, err)
	}
	small, big := Scenario(), Scenario()
	small.Requests, small.Warmup = 1000, 100
	big.Requests, big.Warmup = MaxRequests, MaxRequests/10
	if w := memoryWorkers([]Config{small, small}, 8); w != 8 {
		t.Errorf("small runs: %d workers, want 8", w)
	}
	if w := memoryWorkers([]Config{small, big}, 8); w != 1 {
		t.Errorf("runs of %d requests: %d workers, want 1", MaxRequests, w)
	}
}

func TestRunSetAndBadOptions(t *testing.T) {
	r, err := RunSet(context.Background(), Scenario(), []Policy{MustPolicy("random"), MustPolicy("jiq")}, tiny())
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Cells) != 2 || r.Cells[1].Policy != "jiq" {
		t.Fatalf("%+v", r.Cells)
	}
	checkPlots(t, r, r.Scenario, r.Options, "run_violations")
	if _, err := RunSet(context.Background(), Scenario(), []Policy{MustPolicy("hash")}, tiny()); err == nil {
		t.Fatal("hash without connections accepted")
	}
	if _, err := E1(context.Background(), Scenario(), nil, Options{Seeds: -1}); err == nil {
		t.Fatal("negative seeds accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := E1(ctx, Scenario(), nil, tiny()); err == nil {
		t.Fatal("cancelled experiment returned no error")
	}
}

func TestParsePolicy(t *testing.T) {
	cases := []struct {
		in, canon string
	}{
		{"random", "random"}, {"P2C", "p2c"}, {"jsw+fwd", "jsw+fwd"}, {"random+forward", "random+fwd"},
		{"p2c+ideal", "p2c+ideal"}, {"hash", "hash"}, {"migrate", "migrate"},
		{"jbsq", "jbsq"}, {"jbsq:auto", "jbsq"}, {"jbsq:16", "jbsq:16"}, {"jbsq:inf", "jsq"},
		{"jbsq:0/random", "jbsq:inf/random"}, {"jbsq:0", "jsq"}, {"switch:0", "switch:inf"}, // 0 = unbounded, as the switch's bound {"jbsq:8/p2c", "jbsq:8/p2c"}, {"jsq", "jsq"}, {"jiq", "jiq"},
		{"switch", "switch"}, {"switch:22", "switch:22"}, {"switch:inf", "switch:inf"}, {"switch/random", "switch/random"},
		{"switch-jiq", "switch:1"}, {"switch:auto/least", "switch"},
	}
	for _, c := range cases {
		p, err := ParsePolicy(c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if p.String() != c.canon {
			t.Errorf("%s → %s, want %s", c.in, p, c.canon)
		}
		q, err := ParsePolicy(p.String())
		if err != nil || !reflect.DeepEqual(p, q) {
			t.Errorf("%s does not round-trip: %+v vs %+v (%v)", c.in, p, q, err)
		}
	}
	for _, bad := range []string{"", "least", "rand", "random+teleport", "jbsq:0x", "jbsq:70000", "jbsq/best", "jbsq16", "switch/p2c", "switch:x"} {
		if _, err := ParsePolicy(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	// The range the error names includes 0, which the parser accepts.
	if _, err := ParsePolicy("jbsq:-1"); err == nil || !strings.Contains(err.Error(), "or 0, unbounded") {
		t.Errorf("jbsq:-1: %v", err)
	}
}

func TestValidateRejects(t *testing.T) {
	mut := []func(*Config){
		func(c *Config) { c.Hosts = 0 },
		func(c *Config) { c.Load = 0 },
		func(c *Config) { c.ArrivalCV = -1 },
		func(c *Config) { c.ArrivalKind = "weibull" },
		func(c *Config) { c.Service.Mean = 0 },
		func(c *Config) { c.Delay = -1 },
		func(c *Config) { c.SLO = 0 },
		func(c *Config) { c.Requests = 0 },
		func(c *Config) { c.NotifyLoss = 1 },
		func(c *Config) { c.Stall = Stall{Interval: 10} },
		func(c *Config) { c.Burst = Burst{Factor: 3, OnFraction: 0.5, MeanOn: 10} },
		func(c *Config) { c.Gateway = Gateway{Cores: -1} },
		func(c *Config) { c.TTLMode = "never" },
		func(c *Config) { c.Policy = MustPolicy("migrate") },
		func(c *Config) { c.Hosts = 1; c.Policy = MustPolicy("random+fwd") },
		func(c *Config) { c.Hosts = 12; c.Policy = MustPolicy("switch") },
		func(c *Config) { c.Policy = MustPolicy("switch"); c.Recirc = -1 },
		func(c *Config) { h := 256; c.Policy = MustPolicy("switch"); c.SwitchMaxHolds = &h },
		func(c *Config) { c.Policy = MustPolicy("switch"); c.SwitchOnFull = "drop" },
		func(c *Config) { c.Policy = MustPolicy("switch"); c.CreditTTL, c.TTLMode = 100, TTLCredit },
	}
	for i, m := range mut {
		c := Scenario()
		m(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("mutation %d accepted", i)
		}
		if _, err := Run(context.Background(), c); err == nil {
			t.Errorf("mutation %d ran", i)
		}
	}
	if err := Scenario().Validate(); err != nil {
		t.Fatal(err)
	}
}

// FuzzParsePolicy: any accepted name round-trips through its canonical form.
func FuzzParsePolicy(f *testing.F) {
	for _, s := range []string{"random", "jsw+fwd", "p2c+ideal", "jbsq:16/p2c", "jbsq:inf", "jiq", "jsq", "jbsq:auto/random", "hash"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePolicy(s)
		if err != nil {
			return
		}
		q, err := ParsePolicy(p.String())
		if err != nil || q != p {
			t.Fatalf("%q → %+v → %q → %+v (%v)", s, p, p.String(), q, err)
		}
	})
}

// The switch experiment puts each ideal dispatcher beside the switch's own
// algorithm: the switch pays in recirculations, stays close in violations,
// and runs the pipeline's rules (a bounded pool recirculates only to
// resample; an unbounded one also for level rounds).
func TestSwitchGap(t *testing.T) {
	res, err := SwitchGap(context.Background(), Scenario(), Options{Quick: true, Requests: 20000})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != len(SwitchPairs()) {
		t.Fatalf("%d rows", len(res.Rows))
	}
	for _, r := range res.Rows {
		if !strings.HasPrefix(r.Switch.Policy, "switch") || r.Ideal.RecircPerRPC.Mean != 0 || r.Switch.RecircPerRPC.Mean <= 0 {
			t.Errorf("%s vs %s: recirculations %v / %v", r.Ideal.Policy, r.Switch.Policy, r.Ideal.RecircPerRPC.Mean, r.Switch.RecircPerRPC.Mean)
		}
		if g := r.Gap.Mean; g < -0.01 || g > 0.01 {
			t.Errorf("%s vs %s: gap %.3f, outside ±1 pp", r.Ideal.Policy, r.Switch.Policy, g)
		}
	}
	var buf bytes.Buffer
	if err := res.WriteText(&buf); err != nil || !strings.Contains(buf.String(), "RECIRC/RPC") {
		t.Errorf("text: %v\n%s", err, buf.String())
	}
	checkPlots(t, res, res.Scenario, res.Options, "switch_gap")
}

// A switch pool's holds and recirculations follow its configuration:
// no holds and nack turn a full group into a failed request; a longer
// recirculation costs latency; the same seed gives the same run.
func TestSwitchPolicyRules(t *testing.T) {
	base := Scenario()
	base.Requests, base.Warmup, base.Policy = 20000, 2000, MustPolicy("switch:12")
	zero := 0
	nack := base
	nack.SwitchMaxHolds, nack.SwitchOnFull = &zero, "nack"
	slow := base
	slow.Recirc = 5
	var rs []RunResult
	for _, c := range []Config{base, base, nack, slow} {
		r, err := Run(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	if !reflect.DeepEqual(rs[0], rs[1]) {
		t.Error("same seed, different runs")
	}
	if rs[0].Nacks != 0 || rs[0].Holds == 0 || rs[0].Recirculations < rs[0].Holds {
		t.Errorf("default pool: %+v", rs[0])
	}
	if rs[2].Nacks == 0 || rs[2].Holds != 0 {
		t.Errorf("max_holds 0, nack: nacks %d holds %d", rs[2].Nacks, rs[2].Holds)
	}
	if rs[3].MeanLatency <= rs[0].MeanLatency {
		t.Errorf("5 µs recirculations: mean %.2f ≤ %.2f", rs[3].MeanLatency, rs[0].MeanLatency)
	}
}
