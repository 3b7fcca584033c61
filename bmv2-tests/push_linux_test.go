package bmv2tests

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	"github.com/p4ctl/p4ctl/internal/testing/bmv2harness"
	"github.com/p4ctl/p4ctl/pkg/compiler"
	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/controller"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

// pipelineTB is requireBMv2 for benchmarks: the compiled v1model pipeline,
// or a skip with the reason.
func pipelineTB(b *testing.B) *p4v1.ForwardingPipelineConfig {
	b.Helper()
	bmv2harness.Require(b)
	dir := buildDir()
	info, err := p4rt.LoadP4Info(filepath.Join(dir, "p4ctl.p4info.txtpb"))
	if err != nil {
		b.Skipf("no p4c P4Info for p4src/v1model in %s (run make p4): %v", dir, err)
	}
	blob, err := os.ReadFile(filepath.Join(dir, "p4ctl.json"))
	if err != nil {
		b.Skipf("no BMv2 JSON for p4src/v1model in %s (run make p4): %v", dir, err)
	}
	return &p4v1.ForwardingPipelineConfig{P4Info: info, P4DeviceConfig: blob, Cookie: &p4v1.ForwardingPipelineConfig_Cookie{Cookie: 0x4c7}}
}

// planOf is the example configuration with /32 L3 routes added until its
// compiled state has n entries, planned for one hour.
func planOf(b *testing.B, n int) *controller.Plan {
	b.Helper()
	cfg, err := config.Load("../examples/mumbai.yaml")
	if err != nil {
		b.Fatal(err)
	}
	plan := func() *controller.Plan {
		src, err := cfg.OpenCarbon()
		if err != nil {
			b.Fatal(err)
		}
		pl, err := controller.NewPlanner(cfg, &controller.CarbonFeed{Source: src, MapYears: true}, nil)
		if err != nil {
			b.Fatal(err)
		}
		return pl.Plan(time.Date(2022, 1, 10, 0, 0, 0, 0, time.UTC))
	}
	st, err := plan().Compile(1)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; len(st.Entries)+i < n; i++ {
		a := netip.AddrFrom4([4]byte{172, 16 + byte(i>>16), byte(i >> 8), byte(i)})
		cfg.Routes.L3 = append(cfg.Routes.L3, config.L3Route{Prefix: config.Prefix{Prefix: netip.PrefixFrom(a, 32)}, Port: 1 + i%400})
	}
	p := plan()
	if st, err = p.Compile(1); err != nil || len(st.Entries) != n {
		b.Fatalf("compiled %d entries (err %v), want %d", len(st.Entries), err, n)
	}
	return p
}

// bmv2Rig is one BMv2 and a primary client with the given write batch.
type bmv2Rig struct {
	sw       *bmv2harness.Switch
	pipe     *p4v1.ForwardingPipelineConfig
	election uint64 // the last election id used: each client takes a higher one
}

// primary returns a new primary client of an emptied switch running the
// pipeline.
func (r *bmv2Rig) primary(b *testing.B, batch int) *p4rt.Client {
	b.Helper()
	c := r.fresh(b, batch)
	if _, err := c.Arbitrate(context.Background()); err != nil {
		b.Fatal(err)
	}
	r.reset(b, c)
	return c
}

// fresh returns a new client that has not arbitrated yet.
func (r *bmv2Rig) fresh(b *testing.B, batch int) *p4rt.Client {
	b.Helper()
	r.election++
	c, err := r.sw.Client(p4rt.WithElectionID(p4rt.Election(r.election)), p4rt.WithBatchSize(batch))
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// reset empties the switch: pushing the pipeline again clears every table.
func (r *bmv2Rig) reset(b *testing.B, c *p4rt.Client) {
	b.Helper()
	if err := c.SetPipeline(context.Background(), p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT, r.pipe); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkBMv2Push writes the same 10 000 entries (the size of the resync
// below) into an emptied BMv2 three ways in the same run, at 1, 10, 100 and
// 1000 updates per WriteRequest:
//   - ctl: p4ctl's push (Driver.Sync after an invalidation: check the
//     pipeline, read the switch back, plan the hitless update, translate,
//     write phase by phase);
//   - raw: a bare Go P4Runtime writer of the same entries: it builds their
//     P4Runtime updates (with p4ctl's translator, the cheapest builder we
//     have) and sends them by a loop of P4RuntimeClient.Write;
//   - floor: the same loop sending updates built before the clock starts
//     (the wire and the switch alone, no writer does less).
//
// It reports the three rates, ctl/raw (goal ≥ 0.9), ctl/floor, and
// overhead-ms: what a push costs beyond the floor. Skips without BMv2 and
// root.
func BenchmarkBMv2Push(b *testing.B) {
	pipe := pipelineTB(b)
	const n = 10000
	p := planOf(b, n)
	r := &bmv2Rig{sw: bmv2harness.StartT(b, bmv2harness.Config{}), pipe: pipe}
	ctx := context.Background()
	for _, batch := range []int{1, 10, 100, 1000} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			c := r.primary(b, batch)
			defer c.Close()
			d := controller.NewDriverWithClient(controller.Target{Name: "bmv2"}, c, controller.DriverOptions{Grace: -1})
			if err := d.ConnectReadOnly(ctx); err != nil {
				b.Fatal(err)
			}
			want, err := p.Compile(1)
			if err != nil {
				b.Fatal(err)
			}
			u, err := compiler.PlanUpdate(&compiler.State{}, want)
			if err != nil {
				b.Fatal(err)
			}
			var runs [][]compiler.Update
			for _, ph := range u.Phases() {
				runs = append(runs, controller.OpRuns(ph.Updates)...)
			}
			build := func() []*p4v1.Update {
				var ups []*p4v1.Update
				for _, run := range runs {
					us, err := d.Translator().Updates(run)
					if err != nil {
						b.Fatal(err)
					}
					ups = append(ups, us...)
				}
				return ups
			}
			send := func(reqs []*p4v1.WriteRequest) {
				for _, req := range reqs {
					if _, err := c.RPC().Write(ctx, req); err != nil {
						b.Fatal(err)
					}
				}
			}
			entries := len(build())
			var ctlT, rawT, floorT time.Duration
			writes := 0
			ctl := func() {
				b.StopTimer()
				r.reset(b, c)
				d.Invalidate()
				b.StartTimer()
				t0 := time.Now()
				rep, err := d.Sync(ctx, p)
				ctlT += time.Since(t0)
				if err != nil {
					b.Fatal(err)
				}
				writes = rep.Writes
			}
			raw := func() {
				b.StopTimer()
				r.reset(b, c)
				b.StartTimer()
				t0 := time.Now()
				send(c.WriteRequests(build(), p4rt.WriteBatchSize(batch)))
				rawT += time.Since(t0)
			}
			floor := func() {
				b.StopTimer()
				r.reset(b, c)
				reqs := c.WriteRequests(build(), p4rt.WriteBatchSize(batch))
				b.StartTimer()
				t0 := time.Now()
				send(reqs)
				floorT += time.Since(t0)
			}
			order := [][]func(){{ctl, raw, floor}, {raw, floor, ctl}, {floor, ctl, raw}}
			i := 0
			for b.Loop() {
				for _, f := range order[i%3] { // rotate, so that none always runs first
					f()
				}
				i++
			}
			rate := func(k int, t time.Duration) float64 { return float64(k*b.N) / t.Seconds() }
			b.ReportMetric(rate(writes, ctlT), "ctl-entries/s")
			b.ReportMetric(rate(entries, rawT), "raw-entries/s")
			b.ReportMetric(rate(entries, floorT), "floor-entries/s")
			b.ReportMetric(rate(writes, ctlT)/rate(entries, rawT), "ctl/raw")
			b.ReportMetric(rate(writes, ctlT)/rate(entries, floorT), "ctl/floor")
			b.ReportMetric(float64(ctlT-floorT)/float64(b.N)/float64(time.Millisecond), "overhead-ms")
		})
	}
}

// BenchmarkBMv2Resync10k is the controller's resync after a restart: BMv2
// holds the 10 000-entry state already; a fresh driver connects, reads it
// back, compiles, plans and finds nothing to write (goal ≤ 0.1 s). Beside
// it, in the same run, the bare read of the same entries (one Read of
// every table), the floor of any resync: ms/resync, ms/read and
// resync/read. Skips without BMv2 and root.
func BenchmarkBMv2Resync10k(b *testing.B) {
	pipe := pipelineTB(b)
	const n = 10000
	p := planOf(b, n)
	r := &bmv2Rig{sw: bmv2harness.StartT(b, bmv2harness.Config{}), pipe: pipe}
	ctx := context.Background()
	c := r.primary(b, p4rt.DefaultBatchSize)
	defer c.Close()
	first := controller.NewDriverWithClient(controller.Target{Name: "bmv2"}, c, controller.DriverOptions{Grace: -1})
	if err := first.ConnectReadOnly(ctx); err != nil {
		b.Fatal(err)
	}
	if rep, err := first.Sync(ctx, p); err != nil || rep.Writes < n {
		b.Fatalf("initial push: %d writes, %v", rep.Writes, err)
	}
	c.Close()
	var resyncT, readT time.Duration
	for b.Loop() {
		// A restarted controller: a new client dials, arbitrates, reads
		// the switch back, compiles and plans.
		t0 := time.Now()
		cc := r.fresh(b, p4rt.DefaultBatchSize)
		d := controller.NewDriverWithClient(controller.Target{Name: "bmv2"}, cc, controller.DriverOptions{Grace: -1})
		if err := d.Connect(ctx); err != nil {
			b.Fatal(err)
		}
		rep, err := d.Sync(ctx, p)
		resyncT += time.Since(t0)
		if err != nil || rep.Writes != 0 {
			b.Fatalf("resync: %d writes, %v", rep.Writes, err)
		}
		t0 = time.Now()
		if _, err := d.ReadState(ctx); err != nil {
			b.Fatal(err)
		}
		readT += time.Since(t0)
		cc.Close()
	}
	b.ReportMetric(float64(resyncT)/float64(b.N)/float64(time.Millisecond), "ms/resync")
	b.ReportMetric(float64(readT)/float64(b.N)/float64(time.Millisecond), "ms/read")
	b.ReportMetric(float64(resyncT)/float64(readT), "resync/read")
}
