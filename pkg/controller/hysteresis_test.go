package controller_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/pkg/carbonapi"
	"github.com/p4ctl/p4ctl/pkg/compiler"
	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/controller"
	"github.com/p4ctl/p4ctl/pkg/regions"
)

// hysteresisConfig is examples/mumbai.yaml with a hysteresis block.
func hysteresisConfig(t *testing.T, gain string, hold, horizon int) *config.Config {
	t.Helper()
	cfg := loadConfig(t)
	g, err := regions.ParseGain(gain)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Policy.Hysteresis = &config.Hysteresis{MinGain: &g,
		MinHold: &config.Duration{Duration: time.Duration(hold) * time.Hour},
		Horizon: &config.Duration{Duration: time.Duration(horizon) * time.Hour}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func newPlanner(t *testing.T, cfg *config.Config, src regions.CarbonSource, mapYears bool) *controller.Planner {
	t.Helper()
	pl, err := controller.NewPlanner(cfg, &controller.CarbonFeed{Source: src, MapYears: mapYears}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

// TestPlannerHysteresisRestart: the planner carries the hysteretic ranking
// from hour to hour, and a planner that starts (or restarts) at any hour,
// or skips hours, rebuilds the same ranking from the carbon history — so
// replicas and restarts install the same ranking as one planner running
// since the history began.
func TestPlannerHysteresisRestart(t *testing.T) {
	cfg := hysteresisConfig(t, "5%", 3, 3)
	src, err := cfg.OpenCarbon()
	if err != nil {
		t.Fatal(err)
	}
	jan1 := time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC)
	const hours = 24 * 8
	cont := newPlanner(t, cfg, src, true)
	want := make([][]regions.Index, hours)
	changes, plain := 0, 0
	for h := range hours {
		p := cont.Plan(jan1.Add(time.Duration(h) * time.Hour))
		if p.Ranking == nil || p.ForecastHours != 3 || p.Hysteresis != "min_gain 5%, min_hold 3h, horizon 3h" || p.Signal != "average (lifecycle)" {
			t.Fatalf("hour %d: ranking %v, %d forecast hours, hysteresis %q, signal %q", h, p.Ranking, p.ForecastHours, p.Hysteresis, p.Signal)
		}
		want[h] = p.Ranking
		if h > 0 && !slices.Equal(want[h], want[h-1]) {
			changes++
		}
		if h > 0 {
			a := regions.Rank(nil, cfg.Pool(), &p.Carbon.Intensity)
			q := cont.Plan(jan1.Add(time.Duration(h-1) * time.Hour)) // an earlier hour: a full replay
			if b := regions.Rank(nil, cfg.Pool(), &q.Carbon.Intensity); !slices.Equal(a, b) {
				plain++
			}
			if !slices.Equal(q.Ranking, want[h-1]) {
				t.Fatalf("hour %d planned again after hour %d: ranking %v, was %v", h-1, h, q.Ranking, want[h-1])
			}
			cont.Plan(jan1.Add(time.Duration(h) * time.Hour)) // and back
		}
	}
	if changes == 0 || changes >= plain {
		t.Fatalf("%d ranking changes with hysteresis, %d without: the test proves nothing", changes, plain)
	}
	for _, h := range []int{0, 1, 5, 47, 100, hours - 1} {
		fresh := newPlanner(t, cfg, src, true)
		if got := fresh.Plan(jan1.Add(time.Duration(h) * time.Hour)).Ranking; !slices.Equal(got, want[h]) {
			t.Errorf("planner started at hour %d: ranking %v, the continuous planner's %v", h, got, want[h])
		}
		if fresh.Replays() != 1 {
			t.Errorf("replays %d", fresh.Replays())
		}
	}
	// Skipped hours are caught up; the same hour again is a re-plan.
	skip := newPlanner(t, cfg, src, true)
	for _, h := range []int{10, 11, 60, 60, 61, 150} {
		if got := skip.Plan(jan1.Add(time.Duration(h) * time.Hour)).Ranking; !slices.Equal(got, want[h]) {
			t.Errorf("hour %d after skips: ranking %v, want %v", h, got, want[h])
		}
	}
	if skip.Replays() != 1 {
		t.Errorf("skipping forward replayed %d times, want once (at the start)", skip.Replays())
	}
}

// TestPlannerHysteresisNewYear: the offline model's history starts each
// 1 January, for a running planner as for a restarted one.
func TestPlannerHysteresisNewYear(t *testing.T) {
	cfg := hysteresisConfig(t, "10%", 6, 1)
	src, err := cfg.OpenCarbon()
	if err != nil {
		t.Fatal(err)
	}
	eve := time.Date(2024, 12, 31, 20, 0, 0, 0, time.UTC)
	cont := newPlanner(t, cfg, src, true)
	for h := range 10 {
		at := eve.Add(time.Duration(h) * time.Hour)
		got := cont.Plan(at).Ranking
		if fresh := newPlanner(t, cfg, src, true).Plan(at).Ranking; !slices.Equal(got, fresh) {
			t.Errorf("%s: running planner %v, restarted %v", at.Format(time.RFC3339), got, fresh)
		}
	}
}

// TestPlannerHysteresisStale: stale data switches to the safe policy at
// once (no hysteresis on it); the state waits, and a planner restarted
// after the gap ranks as the one that lived through it.
func TestPlannerHysteresisStale(t *testing.T) {
	cfg := hysteresisConfig(t, "5%", 2, 1)
	cfg.Carbon.StalenessBound = config.Duration{Duration: 3 * time.Hour}
	// 40 hours; 12..19 missing (filled: stale from hour 15).
	var b strings.Builder
	b.WriteString("timestamp_utc,zone,gco2_per_kwh\n")
	for h := range 40 {
		if h >= 12 && h < 20 {
			continue
		}
		for i, r := range cfg.Regions {
			v := 100 + 37*((i*7+h*(i+1))%11) // values that cross often
			fmt.Fprintf(&b, "%s,%s,%d\n", start.Add(time.Duration(h)*time.Hour).Format(time.RFC3339), cfg.Zone(r), v)
		}
	}
	tr, err := regions.ParseTraces("gap.csv", []byte(b.String()), regions.LoadOptions{Fill: regions.FillPrevious})
	if err != nil {
		t.Fatal(err)
	}
	cont := newPlanner(t, cfg, tr, false)
	var rankings [][]regions.Index
	for h := range 40 {
		p := cont.Plan(start.Add(time.Duration(h) * time.Hour))
		stale := h >= 15 && h < 20
		if p.Stale != stale || (p.Ranking == nil) != stale {
			t.Fatalf("hour %d: stale %v, ranking %v (want stale %v)", h, p.Stale, p.Ranking, stale)
		}
		if stale && p.Effective != controller.SafePolicy {
			t.Fatalf("hour %d: stale data compiles %s, want the safe policy at once", h, p.Effective)
		}
		rankings = append(rankings, p.Ranking)
	}
	for _, h := range []int{20, 25, 39} {
		if got := newPlanner(t, cfg, tr, false).Plan(start.Add(time.Duration(h) * time.Hour)).Ranking; !slices.Equal(got, rankings[h]) {
			t.Errorf("restart at hour %d: ranking %v, want %v", h, got, rankings[h])
		}
	}
}

// TestPlannerHysteresisCompiles: the plan's decisions (what the demo
// checks the switch against) are the compiled tables' decisions, and
// without a hysteresis block nothing changes.
func TestPlannerHysteresisCompiles(t *testing.T) {
	cfg := hysteresisConfig(t, "10%", 3, 1)
	src, err := cfg.OpenCarbon()
	if err != nil {
		t.Fatal(err)
	}
	pl := newPlanner(t, cfg, src, true)
	for h := range 48 {
		p := pl.Plan(start.Add(time.Duration(h) * time.Hour))
		st, err := p.Compile(1)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(st.Meta.Hysteresis, "min_gain 10%") || st.Meta.Signal != "average (lifecycle)" {
			t.Fatalf("meta %+v", st.Meta)
		}
		rt := compiler.NewRouter(st)
		for i, s := range cfg.Sites {
			for _, sla := range slas {
				want := p.Decide(i, float64(sla))
				if got := rt.Route(uint16(s.ID), sla, 0); got.Region != uint8(want.Region) {
					t.Fatalf("hour %d site %s SLA %d: tables %d, plan %d", h, s.Name, sla, got.Region, want.Region)
				}
			}
		}
	}
	plain := newPlanner(t, loadConfig(t), src, true).Plan(start)
	if plain.Ranking != nil || plain.Hysteresis != "" {
		t.Errorf("no hysteresis block: ranking %v, hysteresis %q", plain.Ranking, plain.Hysteresis)
	}
}

// forecastSource serves the current and past hours and, like a live API,
// knows later hours only from its forecast.
type forecastSource struct {
	now   time.Time
	value func(zone string, h time.Time) float64
	ahead int // forecast hours
}

func (f *forecastSource) Intensity(zone string, t time.Time) (float64, error) {
	if t.After(f.now) {
		return 0, errors.New("a future hour")
	}
	return f.value(zone, t.Truncate(time.Hour)), nil
}
func (f *forecastSource) Period() regions.Period {
	return regions.Period{From: f.now.Add(-2 * time.Hour), To: f.now.Add(time.Hour)}
}
func (f *forecastSource) Zones() []string  { return regions.Zones() }
func (f *forecastSource) Describe() string { return "test forecast source" }
func (f *forecastSource) Forecast(zone string) []carbonapi.Reading {
	var out []carbonapi.Reading
	for k := 1; k <= f.ahead; k++ {
		h := f.now.Truncate(time.Hour).Add(time.Duration(k) * time.Hour)
		out = append(out, carbonapi.Reading{Zone: zone, Hour: h, Value: f.value(zone, h), Forecast: true})
	}
	return out
}

// TestPlannerHysteresisForecast: a horizon beyond the current hour ranks
// by the mean of the live source's forecast (as far as it reaches): a
// region that is cleanest now but not over the next hours is not first.
func TestPlannerHysteresisForecast(t *testing.T) {
	cfg := hysteresisConfig(t, "0%", 0, 4)
	now := start.Add(30 * time.Minute)
	value := func(zone string, h time.Time) float64 {
		switch zone {
		case "SE-SE3": // Stockholm: cleanest now, dirty afterwards
			if h.After(now) {
				return 900
			}
			return 10
		case "US-NW-BPAT": // Oregon
			return 50
		}
		return 500
	}
	for _, c := range []struct {
		ahead     int
		wantHours int
		wantFirst string
	}{{6, 4, "us-west-2"}, {1, 2, "us-west-2"}, {0, 1, "eu-north-1"}} {
		src := &forecastSource{now: now, value: value, ahead: c.ahead}
		p := newPlanner(t, cfg, src, false).Plan(now)
		first, _ := regions.RegionAt(p.Ranking[0])
		if p.ForecastHours != c.wantHours || first.ID != c.wantFirst {
			t.Errorf("%d forecast hours cached: ranked by %d hours, first %s; want %d, %s", c.ahead, p.ForecastHours, first.ID, c.wantHours, c.wantFirst)
		}
	}
}

// BenchmarkPlannerRestart is the cost of a restart late in the year: a
// fresh planner on the offline model replays the 8759 hours since
// 1 January to rebuild the hysteretic ranking, then plans the hour.
func BenchmarkPlannerRestart(b *testing.B) {
	cfg := loadConfig(b)
	g, _ := regions.ParseGain("10%")
	cfg.Policy.Hysteresis = &config.Hysteresis{MinGain: &g}
	src, err := cfg.OpenCarbon()
	if err != nil {
		b.Fatal(err)
	}
	at := time.Date(2022, 12, 31, 23, 0, 0, 0, time.UTC)
	for b.Loop() {
		pl, err := controller.NewPlanner(cfg, &controller.CarbonFeed{Source: src, MapYears: true}, nil)
		if err != nil {
			b.Fatal(err)
		}
		if p := pl.Plan(at); p.Ranking == nil {
			b.Fatal("no ranking")
		}
	}
}
