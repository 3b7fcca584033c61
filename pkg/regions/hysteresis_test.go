package regions

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC)

func hourAt(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }

func TestParseGain(t *testing.T) {
	cases := []struct {
		in      string
		want    Gain
		wantErr string
	}{
		{"10%", Gain{10, true}, ""},
		{" 2.5 % ", Gain{2.5, true}, ""},
		{"0%", Gain{0, true}, ""},
		{"50g/kWh", Gain{50, false}, ""},
		{"50 g/kWh", Gain{50, false}, ""},
		{"50 gCO2eq/kWh", Gain{50, false}, ""},
		{"0g/kWh", Gain{0, false}, ""},
		{"5", Gain{}, "give a unit"},
		{"", Gain{}, "give a unit"},
		{"five%", Gain{}, "not a number"},
		{"-1%", Gain{}, "must be >= 0"},
		{"100%", Gain{}, "below 100%"},
		{"NaN%", Gain{}, "not a number"},
		{"2500g/kWh", Gain{}, "no region could ever take over"},
	}
	for _, c := range cases {
		g, err := ParseGain(c.in)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("ParseGain(%q) = %v, %v; want error with %q", c.in, g, err, c.wantErr)
			}
			continue
		}
		if err != nil || g != c.want {
			t.Errorf("ParseGain(%q) = %v, %v; want %v", c.in, g, err, c.want)
			continue
		}
		if back, err := ParseGain(g.String()); err != nil || back != g {
			t.Errorf("round trip of %q via %q: %v, %v", c.in, g.String(), back, err)
		}
	}
}

func TestGainBeats(t *testing.T) {
	cases := []struct {
		gain                  string
		challenger, incumbent float64
		want                  bool
	}{
		{"10%", 90, 100, true},
		{"10%", 90.1, 100, false},
		{"10%", 100, 100, false},
		{"0%", 99.99, 100, true},
		{"0%", 100, 100, false}, // a tie is never a gain
		{"0g/kWh", 100, 100, false},
		{"50g/kWh", 50, 100, true},
		{"50g/kWh", 50.5, 100, false},
		{"50g/kWh", 110, 100, false},
	}
	for _, c := range cases {
		g, err := ParseGain(c.gain)
		if err != nil {
			t.Fatal(err)
		}
		if got := g.Beats(c.challenger, c.incumbent); got != c.want {
			t.Errorf("%s: Beats(%v, %v) = %v, want %v", c.gain, c.challenger, c.incumbent, got, c.want)
		}
	}
}

// scores builds an HourCarbon with the given values for regions 0, 1, …
// and +Inf elsewhere.
func scores(v ...float64) HourCarbon {
	var c HourCarbon
	for i := range c {
		c[i] = math.Inf(1)
	}
	copy(c[:], v)
	return c
}

// run steps h over the hourly scores and returns the first region of set
// at every hour.
func run(t *testing.T, h Hysteresis, pool, set RegionSet, hours []HourCarbon) []Index {
	t.Helper()
	var st RankState
	out := make([]Index, len(hours))
	for i := range hours {
		var err error
		if st, err = h.Next(st, hourAt(i), pool, &hours[i]); err != nil {
			t.Fatal(err)
		}
		out[i] = st.First(set)
	}
	return out
}

func changes(xs []Index) int {
	n := 0
	for i := 1; i < len(xs); i++ {
		if xs[i] != xs[i-1] {
			n++
		}
	}
	return n
}

// TestNoChangeBelowGain: a challenger cleaner by less than min_gain never
// takes over, however long it stays cleaner; one cleaner by min_gain takes
// over at once (nothing moved up before, so no hold applies).
func TestNoChangeBelowGain(t *testing.T) {
	cases := []struct {
		name       string
		h          Hysteresis
		challenger float64 // region 1's value while region 0 stays at 100
		wantChange int     // hour of the change, -1 for none
	}{
		{"9% under a 10% gain", Hysteresis{MinGain: Gain{10, true}, MinHold: 3, Horizon: 1}, 91, -1},
		{"just under a 10% gain", Hysteresis{MinGain: Gain{10, true}, Horizon: 1}, 90.0001, -1},
		{"exactly a 10% gain", Hysteresis{MinGain: Gain{10, true}, Horizon: 1}, 90, 1},
		{"exactly a 10% gain, first choice held 3h", Hysteresis{MinGain: Gain{10, true}, MinHold: 3, Horizon: 1}, 90, 3},
		{"20 g under a 25 g gain", Hysteresis{MinGain: Gain{25, false}, MinHold: 0, Horizon: 1}, 80, -1},
		{"25 g under a 25 g gain", Hysteresis{MinGain: Gain{25, false}, MinHold: 0, Horizon: 1}, 75, 1},
		{"equal values", Hysteresis{Horizon: 1}, 100, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hours := []HourCarbon{scores(100, 200)} // hour 0: region 0 first
			for range 200 {
				hours = append(hours, scores(100, c.challenger))
			}
			got := run(t, c.h, SetOf(0, 1), SetOf(0, 1), hours)
			first := -1
			for i := 1; i < len(got); i++ {
				if got[i] != got[i-1] {
					first = i
					break
				}
			}
			if first != c.wantChange || changes(got) > 1 {
				t.Errorf("first change at hour %d (%d changes), want %d", first, changes(got), c.wantChange)
			}
		})
	}
}

// TestAlternatingInputBounded: two regions whose values swap every hour
// by 20 % make pure hourly ranking change every hour; a hold of H hours
// bounds the changes to one per H hours, and a gain above the swing stops
// them.
func TestAlternatingInputBounded(t *testing.T) {
	const hours = 240
	in := make([]HourCarbon, hours)
	for i := range in {
		if i%2 == 0 {
			in[i] = scores(100, 80)
		} else {
			in[i] = scores(80, 100)
		}
	}
	cases := []struct {
		name     string
		h        Hysteresis
		maxChgs  int
		exactly  bool
		interval int // least hours between two changes
	}{
		{"no hysteresis", Hysteresis{Horizon: 1}, hours - 1, true, 1},
		{"gain below the swing", Hysteresis{MinGain: Gain{15, true}, Horizon: 1}, hours - 1, true, 1},
		{"gain above the swing", Hysteresis{MinGain: Gain{25, true}, Horizon: 1}, 0, true, 0},
		{"hold 2h", Hysteresis{MinGain: Gain{5, true}, MinHold: 2, Horizon: 1}, 1 + (hours-2)/2, false, 2},
		{"hold 6h", Hysteresis{MinGain: Gain{5, true}, MinHold: 6, Horizon: 1}, 1 + (hours-2)/6, false, 6},
		{"hold 24h", Hysteresis{MinHold: 24, Horizon: 1}, 1 + (hours-2)/24, false, 24},
		{"horizon 2h averages the swing away", Hysteresis{MinGain: Gain{1, true}, Horizon: 2}, 0, true, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []Index
			if c.h.Horizon == 1 {
				got = run(t, c.h, SetOf(0, 1), SetOf(0, 1), in)
			} else {
				// Horizon means as HorizonMean computes them on a table.
				src := newFakeSource(in)
				tab, err := NewCarbonTable(src, SetOf(0, 1), Period{From: t0, To: hourAt(hours)})
				if err != nil {
					t.Fatal(err)
				}
				sc := make([]HourCarbon, hours)
				for i := range sc {
					sc[i] = HorizonMean(tab, i, c.h.Horizon)
				}
				got = run(t, c.h, SetOf(0, 1), SetOf(0, 1), sc[:hours-1]) // the last hour has no second hour to average
			}
			n := changes(got)
			if n > c.maxChgs || (c.exactly && n != c.maxChgs) {
				t.Errorf("%d changes in %d hours, want %s %d", n, len(got), map[bool]string{true: "exactly", false: "at most"}[c.exactly], c.maxChgs)
			}
			last := -1
			for i := 1; i < len(got); i++ {
				if got[i] == got[i-1] {
					continue
				}
				if last >= 0 && i-last < c.interval {
					t.Errorf("changes at hours %d and %d: fewer than %d hours apart", last, i, c.interval)
				}
				last = i
			}
		})
	}
}

// fakeSource serves hourly values of regions 0.. from t0.
type fakeSource struct{ hours []HourCarbon }

func newFakeSource(h []HourCarbon) *fakeSource { return &fakeSource{h} }

func (f *fakeSource) Intensity(zone string, t time.Time) (float64, error) {
	r, ok := LookupRegion(zone)
	if !ok {
		return 0, errors.New("unknown zone")
	}
	h := int(t.Sub(t0) / time.Hour)
	if h < 0 || h >= len(f.hours) {
		return 0, errors.New("outside")
	}
	return f.hours[h][r.Index], nil
}
func (f *fakeSource) Period() Period   { return Period{From: t0, To: hourAt(len(f.hours))} }
func (f *fakeSource) Zones() []string  { return Zones() }
func (f *fakeSource) Describe() string { return "test values" }

// TestHysteresisProperties drives random walks of six regions through
// random parameters and checks, for every subset of the pool (every
// feasible set the switch could mask), that each change of its first
// region from c to x is a gain of at least min_gain on that hour's scores
// and comes at least min_hold hours after c became its first region; the
// ranking is always a permutation of the pool; and with no gain and no
// hold it is the ranking by score.
func TestHysteresisProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	pool := SetOf(0, 1, 2, 3, 4, 5)
	gains := []Gain{{0, true}, {2, true}, {10, true}, {30, false}}
	for trial := range 60 {
		h := Hysteresis{MinGain: gains[trial%len(gains)], MinHold: rng.IntN(8), Horizon: 1}
		if trial < 4 {
			h.MinHold = 0
		}
		var vals [6]float64
		for i := range vals {
			vals[i] = 100 + 400*rng.Float64()
		}
		var st RankState
		first := map[RegionSet]Index{}
		since := map[RegionSet]int{}
		for hr := range 300 {
			for i := range vals {
				vals[i] = 50 + math.Abs(vals[i]*(1+0.15*rng.NormFloat64())-50) // no ties
			}
			sc := scores(vals[:]...)
			next, err := h.Next(st, hourAt(hr), pool, &sc)
			if err != nil {
				t.Fatal(err)
			}
			order := next.Order()
			if sorted := slices.Sorted(slices.Values(order)); !slices.Equal(sorted, pool.Indices()) {
				t.Fatalf("ranking %v is not a permutation of %v", order, pool)
			}
			if h.MinGain.Value == 0 && h.MinHold == 0 {
				if want := Rank(nil, pool, &sc); !slices.Equal(order, want) {
					t.Fatalf("no gain, no hold: ranking %v, want Rank %v", order, want)
				}
			}
			for set := RegionSet(1); set <= pool; set++ {
				x := next.First(set)
				c, ok := first[set]
				if ok && x != c {
					if !h.MinGain.Beats(sc[x], sc[c]) {
						t.Fatalf("trial %d hour %d set %v: %v (%.1f) replaced %v (%.1f) with less than %s", trial, hr, set, x, sc[x], c, sc[c], h.MinGain)
					}
					if held := hr - since[set]; held < h.MinHold {
						t.Fatalf("trial %d hour %d set %v: %v replaced after %d h, min_hold %d h", trial, hr, set, c, held, h.MinHold)
					}
				}
				if !ok || x != c {
					first[set], since[set] = x, hr
				}
			}
			st = next
		}
	}
}

// TestInfeasibilityWinsImmediately: the ranking holds a region first that
// a cleaner one does not beat by min_gain; when the held region becomes
// infeasible (SLA tightened, region leaves the pool, a full region masked
// out as C-cap does), the decision moves to the next ranked feasible region
// in the same hour, whatever min_gain and min_hold say.
func TestInfeasibilityWinsImmediately(t *testing.T) {
	site, err := NewSite("s", []RegionLatency{{Region: 0, P95Ms: 100}, {Region: 1, P95Ms: 200}, {Region: 2, P95Ms: 300}})
	if err != nil {
		t.Fatal(err)
	}
	pool := SetOf(0, 1, 2)
	h := Hysteresis{MinGain: Gain{50, true}, MinHold: 48, Horizon: 1}
	// Hour 0: region 1 cleanest, so it is first; afterwards region 2 is
	// cleaner, but not by 50 %.
	var st RankState
	for hr := range 10 {
		sc := scores(500, 300, 200)
		if hr == 0 {
			sc = scores(500, 200, 300)
		}
		if st, err = h.Next(st, hourAt(hr), pool, &sc); err != nil {
			t.Fatal(err)
		}
	}
	order := st.Order()
	if d := DecideRanked(PolicyC, site, pool, 1000, order, DefaultOptions()); d.Region != 1 {
		t.Fatalf("held region %v, want 1 (the test's premise)", d.Region)
	}
	cases := []struct {
		name     string
		pool     RegionSet
		sla      float64
		mask     RegionSet // regions the data plane masks out (full)
		want     Index
		fallback bool
	}{
		{"SLA below the held region's P95", pool, 150, 0, 0, false},
		{"held region leaves the pool", SetOf(0, 2), 1000, 0, 2, false},
		{"held region full (capacity mask)", pool, 1000, SetOf(1), 2, false},
		{"nothing feasible: nearest", pool, 50, 0, 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := DefaultOptions()
			var d Decision
			if c.mask != 0 {
				cand := Feasible(site, c.pool, c.sla) &^ c.mask
				d = Decision{Region: st.First(cand)}
			} else {
				d = DecideRanked(PolicyC, site, c.pool, c.sla, order, o)
			}
			if d.Region != c.want || d.Fallback != c.fallback {
				t.Errorf("decision %+v, want region %v fallback %v", d, c.want, c.fallback)
			}
		})
	}
}

func TestNextStateIsAValue(t *testing.T) {
	h := Hysteresis{MinGain: Gain{5, true}, MinHold: 2, Horizon: 1}
	pool := SetOf(0, 1, 2)
	sc0, sc1 := scores(3, 2, 1), scores(1, 2, 3)
	s0, err := h.Next(RankState{}, hourAt(0), pool, &sc0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s0.Order(), []Index{2, 1, 0}) || !s0.Hour().Equal(hourAt(0)) {
		t.Fatalf("first ranking %v at %v", s0.Order(), s0.Hour())
	}
	keep := s0
	if s, err := h.Next(s0, hourAt(1), pool, &sc1); err != nil || !slices.Equal(s.Order(), s0.Order()) {
		t.Fatalf("hour 1: ranking %v (%v), want the first ranking held for min_hold 2h", s.Order(), err)
	}
	s1, err := h.Next(s0, hourAt(2), pool, &sc1)
	if err != nil {
		t.Fatal(err)
	}
	if s0 != keep {
		t.Error("Next changed its input state")
	}
	if !slices.Equal(s1.Order(), []Index{0, 1, 2}) {
		t.Errorf("ranking %v, want [0 1 2]", s1.Order())
	}
	if at, ok := s1.PromotedAt(0); !ok || !at.Equal(hourAt(2)) {
		t.Errorf("region 0 promoted at %v %v", at, ok)
	}
	if at, ok := s1.PromotedAt(2); !ok || !at.Equal(hourAt(0)) {
		t.Errorf("region 2 moved down at hour 2, so its last move up is the first ranking (hour 0); got %v %v", at, ok)
	}
	// Re-planning an hour starts from the state before it.
	again, err := h.Next(s0, hourAt(2), pool, &sc1)
	if err != nil || again != s1 {
		t.Errorf("same inputs gave another state: %v", err)
	}
	for _, hr := range []int{2, 1} {
		if _, err := h.Next(s1, hourAt(hr), pool, &sc1); !errors.Is(err, ErrHourOrder) {
			t.Errorf("hour %d after hour 2: %v, want ErrHourOrder", hr, err)
		}
	}
	// A region added to the pool comes after the old ranking; one removed
	// leaves it.
	sc := scores(1, 2, 3, 0)
	s2, err := h.Next(s1, hourAt(5), SetOf(0, 2, 3), &sc)
	if err != nil {
		t.Fatal(err)
	}
	if got := s2.Order(); !slices.Equal(got, []Index{3, 0, 2}) || s2.Pool() != SetOf(0, 2, 3) {
		t.Errorf("ranking after pool change %v", got)
	}
}

func TestHysteresisValidate(t *testing.T) {
	cases := []struct {
		h  Hysteresis
		ok bool
	}{
		{DefaultHysteresis(), true},
		{Hysteresis{Horizon: 1}, true},
		{Hysteresis{Horizon: 0}, false},
		{Hysteresis{Horizon: MaxHorizon + 1}, false},
		{Hysteresis{MinHold: -1, Horizon: 1}, false},
		{Hysteresis{MinHold: MaxHold + 1, Horizon: 1}, false},
		{Hysteresis{MinGain: Gain{100, true}, Horizon: 1}, false},
		{Hysteresis{MinGain: Gain{-1, false}, Horizon: 1}, false},
	}
	for _, c := range cases {
		if err := c.h.Validate(); (err == nil) != c.ok {
			t.Errorf("%v: Validate() = %v, want ok=%v", c.h, err, c.ok)
		}
	}
	if s := DefaultHysteresis().String(); s != "min_gain 10%, min_hold 3h, horizon 1h" {
		t.Errorf("String() = %q", s)
	}
}

// TestDecideRankedEqualsDecide: under the plain carbon ranking of the site
// (Rank), the ranked decision is the policy's decision.
func TestDecideRankedEqualsDecide(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	o := DefaultOptions()
	for range 20000 {
		in := randomInstance(rng)
		order := Rank(in.site, in.pool&in.site.Regions(), &in.c)
		for _, p := range []Policy{PolicyA, PolicyB, PolicyC, PolicyCPlus} {
			want := Decide(p, in.site, in.pool, in.sla, &in.c, o)
			if got := DecideRanked(p, in.site, in.pool, in.sla, order, o); got != want {
				t.Fatalf("%v: DecideRanked %+v, Decide %+v", p, got, want)
			}
		}
	}
}

func TestHorizonMean(t *testing.T) {
	hours := []HourCarbon{scores(10, 40), scores(20, 30), scores(30, 20), scores(40, 10)}
	tab, err := NewCarbonTable(newFakeSource(hours), SetOf(0, 1), Period{From: t0, To: hourAt(4)})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		h, horizon int
		want0      float64
	}{{0, 1, 10}, {0, 2, 15}, {1, 3, 30}, {2, 3, 35}, {3, 6, 40}, {0, 0, 10}}
	for _, c := range cases {
		if got := HorizonMean(tab, c.h, c.horizon); got[0] != c.want0 || !math.IsInf(got[5], 1) {
			t.Errorf("HorizonMean(h=%d, horizon=%d)[0] = %v, want %v", c.h, c.horizon, got[0], c.want0)
		}
	}
}

func TestSignal(t *testing.T) {
	for _, c := range []struct {
		in, typ, desc string
		metric        Metric
	}{
		{"", "average", "average (lifecycle)", LCA},
		{"LCA", "average", "average (lifecycle)", LCA},
		{"direct", "average", "average (direct)", Direct},
		{"marginal", "marginal", "marginal (MOER)", LCA},
	} {
		s, err := ParseSignal(c.in)
		if err != nil || s.Type() != c.typ || s.Describe() != c.desc || s.Metric() != c.metric {
			t.Errorf("%q: %v %q %q %v %v", c.in, s, s.Type(), s.Describe(), s.Metric(), err)
		}
	}
	if _, err := ParseSignal("moer"); err == nil {
		t.Error("moer accepted")
	}
}

// BenchmarkHysteresisNext is one hourly step of the 12-region ranking
// (what the planner does per hour and a restart repeats per hour of
// history).
func BenchmarkHysteresisNext(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	hours := make([]HourCarbon, 1024)
	for i := range hours {
		for r := range NumRegions {
			hours[i][r] = 20 + 700*rng.Float64()
		}
	}
	h := DefaultHysteresis()
	var st RankState
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		next, err := h.Next(st, hourAt(i), Pool12, &hours[i%len(hours)])
		if err != nil {
			b.Fatal(err)
		}
		st = next
	}
}
