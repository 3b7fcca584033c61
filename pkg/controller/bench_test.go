package controller_test

import (
	"context"
	"fmt"
	"net/netip"
	"runtime"
	"testing"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	"github.com/p4ctl/p4ctl/internal/testing/cputime"
	"github.com/p4ctl/p4ctl/pkg/compiler"
	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/controller"
	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

// bigConfig is the Mumbai example with enough /32 L3 routes that the
// compiled state has n entries.
func bigConfig(b *testing.B, n int) (*config.Config, *controller.Plan) {
	cfg := loadConfig(b)
	base := plans(b, cfg, start, 1, nil)[0]
	st, err := base.Compile(1)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; len(st.Entries)+i < n; i++ {
		a := netip.AddrFrom4([4]byte{172, 16 + byte(i>>16), byte(i >> 8), byte(i)})
		cfg.Routes.L3 = append(cfg.Routes.L3, config.L3Route{Prefix: config.Prefix{Prefix: netip.PrefixFrom(a, 32)}, Port: 1 + i%400})
	}
	p := plans(b, cfg, start, 1, nil)[0]
	if st, err = p.Compile(1); err != nil || len(st.Entries) != n {
		b.Fatalf("compiled %d entries (err %v), want %d", len(st.Entries), err, n)
	}
	return cfg, p
}

// BenchmarkReconcile10k measures a full reconcile of a 10 000-entry state
// into an empty embedded switch through its P4Runtime server (bufconn), as
// the controller does on (re)connection: read the switch back, compile,
// plan the hitless update, translate and write — against a minimal raw
// writer in the same run: the same updates pre-built into batched
// WriteRequests (500 per request) and sent by a bare loop of
// P4RuntimeClient.Write calls. It reports the write rate of both and their
// ratio controller/raw (goal ≥ 0.9), in wall and CPU time (CPU time is
// steadier on a shared machine). The plan is compiled before the timed
// push (Plan.Compile memoises per epoch, one compile serves a fleet); the
// time to compile the 10 000 entries is reported separately.
func BenchmarkReconcile10k(b *testing.B) {
	const n = 10000
	cfg, p := bigConfig(b, n)
	ctx := context.Background()
	var rawT, ctlT, ctlCompile, rawCPU, ctlCPU time.Duration
	// fresh starts an empty embedded switch with a primary client; stop
	// ends both (so that earlier switches do not burden later rounds).
	fresh := func() (*p4rt.Client, func()) {
		c, stop := embeddedClient(b)
		if _, err := c.Arbitrate(ctx); err != nil {
			b.Fatal(err)
		}
		return c, stop
	}
	// The raw writer's requests: the same entries, translated once.
	c0, stop0 := fresh()
	defer stop0()
	idx, err := c0.Index(ctx)
	if err != nil {
		b.Fatal(err)
	}
	tr, err := controller.NewTranslator(idx)
	if err != nil {
		b.Fatal(err)
	}
	want, err := p.Compile(1)
	if err != nil {
		b.Fatal(err)
	}
	var ups []*p4v1.Update
	for _, ph := range mustPlan(b, want).Phases() {
		for _, run := range controller.OpRuns(ph.Updates) {
			us, err := tr.Updates(run)
			if err != nil {
				b.Fatal(err)
			}
			ups = append(ups, us...)
		}
	}
	reqs := c0.WriteRequests(ups)
	b.ResetTimer()
	for i := range b.N {
		raw := func() {
			c, stop := fresh()
			defer stop()
			rpc := c.RPC()
			for _, r := range reqs {
				r.ElectionId = &p4v1.Uint128{Low: 1}
			}
			runtime.GC()
			t0, cpu0 := time.Now(), cpuTime()
			for _, r := range reqs {
				if _, err := rpc.Write(ctx, r); err != nil {
					b.Fatal(err)
				}
			}
			rawT += time.Since(t0)
			rawCPU += cpuTime() - cpu0
		}
		ctl := func() {
			c, stop := fresh()
			defer stop()
			d := controller.NewDriverWithClient(controller.Target{Name: "bench"}, c, controller.DriverOptions{Grace: -1})
			if err := d.Connect(ctx); err != nil {
				b.Fatal(err)
			}
			runtime.GC()
			// Compiling is plan compute, not reconcile: a fleet shares one
			// compile per plan and epoch (Plan.Compile memoises), so it is
			// timed alone on a fresh plan and reported beside the ratio.
			fp := plans(b, cfg, start, 1, nil)[0]
			t0 := time.Now()
			if _, err := fp.Compile(1); err != nil {
				b.Fatal(err)
			}
			ctlCompile += time.Since(t0)
			runtime.GC()
			t0, cpu0 := time.Now(), cpuTime()
			rep, err := d.Sync(ctx, p)
			ctlT += time.Since(t0)
			ctlCPU += cpuTime() - cpu0
			if err != nil || rep.Writes != n {
				b.Fatalf("sync: %d writes, %v", rep.Writes, err)
			}
		}
		if i%2 == 0 {
			raw()
			ctl()
		} else {
			ctl()
			raw()
		}
	}
	total := float64(n * b.N)
	b.ReportMetric(total/ctlT.Seconds(), "ctl-entries/s")
	b.ReportMetric(total/rawT.Seconds(), "raw-entries/s")
	b.ReportMetric(rawT.Seconds()/ctlT.Seconds(), "ctl/raw")
	b.ReportMetric(ctlCompile.Seconds()*1000/float64(b.N), "compile-ms/op")
	b.ReportMetric(rawCPU.Seconds()/ctlCPU.Seconds(), "ctl/raw-cpu")
}

func mustPlan(b *testing.B, want *compiler.State) *compiler.UpdatePlan {
	u, err := compiler.PlanUpdate(&compiler.State{}, want)
	if err != nil {
		b.Fatal(err)
	}
	return u
}

func cpuTime() time.Duration { return cputime.ProcessTime() }

// embeddedClient starts an empty embedded switch and a client with
// election id 1 to it (not yet arbitrated); stop ends both.
func embeddedClient(b *testing.B) (*p4rt.Client, func()) {
	b.Helper()
	e, err := dataplane.Start(dataplane.Options{}, "")
	if err != nil {
		b.Fatal(err)
	}
	c, closeC, err := e.Client(p4rt.WithElectionID(p4rt.Election(1)))
	if err != nil {
		b.Fatal(err)
	}
	return c, func() { closeC(); e.Stop() }
}

// fleetOf starts n embedded switches (bufconn) and a controller driving
// all of them from cfg, connected; stop ends everything.
func fleetOf(b *testing.B, cfg *config.Config, n int) (*controller.Controller, func()) {
	b.Helper()
	var targets []controller.Target
	var stops []func()
	for i := range n {
		c, stop := embeddedClient(b)
		stops = append(stops, stop)
		targets = append(targets, controller.Target{Name: fmt.Sprintf("edge-%03d", i), Client: c})
	}
	src, err := cfg.OpenCarbon()
	if err != nil {
		b.Fatal(err)
	}
	ctl, err := controller.New(controller.Options{Config: cfg, Targets: targets, Feed: &controller.CarbonFeed{Source: src, MapYears: true},
		Driver: controller.DriverOptions{Grace: -1}})
	if err != nil {
		b.Fatal(err)
	}
	if err := ctl.Connect(context.Background()); err != nil {
		b.Fatal(err)
	}
	return ctl, func() {
		for _, s := range stops {
			s()
		}
	}
}

// BenchmarkFleetUpdate is one fleet-wide hourly update: the controller
// plans an hour (one compile, shared by every switch) and pushes it to 100
// embedded switches over bufconn concurrently (Controller.Step: each
// driver's hitless update, grace period 0 — the grace is a deliberate
// wait, not work), the example configuration, hour after hour. It reports
// ms/update (goal < 1000 on a 2-core machine) and x-one-switch: the time
// as a ratio to the same update of a one-switch controller measured in the
// same run (1 would be perfect parallelism; 100 none at all).
func BenchmarkFleetUpdate(b *testing.B) {
	const n = 100
	cfg := loadConfig(b)
	ctx := context.Background()
	one, stopOne := fleetOf(b, cfg, 1)
	defer stopOne()
	fleet, stop := fleetOf(b, cfg, n)
	defer stop()
	hour := start
	step := func(c *controller.Controller) time.Duration {
		t0 := time.Now()
		if _, reps, err := c.Step(ctx, hour); err != nil || len(reps) == 0 {
			b.Fatalf("step %s: %v", hour, err)
		}
		return time.Since(t0)
	}
	// Both at the first hour (the initial full sync), then hourly updates.
	step(one)
	step(fleet)
	var oneT, fleetT time.Duration
	runtime.GC()
	b.ResetTimer()
	for b.Loop() {
		hour = hour.Add(time.Hour)
		b.StopTimer()
		oneT += step(one)
		b.StartTimer()
		fleetT += step(fleet)
	}
	b.ReportMetric(float64(fleetT)/float64(b.N)/float64(time.Millisecond), "ms/update")
	b.ReportMetric(float64(fleetT)/float64(oneT), "x-one-switch")
	b.ReportMetric(n, "switches")
}
