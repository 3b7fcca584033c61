package controller_test

import (
	"testing"

	"github.com/p4ctl/p4ctl/pkg/compiler"
	"github.com/p4ctl/p4ctl/pkg/controller"
	"github.com/p4ctl/p4ctl/pkg/demo"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
	"github.com/p4ctl/p4ctl/pkg/regions"
)

// Provisioning an empty switch (a first push, or a resync after the switch
// restarted) never misroutes: cut after any number k of its writes, the
// switch drops every request or routes it as the plan decides — never to
// its site's nearest region because feasibility and next hops arrived
// before the ranking was active (the soak found that: the non-versioned
// tables used to go before the flip on a switch without a ranking).
func TestProvisionAtEveryWrite(t *testing.T) {
	cfg := loadConfig(t)
	p := plans(t, cfg, start, 1, nil)[0]
	total := func() int {
		r := newRig(t, cfg)
		d, _ := r.driver(t, 1, controller.DriverOptions{})
		rep, err := d.Sync(ctxT(t), p)
		if err != nil {
			t.Fatal(err)
		}
		return rep.Writes
	}()
	routedSome := 0
	for k := 0; k <= total; k++ {
		r := newRig(t, cfg)
		d, _ := r.driver(t, 1, controller.DriverOptions{WrapWriter: func(w controller.Writer) controller.Writer {
			return controller.NewLimitWriter(w, k)
		}})
		if _, err := d.Sync(ctxT(t), p); k < total && err == nil {
			t.Fatalf("k=%d: the cut push finished", k)
		}
		routed := 0
		for site := range cfg.Sites {
			for _, sla := range slas {
				o, err := demo.Send(r.sw, r.tr.Request(site, uint32(sla), sla, 0))
				if err != nil {
					continue // dropped: not routed yet
				}
				routed++
				if want := p.Decide(site, float64(sla)).Region; regions.Index(o.Header.Region) != want {
					t.Fatalf("k=%d of %d writes: site %s sla %d routed to region %d, the plan decides %d",
						k, total, cfg.Sites[site].Name, sla, o.Header.Region, want)
				}
			}
		}
		if routed > 0 {
			routedSome++
		}
		if k == total && routed != len(cfg.Sites)*len(slas) {
			t.Fatalf("the complete push routes %d of %d requests", routed, len(cfg.Sites)*len(slas))
		}
	}
	t.Logf("%d cut points, %d of them routing some requests (all as the plan)", total+1, routedSome)
}

// A provisioning push writes region_next_hop in a Write of its own, after
// the tables that decide a request's region, so no server's reordering of
// one Write's updates can make requests routable early; other runs are
// one operation each.
func TestOpRunsCutBeforeNextHops(t *testing.T) {
	cfg := loadConfig(t)
	next, err := plans(t, cfg, start, 1, nil)[0].Compile(1)
	if err != nil {
		t.Fatal(err)
	}
	u, err := compiler.PlanUpdate(&compiler.State{}, next)
	if err != nil {
		t.Fatal(err)
	}
	if len(u.Before) != 0 || len(u.After) == 0 {
		t.Fatalf("provisioning: %d updates before the flip, %d after; want all after", len(u.Before), len(u.After))
	}
	runs := controller.OpRuns(u.After)
	seen := false
	for i, run := range runs {
		for j, x := range run {
			if x.Op != run[0].Op {
				t.Fatalf("run %d mixes %s and %s", i, run[0].Op, x.Op)
			}
			if x.Entry.Table == pipeline.TableRegionNextHop && !seen {
				seen = true
				if j != 0 {
					t.Fatalf("run %d writes region_next_hop after %d other updates in the same Write", i, j)
				}
			}
		}
	}
	if !seen || len(runs) < 2 {
		t.Fatalf("%d runs, region_next_hop seen %v", len(runs), seen)
	}
}
