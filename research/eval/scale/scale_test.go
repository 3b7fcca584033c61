package scale

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/internal/testing/figcheck"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
	"github.com/p4ctl/p4ctl/pkg/regions"
	"github.com/p4ctl/p4ctl/research/configgen"
)

func src(t *testing.T) regions.CarbonSource {
	t.Helper()
	s, err := regions.NewSynthetic(1, regions.DefaultSyntheticPeriod())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The shared ranking keeps an hourly update at 2R+1 writes whatever the
// number of sites; D ranks per site and writes 2R per site more; entries
// grow with N and the v1model program's overflow is found where it is.
func TestMeasureShapes(t *testing.T) {
	r, err := Measure(context.Background(), Options{Sites: []int{10, 400}, Regions: []int{5, 12}, Policies: []string{"A", "C", "D"}, Hours: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Points) != 2*2*3 {
		t.Fatalf("%d points", len(r.Points))
	}
	v1 := Capacities()[0].Target
	for _, p := range r.Points {
		bound := 2*p.Regions + 1
		switch p.Policy {
		case "A":
			if p.WritesMax != 0 {
				t.Errorf("A (ranking by index) writes %d per hour", p.WritesMax)
			}
		case "C":
			if p.WritesMax > bound || p.ChangedHours == 0 {
				t.Errorf("C at N=%d R=%d: %d writes at most over %d changed hours, want ≤ %d", p.Sites, p.Regions, p.WritesMax, p.ChangedHours, bound)
			}
		case "D":
			if p.WritesMax <= bound && p.Sites > 10 {
				t.Errorf("D at N=%d writes only %d", p.Sites, p.WritesMax)
			}
		}
		if p.Policy == "C" && p.Sites == 400 && p.Regions == 12 {
			if n := p.ByTable[pipeline.TableSLAFeasibility]; n <= 4096 || len(p.Overflows[v1]) == 0 {
				t.Errorf("400 sites × 12 regions under C: %d feasibility entries, overflows %v", n, p.Overflows[v1])
			}
		}
		if p.CompileMs <= 0 || p.AllocsPerCompile <= 0 {
			t.Errorf("no timing: %+v", p)
		}
	}
	// The measured limit holds: C with 12 regions fits at 90 % of the
	// sites it names and overflows at 110 %.
	checked := false
	for _, l := range r.Limits {
		if l.Policy != "C" || l.Regions != 12 || l.Target != v1 {
			continue
		}
		checked = true
		if l.Table != "sla_feasibility" || l.MaxSites < 100 || l.MaxSites > 400 {
			t.Fatalf("C, R = 12: limit %+v", l)
		}
		for _, c := range []struct {
			n    int
			fits bool
		}{{l.MaxSites * 9 / 10, true}, {l.MaxSites * 11 / 10, false}} {
			cfg, _, err := configgen.Generate(configgen.Options{Sites: c.n, Regions: 12, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			p, err := MeasurePoint(context.Background(), cfg, src(t), "C", time.Date(2022, 1, 10, 0, 0, 0, 0, time.UTC), 2)
			if err != nil {
				t.Fatal(err)
			}
			if fits := len(p.Overflows[v1]) == 0; fits != c.fits {
				t.Errorf("%d sites (limit %d): fits %v, overflows %v", c.n, l.MaxSites, fits, p.Overflows[v1])
			}
		}
	}
	if !checked {
		t.Errorf("no limit for C, R = 12 on %s in %+v", v1, r.Limits)
	}
	files, err := WritePlots(r, filepath.Join(t.TempDir(), "plots"))
	if err != nil || len(files) != 6 {
		t.Fatalf("plots %v: %v", files, err)
	}
	// Issue 27 item 19: short titles; the generated configurations, the
	// carbon source, the machine and the date in the caption
	// (figure.Caption), whole in the SVG's <desc>.
	figcheck.CheckSVGs(t, files, func(string) []string {
		return []string{r.Generate, "carbon: " + r.Carbon, r.Machine, r.Date.Format("2006-01-02")}
	})
}

// The site limit is the first growing table to run out, fitted through the
// two largest N; tables that do not grow with N never bind.
func TestSiteLimits(t *testing.T) {
	feas, rank, site := pipeline.TableSLAFeasibility, pipeline.TableCarbonRank, pipeline.TableClientSite
	pt := func(policy string, n int, need map[string]int) Point {
		return Point{Policy: policy, Regions: 12, Sites: n, ByTable: need}
	}
	r := &Result{Points: []Point{
		// C: 13 feasibility entries per site, a shared ranking of 24.
		pt("C", 10, map[string]int{feas: 130, rank: 24, site: 10}),
		pt("C", 100, map[string]int{feas: 1300, rank: 24, site: 100}),
		pt("C", 200, map[string]int{feas: 2600, rank: 24, site: 200}),
		// D: one feasibility entry and 2 × 12 ranking entries per site.
		pt("D", 100, map[string]int{feas: 100, rank: 24 + 2400, site: 100}),
		pt("D", 200, map[string]int{feas: 200, rank: 24 + 4800, site: 200}),
		// A lone point has no slope.
		pt("A", 100, map[string]int{feas: 100, site: 100}),
	}}
	v1 := Capacities()[0].Target
	got := map[string]Limit{}
	for _, l := range r.SiteLimits() {
		if l.Target == v1 {
			got[l.Policy] = l
		}
	}
	cases := []struct {
		policy  string
		max     int
		table   string
		perSite float64
	}{
		{"C", 4096 / 13, "sla_feasibility", 13},
		{"D", (4096 - 24) / 24, "carbon_rank", 24},
	}
	for _, c := range cases {
		l, ok := got[c.policy]
		if !ok || l.MaxSites != c.max || l.Table != c.table || l.PerSite != c.perSite {
			t.Errorf("%s: limit %+v, want %d sites bound by %s at %.0f per site", c.policy, l, c.max, c.table, c.perSite)
		}
	}
	if l, ok := got["A"]; ok {
		t.Errorf("A from one point: %+v, want no limit", l)
	}
}

// Partitioned among edge switches, each switch holds only its sites: the
// largest switch needs a fraction of the whole state's feasibility
// entries, and a configuration that overflows one switch fits each of
// several.
func TestMeasurePerSwitch(t *testing.T) {
	r, err := Measure(context.Background(), Options{Sites: []int{3, 600}, Regions: []int{12}, Policies: []string{"C"}, Hours: 2, Switches: 4})
	if err != nil {
		t.Fatal(err)
	}
	v1 := Capacities()[0].Target
	for _, p := range r.Points {
		if p.Sites < 4 {
			if p.PerSwitch != nil {
				t.Errorf("%d sites among 4 switches measured: %+v", p.Sites, p.PerSwitch)
			}
			continue
		}
		ps := p.PerSwitch
		if ps == nil || ps.Switches != 4 {
			t.Fatalf("600 sites: per switch %+v", ps)
		}
		whole, part := p.ByTable[pipeline.TableSLAFeasibility], ps.MaxNeed[pipeline.TableSLAFeasibility]
		if ps.MaxSites >= p.Sites || ps.MaxSites < p.Sites/4 || part >= whole || part == 0 {
			t.Errorf("largest switch: %d of %d sites, %d of %d feasibility entries", ps.MaxSites, p.Sites, part, whole)
		}
		if ps.TotalEntries <= ps.MaxEntries || ps.CompileMs <= 0 || ps.StateMB <= 0 {
			t.Errorf("fleet totals: %d entries (largest switch %d), %.3g ms, %.3g MB", ps.TotalEntries, ps.MaxEntries, ps.CompileMs, ps.StateMB)
		}
		if len(p.Overflows[v1]) == 0 || len(ps.Overflows[v1]) != 0 {
			t.Errorf("whole state overflows %v, the largest switch %v: want the whole to overflow and each switch to fit", p.Overflows[v1], ps.Overflows[v1])
		}
	}
}

// TestOptionsValidate: Measure refuses, before compiling anything, policies
// it cannot compile, repeated grid values (two equal N made SiteLimits
// divide by zero) and more hours than the carbon data holds.
func TestOptionsValidate(t *testing.T) {
	if got := MaxHours(DefaultStart()); got != 8544 {
		t.Errorf("MaxHours(DefaultStart()) = %d, want 8544 (2022-01-10 to 2023-01-01)", got)
	}
	cases := []struct {
		o    Options
		want string // "" = valid
	}{
		{Options{}, ""},
		{Options{Policies: Policies(), Hours: 8544}, ""},
		{Options{Policies: []string{"C+warm"}}, "policy C+warm: want A, B, C, C+, D, C-cap (C+warm is stateful"},
		{Options{Policies: []string{"Z"}}, "policy Z: want A, B, C, C+, D, C-cap"},
		{Options{Policies: []string{"A", "A"}}, "policy A given twice"},
		{Options{Sites: []int{10, 10}}, "sites 10 given twice"},
		{Options{Sites: []int{0}}, "sites 0: want 1..65535"},
		{Options{Regions: []int{33}}, "regions 33: want 1..32"},
		{Options{Hours: 1}, "1 hours: want 2..8544"},
		{Options{Hours: 8545}, "8545 hours: want 2..8544"},
	}
	for _, c := range cases {
		err := c.o.Validate()
		if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
	if _, err := Measure(context.Background(), Options{Sites: []int{10}, Regions: []int{5}, Policies: []string{"A", "C+warm"}, Hours: 2}); err == nil || !strings.Contains(err.Error(), "scale: policy C+warm") {
		t.Errorf("Measure with C+warm: %v", err)
	}
}

// Issue 27: Measure looked at Ctrl-C only between points, and a point of
// 10000 sites (generating them, then 24 compiled hours) took about a
// second under load (0.98 s measured after SIGTERM): it now looks between
// hours and while generating, so it ends soon after the cancel.
func TestMeasureEndsSoonAfterCancel(t *testing.T) {
	for _, after := range []time.Duration{0, 700 * time.Millisecond} {
		ctx, cancel := context.WithCancel(context.Background())
		var mu sync.Mutex
		var at time.Time
		stop := time.AfterFunc(after, func() { mu.Lock(); at = time.Now(); mu.Unlock(); cancel() })
		_, err := Measure(ctx, Options{Sites: []int{10000}, Regions: []int{32}, Policies: []string{"C"}, Hours: 48})
		end := time.Now()
		stop.Stop()
		cancel()
		mu.Lock()
		cancelled := at
		mu.Unlock()
		if cancelled.IsZero() || !errors.Is(err, context.Canceled) {
			t.Fatalf("cancel after %v: %v (cancelled: %v)", after, err, !cancelled.IsZero())
		}
		if d := end.Sub(cancelled); d > 300*time.Millisecond {
			t.Errorf("cancel after %v: Measure returned %v after the cancel", after, d)
		}
	}
}
