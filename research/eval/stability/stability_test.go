package stability

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/examples"
	"github.com/p4ctl/p4ctl/internal/testing/golden"
	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/regions"
)

// exampleConfig is the evaluation of examples/mumbai.yaml's sites, regions
// and classes on src over p.
func exampleConfig(t testing.TB, src regions.CarbonSource, p regions.Period) Config {
	t.Helper()
	cfg, err := config.Parse(examples.Mumbai(), examples.MumbaiName)
	if err != nil {
		t.Fatal(err)
	}
	sites, err := cfg.RoutingSites()
	if err != nil {
		t.Fatal(err)
	}
	c := Config{Source: src, Signal: cfg.CarbonSignal(), Period: p, Sites: sites, Pool: cfg.Pool(), Options: cfg.Options(), Seed: 1}
	for _, k := range cfg.SLAClasses {
		c.SLAs, c.Mix = append(c.SLAs, float64(k.MS)), append(c.Mix, k.Share)
	}
	return c
}

func synthetic(t testing.TB) regions.CarbonSource {
	t.Helper()
	src, err := regions.NewSynthetic(1, regions.DefaultSyntheticPeriod())
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func weeks(n int) regions.Period {
	from := time.Date(2022, 3, 1, 0, 0, 0, 0, time.UTC)
	return regions.Period{From: from, To: from.Add(time.Duration(n) * 7 * 24 * time.Hour)}
}

func run(t testing.TB, c Config) *Result {
	t.Helper()
	res, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestInvariants checks what must hold of any evaluation: A is the zero of
// saving, per-class figures add up to the rows, hysteresis never changes
// more often than hourly C, the zero-gain zero-hold sweep point is hourly C
// (no ties in the model), sampled violations agree with their
// expectation, and progress counts every setting.
func TestInvariants(t *testing.T) {
	c := exampleConfig(t, synthetic(t), weeks(8))
	calls, last := 0, 0
	c.Progress = func(done, total int) { calls, last = calls+1, total }
	res := run(t, c)
	if calls != last || calls != 5+3+len(res.Sweep) {
		t.Errorf("progress called %d times, total %d, want %d", calls, last, 5+3+len(res.Sweep))
	}
	if res.Signal != "average (lifecycle)" || res.SignalType != "average" || !strings.Contains(res.CarbonSource, "synthetic model") {
		t.Errorf("source %q signal %q", res.CarbonSource, res.Signal)
	}
	a, ok := res.Find("A", SettingHourly)
	if !ok || a.SavingPct != 0 || a.ChangesPerDay != 0 || a.RankingUpdatesPerDay != 0 {
		t.Errorf("A: %+v", a)
	}
	for _, row := range res.Rows {
		var chg float64
		for _, s := range res.Sites {
			chg += row.SiteChangesPerDay[s]
		}
		var cls float64
		for _, cr := range res.ClassRows {
			if cr.Policy == row.Policy && cr.Setting == row.Setting {
				cls += cr.ChangesPerDay
				var share float64
				for _, v := range cr.RouteShare {
					share += v
				}
				if math.Abs(share-1) > 1e-9 || cr.ColdSharePct < 0 || cr.ColdSharePct > 100 {
					t.Errorf("%s %s %s %s: route shares sum to %v, cold %v", cr.Policy, cr.Setting, cr.Site, cr.Class, share, cr.ColdSharePct)
				}
			}
		}
		if math.Abs(chg-row.ChangesPerDay) > 1e-9 || math.Abs(cls-row.ChangesPerDay) > 1e-9 {
			t.Errorf("%s %s: changes/day %v, sites sum to %v, classes to %v", row.Policy, row.Setting, row.ChangesPerDay, chg, cls)
		}
		// 8 weeks × 2 sites × 24 × 12 requests: the sampled rate is
		// within 4 standard errors of its expectation.
		n := float64(56 * 24 * 2 * c.RequestsPerHourOr12())
		p := row.ExactViolationPct / 100
		if se := math.Sqrt(p*(1-p)/n) * 100; math.Abs(row.SampledViolationPct-row.ExactViolationPct) > 4*se+1e-9 {
			t.Errorf("%s %s: sampled violations %.3f %%, expected %.3f %% (se %.3f)", row.Policy, row.Setting, row.SampledViolationPct, row.ExactViolationPct, se)
		}
	}
	for _, p := range []string{"B", "C", "C+"} {
		h, _ := res.Find(p, SettingHourly)
		y, ok := res.Find(p, SettingHysteresis)
		if !ok || y.ChangesPerDay > h.ChangesPerDay || y.RankingUpdatesPerDay > h.RankingUpdatesPerDay {
			t.Errorf("%s: hysteresis %+v vs hourly %+v", p, y, h)
		}
	}
	if _, ok := res.Find("D", SettingHysteresis); ok {
		t.Error("D has a hysteresis row")
	}
	hourly, _ := res.Find("C", SettingHourly)
	zero := res.Sweep[0]
	if zero.Hysteresis.MinGain.Value != 0 || zero.Hysteresis.MinHold != 0 || zero.ChangesPerDay != hourly.ChangesPerDay || math.Abs(zero.SavingPct-hourly.SavingPct) > 1e-9 {
		t.Errorf("sweep 0%%/0h %+v differs from hourly C (%.4f changes, %.4f %%)", zero, hourly.ChangesPerDay, hourly.SavingPct)
	}
	front := 0
	for _, p := range res.Sweep {
		if p.Pareto {
			front++
		}
	}
	if front == 0 || front == len(res.Sweep) {
		t.Errorf("%d of %d sweep points on the front", front, len(res.Sweep))
	}
	if acc := res.Acceptance; acc.ChangesPerDay != func() float64 { r, _ := res.Find("C", SettingHysteresis); return r.ChangesPerDay }() ||
		acc.Met != (acc.ChangeReductionPct >= 50 && acc.SavingLossPP <= 1) {
		t.Errorf("acceptance %+v", acc)
	}
}

// RequestsPerHourOr12 is the configured requests per hour, or the default.
func (c Config) RequestsPerHourOr12() int {
	if c.RequestsPerHour == 0 {
		return 12
	}
	return c.RequestsPerHour
}

// TestHysteresisAxes: a larger min_gain or min_hold never makes policy C
// change its region more often on the same data (the sweep's rows and
// columns are monotone).
func TestHysteresisAxes(t *testing.T) {
	c := exampleConfig(t, synthetic(t), weeks(6))
	c.Policies = []regions.Policy{regions.PolicyA, regions.PolicyC}
	c.SweepHorizons = []int{}
	res := run(t, c)
	at := func(gi, hi int) SweepPoint { return res.Sweep[gi*len(c.SweepHolds)+hi] }
	for gi := range c.SweepGains {
		for hi := range c.SweepHolds {
			p := at(gi, hi)
			if p.Hysteresis.MinGain != c.SweepGains[gi] || p.Hysteresis.MinHold != c.SweepHolds[hi] {
				t.Fatalf("sweep order: %v at (%d, %d)", p.Hysteresis, gi, hi)
			}
			if gi > 0 && p.ChangesPerDay > at(gi-1, hi).ChangesPerDay {
				t.Errorf("%s: %.3f changes/day, more than %s's %.3f", p.Hysteresis, p.ChangesPerDay, at(gi-1, hi).Hysteresis, at(gi-1, hi).ChangesPerDay)
			}
		}
	}
}

// TestDeterministic: the same configuration gives the same result, and
// another seed changes only the sampled violations.
func TestDeterministic(t *testing.T) {
	c := exampleConfig(t, synthetic(t), weeks(2))
	c.SweepGains, c.SweepHolds = []regions.Gain{{Value: 5, Relative: true}}, []int{3}
	a, b := run(t, c), run(t, c)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if !bytes.Equal(ja, jb) {
		t.Fatal("two runs differ")
	}
	c.Seed = 2
	d := run(t, c)
	for i := range a.Rows {
		x, y := a.Rows[i], d.Rows[i]
		if x.SavingPct != y.SavingPct || x.ChangesPerDay != y.ChangesPerDay || x.ExactViolationPct != y.ExactViolationPct {
			t.Errorf("%s %s: the seed changed a figure that does not sample", x.Policy, x.Setting)
		}
	}
}

// TestGolden: a fixed two-week evaluation on the offline model renders as
// testdata/synthetic-2w.golden (go test -update rewrites it).
func TestGolden(t *testing.T) {
	c := exampleConfig(t, synthetic(t), weeks(2))
	c.SweepGains, c.SweepHolds, c.SweepHorizons = []regions.Gain{{Value: 0, Relative: true}, {Value: 10, Relative: true}}, []int{0, 6}, []int{1, 3}
	var b bytes.Buffer
	if err := run(t, c).WriteMarkdown(&b, "synthetic model (seed 1), not measured data"); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "synthetic-2w.golden", b.Bytes())
}

func TestViolationProb(t *testing.T) {
	for _, c := range []struct{ p95, sla, want float64 }{{300, 300, 0.05}, {100, 1e9, 0}, {1e9, 1, 1}} {
		if got := violationProb(c.p95, c.sla, 0.2); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("violationProb(%v, %v) = %v, want %v", c.p95, c.sla, got, c.want)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	base := exampleConfig(t, synthetic(t), weeks(1))
	cases := []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"no source", func(c *Config) { c.Source = nil }, "no carbon source"},
		{"no sites", func(c *Config) { c.Sites = nil }, "no client sites"},
		{"short period", func(c *Config) { c.Period.To = c.Period.From.Add(time.Hour) }, "at least 2 hours"},
		{"no baseline", func(c *Config) { c.Policies = []regions.Policy{regions.PolicyC} }, "policy A"},
		{"stateful policy", func(c *Config) { c.Policies = []regions.Policy{regions.PolicyA, regions.PolicyCCap} }, "stateful"},
		{"mix", func(c *Config) { c.Mix = slices.Clone(c.Mix); c.Mix[0] = 0.5 }, "shares sum"},
		{"bad hysteresis", func(c *Config) { c.Hysteresis = regions.Hysteresis{Horizon: 99} }, "horizon"},
		{"bad sweep", func(c *Config) { c.SweepHolds = []int{-1} }, "min_hold"},
		{"too many sampled requests", func(c *Config) {
			c.RequestsPerHour, c.Sites = 10000, slices.Repeat(c.Sites[:1], 150) // 168 h × 150 × 10000 = 252 M
		}, "252000000 sampled requests: at most 200000000"},
		{"site without a region", func(c *Config) { c.Pool = regions.Pool12 | regions.SetOf(13) }, "has no latency"},
		{"outside the data", func(c *Config) {
			c.Period = regions.Period{From: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2030, 2, 1, 0, 0, 0, 0, time.UTC)}
		}, "outside the data"},
	}
	for _, tc := range cases {
		c := base
		tc.edit(&c)
		if _, err := Run(context.Background(), c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, base); err == nil || !strings.Contains(err.Error(), "canceled") {
		t.Errorf("cancelled context: %v", err)
	}
}

// TestPlots: every plot is written as PNG and SVG, named as documented.
func TestPlots(t *testing.T) {
	c := exampleConfig(t, synthetic(t), weeks(1))
	c.SweepGains, c.SweepHolds, c.SweepHorizons = []regions.Gain{{Value: 0, Relative: true}, {Value: 10, Relative: true}}, []int{0, 3}, []int{1, 3}
	res := run(t, c)
	dir := t.TempDir()
	files, err := WritePlots(res, dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
		names = append(names, filepath.Base(f))
	}
	want := []string{"stability_changes_by_class.png", "stability_changes_by_class.svg", "stability_pareto.png", "stability_pareto.svg",
		"stability_pareto_mumbai.png", "stability_pareto_mumbai.svg", "stability_pareto_singapore.png", "stability_pareto_singapore.svg"}
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Errorf("plots %v, want %v", names, want)
	}
	svg, _ := os.ReadFile(filepath.Join(dir, "stability_pareto_mumbai.svg"))
	if !bytes.Contains(svg, []byte("PAPER")) || !bytes.Contains(svg, []byte("signal")) {
		t.Error("the Mumbai Pareto plot lacks the paper's figure or the signal")
	}
}

// TestTraces2022 runs the year on the shared 2022 traces, when present:
// the acceptance figures are those of the rows, and on these data the
// default hysteresis meets the aim (docs/REPRODUCTION.md §1e reports it).
func TestTraces2022(t *testing.T) {
	dir, ok := regions.FindSharedCarbonData(".")
	if !ok {
		t.Skip("shared carbon data not found (set " + regions.SharedDataEnv + " or place shared/data/carbon beside the repository)")
	}
	src, err := regions.LoadTraces(dir, regions.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	year := regions.Period{From: time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)}
	res := run(t, exampleConfig(t, src, year))
	if res.Hours != 8760 || len(res.Pool) != 12 || len(res.Sites) != 2 {
		t.Fatalf("%d hours, %d regions, sites %v", res.Hours, len(res.Pool), res.Sites)
	}
	a := res.Acceptance
	if !a.Met {
		t.Errorf("default hysteresis on 2022: %.1f %% fewer changes for %.2f pp: aim not met", a.ChangeReductionPct, a.SavingLossPP)
	}
	t.Logf("2022: hourly C %.2f changes/day, saving %.2f %%; %s %.2f changes/day (%.1f %% fewer), saving %.2f %% (−%.2f pp)",
		a.HourlyChangesPerDay, a.HourlySavingPct, a.Hysteresis, a.ChangesPerDay, a.ChangeReductionPct, a.SavingPct, a.SavingLossPP)
}

// Issue 27: Ctrl-C waited for the requests of a year to be sampled and
// for a whole setting to be simulated (seconds each at 1000 requests per
// hour), past the second p4ctl gives a command; Run now ends within it.
func TestRunEndsSoonAfterCancel(t *testing.T) {
	c := exampleConfig(t, synthetic(t), regions.DefaultSyntheticPeriod())
	c.RequestsPerHour = 1000
	for _, after := range []time.Duration{0, 50 * time.Millisecond, 400 * time.Millisecond} {
		ctx, cancel := context.WithCancel(context.Background())
		var cancelled time.Time
		var mu sync.Mutex
		stop := time.AfterFunc(after, func() { mu.Lock(); cancelled = time.Now(); mu.Unlock(); cancel() })
		_, err := Run(ctx, c)
		end := time.Now()
		stop.Stop()
		cancel()
		mu.Lock()
		at := cancelled
		mu.Unlock()
		if at.IsZero() {
			t.Fatalf("cancel after %v: Run ended first (%v)", after, err)
		}
		if err == nil || !strings.Contains(err.Error(), "canceled") {
			t.Errorf("cancel after %v: %v, want the context's error", after, err)
		}
		if d := end.Sub(at); d > 500*time.Millisecond {
			t.Errorf("cancel after %v: Run returned %v after the cancel: want at once", after, d)
		}
	}
}
