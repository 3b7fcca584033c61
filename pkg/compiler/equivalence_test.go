package compiler

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/pkg/pipeline"
	"github.com/p4ctl/p4ctl/pkg/regions"
)

// statelessPolicies are the policies whose decision is a pure function of
// (site, SLA, hour): each must compile to tables that decide exactly as
// pkg/regions does.
var statelessPolicies = []regions.Policy{regions.PolicyA, regions.PolicyB, regions.PolicyC, regions.PolicyCPlus, regions.PolicyD, regions.PolicyCCap}

// checkEquivalence evaluates the compiled tables as the data plane does
// (Router) for every site and every SLA in slas, and compares region and
// fallback flag with regions.Decide. It returns the number of decisions
// compared.
func checkEquivalence(t *testing.T, in Input, st *State, slas func(site *regions.Site) []int) int {
	t.Helper()
	rt := NewRouter(st)
	pool := in.Config.Pool()
	n := 0
	for i, cs := range in.Config.Sites {
		site := in.Sites[i]
		for _, sla := range slas(site) {
			want := regions.Decide(in.Policy, site, pool, float64(sla), &in.Carbon.Intensity, in.Options)
			got := rt.Route(uint16(cs.ID), uint16(sla), 0)
			if got.Region != uint8(want.Region) || got.Fallback != want.Fallback {
				t.Fatalf("policy %s, site %s, SLA %d ms, hour %s: tables give region %d (fallback %v, feasible %v), regions.Decide gives %d (fallback %v)",
					in.Policy, cs.Name, sla, in.Carbon.Hour.Format(time.RFC3339), got.Region, got.Fallback, got.Feasible, want.Region, want.Fallback)
			}
			n++
		}
		// The site's prefixes lead to the site.
		for _, p := range cs.Prefixes {
			if id, ok := rt.Site(p.Addr()); !ok || int(id) != cs.ID {
				t.Fatalf("source %s maps to site %d (%v), want %d", p.Addr(), id, ok, cs.ID)
			}
		}
	}
	return n
}

func everySLA(*regions.Site) []int {
	out := make([]int, 1<<16)
	for i := range out {
		out[i] = i
	}
	return out
}

// boundarySLAs are every latency-derived boundary ± 1 (P95 and
// P95 + α·cold, floors and ceilings), 0 and the maximum.
func boundarySLAs(alpha float64) func(*regions.Site) []int {
	return func(s *regions.Site) []int {
		seen := map[int]bool{0: true, 1: true, maxSLA: true}
		for _, l := range s.Latencies() {
			for _, v := range []float64{l.P95Ms, l.P95Ms + alpha*l.ColdMs} {
				for d := -1; d <= 2; d++ {
					if x := int(v) + d; x >= 0 && x <= maxSLA {
						seen[x] = true
					}
				}
			}
		}
		out := make([]int, 0, len(seen))
		for v := range seen {
			out = append(out, v)
		}
		return out
	}
}

// TestPolicyEquivalenceExhaustive: the paper's setting (examples/mumbai.yaml,
// 12 regions, 2 sites), every policy, every 16-bit SLA value, several hours.
func TestPolicyEquivalenceExhaustive(t *testing.T) {
	cfg := loadConfig(t, "../../examples/mumbai.yaml")
	total := 0
	for _, h := range []int{0, 7, 13} {
		c := snapshot(t, cfg, testHour.Add(time.Duration(h)*time.Hour))
		for _, p := range statelessPolicies {
			for _, cm := range []regions.ColdMissing{regions.ColdMissingExclude, regions.ColdMissingWarm} {
				if cm == regions.ColdMissingWarm && p != regions.PolicyCPlus {
					continue
				}
				in := input(t, cfg, p, c, 1)
				in.Options.ColdMissing = cm
				total += checkEquivalence(t, in, compile(t, in), everySLA)
			}
		}
	}
	t.Logf("%d decisions compared", total)
}

// TestPolicyEquivalenceBoundaries: 12 regions × 64 pseudo-random sites,
// every policy, every other hour of a day of the offline model, every
// boundary ± 1.
func TestPolicyEquivalenceBoundaries(t *testing.T) {
	cfg := generated(t, 12, 64, 6, "C", 42)
	total := 0
	for h := 0; h < 24; h += 2 {
		c := snapshot(t, cfg, testHour.Add(time.Duration(h)*time.Hour))
		for _, p := range statelessPolicies {
			for _, alpha := range []float64{0.8, 0.25} {
				in := input(t, cfg, p, c, uint8(h))
				in.Options.Alpha = alpha
				total += checkEquivalence(t, in, compile(t, in), boundarySLAs(alpha))
			}
		}
	}
	t.Logf("%d decisions compared", total)
}

// TestPolicyEquivalenceTies: equal carbon intensities are broken by the
// site's latency, then index (pkg/regions' rule); sites that order a tie
// differently get their own ranking entries and still decide exactly.
func TestPolicyEquivalenceTies(t *testing.T) {
	cfg := generated(t, 12, 16, 5, "C", 3)
	c := snapshot(t, cfg, testHour)
	rng := rand.New(rand.NewPCG(9, 9))
	withOwn := 0
	for trial := 0; trial < 8; trial++ {
		// Intensities drawn from 3 values: many ties.
		for _, r := range cfg.Pool().Indices() {
			c.Intensity[r] = float64(100 * (1 + rng.IntN(3)))
		}
		for _, p := range statelessPolicies {
			in := input(t, cfg, p, c, 1)
			st := compile(t, in)
			checkEquivalence(t, in, st, everySLAStep(61))
			if p == regions.PolicyC && st.Meta.SiteRankings > 0 {
				withOwn++
			}
		}
	}
	if withOwn == 0 {
		t.Fatal("no trial needed site-specific rankings: the tie path is untested")
	}
	t.Logf("%d of 8 trials needed site-specific rankings under C", withOwn)
}

func everySLAStep(step int) func(*regions.Site) []int {
	return func(s *regions.Site) []int {
		out := boundarySLAs(0.8)(s)
		for v := 0; v <= maxSLA; v += step {
			out = append(out, v)
		}
		return out
	}
}

// TestCapacitySpill: with regions marked full, the tables decide as
// regions.DecideCCap does (spill to the next-cleanest feasible region, never
// leave the feasible set).
func TestCapacitySpill(t *testing.T) {
	cfg := loadConfig(t, "../../examples/mumbai.yaml")
	c := snapshot(t, cfg, testHour)
	in := input(t, cfg, regions.PolicyCCap, c, 1)
	rt := NewRouter(compile(t, in))
	pool := cfg.Pool()
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 2000; trial++ {
		full := regions.RegionSet(rng.Uint32()) & pool
		var cs regions.CapState
		for _, r := range pool.Indices() {
			cs.Capacity[r] = 1
			if full.Has(r) {
				cs.Outstanding[r] = 1
			}
		}
		i := rng.IntN(len(cfg.Sites))
		sla := rng.IntN(3500)
		want := regions.DecideCCap(in.Sites[i], pool, float64(sla), &c.Intensity, &cs)
		got := rt.Route(uint16(cfg.Sites[i].ID), uint16(sla), full)
		if got.Region != uint8(want.Region) || got.Spilled != want.Spilled || got.Fallback != want.Fallback {
			t.Fatalf("site %s SLA %d full %v: tables %+v, DecideCCap %+v", cfg.Sites[i].Name, sla, full, got, want)
		}
	}
}

// TestFeasibilitySize: at most regions+1 sla_feasibility entries per site.
func TestFeasibilitySize(t *testing.T) {
	cfg := generated(t, 12, 64, 6, "C", 5)
	c := snapshot(t, cfg, testHour)
	for _, p := range statelessPolicies {
		st := compile(t, input(t, cfg, p, c, 0))
		per := map[uint64]int{}
		for _, e := range st.Table(pipeline.TableSLAFeasibility) {
			m, _ := e.Field("site")
			per[m.Value]++
		}
		for site, n := range per {
			if n > 12+1 {
				t.Errorf("policy %s site %d: %d feasibility entries, want ≤ 13", p, site, n)
			}
		}
		if len(per) != 64 {
			t.Errorf("policy %s: %d sites have feasibility entries", p, len(per))
		}
	}
}

func TestCompileRejectsCPlusWarm(t *testing.T) {
	cfg := loadConfig(t, "../../examples/minimal.yaml")
	in := input(t, cfg, regions.PolicyCPlusWarm, snapshot(t, cfg, testHour), 0)
	if _, err := Compile(in); err == nil {
		t.Fatal("C+warm compiled")
	}
	in.Policy = regions.PolicyC
	in.Sites = nil
	if _, err := Compile(in); err == nil {
		t.Fatal("compiled without latency profiles")
	}
}

func TestHourIn(t *testing.T) {
	p := regions.DefaultSyntheticPeriod() // 2022
	cases := []struct{ in, want string }{
		{"2022-03-04T05:06:07Z", "2022-03-04T05:00:00Z"},
		{"2025-01-15T10:30:00Z", "2022-01-15T10:00:00Z"},
		{"2024-02-29T23:00:00Z", "2022-02-28T23:00:00Z"},
	}
	for _, c := range cases {
		in, _ := time.Parse(time.RFC3339, c.in)
		got, ok := HourIn(p, in)
		if !ok || got.Format(time.RFC3339) != c.want {
			t.Errorf("HourIn(%s) = %s %v, want %s", c.in, got.Format(time.RFC3339), ok, c.want)
		}
	}
	short := regions.Period{From: testHour, To: testHour.Add(2 * time.Hour)}
	if _, ok := HourIn(short, testHour.Add(48*time.Hour)); ok {
		t.Error("mapped an hour outside a 2-hour period")
	}
}

// TestTiesTooManyForTable: when per-site tie-breaking would not leave room
// for two generations in carbon_rank, ties go to the lower index; decisions
// still pick a cleanest feasible region.
func TestTiesTooManyForTable(t *testing.T) {
	if got := tableSize(t, pipeline.TableCarbonRank); got != rankTableSize {
		t.Fatalf("rankTableSize %d, schema says %d", rankTableSize, got)
	}
	cfg := generated(t, 12, 300, 5, "C", 4)
	c := snapshot(t, cfg, testHour)
	for _, r := range cfg.Pool().Indices() {
		c.Intensity[r] = 100 // everything ties
	}
	in := input(t, cfg, regions.PolicyC, c, 1)
	st := compile(t, in)
	if !st.Meta.TiesByIndex || len(st.Table(pipeline.TableCarbonRank))*2 > rankTableSize {
		t.Fatalf("ties_by_index %v with %d rank entries", st.Meta.TiesByIndex, len(st.Table(pipeline.TableCarbonRank)))
	}
	rt := NewRouter(st)
	pool := cfg.Pool()
	for i, cs := range cfg.Sites {
		for _, sla := range []int{0, 500, 1000, 3000} {
			got := rt.Route(uint16(cs.ID), uint16(sla), 0)
			want := regions.Decide(regions.PolicyC, in.Sites[i], pool, float64(sla), &c.Intensity, in.Options)
			if got.Fallback != want.Fallback || (!got.Fallback && !got.Feasible.Has(regions.Index(got.Region))) {
				t.Fatalf("site %s SLA %d: %+v vs %+v", cs.Name, sla, got, want)
			}
		}
	}
}

func tableSize(t *testing.T, name string) int {
	t.Helper()
	tb, ok := pipeline.Schema().Table(name)
	if !ok {
		t.Fatalf("no table %s", name)
	}
	return tb.Size
}
