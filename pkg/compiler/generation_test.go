package compiler

import (
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/pkg/pipeline"
	"github.com/p4ctl/p4ctl/pkg/regions"
)

// hourly compiles cfg under policy p for 24 consecutive hours, each under
// the next epoch, and plans each change against the previous state. It
// returns the plans.
func hourly(t *testing.T, in0 Input, hours int) []Generation {
	t.Helper()
	cfg := in0.Config
	prev := compile(t, in0)
	var gens []Generation
	for h := 1; h <= hours; h++ {
		in := in0
		in.Carbon = snapshot(t, cfg, in0.Carbon.Hour.Add(time.Duration(h)*time.Hour))
		in.Epoch = NextEpoch(prev.ActiveEpoch())
		next := compile(t, in)
		g, err := PlanGeneration(prev, next)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Apply(prev, g.Updates())
		if err != nil {
			t.Fatalf("hour %d: %v", h, err)
		}
		want := next
		if g.Unchanged {
			in.Epoch = prev.ActiveEpoch()
			want = compile(t, in)
		}
		if d := Diff(got, want); !d.Empty() {
			t.Fatalf("hour %d: after the plan the switch differs from the desired state by %d writes: %v", h, d.Len(), d.Updates()[0])
		}
		gens = append(gens, g)
		prev = got
	}
	return gens
}

// TestHourlyWriteBound: an hourly carbon change costs at most 2R+1 writes
// (R new rank entries, one flip, R deletions) however many sites there are,
// for every site-independent policy.
func TestHourlyWriteBound(t *testing.T) {
	for _, nSites := range []int{1, 64, 256} {
		cfg := generated(t, 12, nSites, 6, "C", 11)
		R := cfg.Pool().Len()
		for _, p := range []regions.Policy{regions.PolicyA, regions.PolicyB, regions.PolicyC, regions.PolicyCPlus, regions.PolicyCCap} {
			in := input(t, cfg, p, snapshot(t, cfg, testHour), 1)
			changed := 0
			for h, g := range hourly(t, in, 12) {
				if g.Writes() > 2*R+1 {
					t.Errorf("%d sites, policy %s, hour %d: %d writes, bound 2R+1 = %d", nSites, p, h+1, g.Writes(), 2*R+1)
				}
				if !g.Unchanged {
					changed++
					if len(g.Install) != R || len(g.Flip) != 1 || len(g.Cleanup) != R {
						t.Errorf("%d sites, policy %s, hour %d: phases %d/%d/%d, want %d/1/%d", nSites, p, h+1, len(g.Install), len(g.Flip), len(g.Cleanup), R, R)
					}
				} else if g.Writes() != 0 {
					t.Errorf("policy %s: unchanged ranking still writes %d", p, g.Writes())
				}
			}
			switch {
			case p == regions.PolicyA && changed != 0:
				t.Errorf("policy A ignores carbon but changed its ranking %d times", changed)
			case p != regions.PolicyA && changed == 0:
				t.Errorf("policy %s: the ranking never changed over 12 h; the test proves nothing", p)
			}
		}
	}
}

// TestHourlyWritesD documents policy D's cost: per-site rankings make an
// hourly change 2·R·(sites with their own ranking + 1) + 1 writes.
func TestHourlyWritesD(t *testing.T) {
	cfg := generated(t, 12, 64, 6, "D", 11)
	R := cfg.Pool().Len()
	in := input(t, cfg, regions.PolicyD, snapshot(t, cfg, testHour), 1)
	maxW := 0
	for _, g := range hourly(t, in, 6) {
		maxW = max(maxW, g.Writes())
		if g.Writes() > 2*R*64+1 {
			t.Errorf("D: %d writes, more than 2·R·S+1 = %d", g.Writes(), 2*R*64+1)
		}
	}
	t.Logf("policy D, 12 regions × 64 sites: up to %d writes per hourly change (2R+1 = %d)", maxW, 2*R+1)
}

// TestHitlessAtEveryWrite applies a generation change one write at a time
// and checks, after every single write (a controller may die there), that
// every site and SLA is routed as under the old or the new plan.
func TestHitlessAtEveryWrite(t *testing.T) {
	cfg := generated(t, 12, 8, 5, "C", 21)
	for _, p := range []regions.Policy{regions.PolicyC, regions.PolicyCPlus, regions.PolicyD} {
		in := input(t, cfg, p, snapshot(t, cfg, testHour), 7)
		old := compile(t, in)
		in2 := in
		in2.Carbon = snapshot(t, cfg, testHour.Add(5*time.Hour))
		in2.Epoch = NextEpoch(7)
		next := compile(t, in2)
		g, err := PlanGeneration(old, next)
		if err != nil || g.Unchanged {
			t.Fatalf("plan: %v (unchanged %v)", err, g.Unchanged)
		}
		before, after := NewRouter(old), NewRouter(next)
		cur := old
		for i, u := range g.Updates() {
			if cur, err = Apply(cur, []Update{u}); err != nil {
				t.Fatal(err)
			}
			rt := NewRouter(cur)
			for k, cs := range cfg.Sites {
				for _, sla := range boundarySLAs(in.Options.Alpha)(in.Sites[k]) {
					got := rt.Route(uint16(cs.ID), uint16(sla), 0)
					a := before.Route(uint16(cs.ID), uint16(sla), 0)
					b := after.Route(uint16(cs.ID), uint16(sla), 0)
					if got != a && got != b {
						t.Fatalf("policy %s, after write %d (%s %s): site %s SLA %d routed to %+v; old plan %+v, new plan %+v", p, i, u.Op, u.Entry, cs.Name, sla, got, a, b)
					}
				}
			}
		}
	}
}

// TestPlanGenerationRecovers: a controller that died after installing part
// of a generation restarts, reads the switch and plans again; leftovers are
// reused or removed and the result is exactly the desired state.
func TestPlanGenerationRecovers(t *testing.T) {
	cfg := generated(t, 12, 8, 5, "C", 2)
	in := input(t, cfg, regions.PolicyC, snapshot(t, cfg, testHour), 3)
	old := compile(t, in)
	in.Carbon = snapshot(t, cfg, testHour.Add(3*time.Hour))
	in.Epoch = 4
	next := compile(t, in)
	g, err := PlanGeneration(old, next)
	if err != nil {
		t.Fatal(err)
	}
	for cut := 0; cut <= g.Writes(); cut++ {
		crashed, err := Apply(old, g.Updates()[:cut])
		if err != nil {
			t.Fatal(err)
		}
		// Restart: the hour moved on; compile the next generation afresh.
		in2 := in
		in2.Carbon = snapshot(t, cfg, testHour.Add(9*time.Hour))
		in2.Epoch = NextEpoch(crashed.ActiveEpoch())
		want := compile(t, in2)
		g2, err := PlanGeneration(crashed, want)
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		got, err := Apply(crashed, g2.Updates())
		if err != nil {
			t.Fatalf("cut %d: replan does not apply: %v", cut, err)
		}
		if g2.Unchanged {
			in2.Epoch = crashed.ActiveEpoch()
			want = compile(t, in2)
		}
		if d := Diff(got, want); !d.Empty() {
			t.Fatalf("cut %d: %d differences after recovery, first %v", cut, d.Len(), d.Updates()[0])
		}
		if n := len(got.Table(pipeline.TableCarbonRank)); n != cfg.Pool().Len()*(1+got.Meta.SiteRankings) && got.Meta.SiteRankings == 0 {
			t.Fatalf("cut %d: %d carbon_rank entries left, want one generation", cut, n)
		}
	}
}

func TestPlanGenerationRejectsActiveEpoch(t *testing.T) {
	cfg := generated(t, 5, 2, 5, "C", 2)
	in := input(t, cfg, regions.PolicyC, snapshot(t, cfg, testHour), 3)
	old := compile(t, in)
	in.Carbon = snapshot(t, cfg, testHour.Add(5*time.Hour))
	next := compile(t, in) // same epoch 3
	if _, err := PlanGeneration(old, next); err == nil {
		t.Fatal("planned a generation under the active epoch")
	}
	if NextEpoch(255) != 0 {
		t.Fatal("epoch does not wrap")
	}
}
