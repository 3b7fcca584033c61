package controller_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc"

	"github.com/p4ctl/p4ctl/internal/testing/p4rttest"
	"github.com/p4ctl/p4ctl/pkg/controller"
	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/dataplane/p4rtserver"
	"github.com/p4ctl/p4ctl/pkg/demo"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

// writeLog records the election id of every WriteRequest the switch
// receives (accepted or not).
type writeLog struct {
	mu  sync.Mutex
	ids []p4rt.ElectionID
	ok  []bool
}

func (l *writeLog) interceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		resp, err := h(ctx, req)
		if w, ok := req.(*p4v1.WriteRequest); ok {
			l.mu.Lock()
			l.ids = append(l.ids, p4rt.ElectionID{High: w.GetElectionId().GetHigh(), Low: w.GetElectionId().GetLow()})
			l.ok = append(l.ok, err == nil)
			l.mu.Unlock()
		}
		return resp, err
	}
}

// writers returns the distinct election ids that wrote successfully, and
// how many write requests came from each low word.
func (l *writeLog) byLow() map[uint64]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[uint64]int{}
	for i, id := range l.ids {
		if l.ok[i] {
			out[id.Low]++
		}
	}
	return out
}

func (l *writeLog) attempts(low uint64) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, id := range l.ids {
		if id.Low == low {
			n++
		}
	}
	return n
}

func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func inState(ctx context.Context, d *controller.Driver, p *controller.Plan) bool {
	ch, _, err := d.Drift(ctx, p)
	return err == nil && ch.Empty()
}

// Two controller replicas with distinct election ids drive one switch: only
// the primary (the higher id) writes — the backup neither writes nor tries
// to — and when the primary's stream ends the backup takes over (raising
// its election id above the highest the switch has seen), resyncs, and
// converges the switch to the latest plan.
func TestHighAvailability(t *testing.T) {
	cfg := loadConfig(t)
	ps := plans(t, cfg, start, 3, nil)
	var wl writeLog
	r := newRig(t, cfg, p4rttest.WithServerOptions(p4rtserver.WithGRPCOptions(grpc.UnaryInterceptor(wl.interceptor()))))
	ctx := ctxT(t)

	replica := func(low uint64) (*controller.Driver, context.CancelFunc, chan error) {
		c := r.srv.Dial(t, p4rt.WithElectionID(p4rt.Election(low)))
		d := controller.NewDriverWithClient(controller.Target{Name: "sw"}, c, controller.DriverOptions{Grace: -1, Log: testLog(t)})
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			done <- d.Run(rctx)
			c.Close() // the replica's process ends: its stream goes
		}()
		return d, cancel, done
	}
	primary, stopPrimary, primaryDone := replica(2)
	waitFor(t, "replica 2 to be primary", 5*time.Second, func() bool {
		return primary.Client() != nil && primary.Client().State().Primary
	})
	backup, stopBackup, backupDone := replica(1)
	defer func() { stopBackup(); <-backupDone }()
	waitFor(t, "replica 1 to connect as backup", 5*time.Second, func() bool {
		st := backup.Client().State()
		return st.Connected && !st.Primary && st.HasPrimary
	})
	// Both replicas compute and submit the same plans (as `p4ctl run` does).
	for _, p := range ps[:2] {
		primary.Submit(p)
		backup.Submit(p)
		waitFor(t, "the primary to push "+p.Hour.String(), 5*time.Second, func() bool { return inState(ctx, primary, p) })
	}
	if _, err := backup.Sync(ctx, ps[1]); !errors.Is(err, controller.ErrNotPrimary) {
		t.Fatalf("backup Sync: %v, want ErrNotPrimary", err)
	}
	if n := wl.attempts(1); n != 0 {
		t.Fatalf("the backup sent %d write requests while a primary was up", n)
	}
	// A write from the backup would be refused by the switch.
	if err := backup.Client().Write(ctx, []*p4v1.Update{{Type: p4v1.Update_MODIFY, Entity: activeEpochEntity(t, backup, 7)}}); p4rt.Code(err).String() != "PermissionDenied" {
		t.Fatalf("raw write from the backup: %v, want PERMISSION_DENIED", err)
	}
	if got := wl.byLow(); got[2] == 0 || got[1] != 0 {
		t.Fatalf("successful writes by election id low word: %v, want only 2", got)
	}

	// The primary goes away; the backup takes over and converges.
	stopPrimary()
	<-primaryDone
	waitFor(t, "the backup to take over", 10*time.Second, func() bool { return backup.Client().State().Primary })
	if id := backup.Client().ElectionID(); id.High == 0 || id.Low != 1 {
		t.Fatalf("take-over election id %v: want high word raised, low word 1", id)
	}
	backup.Submit(ps[2])
	waitFor(t, "the new primary to converge", 10*time.Second, func() bool { return inState(ctx, backup, ps[2]) })
	if got := wl.byLow(); got[1] == 0 {
		t.Fatalf("the new primary never wrote: %v", got)
	}
	r.checkRoutes(t, cfg, ps[2])
}

func activeEpochEntity(t *testing.T, d *controller.Driver, epoch uint64) *p4v1.Entity {
	t.Helper()
	e, err := d.Translator().Index().TableEntry("active_epoch").Default().Action("set_active_epoch", p4rt.Param("epoch", epoch)).Entity()
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// A switch that restarts (empty tables, same address) is reconnected with
// backoff and resynced: the driver's Run loop re-installs the plan.
func TestReconnectAndResync(t *testing.T) {
	cfg := loadConfig(t)
	ps := plans(t, cfg, start, 1, nil)
	ctx := ctxT(t)
	serve := func(addr string) (*dataplane.Embedded, string) {
		var e *dataplane.Embedded
		var err error
		for try := 0; try < 100; try++ { // the port may linger a moment after a stop
			if e, err = dataplane.Start(dataplane.Options{}, addr); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err != nil {
			t.Fatal(err)
		}
		return e, e.Addr()
	}
	sw, addr := serve("127.0.0.1:0")
	d := controller.NewDriver(controller.Target{Name: "sw", Addr: addr, DeviceID: 1, ElectionID: p4rt.Election(1)},
		controller.DriverOptions{Grace: -1, Log: testLog(t), Backoff: p4rt.Backoff{Initial: 20 * time.Millisecond, Max: 200 * time.Millisecond, Multiplier: 2}})
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- d.Run(rctx) }()
	defer func() { cancel(); <-done }()
	d.Submit(ps[0])
	waitFor(t, "first push", 5*time.Second, func() bool { return d.Client() != nil && inState(ctx, d, ps[0]) })
	if err := sw.Stop(); err != nil {
		t.Fatal(err)
	}
	sw2, _ := serve(addr)
	defer sw2.Stop()
	waitFor(t, "resync after the switch restarted", 10*time.Second, func() bool { return inState(ctx, d, ps[0]) })
	tr, err := demo.NewTraffic(cfg)
	if err != nil {
		t.Fatal(err)
	}
	o, err := demo.Send(sw2.Switch, tr.Request(0, 1, 3000, 0))
	if err != nil {
		t.Fatal(err)
	}
	if want := ps[0].Decide(0, 3000).Region; o.Header.Region != uint8(want) {
		t.Fatalf("after resync: region %d, want %d", o.Header.Region, want)
	}
}
