package controller_test

import (
	"context"
	"strings"
	"testing"
	"time"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/protobuf/proto"

	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/controller"
	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/demo"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

var fastBackoff = p4rt.Backoff{Initial: 20 * time.Millisecond, Max: 200 * time.Millisecond, Multiplier: 2}

// restartable is an embedded switch on a loopback port that a test can
// kill and start again at the same address, with another pipeline.
type restartable struct {
	t    *testing.T
	addr string
	e    *demo.Embedded
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
		if r.e, err = demo.StartEmbedded(opts, r.addr); err == nil {
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
