package controller_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/pkg/compiler"
	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/controller"
	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/demo"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
	"github.com/p4ctl/p4ctl/pkg/regions"
)

// One controller process drives several switches concurrently: Run in an
// unpaced replay of 12 hours over three embedded switches ends with every
// switch holding the last hour's plan; the metrics count the pushes and
// writes of each target and read routed requests back from the switches.
func TestRunReplayDrivesSwitchesConcurrently(t *testing.T) {
	cfg := loadConfig(t)
	ctx := ctxT(t)
	var targets []controller.Target
	var sws []*dataplane.Embedded
	for i := range 3 {
		e, err := dataplane.Start(dataplane.Options{}, "")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Stop() })
		cc, err := e.Conn()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cc.Close() })
		c, err := p4rt.NewClient(cc, p4rt.WithElectionID(p4rt.Election(1)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		sws = append(sws, e)
		targets = append(targets, controller.Target{Name: fmt.Sprintf("edge-%d", i), Client: c})
	}
	src, err := cfg.OpenCarbon()
	if err != nil {
		t.Fatal(err)
	}
	clk, err := controller.NewReplayClock(start, 0)
	if err != nil {
		t.Fatal(err)
	}
	m := controller.NewMetrics()
	ctl, err := controller.New(controller.Options{Config: cfg, Targets: targets, Feed: &controller.CarbonFeed{Source: src, MapYears: true},
		Clock: clk, Schedule: controller.Schedule{Replay: true, Start: start, Hours: 12},
		Driver: controller.DriverOptions{Grace: -1, Metrics: m}, Log: testLog(t)})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := controller.NewServer("127.0.0.1:0", m, ctl.Health, nil)
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	go srv.Serve(sctx)

	// Traffic on the first switch so routed counters move.
	tr, err := demo.NewTraffic(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := ctl.Run(ctx); err != nil {
		t.Fatal(err)
	}
	last := plans(t, cfg, start.Add(11*time.Hour), 1, nil)[0]
	for _, d := range ctl.Drivers() {
		assertExactly(t, d, last)
	}
	defer tr.Serve(sws[0].Switch)()
	for i := range 50 {
		if _, err := demo.Send(sws[0].Switch, tr.Request(0, uint32(i), 3000, 0)); err != nil {
			t.Fatal(err)
		}
	}
	ctl.Drivers()[0].PollCounters(ctx)

	body := get(t, "http://"+srv.Addr().String()+"/metrics")
	for _, want := range []string{
		`p4ctl_pushes_total{result="ok",target="edge-2"} 12`,
		`p4ctl_active_epoch{target="edge-0"} 12`,
		`p4ctl_carbon_stale 0`,
		`p4ctl_policy{configured="C",effective="C"} 1`,
		`p4ctl_push_duration_seconds_count{target="edge-1"}`,
		`p4ctl_routed_requests_total{region="` + regionID(last.Decide(0, 3000).Region) + `",target="edge-0"} 50`,
		`p4ctl_estimated_gco2_grams_total{target="edge-0"}`,
		`p4ctl_baseline_gco2_grams_total{target="edge-0"}`,
		`p4ctl_carbon_data_age_seconds 0`,
		`p4ctl_writes_total{op="INSERT",target="edge-1"}`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", grepLines(body, "p4ctl_"))
	}
	var h controller.Health
	if err := json.Unmarshal([]byte(get(t, "http://"+srv.Addr().String()+"/healthz")), &h); err != nil {
		t.Fatal(err)
	}
	if len(h.Targets) != 3 || h.Targets[0].Epoch != 12 {
		t.Errorf("healthz: %+v", h)
	}
}

func regionID(i regions.Index) string {
	r, _ := regions.RegionAt(i)
	return r.ID
}

func grepLines(s, prefix string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Staleness: a source whose data is older than the bound makes the planner
// compile the safe policy A and say why; the last known value is used
// within the bound; a trace that ended serves its last hour with its age.
func TestPlannerStaleness(t *testing.T) {
	cfg := loadConfig(t)
	src, err := cfg.OpenCarbon()
	if err != nil {
		t.Fatal(err)
	}
	ages := map[int]time.Duration{0: 0, 1: 2 * time.Hour, 2: 3*time.Hour + time.Second}
	pl, err := controller.NewPlanner(cfg, &controller.CarbonFeed{Source: agedSource{src, start, ages}, MapYears: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for h, want := range map[int]bool{0: false, 1: false, 2: true} {
		p := pl.Plan(start.Add(time.Duration(h) * time.Hour))
		if p.Stale != want {
			t.Errorf("hour %d, age %s: stale %v, want %v (%s)", h, ages[h], p.Stale, want, p.Reason)
		}
		wantPol := regions.PolicyC
		if want {
			wantPol = controller.SafePolicy
			if !strings.Contains(p.Reason, "old (bound 3h0m0s)") {
				t.Errorf("reason %q", p.Reason)
			}
		}
		if p.Effective != wantPol || p.Configured != regions.PolicyC {
			t.Errorf("hour %d: effective %s configured %s", h, p.Effective, p.Configured)
		}
	}

	// A trace (no year mapping) that ends: the hour after its end is served
	// the last values, aged; beyond the bound the safe policy applies.
	tr, err := regions.ParseTraces("t.csv", []byte(traceCSV(cfg)), regions.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pl2, err := controller.NewPlanner(cfg, &controller.CarbonFeed{Source: tr}, nil)
	if err != nil {
		t.Fatal(err)
	}
	end := tr.Period().To
	if p := pl2.Plan(end.Add(time.Hour)); p.Stale || p.DataAge != 2*time.Hour || !p.DataHour.Equal(end.Add(-time.Hour)) {
		t.Errorf("1 h after the trace: stale %v age %s data hour %s", p.Stale, p.DataAge, p.DataHour)
	}
	if p := pl2.Plan(end.Add(5 * time.Hour)); !p.Stale || p.Effective != controller.SafePolicy {
		t.Errorf("5 h after the trace: stale %v policy %s", p.Stale, p.Effective)
	}
	// The safe plan compiles and routes every request to its site's nearest region.
	p := pl2.Plan(end.Add(5 * time.Hour))
	st, err := p.Compile(1)
	if err != nil {
		t.Fatal(err)
	}
	sites, _ := cfg.RoutingSites()
	rt := compiler.NewRouter(st)
	for i, s := range sites {
		for _, sla := range slas {
			if got, want := rt.Route(uint16(cfg.Sites[i].ID), sla, 0).Region, regions.Nearest(s, cfg.Pool()); got != uint8(want) {
				t.Fatalf("safe policy: site %s sla %d → %d, nearest is %d", s.Name(), sla, got, want)
			}
		}
	}
}

type agedSource struct {
	regions.CarbonSource
	start time.Time
	ages  map[int]time.Duration
}

func (a agedSource) DataAge(t time.Time) time.Duration { return a.ages[int(t.Sub(a.start)/time.Hour)] }

func traceCSV(cfg *config.Config) string {
	var b strings.Builder
	b.WriteString("timestamp_utc,zone,gco2_per_kwh\n")
	for h := range 3 {
		for i, r := range cfg.Regions {
			fmt.Fprintf(&b, "%s,%s,%d\n", start.Add(time.Duration(h)*time.Hour).Format(time.RFC3339), cfg.Zone(r), 100+10*i+h)
		}
	}
	return b.String()
}

// Replay clocks: paced ones advance at speed × wall time; unpaced ones jump.
func TestClocksAndSchedule(t *testing.T) {
	c, err := controller.NewReplayClock(start, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SleepUntil(context.Background(), start.Add(5*time.Hour)); err != nil || !c.Now().Equal(start.Add(5*time.Hour)) {
		t.Fatalf("unpaced: now %s err %v", c.Now(), err)
	}
	p, _ := controller.NewReplayClock(start, 3600*1000) // 1 h per ms
	t0 := time.Now()
	if err := p.SleepUntil(context.Background(), start.Add(20*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(t0); el < 15*time.Millisecond {
		t.Fatalf("paced replay slept %s for 20 h at 1 h/ms", el)
	}
	if _, err := controller.NewReplayClock(start, -1); err == nil {
		t.Fatal("negative speed accepted")
	}
	var hours []time.Time
	for tk := range (controller.Schedule{Replay: true, Start: start.Add(30 * time.Minute), Hours: 3}).Ticks(time.Time{}) {
		hours = append(hours, tk.Hour)
	}
	if len(hours) != 3 || !hours[0].Equal(start) || !hours[2].Equal(start.Add(2*time.Hour)) {
		t.Fatalf("replay ticks %v", hours)
	}
	now := start.Add(90 * time.Minute)
	n := 0
	for tk := range (controller.Schedule{Jitter: 10 * time.Minute, Seed: 7}).Ticks(now) {
		switch n {
		case 0:
			if !tk.At.Equal(now) || !tk.Hour.Equal(start.Add(time.Hour)) {
				t.Fatalf("first real-time tick %+v", tk)
			}
		default:
			h := start.Add(time.Duration(n+1) * time.Hour)
			if !tk.Hour.Equal(h) || tk.At.Before(h) || !tk.At.Before(h.Add(10*time.Minute)) {
				t.Fatalf("tick %d %+v: want at in [%s, +10m)", n, tk, h)
			}
		}
		if n++; n == 5 {
			break
		}
	}
}

// A gap in a trace filled by the fill policy is as old as the last measured
// value before it: within the staleness bound the filled value is used and
// its age reported; beyond the bound the safe policy applies, exactly as for
// live data that stopped arriving (and the stale metric says so).
func TestPlannerFilledGapsAge(t *testing.T) {
	cfg := loadConfig(t)
	cfg.Carbon.StalenessBound = config.Duration{Duration: 3 * time.Hour}
	// Hours 0..2 measured, 3..10 missing (an 8-hour gap), 11..12 measured.
	var b strings.Builder
	b.WriteString("timestamp_utc,zone,gco2_per_kwh\n")
	for h := range 13 {
		if h >= 3 && h <= 10 {
			continue
		}
		for i, r := range cfg.Regions {
			fmt.Fprintf(&b, "%s,%s,%d\n", start.Add(time.Duration(h)*time.Hour).Format(time.RFC3339), cfg.Zone(r), 100+10*i+h)
		}
	}
	for fill, name := range map[regions.FillPolicy]string{regions.FillPrevious: "previous", regions.FillLinear: "linear"} {
		tr, err := regions.ParseTraces("gap.csv", []byte(b.String()), regions.LoadOptions{Fill: fill})
		if err != nil {
			t.Fatal(err)
		}
		pl, err := controller.NewPlanner(cfg, &controller.CarbonFeed{Source: tr}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			hour  int
			age   time.Duration
			stale bool
		}{
			{2, 0, false},
			{3, time.Hour, false},
			{5, 3 * time.Hour, false},
			{6, 4 * time.Hour, true},
			{10, 8 * time.Hour, true},
			{11, 0, false},
			// After the trace's end: its last (measured) hour, aged.
			{14, 2 * time.Hour, false},
		} {
			p := pl.Plan(start.Add(time.Duration(tc.hour) * time.Hour))
			wantPol := regions.PolicyC
			if tc.stale {
				wantPol = controller.SafePolicy
			}
			if p.DataAge != tc.age || p.Stale != tc.stale || p.Effective != wantPol {
				t.Errorf("fill %s, hour %d: age %s stale %v policy %s (%s); want age %s stale %v policy %s",
					name, tc.hour, p.DataAge, p.Stale, p.Effective, p.Reason, tc.age, tc.stale, wantPol)
			}
			if tc.stale && !strings.Contains(p.Reason, "fill a gap") {
				t.Errorf("fill %s, hour %d: the reason %q does not say the values are filled", name, tc.hour, p.Reason)
			}
			if tc.stale {
				m := controller.NewMetrics()
				m.ObservePlan(p)
				body := gather(t, m)
				for _, want := range []string{"p4ctl_carbon_stale 1", fmt.Sprintf("p4ctl_carbon_data_age_seconds %g", tc.age.Seconds())} {
					if !hasLine(body, want) {
						t.Errorf("fill %s, hour %d: metrics lack the line %q", name, tc.hour, want)
					}
				}
			}
		}
	}
}

// hasLine reports whether the text has want as a whole line (a metric's
// name and value, not a substring of its help text).
func hasLine(text, want string) bool {
	return slices.Contains(strings.Split(text, "\n"), want)
}
