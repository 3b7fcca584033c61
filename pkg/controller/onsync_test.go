package controller_test

import (
	"sync"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/pkg/controller"
)

// OnSync sees every push start before it writes and end after, with the
// push's error: here a complete push, then one cut after 2 writes by a
// controller that dies mid-update.
func TestOnSyncFollowsPushes(t *testing.T) {
	cfg := loadConfig(t)
	first := plans(t, cfg, start, 1, nil)[0]
	later := plans(t, cfg, start.Add(6*time.Hour), 1, nil)[0] // another ranking
	r := newRig(t, cfg)
	var (
		mu     sync.Mutex
		events []controller.SyncEvent
	)
	rec := func(e controller.SyncEvent) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}
	d, kill := r.driver(t, 1, controller.DriverOptions{OnSync: rec})
	ctx := ctxT(t)
	if _, err := d.Sync(ctx, first); err != nil {
		t.Fatal(err)
	}
	kill()
	d2, _ := r.driverAfter(t, nil, controller.DriverOptions{OnSync: rec, WrapWriter: func(w controller.Writer) controller.Writer {
		return controller.NewLimitWriter(w, 2)
	}})
	if _, err := d2.Sync(ctx, later); err == nil {
		t.Fatal("the push cut after 2 writes succeeded")
	}
	mu.Lock()
	defer mu.Unlock()
	want := []struct {
		plan *controller.Plan
		done bool
		fail bool
	}{{first, false, false}, {first, true, false}, {later, false, false}, {later, true, true}}
	if len(events) != len(want) {
		t.Fatalf("%d events, want %d: %+v", len(events), len(want), events)
	}
	for i, w := range want {
		e := events[i]
		if e.Target != "sw" || e.Plan != w.plan || e.Done != w.done || (e.Err != nil) != w.fail {
			t.Errorf("event %d: %+v, want plan %p done %v failed %v", i, e, w.plan, w.done, w.fail)
		}
	}
}
