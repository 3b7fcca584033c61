package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/protobuf/proto"

	"github.com/p4ctl/p4ctl/pkg/compiler"
	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/controller"
	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

var fastBackoff = p4rt.Backoff{Initial: 20 * time.Millisecond, Max: 200 * time.Millisecond, Multiplier: 2}

// restartable is an embedded switch on a loopback port that a test can
// kill and start again at the same address, with another pipeline.
type restartable struct {
	t    *testing.T
	addr string
	e    *dataplane.Embedded
}

func startRestartable(t *testing.T, opts dataplane.Options) *restartable {
	t.Helper()
	r := &restartable{t: t, addr: "127.0.0.1:0"}
	r.restart(opts)
	t.Cleanup(func() { r.e.Stop() })
	return r
}

// restart stops the switch (if running) and starts a fresh one — empty
// tables, the given pipeline — at the same address.
func (r *restartable) restart(opts dataplane.Options) {
	r.t.Helper()
	if r.e != nil {
		if err := r.e.Stop(); err != nil {
			r.t.Fatal(err)
		}
	}
	var err error
	for try := 0; try < 100; try++ { // the port may linger a moment after a stop
		if r.e, err = dataplane.Start(opts, r.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		r.t.Fatal(err)
	}
	r.addr = r.e.Addr()
}

// runController runs a real-time controller (offline carbon) driving the
// switch at addr until the test ends.
func runController(t *testing.T, cfg *config.Config, target controller.Target, opts controller.DriverOptions) *controller.Controller {
	t.Helper()
	src, err := cfg.OpenCarbon()
	if err != nil {
		t.Fatal(err)
	}
	target.Name, target.DeviceID, target.ElectionID = "sw", 1, p4rt.Election(1)
	opts.Grace, opts.Backoff, opts.Log = -1, fastBackoff, testLog(t)
	ctl, err := controller.New(controller.Options{Config: cfg, Targets: []controller.Target{target},
		Feed: &controller.CarbonFeed{Source: src, MapYears: true}, Driver: opts, Log: testLog(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctxT(t))
	done := make(chan error, 1)
	go func() { done <- ctl.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("controller: %v", err)
		}
	})
	return ctl
}

// inDesiredState reports whether the controller's target holds its current
// plan.
func inDesiredState(ctx context.Context, ctl *controller.Controller) bool {
	p, d := ctl.Current(), ctl.Drivers()[0]
	return p != nil && d.Client() != nil && d.Translator() != nil && inState(ctx, d, p)
}

// anotherP4Info is the program's P4Info with another package name: a
// different pipeline to the controller, accepted by the embedded switch.
func anotherP4Info() *p4configv1.P4Info {
	info := proto.Clone(dataplane.DefaultP4Info()).(*p4configv1.P4Info)
	if info.PkgInfo == nil {
		info.PkgInfo = &p4configv1.PkgInfo{}
	}
	info.PkgInfo.Name = "someone-elses-build"
	return info
}

// A switch that restarts without the controller's pipeline (kill -9, then
// simple_switch_grpc --no-p4; or with another program) gets the pipeline
// pushed again on reconnection and is resynced; /healthz stays healthy
// only when that succeeds.
func TestRestartWithoutPipelineIsRecovered(t *testing.T) {
	cfg := loadConfig(t)
	pipe := &p4v1.ForwardingPipelineConfig{P4Info: dataplane.DefaultP4Info()}
	cases := []struct {
		name    string
		restart dataplane.Options
	}{
		{"no pipeline", dataplane.Options{NoPipeline: true}},
		{"another pipeline", dataplane.Options{P4Info: anotherP4Info()}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sw := startRestartable(t, dataplane.Options{NoPipeline: true})
			ctl := runController(t, cfg, controller.Target{Addr: sw.addr, Pipeline: pipe}, controller.DriverOptions{})
			ctx := ctxT(t)
			waitFor(t, "the first push", 10*time.Second, func() bool { return inDesiredState(ctx, ctl) })
			first, err := ctl.Drivers()[0].Client().GetPipeline(ctx, p4v1.GetForwardingPipelineConfigRequest_COOKIE_ONLY)
			if err != nil {
				t.Fatal(err)
			}
			if first.GetCookie().GetCookie() == 0 {
				t.Error("the controller pushed its pipeline without a cookie")
			}

			sw.restart(tc.restart)
			waitFor(t, "the pipeline pushed again and the plan resynced", 10*time.Second, func() bool { return inDesiredState(ctx, ctl) })
			got, err := ctl.Drivers()[0].Client().GetPipeline(ctx, p4v1.GetForwardingPipelineConfigRequest_P4INFO_AND_COOKIE)
			if err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(got.GetP4Info(), pipe.GetP4Info()) || got.GetCookie().GetCookie() != first.GetCookie().GetCookie() {
				t.Errorf("after the restart the switch runs another pipeline (cookie %#x, want %#x)", got.GetCookie().GetCookie(), first.GetCookie().GetCookie())
			}
			if h := ctl.Health(); !h.OK {
				t.Errorf("recovered, but /healthz says %+v", h)
			}
		})
	}
}

// Without a pipeline to push (no --p4info), a switch that restarts empty
// cannot be brought to the desired state: /healthz turns unhealthy and
// says why, and turns healthy again once someone installs the program.
func TestHealthUnhealthyWhileTargetCannotConverge(t *testing.T) {
	cfg := loadConfig(t)
	sw := startRestartable(t, dataplane.Options{})
	ctl := runController(t, cfg, controller.Target{Addr: sw.addr}, controller.DriverOptions{})
	ctx := ctxT(t)
	waitFor(t, "the first push", 10*time.Second, func() bool { return inDesiredState(ctx, ctl) })
	if h := ctl.Health(); !h.OK || !h.Live {
		t.Fatalf("in the desired state: /healthz %+v", h)
	}
	sw.restart(dataplane.Options{NoPipeline: true})
	// (Unhealthy at once while disconnected; then for the missing pipeline.)
	waitFor(t, "/healthz to report the missing pipeline", 10*time.Second, func() bool {
		h := ctl.Health()
		return !h.OK && h.Targets[0].Connected && h.Targets[0].LastError != ""
	})
	h := ctl.Health()
	if !h.Live || len(h.Targets) != 1 || h.Targets[0].OK || !strings.Contains(h.Reason, "sw") ||
		!strings.Contains(strings.ToLower(h.Targets[0].LastError), "pipeline") {
		t.Fatalf("unhealthy /healthz should name the target and the missing pipeline: %+v", h)
	}
	t.Logf("unhealthy: %s", h.Reason)
	// Someone pushes the program; the controller converges by itself.
	c := ctl.Drivers()[0].Client()
	if err := c.SetPipeline(ctx, p4rt.VerifyAndCommit, &p4v1.ForwardingPipelineConfig{P4Info: dataplane.DefaultP4Info()}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the plan resynced after the pipeline came back", 10*time.Second, func() bool { return inDesiredState(ctx, ctl) })
	waitFor(t, "/healthz to turn healthy", 10*time.Second, func() bool { return ctl.Health().OK })
}

// Another client may write with the primary's election id without
// arbitrating (P4Runtime allows it). Whatever it changes, the driver's
// periodic verification finds it and repairs it within a verify period or
// two — not at the next hourly push — and counts it by kind: the active
// epoch flipped to a generation without entries (every request falls back
// to its nearest region) and a ranking entry removed are seen by the cheap
// check of the versioned tables; a feasibility entry removed only by the
// full read.
func TestDriftRepairedWithinVerifyPeriod(t *testing.T) {
	cfg := loadConfig(t)
	p := plans(t, cfg, start, 1, nil)[0]
	const period = 50 * time.Millisecond
	cases := []struct {
		name string
		opts controller.DriverOptions
		// drift returns the updates another client writes.
		drift func(t *testing.T, d *controller.Driver, cur *compiler.State) []*p4v1.Update
		kind  string
	}{
		{"active epoch flipped to an empty generation", controller.DriverOptions{VerifyInterval: period},
			func(t *testing.T, d *controller.Driver, cur *compiler.State) []*p4v1.Update {
				return []*p4v1.Update{{Type: p4v1.Update_MODIFY, Entity: activeEpochEntity(t, d, uint64(cur.ActiveEpoch()+5))}}
			}, controller.RepairActiveEpoch},
		{"a ranking entry deleted", controller.DriverOptions{VerifyInterval: period},
			func(t *testing.T, d *controller.Driver, cur *compiler.State) []*p4v1.Update {
				return deleteFirst(t, d, cur, pipeline.TableCarbonRank)
			}, controller.RepairEntries},
		{"a feasibility entry deleted", controller.DriverOptions{VerifyInterval: period, FullVerifyInterval: 4 * period},
			func(t *testing.T, d *controller.Driver, cur *compiler.State) []*p4v1.Update {
				return deleteFirst(t, d, cur, pipeline.TableSLAFeasibility)
			}, controller.RepairEntries},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, cfg)
			m := controller.NewMetrics()
			c := r.srv.Dial(t, electionOne())
			opts := tc.opts
			opts.Grace, opts.Log, opts.Metrics = -1, testLog(t), m
			d := controller.NewDriverWithClient(controller.Target{Name: "sw"}, c, opts)
			ctx := ctxT(t)
			rctx, stop := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() { done <- d.Run(rctx) }()
			t.Cleanup(func() { stop(); <-done })
			d.Submit(p)
			waitFor(t, "the push", 5*time.Second, func() bool { return d.Translator() != nil && inState(ctx, d, p) })
			cur, err := d.ReadState(ctx)
			if err != nil {
				t.Fatal(err)
			}
			// The other client: the primary's election id, no stream.
			other := r.srv.Dial(t, p4rt.WithElectionID(c.ElectionID()))
			if err := other.Write(ctx, tc.drift(t, d, cur)); err != nil {
				t.Fatal(err)
			}
			wrote := time.Now()
			waitFor(t, "the drift repaired", 5*time.Second, func() bool { return inState(ctx, d, p) })
			took := time.Since(wrote)
			t.Logf("repaired %s after the other client's write (verify every %s, full read every %s)",
				took.Round(time.Millisecond), opts.VerifyInterval, opts.FullVerifyInterval)
			// Within the period of the check that sees it (slack for a
			// loaded machine), not at the next hourly push.
			if limit := 2*max(opts.VerifyInterval, opts.FullVerifyInterval) + time.Second; took > limit {
				t.Errorf("repaired after %s, want within %s", took, limit)
			}
			// At least one repair of the kind (a loaded machine may see the
			// drift in two checks before the repair lands).
			want := fmt.Sprintf(`p4ctl_drift_repairs_total{kind=%q,target="sw"} `, tc.kind)
			waitFor(t, want+"≥ 1", 2*time.Second, func() bool {
				for _, ln := range strings.Split(gather(t, m), "\n") {
					if v, ok := strings.CutPrefix(ln, want); ok && v != "0" {
						return true
					}
				}
				return false
			})
			r.checkRoutes(t, cfg, p)
		})
	}
}

// deleteFirst is a DELETE of the first entry of table in cur.
func deleteFirst(t *testing.T, d *controller.Driver, cur *compiler.State, table string) []*p4v1.Update {
	t.Helper()
	for _, e := range cur.Table(table) {
		if e.Default {
			continue
		}
		ups, err := d.Translator().Updates([]compiler.Update{{Op: compiler.Delete, Entry: e}})
		if err != nil {
			t.Fatal(err)
		}
		return ups
	}
	t.Fatalf("no %s entry to delete", table)
	return nil
}
