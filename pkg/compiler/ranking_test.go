package compiler

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/pkg/regions"
)

// TestInstalledRankingEquivalence: with Input.Ranking (the planner's
// hysteretic ranking) the compiled tables decide, for every site and every
// 16-bit SLA value, exactly as regions.DecideRanked under that ranking,
// for every policy that ranks by carbon; A and D ignore it.
func TestInstalledRankingEquivalence(t *testing.T) {
	cfg := loadConfig(t, "../../examples/mumbai.yaml")
	pool := cfg.Pool()
	c := snapshot(t, cfg, testHour)
	// A ranking that is not this hour's carbon order: reversed.
	ranking := regions.Rank(nil, pool, &c.Intensity)
	slices.Reverse(ranking)
	for _, p := range []regions.Policy{regions.PolicyB, regions.PolicyC, regions.PolicyCPlus, regions.PolicyCCap} {
		in := input(t, cfg, p, c, 1)
		in.Ranking, in.Hysteresis = ranking, "test"
		st := compile(t, in)
		if st.Meta.Hysteresis != "test" || st.Meta.SiteRankings != 0 {
			t.Errorf("%s: meta hysteresis %q, %d site rankings (a shared ranking needs none)", p, st.Meta.Hysteresis, st.Meta.SiteRankings)
		}
		rt := NewRouter(st)
		for i, cs := range cfg.Sites {
			for _, sla := range everySLA(nil) {
				dp := p
				if p == regions.PolicyCCap {
					dp = regions.PolicyC // capacities are the data plane's
				}
				want := regions.DecideRanked(dp, in.Sites[i], pool, float64(sla), ranking, in.Options)
				got := rt.Route(uint16(cs.ID), uint16(sla), 0)
				if got.Region != uint8(want.Region) || got.Fallback != want.Fallback {
					t.Fatalf("%s, site %s, SLA %d: tables %d (fallback %v), DecideRanked %d (fallback %v)", p, cs.Name, sla, got.Region, got.Fallback, want.Region, want.Fallback)
				}
			}
		}
	}
	for _, p := range []regions.Policy{regions.PolicyA, regions.PolicyD} {
		in := input(t, cfg, p, c, 1)
		plain := compile(t, in)
		in.Ranking, in.Hysteresis = ranking, "test"
		if d := Diff(plain, compile(t, in)); !d.Empty() || compile(t, in).Meta.Hysteresis != "" {
			t.Errorf("%s: an installed ranking changed the state (%d updates)", p, d.Len())
		}
	}
}

// TestInstalledRankingWrites: a new installed ranking costs 2R+1 writes
// however many sites, the same one none.
func TestInstalledRankingWrites(t *testing.T) {
	cfg := generated(t, 12, 64, 6, "C", 5)
	R := cfg.Pool().Len()
	c := snapshot(t, cfg, testHour)
	in := input(t, cfg, regions.PolicyC, c, 1)
	in.Ranking = regions.Rank(nil, cfg.Pool(), &c.Intensity)
	prev := compile(t, in)
	in.Carbon = snapshot(t, cfg, testHour.Add(time.Hour)) // new carbon, same ranking
	in.Epoch = NextEpoch(1)
	g, err := PlanGeneration(prev, compile(t, in))
	if err != nil {
		t.Fatal(err)
	}
	if !g.Unchanged || g.Writes() != 0 {
		t.Errorf("same ranking under new carbon: %d writes, want none", g.Writes())
	}
	in.Ranking = slices.Clone(in.Ranking)
	in.Ranking[0], in.Ranking[1] = in.Ranking[1], in.Ranking[0]
	if g, err = PlanGeneration(prev, compile(t, in)); err != nil {
		t.Fatal(err)
	}
	if g.Writes() != 2*R+1 {
		t.Errorf("new ranking: %d writes, want 2R+1 = %d", g.Writes(), 2*R+1)
	}
}

// TestSignalInOutput: every compiled state says what the carbon numbers
// are, and a hysteretic one says so.
func TestSignalInOutput(t *testing.T) {
	cfg := loadConfig(t, "../../examples/mumbai.yaml")
	c := snapshot(t, cfg, testHour)
	in := input(t, cfg, regions.PolicyC, c, 1)
	in.Ranking, in.Hysteresis = regions.Rank(nil, cfg.Pool(), &c.Intensity), "min_gain 10%, min_hold 3h, horizon 1h"
	var b strings.Builder
	if err := compile(t, in).WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# signal: average (lifecycle)\n", "# hysteresis: min_gain 10%, min_hold 3h, horizon 1h"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, b.String()[:300])
		}
	}
}
