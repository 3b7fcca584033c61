package regions

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// instance is a random decision problem: a site, a pool, an hour of carbon.
type instance struct {
	site *Site
	pool RegionSet
	c    HourCarbon
	sla  float64
}

func randomInstance(rng *rand.Rand) instance {
	var lat []RegionLatency
	for r := range Index(NumRegions) {
		if rng.IntN(5) == 0 {
			continue
		}
		// Small integer latencies and carbon make ties common.
		l := RegionLatency{Region: r, P95Ms: float64(50 * (1 + rng.IntN(30)))}
		if rng.IntN(2) == 0 {
			l.ColdMs, l.HasCold = float64(100*rng.IntN(15)), true
		}
		lat = append(lat, l)
	}
	if len(lat) == 0 {
		lat = append(lat, RegionLatency{Region: 0, P95Ms: 100})
	}
	s, err := NewSite("rand", lat)
	if err != nil {
		panic(err)
	}
	in := instance{site: s, pool: RegionSet(rng.Uint32()) & Pool12 & s.Regions(), sla: float64(rng.IntN(1600))}
	if in.pool == 0 {
		in.pool = s.Regions()
	}
	for i := range in.c {
		in.c[i] = float64(10 * rng.IntN(60))
	}
	return in
}

func lat(s *Site, r Index) float64 { l, _ := s.P95(r); return l }

func TestPolicyProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	o := DefaultOptions()
	for n := 0; n < 20000; n++ {
		in := randomInstance(rng)
		s, pool, c, sla := in.site, in.pool, &in.c, in.sla
		a := Decide(PolicyA, s, pool, sla, c, o).Region
		b := Decide(PolicyB, s, pool, sla, c, o).Region
		dc := Decide(PolicyC, s, pool, sla, c, o)
		feas := Feasible(s, pool, sla)
		if fast := DecideC(s, pool, sla, c); fast != dc.Region {
			t.Fatalf("DecideC %d != Decide(C) %d", fast, dc.Region)
		}
		if !pool.Has(a) || !pool.Has(b) || !pool.Has(dc.Region) {
			t.Fatalf("decision outside the pool")
		}
		if feas != 0 {
			// C never violates when a feasible region exists.
			if lat(s, dc.Region) > sla || dc.Fallback {
				t.Fatalf("C chose %d (L=%v) > SLA %v with feasible %s", dc.Region, lat(s, dc.Region), sla, feas)
			}
			// C's region is the cleanest feasible one.
			for _, r := range feas.Indices() {
				if c[r] < c[dc.Region] {
					t.Fatalf("C chose %d (%v) but %d is cleaner (%v)", dc.Region, c[dc.Region], r, c[r])
				}
			}
		} else if dc.Region != a || !dc.Fallback {
			// Fallback = A when nothing is feasible.
			t.Fatalf("nothing feasible: C chose %d, A %d", dc.Region, a)
		}
		// C's carbon ≤ A's for every request.
		if c[dc.Region] > c[a] && feas.Has(a) {
			t.Fatalf("C carbon %v > A carbon %v", c[dc.Region], c[a])
		}
		if c[dc.Region] > c[a] {
			t.Fatalf("C carbon %v > A carbon %v (A infeasible)", c[dc.Region], c[a])
		}
		// C = B when the SLA admits every region.
		maxLat := 0.0
		for _, r := range pool.Indices() {
			maxLat = math.Max(maxLat, lat(s, r))
		}
		if sla >= maxLat && dc.Region != b {
			t.Fatalf("SLA %v ≥ max latency %v but C %d != B %d", sla, maxLat, dc.Region, b)
		}
		// Rank's first feasible element is C's decision.
		if feas != 0 {
			if rk := Rank(s, feas, c); rk[0] != dc.Region {
				t.Fatalf("Rank %v first != C %d", rk, dc.Region)
			}
		}
		// C+ is at least as strict as C, and its decision is inside its candidates.
		fc := FeasibleCold(s, pool, sla, o, 0)
		if fc&^feas != 0 {
			t.Fatalf("C+ feasible %s not within C feasible %s", fc, feas)
		}
		if d := Decide(PolicyCPlus, s, pool, sla, c, o); fc != 0 && !fc.Has(d.Region) {
			t.Fatalf("C+ chose %d outside %s", d.Region, fc)
		}
		sc := ScoresD(s, pool, c, o)
		if d := Decide(PolicyD, s, pool, sla, c, o); Rank(s, pool&s.Regions(), &sc)[0] != d.Region {
			t.Fatalf("Rank over D scores disagrees with D's decision %d", d.Region)
		}
		if Candidates(PolicyC, s, pool, sla, o) != feas || Candidates(PolicyA, s, pool, sla, o) != SetOf(a) {
			t.Fatal("Candidates disagree with Feasible/Nearest")
		}
	}
}

func TestTieBreaking(t *testing.T) {
	s, _ := NewSite("t", []RegionLatency{{Region: 4, P95Ms: 100}, {Region: 2, P95Ms: 100}, {Region: 1, P95Ms: 50}, {Region: 3, P95Ms: 200}})
	var c HourCarbon
	c[1], c[2], c[3], c[4] = 300, 200, 200, 200
	// 2, 3, 4 tie on carbon: 2 and 4 are nearer than 3, 2 has the lower index.
	for _, p := range []Policy{PolicyB, PolicyC} {
		if d := Decide(p, s, Pool5, 1000, &c, DefaultOptions()); d.Region != 2 {
			t.Errorf("%s chose %d, want 2", p, d.Region)
		}
	}
	if rk := Rank(s, SetOf(1, 2, 3, 4), &c); rk[0] != 2 || rk[1] != 4 || rk[2] != 3 || rk[3] != 1 {
		t.Errorf("Rank = %v, want [2 4 3 1]", rk)
	}
	if rk := Rank(nil, SetOf(1, 2, 3, 4), &c); rk[0] != 2 || rk[1] != 3 || rk[2] != 4 {
		t.Errorf("Rank(nil) = %v, want [2 3 4 1]", rk)
	}
	if Nearest(s, SetOf(2, 3, 4)) != 2 {
		t.Error("nearest tie not to the lower index")
	}
}

func TestPaperMumbaiDecisions(t *testing.T) {
	s := Mumbai()
	o := DefaultOptions()
	var c HourCarbon
	// An hour shaped like the paper's: Ireland cleanest, Mumbai dirtiest.
	c[0], c[1], c[2], c[3], c[4] = 650, 490, 590, 390, 470
	cases := []struct {
		p    Policy
		sla  float64
		want Index
		fb   bool
	}{
		{PolicyA, 3000, 0, false},
		{PolicyB, 300, 3, false},
		{PolicyC, 300, 0, false},  // only Mumbai (196) fits
		{PolicyC, 500, 1, false},  // + Singapore (367)
		{PolicyC, 800, 1, false},  // + Sydney (634), dirtier than Singapore
		{PolicyC, 1000, 3, false}, // + Ireland (979)
		{PolicyC, 150, 0, true},   // nothing fits: nearest
		// Eq. 4: L + 0.8·T_cold. Mumbai 196+338.4 = 534.4 > 500 and
		// Singapore 367+312.8 = 679.8: nothing is feasible at 500 ms.
		{PolicyCPlus, 500, 0, true},
		{PolicyCPlus, 680, 1, false},
		{PolicyCPlus, 1000, 1, false}, // Ireland 979+886.4 not feasible
		{PolicyCPlus, 1900, 3, false},
	}
	for _, k := range cases {
		d := Decide(k.p, s, Pool5, k.sla, &c, o)
		if d.Region != k.want || d.Fallback != k.fb {
			t.Errorf("%s at %v ms: %+v, want region %d fallback %v", k.p, k.sla, d, k.want, k.fb)
		}
	}
	if f := FeasibleCold(s, Pool5, 500, o, 0); f != 0 {
		t.Errorf("Eq. 4 at 500 ms: feasible %s, want none", f)
	}
	// Missing cold values: excluded by default, warm on request.
	if f := FeasibleCold(s, Pool12, 700, o, 0); f.Has(10) {
		t.Errorf("Tokyo (no cold value) feasible under exclude: %s", f)
	}
	ow := o
	ow.ColdMissing = ColdMissingWarm
	if f := FeasibleCold(s, Pool12, 610, ow, 0); f != SetOf(0, 10) {
		t.Errorf("cold-missing=warm at 610 ms: %s, want Mumbai (534.4) and Tokyo (600, no cold value)", f)
	}
}

func TestDNormalizationByHand(t *testing.T) {
	s, _ := NewSite("d", []RegionLatency{{Region: 0, P95Ms: 100}, {Region: 1, P95Ms: 300}, {Region: 2, P95Ms: 500}})
	var c HourCarbon
	c[0], c[1], c[2] = 600, 200, 100
	o := DefaultOptions()
	sc := ScoresD(s, SetOf(0, 1, 2), &c, o)
	// C_norm: (600-100)/500 = 1, (200-100)/500 = 0.2, 0; L_norm: 0, 0.5, 1.
	want := [3]float64{0.5*1 + 0.5*0, 0.5*0.2 + 0.5*0.5, 0.5*0 + 0.5*1}
	for r, w := range want {
		if math.Abs(sc[r]-w) > 1e-12 {
			t.Errorf("score[%d] = %v, want %v", r, sc[r], w)
		}
	}
	if !math.IsInf(sc[3], 1) {
		t.Error("non-candidate score not +Inf")
	}
	if d := Decide(PolicyD, s, SetOf(0, 1, 2), 0, &c, o); d.Region != 1 {
		t.Errorf("D chose %d, want 1 (score 0.35)", d.Region)
	}
	o.W = 1 // carbon only = B
	if d := Decide(PolicyD, s, SetOf(0, 1, 2), 0, &c, o); d.Region != 2 {
		t.Errorf("D(w=1) chose %d, want 2", d.Region)
	}
	// A single candidate: both ranges are empty, the score is 0.
	if sc := ScoresD(s, SetOf(1), &c, o); sc[1] != 0 {
		t.Errorf("single-candidate score %v", sc[1])
	}
}

func TestCCapProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for n := 0; n < 3000; n++ {
		in := randomInstance(rng)
		var cs CapState
		for _, r := range in.pool.Indices() {
			cs.Capacity[r] = rng.IntN(4) // 0 = unlimited
		}
		feas := Feasible(in.site, in.pool, in.sla)
		for k := 0; k < 30; k++ {
			full := cs.Full()
			room := feas &^ full
			before := cs.Outstanding
			d := DecideCCap(in.site, in.pool, in.sla, &in.c, &cs)
			if feas != 0 && !feas.Has(d.Region) {
				t.Fatalf("C-cap left the feasible set %s: %d", feas, d.Region)
			}
			if room != 0 {
				if !room.Has(d.Region) {
					t.Fatalf("C-cap chose full region %d while %s had room", d.Region, room)
				}
				if cap := cs.Capacity[d.Region]; cap > 0 && cs.Outstanding[d.Region] > cap {
					t.Fatalf("region %d over capacity: %d > %d", d.Region, cs.Outstanding[d.Region], cap)
				}
				if d.Region != cleanest(in.site, room, &in.c) {
					t.Fatalf("C-cap did not spill to the cleanest region with room")
				}
			}
			if feas == 0 && (!d.Fallback || d.Region != Nearest(in.site, in.pool)) {
				t.Fatalf("nothing feasible: C-cap %+v", d)
			}
			if before[d.Region]+1 != cs.Outstanding[d.Region] {
				t.Fatal("no slot taken")
			}
			if rng.IntN(3) == 0 {
				cs.Release(d.Region)
			}
		}
	}
	var cs CapState
	cs.Release(3)
	if cs.Outstanding[3] != 0 {
		t.Error("release below zero")
	}
}

func TestCPlusWarm(t *testing.T) {
	s := Mumbai()
	o := DefaultOptions()
	var c HourCarbon
	c[0], c[1] = 650, 490
	var w WarmState
	t0 := time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC)
	// Cold: nothing feasible at 500 ms → Mumbai (fallback), which is then warm.
	if d := DecideCPlusWarm(s, Pool5, 500, &c, o, &w, t0); d.Region != 0 || !d.Fallback {
		t.Fatalf("first: %+v", d)
	}
	// Mumbai warm (196 ≤ 500), Singapore still cold (679.8 > 500).
	if d := DecideCPlusWarm(s, Pool5, 500, &c, o, &w, t0.Add(5*time.Minute)); d.Region != 0 || d.Fallback {
		t.Fatalf("second: %+v", d)
	}
	if got := w.Warm(t0.Add(5*time.Minute), o.KeepAlive); got != SetOf(0) {
		t.Errorf("warm %s", got)
	}
	// After the keep-alive window Mumbai is cold again.
	if got := w.Warm(t0.Add(16*time.Minute), o.KeepAlive); got != 0 {
		t.Errorf("warm after keep-alive: %s", got)
	}
	// A warm Singapore is feasible at 500 ms and cleaner.
	w.Touch(1, t0.Add(6*time.Minute))
	if d := DecideCPlusWarm(s, Pool5, 500, &c, o, &w, t0.Add(7*time.Minute)); d.Region != 1 {
		t.Fatalf("warm Singapore: %+v", d)
	}
}

func TestPolicyNamesAndOptions(t *testing.T) {
	for _, p := range Policies() {
		q, err := ParsePolicy(p.String())
		if err != nil || q != p {
			t.Errorf("ParsePolicy(%s) = %v, %v", p, q, err)
		}
	}
	if _, err := ParsePolicy("E"); err == nil {
		t.Error("unknown policy accepted")
	}
	if cm, err := ParseColdMissing("warm"); err != nil || cm != ColdMissingWarm || cm.String() != "warm" {
		t.Error("cold-missing warm")
	}
	bad := DefaultOptions()
	bad.W = 1.5
	if bad.Validate() == nil || DefaultOptions().Validate() != nil {
		t.Error("Validate")
	}
}

func TestRouter(t *testing.T) {
	syn, err := NewSynthetic(1, DefaultSyntheticPeriod())
	if err != nil {
		t.Fatal(err)
	}
	jan, _ := ParseMonth("2022-01")
	tab, err := NewCarbonTable(syn, Pool12, jan)
	if err != nil {
		t.Fatal(err)
	}
	rt := Router{Table: tab, Pool: Pool5, Options: DefaultOptions()}
	ts := time.Date(2022, 1, 10, 13, 30, 0, 0, time.UTC)
	d, err := rt.Route(PolicyC, Mumbai(), 1000, ts)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := tab.HourIndex(ts)
	if d.Region != DecideC(Mumbai(), Pool5, 1000, tab.Hour(h)) {
		t.Errorf("Route %+v", d)
	}
	if _, err := rt.Route(PolicyC, Mumbai(), 1000, ts.AddDate(0, 2, 0)); err == nil {
		t.Error("time outside the table accepted")
	}
	if _, err := NewCarbonTable(syn, Pool12, Period{From: jan.From.AddDate(-1, 0, 0), To: jan.To}); err == nil {
		t.Error("period outside the source accepted")
	}
}

// BenchmarkDecideC measures policy C over the 12-region pool from Mumbai
// with the SLA admitting every region (the longest loop), cycling through
// a month of hours. The baseline is Decide(PolicyC, …) (feasibility bitmap,
// then cleanest), timed over the same hours after the loop: the metric
// fast/generic is DecideC's time as a fraction of the baseline's.
func BenchmarkDecideC(b *testing.B) {
	tab, s := benchTable(b)
	sink := Index(0)
	n := tab.Hours()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sink ^= DecideC(s, Pool12, 3000, tab.Hour(i%n))
	}
	b.StopTimer()
	const k = 500000
	o := DefaultOptions()
	t0 := time.Now()
	for i := 0; i < k; i++ {
		sink ^= DecideC(s, Pool12, 3000, tab.Hour(i%n))
	}
	t1 := time.Now()
	for i := 0; i < k; i++ {
		sink ^= Decide(PolicyC, s, Pool12, 3000, tab.Hour(i%n), o).Region
	}
	t2 := time.Now()
	b.ReportMetric(float64(t1.Sub(t0))/float64(t2.Sub(t1)), "fast/generic")
	if sink == 0xEE {
		b.Log(sink)
	}
}

func BenchmarkDecideGeneric(b *testing.B) {
	tab, s := benchTable(b)
	o := DefaultOptions()
	sink := Index(0)
	n := tab.Hours()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sink ^= Decide(PolicyC, s, Pool12, 3000, tab.Hour(i%n), o).Region
	}
	if sink == 0xEE {
		b.Log(sink)
	}
}

func benchTable(b *testing.B) (*CarbonTable, *Site) {
	syn, err := NewSynthetic(1, DefaultSyntheticPeriod())
	if err != nil {
		b.Fatal(err)
	}
	jan, _ := ParseMonth("2022-01")
	tab, err := NewCarbonTable(syn, Pool12, jan)
	if err != nil {
		b.Fatal(err)
	}
	return tab, Mumbai()
}
