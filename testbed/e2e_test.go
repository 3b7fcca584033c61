package testbed_test

import (
	"context"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/internal/testing/fabric"
	"github.com/p4ctl/p4ctl/pkg/compiler"
	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/dataplane/p4rtserver"
	"github.com/p4ctl/p4ctl/pkg/fnserver"
	"github.com/p4ctl/p4ctl/pkg/loadgen"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
	"github.com/p4ctl/p4ctl/pkg/wire"
	"github.com/p4ctl/p4ctl/testbed"
)

// testbedConfig is the configuration `make mininet` runs.
const testbedConfig = "../mininet/testbed.yaml"

// hour is 2022-01-10 00:00 UTC, when the offline model ranks Singapore and
// Sydney cleaner than Mumbai, so mumbai's traffic spreads over three
// regions.
var hour = time.Date(2022, 1, 10, 0, 0, 0, 0, time.UTC)

// rig is the loopback testbed: the embedded switch behind its P4Runtime
// server, a controller connection, `serve` servers and the UDP fabric.
type rig struct {
	cfg      *config.Config
	compiled *testbed.Compiled
	topo     *testbed.Topology
	sw       *dataplane.Switch
	fab      *fabric.Fabric
	servers  []*fnserver.Server
	read     func(ctx context.Context, name string) []uint64 // register or counter cells via P4Runtime
}

func newRig(t testing.TB, class0 fnserver.Dist, serverDelays []fnserver.SiteDelay) *rig {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	cfg, err := config.Load(testbedConfig)
	if err != nil {
		t.Fatal(err)
	}
	compiled, err := testbed.Compile(cfg, hour, 1)
	if err != nil {
		t.Fatal(err)
	}
	topo, err := testbed.Plan(cfg, testbed.DefaultLatencyScale)
	if err != nil {
		t.Fatal(err)
	}
	sw, err := dataplane.New(dataplane.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := p4rtserver.New(sw)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)

	// The controller's part: connect, become primary, push the compiled
	// state — what `p4ctl push` / `p4ctl run` do.
	c, err := testbed.Connect(ctx, lis.Addr().String(), 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	plan, err := testbed.Push(ctx, c, compiled.State)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Len() != len(compiled.State.Entries) {
		t.Fatalf("push wrote %d updates for %d entries", plan.Len(), len(compiled.State.Entries))
	}
	// Pushing again is a no-op (the reconcile reads back what it wrote).
	if again, err := testbed.Push(ctx, c, compiled.State); err != nil || !again.Empty() {
		t.Fatalf("second push: %v, plan %v", err, again)
	}

	r := &rig{cfg: cfg, compiled: compiled, topo: topo, sw: sw}
	r.read = func(ctx context.Context, name string) []uint64 {
		t.Helper()
		var out []uint64
		if regs, err := c.ReadRegister(ctx, name, -1); err == nil {
			for _, cell := range regs {
				out = append(out, cell.Value)
			}
			return out
		}
		cells, err := c.ReadCounter(ctx, name, -1)
		if err != nil {
			t.Fatalf("read %s: %v", name, err)
		}
		for _, cell := range cells {
			out = append(out, uint64(cell.Packets))
		}
		return out
	}

	var hosts []fabric.Host
	for _, h := range topo.Clients {
		hosts = append(hosts, fabric.Host{Name: h.Name, Port: uint32(h.Port), MAC: mac(t, h.MAC), IP: netip.MustParseAddr(h.IP)})
	}
	sctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() {
		stop()
		wg.Wait()
	})
	for _, h := range topo.Servers {
		s, err := fnserver.New(fnserver.Config{Addr: "127.0.0.1:0", ServerID: uint16(h.ServerID),
			Classes: map[uint8]fnserver.Dist{0: class0},
			Default: fnserver.Dist{Kind: fnserver.Fixed, Mean: time.Millisecond},
			Delays:  serverDelays, Timing: true})
		if err != nil {
			t.Fatal(err)
		}
		r.servers = append(r.servers, s)
		wg.Add(1)
		go func() { defer wg.Done(); _ = s.Serve(sctx) }()
		hosts = append(hosts, fabric.Host{Name: h.Name, Port: uint32(h.Port), MAC: mac(t, h.MAC), IP: netip.MustParseAddr(h.IP), App: s.Addr()})
	}
	fab, err := fabric.New(sw, fabric.Config{Hosts: hosts, Service: netip.MustParseAddr(topo.Service)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fab.Close() })
	r.fab = fab
	return r
}

func mac(t testing.TB, s string) net.HardwareAddr {
	t.Helper()
	m, err := net.ParseMAC(s)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The acceptance test of issue 7 over loopback: two client sites run
// `loadgen` through the embedded switch to ten `serve` servers in five
// regions; every request is answered, routed as the compiled plan says,
// accounted against its SLA, and every server slot is released.
func TestLoopbackEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run (2 s of traffic) skipped in -short mode")
	}
	// Singapore's clients get 20 ms added by every server before the reply
	// (the servers' stand-in for WAN latency), and judge SLAs at 1/100
	// scale, so classes with a budget below 20 ms must all be late.
	// Mumbai's judge at 10× scale (budgets of 3 s and more), so every reply
	// meets its SLA even on a machine loaded enough to delay loopback
	// packets by hundreds of milliseconds.
	const singaporeDelay = 20 * time.Millisecond
	r := newRig(t, fnserver.Dist{Kind: fnserver.Exponential, Mean: 200 * time.Microsecond}, []fnserver.SiteDelay{{Site: 2, Delay: singaporeDelay}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	type run struct {
		site  string
		scale float64
		res   *loadgen.Result
		err   error
	}
	runs := []*run{{site: "mumbai", scale: 10}, {site: "singapore", scale: 0.01}}
	var wg sync.WaitGroup
	for i, rn := range runs {
		target, err := r.fab.ServiceAddr("c" + rn.site)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rn.res, rn.err = loadgen.Run(ctx, loadgen.Config{Target: target, Rate: 400, Duration: 1500 * time.Millisecond,
				CV: 1, SLAScale: rn.scale, Seed: uint64(i + 1), FirstID: uint32(i) << 24,
				ExecMix: loadgen.Mix[uint8]{{Value: 0, Weight: 90}, {Value: 1, Weight: 10}}})
		}()
	}
	wg.Wait()

	rt := compiler.NewRouter(r.compiled.State)
	var all []loadgen.Record
	siteID := map[string]uint16{"mumbai": 1, "singapore": 2}
	for _, rn := range runs {
		if rn.err != nil {
			t.Fatalf("%s: %v", rn.site, rn.err)
		}
		s := rn.res.Summary()
		t.Logf("%s: sent %d (%.1f req/s), replied %d, RTT p50 %.3f ms p95 %.3f ms p99 %.3f ms max %.3f ms, SLA met %d (%.2f %%)",
			rn.site, s.Sent, s.SendRate, s.Replied, s.RTT.P50, s.RTT.P95, s.RTT.P99, s.RTT.Max, s.SLAMet, s.SLAMetPct)
		if s.Sent < 300 {
			t.Errorf("%s: only %d requests sent in 1.5 s at 400/s", rn.site, s.Sent)
		}
		if s.Replied != s.Sent || s.Unmatched != 0 || s.Malformed != 0 {
			t.Errorf("%s: %d sent, %d replied, %d nacked, %d timed out, %d unmatched, %d malformed",
				rn.site, s.Sent, s.Replied, s.Nacked, s.TimedOut, s.Unmatched, s.Malformed)
		}
		// Every decision is the compiled plan's, exactly.
		for _, rec := range rn.res.Records {
			if rec.Outcome != loadgen.OK {
				continue
			}
			want := rt.Route(siteID[rn.site], rec.SLAms, 0)
			// Region selection sets no flag here (capacity is unlimited and
			// every class has a feasible region); dispatch may hold or force
			// when a pool is momentarily at its bound.
			if rec.Site != siteID[rn.site] || rec.Region != want.Region || rec.Flags&(wire.FlagFallback|wire.FlagSpilled) != 0 {
				t.Fatalf("%s request %d (SLA %d): site %d region %d flags %v, want site %d region %d, no fallback or spill",
					rn.site, rec.ID, rec.SLAms, rec.Site, rec.Region, rec.Flags, siteID[rn.site], want.Region)
			}
			budget := time.Duration(float64(rec.SLAms) * rn.scale * float64(time.Millisecond))
			if rec.SLAMet != (rec.RTT <= budget) {
				t.Fatalf("%s request %d: RTT %v, budget %v, SLA met %v", rn.site, rec.ID, rec.RTT, budget, rec.SLAMet)
			}
			// The server's timing record: what it drew, spent and slept.
			wantDelay := time.Duration(0)
			if rn.site == "singapore" {
				wantDelay = singaporeDelay
			}
			if !rec.Timed || rec.ServerExec < rec.ServerDrawn || rec.ServerDelay < wantDelay || (wantDelay == 0 && rec.ServerDelay != 0) ||
				rec.ServerExec+rec.ServerDelay > rec.RTT {
				t.Fatalf("%s request %d: timed %v, exec %v (drawn %v), delay %v, RTT %v", rn.site, rec.ID, rec.Timed, rec.ServerExec, rec.ServerDrawn, rec.ServerDelay, rec.RTT)
			}
			if srv := r.topo.Servers[rec.Server]; srv.RegionIndex != int(rec.Region) {
				t.Fatalf("request %d: server %d is in region %d, not %d", rec.ID, rec.Server, srv.RegionIndex, rec.Region)
			}
		}
		// Routing shares follow the SLA mix through the plan.
		want := map[int]float64{}
		var total float64
		for _, sh := range loadgen.DefaultSLAMix() {
			want[int(rt.Route(siteID[rn.site], sh.Value, 0).Region)] += sh.Weight
			total += sh.Weight
		}
		for region, w := range want {
			exp := 100 * w / total
			if got := s.Share(uint8(region)); got < exp-12 || got > exp+12 {
				t.Errorf("%s: region %d share %.1f %%, want about %.1f %%", rn.site, region, got, exp)
			}
		}
		// SLA accounting.
		for _, c := range s.Classes {
			switch {
			case rn.site == "mumbai" && c.Met != c.Sent:
				t.Errorf("mumbai SLA %d ms (budget %.0f ms): %d of %d met over loopback", c.SLAms, c.BudgetMs, c.Met, c.Sent)
			case rn.site == "singapore" && c.BudgetMs < float64(singaporeDelay.Milliseconds()) && (c.Met != 0 || c.Late != c.Sent):
				t.Errorf("singapore SLA %d ms (budget %.0f ms < %v added): %d met, %d late of %d", c.SLAms, c.BudgetMs, singaporeDelay, c.Met, c.Late, c.Sent)
			}
			if c.Met+c.Late+c.Nacked+c.TimedOut != c.Sent {
				t.Errorf("%s SLA %d: met %d + late %d + nacked %d + timed out %d != sent %d", rn.site, c.SLAms, c.Met, c.Late, c.Nacked, c.TimedOut, c.Sent)
			}
		}
		all = append(all, rn.res.Records...)
	}

	// The switch: no malformed or rejected packets, every bind released.
	rctx, rcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer rcancel()
	ev := r.read(rctx, pipeline.CounterDispatchEvents)
	for i, v := range r.read(rctx, pipeline.CounterDispatchEventsFallback) {
		ev[i] += v
	}
	for _, e := range []pipeline.Event{pipeline.EventMalformed, pipeline.EventReplyRejected, pipeline.EventUnreachable, pipeline.EventNack, pipeline.EventFallback} {
		if ev[e] != 0 {
			t.Errorf("dispatch_events[%s] = %d, want 0", e, ev[e])
		}
	}
	if got := ev[pipeline.EventReplyReleased]; got != uint64(len(all)) {
		t.Errorf("dispatch_events[reply-released] = %d, want %d (one per request)", got, len(all))
	}
	regs := []string{pipeline.RegisterServerWork, pipeline.RegisterRegionOutstanding}
	for slot := range pipeline.Candidates {
		regs = append(regs, pipeline.RegisterServerCredit(slot))
	}
	for _, reg := range regs {
		for i, v := range r.read(rctx, reg) {
			if reg != pipeline.RegisterServerWork && reg != pipeline.RegisterRegionOutstanding {
				v = uint64(pipeline.CreditFromCell(v).Outstanding)
			}
			if v != 0 {
				t.Errorf("%s[%d] = %d after the run, want 0 (slot not released)", reg, i, v)
			}
		}
	}
	bound := r.read(rctx, pipeline.CounterServerBound)
	var boundSum uint64
	for _, v := range bound {
		boundSum += v
	}
	if boundSum != uint64(len(all)) {
		t.Errorf("server_bound sums to %d, want %d", boundSum, len(all))
	}
	st := r.fab.Stats()
	if st.BadFrame != 0 || st.NoHost != 0 || st.Misdelivered != 0 || st.SendErrors != 0 || st.UnknownApp != 0 || len(st.Dropped) != 0 {
		t.Errorf("fabric: %+v", st)
	}
	// A server counts a reply after its send returns, which may be after
	// the client has read it: poll briefly for the last counts.
	var replied uint64
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		replied = 0
		for _, s := range r.servers {
			replied += s.Stats().Replied
		}
		if replied >= uint64(len(all)) || time.Now().After(deadline) {
			break
		}
	}
	for _, s := range r.servers {
		if ss := s.Stats(); ss.Malformed != 0 || ss.Misrouted != 0 || ss.Dropped != 0 {
			t.Errorf("server stats %+v", ss)
		}
	}
	if replied != uint64(len(all)) {
		t.Errorf("servers replied %d times for %d requests", replied, len(all))
	}

	// Carbon accounting over both sites' records.
	rep, err := testbed.Carbon(r.cfg, r.compiled, all)
	if err != nil {
		t.Fatal(err)
	}
	if rep.PlanDisagree != 0 || rep.PlanAgree != len(all) {
		t.Errorf("carbon report: %d agree, %d disagree with the plan", rep.PlanAgree, rep.PlanDisagree)
	}
	if !(rep.SavingPct > 0) || rep.MeanGCO2 >= rep.BaselineGCO2 {
		t.Errorf("policy C saved %.2f %% (mean %.1f vs baseline %.1f)", rep.SavingPct, rep.MeanGCO2, rep.BaselineGCO2)
	}
	t.Logf("carbon: mean %.1f vs nearest-region %.1f gCO2/kWh: saving %.2f %%", rep.MeanGCO2, rep.BaselineGCO2, rep.SavingPct)
}
