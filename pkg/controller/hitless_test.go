package controller_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/internal/testing/routecheck"
	"github.com/p4ctl/p4ctl/pkg/compiler"
	"github.com/p4ctl/p4ctl/pkg/controller"
	"github.com/p4ctl/p4ctl/pkg/demo"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
	"github.com/p4ctl/p4ctl/pkg/regions"
)

var start = time.Date(2022, 1, 10, 0, 0, 0, 0, time.UTC)

// A first push installs exactly the compiled state; an hourly carbon change
// then costs at most 2R+1 writes (R regions) and the switch routes every
// request as pkg/regions decides.
func TestSyncInstallsAndUpdates(t *testing.T) {
	cfg := loadConfig(t)
	ps := plans(t, cfg, start, 6, nil)
	r := newRig(t, cfg)
	d, _ := r.driver(t, 1, controller.DriverOptions{})
	ctx := ctxT(t)
	rep, err := d.Sync(ctx, ps[0])
	if err != nil {
		t.Fatal(err)
	}
	if rep.From != 0 || rep.To != 1 || rep.Writes == 0 {
		t.Fatalf("first push: %+v", rep)
	}
	assertExactly(t, d, ps[0])
	r.checkRoutes(t, cfg, ps[0])
	R := len(cfg.Regions)
	changed := 0
	for i := 1; i < len(ps); i++ {
		rep, err := d.Sync(ctx, ps[i])
		if err != nil {
			t.Fatal(err)
		}
		if rep.Writes > 2*R+1 {
			t.Errorf("hour %d: %d writes, want ≤ 2R+1 = %d (%+v)", i, rep.Writes, 2*R+1, rep)
		}
		if !rep.Unchanged {
			changed++
			if rep.ByPhase["flip"] != 1 {
				t.Errorf("hour %d: %d flip writes, want 1", i, rep.ByPhase["flip"])
			}
		}
		assertExactly(t, d, ps[i])
		r.checkRoutes(t, cfg, ps[i])
	}
	if changed == 0 {
		t.Fatal("the carbon ranking never changed over the hours tested: the test proves nothing")
	}
	// The same plan again writes nothing.
	rep, err = d.Sync(ctx, ps[len(ps)-1])
	if err != nil || rep.Writes != 0 {
		t.Fatalf("re-push of the same plan: %d writes, err %v", rep.Writes, err)
	}
}

// The acceptance test of the hitless update: a goroutine sends requests at
// many SLA values from every site through the embedded switch while 1000
// hourly updates run through P4Runtime — including switches to the safe
// policy A and back while carbon data is "stale" — and every request must
// be routed to the region that the plan before or after the update in
// progress decides (pkg/regions.Decide per request). Zero misroutes.
func TestNoMisroutesDuring1000Updates(t *testing.T) {
	const hours = 1000
	cfg := loadConfig(t)
	stale := func(h int) bool { return h%97 >= 90 } // 7 stale hours in every 97
	ps := plans(t, cfg, start, hours, stale)
	r := newRig(t, cfg)
	d, _ := r.driver(t, 1, controller.DriverOptions{Grace: 20 * time.Microsecond})
	ctx := ctxT(t)
	// The checker (internal/testing/routecheck) allows the plans the switch may be
	// in: the last one pushed, and one whose update has begun.
	ck := routecheck.New()
	ck.Begin(ps[0])
	if _, err := d.Sync(ctx, ps[0]); err != nil {
		t.Fatal(err)
	}
	ck.End(ps[0])
	var stop atomic.Bool
	type miss struct {
		site, sla int
		got       uint8
		want      []regions.Index
	}
	var (
		sent, during atomic.Int64
		mu           sync.Mutex
		misses       []miss
		wg           sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for id := uint32(0); !stop.Load(); id++ {
			site := int(id) % len(cfg.Sites)
			sla := slas[int(id/2)%len(slas)]
			m := ck.Mark()
			o, err := demo.Send(r.sw, r.tr.Request(site, id, sla, 0))
			if err != nil {
				mu.Lock()
				misses = append(misses, miss{site, int(sla), 255, nil})
				mu.Unlock()
				continue
			}
			sent.Add(1)
			v := ck.Check(m, site, sla, regions.Index(o.Header.Region))
			if v.Plans > 1 {
				during.Add(1)
			}
			if !v.OK {
				mu.Lock()
				misses = append(misses, miss{site, int(sla), o.Header.Region, v.Want})
				mu.Unlock()
			}
		}
	}()
	flips, safe := 0, 0
	for i := 1; i < hours; i++ {
		ck.Begin(ps[i])
		rep, err := d.Sync(ctx, ps[i])
		if err != nil {
			stop.Store(true)
			wg.Wait()
			t.Fatalf("hour %d: %v", i, err)
		}
		ck.End(ps[i])
		if !rep.Unchanged {
			flips++
		}
		if ps[i].Stale != ps[i-1].Stale {
			safe++
		}
		if i%50 == 0 {
			time.Sleep(time.Millisecond) // let the traffic goroutine run on a busy machine
		}
	}
	time.Sleep(5 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	assertExactly(t, d, ps[hours-1])
	t.Logf("%d updates (%d flips, %d policy switches to/from the safe policy), %d requests checked, %d of them sent while an update was in progress, %d misroutes",
		hours-1, flips, safe, sent.Load(), during.Load(), len(misses))
	for i, m := range misses {
		if i == 10 {
			break
		}
		t.Errorf("misroute: site %d sla %d → region %d, allowed plans decide %v", m.site, m.sla, m.got, m.want)
	}
	if len(misses) > 0 {
		t.Fatalf("%d misroutes", len(misses))
	}
	if flips < hours/4 || safe < 10 {
		t.Fatalf("only %d flips and %d policy switches: the test would not exercise hitless updates", flips, safe)
	}
	if during.Load() < 100 {
		t.Fatalf("only %d requests overlapped an update: the test would not prove anything", during.Load())
	}
}

// The checker above can fail: an update that is not hitless (here: the
// active generation deleted before the new one is installed, as a naive
// in-place rewrite does) leaves requests that the switch routes to their
// nearest region against both plans' decisions.
func TestCheckerCatchesNaiveUpdate(t *testing.T) {
	cfg := loadConfig(t)
	ps := plans(t, cfg, start, 1, nil)
	r := newRig(t, cfg)
	d, _ := r.driver(t, 1, controller.DriverOptions{})
	ctx := ctxT(t)
	if _, err := d.Sync(ctx, ps[0]); err != nil {
		t.Fatal(err)
	}
	cur, err := d.ReadState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var dels []compiler.Update
	for _, e := range cur.Table(pipeline.TableCarbonRank) {
		if e.Default {
			continue
		}
		dels = append(dels, compiler.Update{Op: compiler.Delete, Entry: e})
	}
	ups, err := d.Translator().Updates(dels)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Client().Write(ctx, ups); err != nil {
		t.Fatal(err)
	}
	ft := &fakeT{}
	r.checkRoutes(ft, cfg, ps[0])
	if ft.errors == 0 {
		t.Fatal("a switch without a ranking routes like the plan: the misroute check cannot fail")
	}
	// The same with the 1000-update test's checker (internal/testing/routecheck).
	ck := routecheck.New()
	ck.End(ps[0])
	bad := 0
	for site := range cfg.Sites {
		for _, sla := range slas {
			if !ck.Check(ck.Mark(), site, sla, regions.Index(r.route(t, site, uint32(sla), sla))).OK {
				bad++
			}
		}
	}
	if bad == 0 {
		t.Fatal("routecheck finds no misroute on a switch without a ranking")
	}
}

// fakeT records errors instead of failing.
type fakeT struct {
	testing.TB
	errors int
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Errorf(string, ...any) { f.errors++ }
func (f *fakeT) Fatalf(format string, a ...any) {
	panic(fmt.Sprintf(format, a...))
}

// A controller killed after any number k of writes of an update (a fault
// injected into its writer) leaves a switch that routes every request as
// the old or the new plan does; a restarted controller then reconciles it
// to exactly the new plan's state. Checked at every k for a carbon-only
// hour and for the switches to the safe policy (C → A, feasibility and
// ranking change) and back (A → C).
func TestCrashAtEveryWrite(t *testing.T) {
	cfg := loadConfig(t)
	stale := func(h int) bool { return h == 1 }
	ps := plans(t, cfg, start, 3, stale)
	cases := []struct {
		name     string
		old, new *controller.Plan
	}{
		{"carbon hour", plans(t, cfg, start.Add(5*time.Hour), 1, nil)[0], plans(t, cfg, start.Add(6*time.Hour), 1, nil)[0]},
		{"C to safe A", ps[0], ps[1]},
		{"safe A to C", ps[1], ps[2]},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// How many writes does the full update take?
			total := func() int {
				r := newRig(t, cfg)
				d, _ := r.driver(t, 1, controller.DriverOptions{})
				if _, err := d.Sync(ctxT(t), tc.old); err != nil {
					t.Fatal(err)
				}
				rep, err := d.Sync(ctxT(t), tc.new)
				if err != nil {
					t.Fatal(err)
				}
				return rep.Writes
			}()
			if total < 3 {
				t.Fatalf("the update takes %d writes: nothing to cut", total)
			}
			for k := 0; k <= total; k++ {
				r := newRig(t, cfg)
				d, _ := r.driver(t, 1, controller.DriverOptions{})
				ctx := ctxT(t)
				if _, err := d.Sync(ctx, tc.old); err != nil {
					t.Fatal(err)
				}
				d2, kill := r.driverAfter(t, d, controller.DriverOptions{WrapWriter: func(w controller.Writer) controller.Writer {
					return controller.NewLimitWriter(w, k)
				}})
				_, err := d2.Sync(ctx, tc.new)
				if k < total && err == nil {
					t.Fatalf("k=%d: the limited controller finished its update", k)
				}
				kill()
				r.checkRoutes(t, cfg, tc.old, tc.new)
				// Restart: a fresh controller with the same election id.
				d3, _ := r.driverAfter(t, nil, controller.DriverOptions{})
				if _, err := d3.Sync(ctx, tc.new); err != nil {
					t.Fatalf("k=%d: restarted controller: %v", k, err)
				}
				assertExactly(t, d3, tc.new)
				r.checkRoutes(t, cfg, tc.new)
				if t.Failed() {
					t.Fatalf("k=%d of %d", k, total)
				}
			}
		})
	}
}

// driverAfter closes prev's client (if any) and returns a new connected
// driver with election id 1.
func (r *rig) driverAfter(t testing.TB, prev *controller.Driver, opts controller.DriverOptions) (*controller.Driver, func()) {
	t.Helper()
	if prev != nil {
		prev.Client().Close()
	}
	return r.driver(t, 1, opts)
}

// The writer the controller uses never fails on ALREADY_EXISTS: re-applying
// the install phase of an update (as a restart after a crash may) succeeds.
func TestRetrySafeWriter(t *testing.T) {
	cfg := loadConfig(t)
	ps := plans(t, cfg, start, 1, nil)
	r := newRig(t, cfg)
	d, _ := r.driver(t, 1, controller.DriverOptions{})
	ctx := ctxT(t)
	u, _, err := d.Plan(ctx, ps[0])
	if err != nil {
		t.Fatal(err)
	}
	ups, err := d.Translator().Updates(u.Stage)
	if err != nil {
		t.Fatal(err)
	}
	w := controller.ClientWriter{Client: d.Client()}
	for range 2 {
		if err := w.Write(ctx, ups); err != nil {
			t.Fatalf("re-applying inserts: %v", err)
		}
	}
	// A plain Write of the same inserts does fail: the check has teeth.
	if err := d.Client().Write(ctx, ups); err == nil || p4rt.Code(err).String() != "AlreadyExists" {
		t.Fatalf("plain re-insert: %v", err)
	}
}
