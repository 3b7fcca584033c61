package testbed

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/pkg/compiler"
	"github.com/p4ctl/p4ctl/pkg/loadgen"
)

func TestSize(t *testing.T) {
	cfg := load(t)
	c, err := Compile(cfg, time.Date(2022, 1, 10, 0, 0, 0, 0, time.UTC), 1)
	if err != nil {
		t.Fatal(err)
	}
	rt := compiler.NewRouter(c.State)
	ld := Load{Rate: 50, SLAMix: loadgen.DefaultSLAMix(), ExecMix: loadgen.DefaultExecMix(), Scale: 1, Overhead: 50 * time.Millisecond}
	ps, err := Size(cfg, []*Compiled{c}, ld)
	if err != nil {
		t.Fatal(err)
	}
	// Recompute λ and L for every pool by hand from the plan.
	lat := map[uint16]map[string]float64{}
	for _, s := range cfg.Sites {
		lat[uint16(s.ID)] = map[string]float64{}
		for r, l := range cfg.SiteLatency(s) {
			lat[uint16(s.ID)][r] = l.P95
		}
	}
	var total float64
	for _, sh := range ld.SLAMix {
		total += sh.Weight
	}
	for _, p := range ps {
		var lambda, inflight float64
		for site := range lat {
			for _, sh := range ld.SLAMix {
				if loadgen.RegionName(rt.Route(site, sh.Value, 0).Region) == p.Region {
					l := 50 * sh.Weight / total
					lambda += l
					inflight += l * (lat[site][p.Region] + 1 + 50) / 1000 // P95 + 1 ms exec + 50 ms
				}
			}
		}
		need := max(1, int(math.Ceil((inflight+HeadroomSigmas*math.Sqrt(inflight))/2)))
		if math.Abs(p.RatePerS-lambda) > 1e-6 || math.Abs(p.InFlight-inflight) > 1e-3 || p.Need != need || p.Bound != 32 || p.OK != (need <= 32) {
			t.Errorf("%s: %+v; want λ %.3f, L %.3f, need %d", p.Region, p, lambda, inflight, need)
		}
	}
	// Scaling latencies by 1/10 shrinks what is in flight.
	ld.Scale = 0.1
	small, err := Size(cfg, []*Compiled{c}, ld)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ps {
		if ps[i].InFlight > 0 && small[i].InFlight >= ps[i].InFlight {
			t.Errorf("%s: in flight %v at 1/10 vs %v at 1", ps[i].Region, small[i].InFlight, ps[i].InFlight)
		}
	}
	// Too much load for the bounds.
	ld.Scale, ld.Rate = 1, 1000
	big, err := Size(cfg, []*Compiled{c}, ld)
	if err != nil {
		t.Fatal(err)
	}
	if len(Sizes(big).Undersized()) == 0 {
		t.Error("1000 req/s per site fits pools of 2 × 32")
	}
	var buf bytes.Buffer
	if err := Sizes(big).WriteText(&buf); err != nil || !strings.Contains(buf.String(), "UNDERSIZED") {
		t.Errorf("table %q, %v", buf.String(), err)
	}
	for _, bad := range []Load{{Rate: 0, SLAMix: ld.SLAMix, ExecMix: ld.ExecMix}, {Rate: 1, SLAMix: ld.SLAMix, ExecMix: loadgen.Mix[uint8]{{Value: 9, Weight: 1}}}} {
		if _, err := Size(cfg, []*Compiled{c}, bad); err == nil {
			t.Errorf("load %+v accepted", bad)
		}
	}
	if _, err := Size(cfg, nil, ld); err == nil {
		t.Error("no hours accepted")
	}
}

func TestReadDaemonLogAndSchedule(t *testing.T) {
	log := `{"time":"2024-05-01T12:00:00.000Z","level":"INFO","msg":"p4ctl run","targets":1}
garbage
{"time":"2024-05-01T12:00:00.010Z","level":"INFO","msg":"plan","hour":"2022-01-10T00:00:00Z","policy":"C"}
{"time":"2024-05-01T12:00:01.300Z","level":"INFO","msg":"pushed","target":"bmv2","hour":"2022-01-10T00:00:00Z","epoch":"0→1"}
{"time":"2024-05-01T12:00:30.000Z","level":"INFO","msg":"plan","hour":"2022-01-10T01:00:00Z"}
{"time":"2024-05-01T12:00:31.500Z","level":"INFO","msg":"pushed","hour":"2022-01-10T01:00:00Z"}
{"time":"2024-05-01T12:01:00.000Z","level":"INFO","msg":"plan","hour":"2022-01-10T02:00:00Z"}
`
	ap, err := ReadDaemonLog(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	if len(ap) != 3 || !ap[1].Planned.Equal(base.Add(30*time.Second)) || !ap[1].Pushed.Equal(base.Add(31500*time.Millisecond)) ||
		!ap[2].Pushed.IsZero() || ap[2].Hour.Hour() != 2 {
		t.Fatalf("applied %+v", ap)
	}
	s := &Schedule{Applied: ap, Grace: time.Second, Margin: 50 * time.Millisecond}
	for _, c := range []struct {
		at   time.Duration
		want []int
	}{
		{-time.Second, []int{0}},
		{10 * time.Second, []int{0}},
		{29960 * time.Millisecond, []int{0, 1}}, // the margin before the plan
		{30500 * time.Millisecond, []int{0, 1}}, // flip done by 31.5 − 1 s
		{30540 * time.Millisecond, []int{0, 1}}, // … plus the margin
		{30560 * time.Millisecond, []int{1}},    //
		{59 * time.Second, []int{1}},            //
		{61 * time.Second, []int{1, 2}},         // hour 2 never finished
		{time.Hour, []int{1, 2}},                //
		{29940 * time.Millisecond, []int{0}},    //
	} {
		got := s.At(base.Add(c.at))
		if len(got) != len(c.want) || got[0] != c.want[0] || got[len(got)-1] != c.want[len(c.want)-1] {
			t.Errorf("At(+%v) = %v, want %v", c.at, got, c.want)
		}
	}
	if got := (&Schedule{}).At(base); got != nil {
		t.Errorf("no hours: %v", got)
	}
	for _, bad := range []string{
		`{"time":"2024-05-01T12:00:00Z","msg":"pushed","hour":"2022-01-10T00:00:00Z"}`, // never planned
		`{"time":"2024-05-01T12:00:00Z","msg":"plan","hour":"noon"}`,
		`{"msg":"plan","hour":"2022-01-10T00:00:00Z"}`,
	} {
		if _, err := ReadDaemonLog(strings.NewReader(bad)); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// FuzzReadDaemonLog: any input is read or refused, never a panic, and
// every applied hour read has a plan time.
func FuzzReadDaemonLog(f *testing.F) {
	f.Add(`{"time":"2024-05-01T12:00:00Z","msg":"plan","hour":"2022-01-10T00:00:00Z"}` + "\n" +
		`{"time":"2024-05-01T12:00:01Z","msg":"pushed","hour":"2022-01-10T00:00:00Z"}`)
	f.Add("{\n}")
	f.Fuzz(func(t *testing.T, s string) {
		ap, err := ReadDaemonLog(strings.NewReader(s))
		if err != nil {
			return
		}
		for _, a := range ap {
			if a.Planned.IsZero() {
				t.Fatalf("%q: applied hour without a plan time: %+v", s, a)
			}
		}
	})
}

func TestSLAReport(t *testing.T) {
	topo, err := Plan(load(t), 0.1)
	if err != nil {
		t.Fatal(err)
	}
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	// Mumbai (site 1) → eu-west-1 (region 3): 97.9 ms at 1/10, against
	// the 1000 ms class's 100 ms budget. The emulated latency counts the
	// drawn execution time; what the server's sleeps overran is overhead
	// (server slack).
	recs := []loadgen.Record{
		// overhead 1.1: fits
		{ID: 1, SLAms: 1000, Outcome: loadgen.OK, Site: 1, Region: 3, RTT: ms(99.5), Timed: true, ServerExec: ms(0.5), ServerDrawn: ms(0.5)},
		// overhead 4.6, of which 3 + 0.5 ms of server slack: a raw miss only
		{ID: 2, SLAms: 1000, Outcome: loadgen.OK, Site: 1, Region: 3, RTT: ms(103), Timed: true, ServerExec: ms(3.5), ServerDrawn: ms(0.5), ServerDelay: ms(98.4)},
		// drew 3 ms: both miss
		{ID: 3, SLAms: 1000, Outcome: loadgen.OK, Site: 1, Region: 3, RTT: ms(104), Timed: true, ServerExec: ms(3), ServerDrawn: ms(3)},
		{ID: 4, SLAms: 3000, Outcome: loadgen.OK, Site: 1, Region: 0, RTT: ms(20), Timed: true, ServerQueue: ms(0.2)}, // 19.6 + 0.2
		{ID: 5, SLAms: 3000, Outcome: loadgen.OK, Site: 2, Region: 1, RTT: ms(5)},                                     // untimed: 4 ms path
		{ID: 6, SLAms: 300, Outcome: loadgen.Nack, Site: 1, Region: 0},
		{ID: 7, SLAms: 300, Outcome: loadgen.Timeout},
	}
	rep, err := SLA(topo, recs)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sent != 7 || rep.Replied != 5 || rep.Unanswered != 2 || rep.Untimed != 1 || rep.EmulatedViolations != 3 || rep.RawOverBudget != 4 {
		t.Errorf("report %+v", rep)
	}
	if rep.Overhead.N != 5 || rep.Overhead.P50 != 1.1 || rep.Overhead.Max != 4.6 {
		t.Errorf("overhead %+v", rep.Overhead)
	}
	if rep.ServerSlack.N != 4 || rep.ServerSlack.Max != 3.5 || rep.Outside.N != 4 || rep.Outside.Max != 3.1 {
		t.Errorf("server slack %+v, outside %+v", rep.ServerSlack, rep.Outside)
	}
	var c1000 SLAClass
	for _, c := range rep.Classes {
		if c.SLAms == 1000 {
			c1000 = c
		}
	}
	if c1000.Sent != 3 || c1000.EmulatedViolations != 1 || c1000.RawOverBudget != 2 || c1000.MinMarginMs != -0.9 || c1000.BudgetMs != 100 {
		t.Errorf("1000 ms class %+v", c1000)
	}
	if len(rep.Paths) != 3 || rep.Paths[0].Region != "ap-south-1" || rep.Paths[1].Region != "eu-west-1" || rep.Paths[1].Replies != 3 || rep.Paths[1].RawOverBudget != 2 {
		t.Errorf("paths %+v", rep.Paths)
	}
	var buf bytes.Buffer
	if err := rep.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"SLA violations at the emulated latencies (P95 × 0.1 + server queue + drawn execution; what routing controls): 3 of 7", "server timer slack", "raw RTT over budget", "4 of 7"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, buf.String())
		}
	}
	if _, err := SLA(topo, []loadgen.Record{{Outcome: loadgen.OK, Site: 9, Region: 0}}); err == nil {
		t.Error("a path without a delay accepted")
	}
}

// Two hours: each request is accounted at the hour that decided it, and a
// request in a flip agrees when either plan predicts it.
func TestCarbonHours(t *testing.T) {
	cfg := load(t)
	h1, err := Compile(cfg, time.Date(2022, 1, 10, 1, 0, 0, 0, time.UTC), 1)
	if err != nil {
		t.Fatal(err)
	}
	h2, err := Compile(cfg, time.Date(2022, 1, 10, 2, 0, 0, 0, time.UTC), 1)
	if err != nil {
		t.Fatal(err)
	}
	r1, r2 := compiler.NewRouter(h1.State), compiler.NewRouter(h2.State)
	// Find a class the two hours route differently.
	var sla uint16
	for _, s := range []uint16{300, 500, 800, 1000, 3000} {
		if r1.Route(1, s, 0).Region != r2.Route(1, s, 0).Region {
			sla = s
		}
	}
	if sla == 0 {
		t.Fatal("hours 1 and 2 route mumbai identically; pick other hours")
	}
	a, b := r1.Route(1, sla, 0).Region, r2.Route(1, sla, 0).Region
	recs := []loadgen.Record{
		{ID: 1, SLAms: sla, Outcome: loadgen.OK, Site: 1, Region: a}, // hour 1
		{ID: 2, SLAms: sla, Outcome: loadgen.OK, Site: 1, Region: a}, // flip, decided by hour 1
		{ID: 3, SLAms: sla, Outcome: loadgen.OK, Site: 1, Region: b}, // flip, decided by hour 2
		{ID: 4, SLAms: sla, Outcome: loadgen.OK, Site: 1, Region: b}, // hour 2
		{ID: 5, SLAms: sla, Outcome: loadgen.OK, Site: 1, Region: a}, // hour 2, but hour 1's region: disagrees
	}
	rep, err := CarbonHours(cfg, []*Compiled{h1, h2}, recs, [][]int{{0}, {0, 1}, {0, 1}, {1}, {1}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.PlanAgree != 4 || rep.PlanDisagree != 1 || rep.InFlip != 2 || len(rep.Hours) != 2 ||
		rep.Hours[0].Requests != 2 || rep.Hours[1].Requests != 3 || rep.Hours[1].PlanDisagree != 1 {
		t.Errorf("report %+v", rep)
	}
	want := (h1.Carbon.Intensity[a]*2 + h2.Carbon.Intensity[b]*2 + h2.Carbon.Intensity[a]) / 5
	if math.Abs(rep.MeanGCO2-want) > 0.01 {
		t.Errorf("mean %v, want %v", rep.MeanGCO2, want)
	}
	if _, err := CarbonHours(cfg, []*Compiled{h1}, recs, [][]int{{0}}); err == nil {
		t.Error("candidate lists of the wrong length accepted")
	}
	if _, err := CarbonHours(cfg, []*Compiled{h1}, recs[:1], [][]int{{3}}); err == nil {
		t.Error("an hour out of range accepted")
	}
}
