package regions

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// Policy is a region-selection policy.
//
// Tie-breaking (every policy, deterministic): among regions with equal
// carbon (or equal score for D), the one with the lower P95 latency from the
// site wins, then the lower region index. Decisions iterate the site's
// regions nearest first and replace the incumbent only on a strictly better
// value, which implements exactly this order.
type Policy uint8

// Policies. A, B, C, C+ and D are the paper's; C+warm and C-cap are ours.
const (
	// PolicyA routes to the nearest region (lowest P95): the baseline.
	PolicyA Policy = iota
	// PolicyB routes to the lowest-carbon region, ignoring the SLA.
	PolicyB
	// PolicyC keeps regions with L(r) ≤ SLA and picks the lowest carbon;
	// if none is feasible it falls back to the nearest region (= A).
	PolicyC
	// PolicyCPlus is C with L_eff(r) = L(r) + α·T_cold(r) (paper Eq. 4):
	// every request is assumed to meet a cold start.
	PolicyCPlus
	// PolicyD minimizes w·C_norm + (1−w)·L_norm over all regions, both
	// min–max normalized over the candidate set at time t; it may violate.
	PolicyD
	// PolicyCPlusWarm is C+ where the cold penalty applies only to regions
	// that received no request within the keep-alive window (stateful:
	// DecideCPlusWarm with a WarmState).
	PolicyCPlusWarm
	// PolicyCCap is C with per-region capacity: when the cleanest feasible
	// region is full, spill to the next-cleanest feasible one; when all
	// feasible regions are full, keep the feasible set (stateful:
	// DecideCCap with a CapState). This is what the switch's region capacity
	// bitmap does.
	PolicyCCap
	numPolicies
)

// Policies lists every policy in display order.
func Policies() []Policy {
	return []Policy{PolicyA, PolicyB, PolicyC, PolicyCPlus, PolicyD, PolicyCPlusWarm, PolicyCCap}
}

// String returns the policy's name: A, B, C, C+, D, C+warm, C-cap.
func (p Policy) String() string {
	switch p {
	case PolicyA:
		return "A"
	case PolicyB:
		return "B"
	case PolicyC:
		return "C"
	case PolicyCPlus:
		return "C+"
	case PolicyD:
		return "D"
	case PolicyCPlusWarm:
		return "C+warm"
	case PolicyCCap:
		return "C-cap"
	}
	return fmt.Sprintf("policy(%d)", uint8(p))
}

// ParsePolicy maps a name (as String returns) to a Policy.
func ParsePolicy(s string) (Policy, error) {
	for p := PolicyA; p < numPolicies; p++ {
		if p.String() == s {
			return p, nil
		}
	}
	return 0, fmt.Errorf("unknown policy %q (want A, B, C, C+, D, C+warm or C-cap)", s)
}

// ColdMissing says what C+ (and C+warm) do with a region whose cold latency
// the profile does not give.
type ColdMissing uint8

// Cold-missing behaviours.
const (
	// ColdMissingExclude makes such a region infeasible under C+: its L_eff
	// is unknown, so the SLA cannot be promised. The default.
	ColdMissingExclude ColdMissing = iota
	// ColdMissingWarm uses T_cold = 0 for it (L_eff = L): optimistic.
	ColdMissingWarm
)

// String returns "exclude" or "warm".
func (c ColdMissing) String() string {
	if c == ColdMissingWarm {
		return "warm"
	}
	return "exclude"
}

// ParseColdMissing parses "exclude" or "warm".
func ParseColdMissing(s string) (ColdMissing, error) {
	switch s {
	case "exclude", "":
		return ColdMissingExclude, nil
	case "warm":
		return ColdMissingWarm, nil
	}
	return 0, fmt.Errorf("cold-missing %q: want exclude or warm", s)
}

// Options are the policies' parameters.
type Options struct {
	Alpha       float64       // C+: weight of the cold latency (paper: 0.8)
	W           float64       // D: weight of carbon, 1−W of latency (paper: 0.5)
	ColdMissing ColdMissing   // C+: regions without a cold latency
	KeepAlive   time.Duration // C+warm: a region is warm this long after a request (default 10 min)
}

// DefaultOptions are the paper's parameters: α = 0.8, w = 0.5, missing cold
// latency excludes the region from C+, keep-alive 10 minutes.
func DefaultOptions() Options {
	return Options{Alpha: 0.8, W: 0.5, ColdMissing: ColdMissingExclude, KeepAlive: 10 * time.Minute}
}

// Validate checks the options' ranges.
func (o Options) Validate() error {
	switch {
	case !(o.Alpha >= 0) || math.IsInf(o.Alpha, 0):
		return fmt.Errorf("alpha %v: want a finite value >= 0", o.Alpha)
	case !(o.W >= 0 && o.W <= 1):
		return fmt.Errorf("w %v: want 0 <= w <= 1", o.W)
	case o.KeepAlive < 0:
		return fmt.Errorf("keep-alive %v: want >= 0", o.KeepAlive)
	}
	return nil
}

// Decision is the outcome of a policy for one request.
type Decision struct {
	Region   Index `json:"region"`
	Fallback bool  `json:"fallback,omitempty"` // nothing feasible: the site's nearest region
	Spilled  bool  `json:"spilled,omitempty"`  // C-cap: a full feasible region was masked out
}

// Nearest returns the site's nearest region within pool (lowest P95, then
// lowest index): policy A and every fallback. NoRegion if the site has no
// region in pool.
func Nearest(s *Site, pool RegionSet) Index {
	for _, r := range s.order[:s.n] {
		if pool.Has(r) {
			return r
		}
	}
	return NoRegion
}

// Feasible returns {r ∈ pool : L(r) ≤ slaMs}, the feasibility bitmap of
// policy C (and C-cap).
func Feasible(s *Site, pool RegionSet, slaMs float64) RegionSet {
	var f RegionSet
	for _, r := range s.order[:s.n] {
		if s.p95[r] > slaMs {
			break
		}
		if pool.Has(r) {
			f |= 1 << r
		}
	}
	return f
}

// FeasibleCold returns the C+ feasibility bitmap: {r ∈ pool : L(r) +
// α·T_cold(r) ≤ slaMs}, where regions in warm pay no cold penalty and regions
// with no cold latency follow o.ColdMissing. warm = 0 gives paper Eq. 4.
func FeasibleCold(s *Site, pool RegionSet, slaMs float64, o Options, warm RegionSet) RegionSet {
	var f RegionSet
	for _, r := range s.order[:s.n] {
		if !pool.Has(r) {
			continue
		}
		l := s.p95[r]
		if !warm.Has(r) {
			switch {
			case s.coldKnown.Has(r):
				l += o.Alpha * s.cold[r]
			case o.ColdMissing == ColdMissingExclude:
				continue
			}
		}
		if l <= slaMs {
			f |= 1 << r
		}
	}
	return f
}

// Candidates returns the regions policy p may choose for (site, SLA): the
// contents of the switch's feasibility bitmap for that policy. A: the nearest
// region only; B and D: every region of pool the site has a latency for; C
// and C-cap: Feasible; C+ and C+warm: FeasibleCold with every region cold (the
// stateless bound; C+warm narrows it with a WarmState at run time). An empty
// set means the decision falls back to Nearest.
func Candidates(p Policy, s *Site, pool RegionSet, slaMs float64, o Options) RegionSet {
	switch p {
	case PolicyA:
		if n := Nearest(s, pool); n != NoRegion {
			return SetOf(n)
		}
		return 0
	case PolicyB, PolicyD:
		return pool & s.known
	case PolicyC, PolicyCCap:
		return Feasible(s, pool, slaMs)
	case PolicyCPlus, PolicyCPlusWarm:
		return FeasibleCold(s, pool, slaMs, o, 0)
	}
	return 0
}

// cleanest returns the lowest-carbon region of set (ties: nearer, then lower
// index), or NoRegion if set is empty.
func cleanest(s *Site, set RegionSet, c *HourCarbon) Index {
	best, bestC := NoRegion, math.Inf(1)
	for _, r := range s.order[:s.n] {
		if set&(1<<r) != 0 && (best == NoRegion || c[r] < bestC) {
			best, bestC = r, c[r]
		}
	}
	return best
}

// choose picks the cleanest candidate or falls back to the nearest region.
func choose(s *Site, pool, cand RegionSet, c *HourCarbon) Decision {
	if r := cleanest(s, cand, c); r != NoRegion {
		return Decision{Region: r}
	}
	return Decision{Region: Nearest(s, pool), Fallback: true}
}

// Rank orders set by carbon at one hour, cleanest first (ties: nearer to s,
// then lower index; with s == nil, lower index). The first element of Rank
// restricted to a policy's Candidates is that policy's decision (A, B, C,
// C+): this is the carbon_rank table's priority order.
func Rank(s *Site, set RegionSet, c *HourCarbon) []Index {
	idx := set.Indices()
	lat := func(r Index) float64 {
		if s == nil {
			return 0
		}
		if l, ok := s.P95(r); ok {
			return l
		}
		return math.Inf(1)
	}
	sort.SliceStable(idx, func(a, b int) bool {
		ra, rb := idx[a], idx[b]
		if c[ra] != c[rb] {
			return c[ra] < c[rb]
		}
		return lat(ra) < lat(rb)
	})
	return idx
}

// ScoresD returns policy D's score of every candidate (pool ∩ site regions)
// at one hour: w·C_norm + (1−w)·L_norm, each min–max normalized over the
// candidates (a term whose max equals its min contributes 0). Regions
// outside the candidates get +Inf. Rank(s, pool&s.Regions(), &scores) is D's
// per-site preference order; its first element is D's decision.
func ScoresD(s *Site, pool RegionSet, c *HourCarbon, o Options) HourCarbon {
	var out HourCarbon
	cmin, cmax := math.Inf(1), math.Inf(-1)
	lmin, lmax := math.Inf(1), math.Inf(-1)
	cand := pool & s.known
	for i := range out {
		out[i] = math.Inf(1)
	}
	for _, r := range s.order[:s.n] {
		if cand&(1<<r) == 0 {
			continue
		}
		if v := c[r]; v < cmin {
			cmin = v
		}
		if v := c[r]; v > cmax {
			cmax = v
		}
		if l := s.p95[r]; l < lmin {
			lmin = l
		}
		if l := s.p95[r]; l > lmax {
			lmax = l
		}
	}
	for _, r := range s.order[:s.n] {
		if cand&(1<<r) == 0 {
			continue
		}
		var cn, ln float64
		if cmax > cmin {
			cn = (c[r] - cmin) / (cmax - cmin)
		}
		if lmax > lmin {
			ln = (s.p95[r] - lmin) / (lmax - lmin)
		}
		out[r] = o.W*cn + (1-o.W)*ln
	}
	return out
}

// Decide runs a stateless policy for one request of site s with SLA slaMs
// at the hour whose carbon snapshot is c. C+warm without state is C+ (every
// region cold) and C-cap without state is C (no region full); use
// DecideCPlusWarm and DecideCCap for the stateful variants.
func Decide(p Policy, s *Site, pool RegionSet, slaMs float64, c *HourCarbon, o Options) Decision {
	switch p {
	case PolicyA:
		return Decision{Region: Nearest(s, pool)}
	case PolicyB:
		return choose(s, pool, pool&s.known, c)
	case PolicyC, PolicyCCap:
		return choose(s, pool, Feasible(s, pool, slaMs), c)
	case PolicyCPlus, PolicyCPlusWarm:
		return choose(s, pool, FeasibleCold(s, pool, slaMs, o, 0), c)
	case PolicyD:
		sc := ScoresD(s, pool, c, o)
		return choose(s, pool, pool&s.known, &sc)
	}
	return Decision{Region: NoRegion}
}

// DecideC is policy C on the hot path: one pass over the site's regions in
// latency order (feasible regions are a prefix), no allocation. It returns
// the same region as Decide(PolicyC, …).
func DecideC(s *Site, pool RegionSet, slaMs float64, c *HourCarbon) Index {
	best, first := NoRegion, NoRegion
	bestC := math.Inf(1)
	for _, r := range s.order[:s.n] {
		if pool&(1<<r) == 0 {
			continue
		}
		if first == NoRegion {
			first = r
		}
		if s.p95[r] > slaMs {
			break
		}
		if v := c[r]; best == NoRegion || v < bestC {
			best, bestC = r, v
		}
	}
	if best == NoRegion {
		return first
	}
	return best
}

// WarmState remembers, per region, when it last received a request (for
// C+warm). The zero value has every region cold.
type WarmState struct {
	last [MaxRegions]int64 // unix nanoseconds of the last request
	seen RegionSet
}

// Warm returns the regions that received a request within keepAlive
// before now.
func (w *WarmState) Warm(now time.Time, keepAlive time.Duration) RegionSet {
	var set RegionSet
	n := now.UnixNano()
	for v := uint32(w.seen); v != 0; v &= v - 1 {
		r := Index(trailingZeros(v))
		if d := n - w.last[r]; d >= 0 && d <= int64(keepAlive) {
			set |= 1 << r
		}
	}
	return set
}

// Touch records a request to region r at now.
func (w *WarmState) Touch(r Index, now time.Time) {
	if r >= MaxRegions {
		return
	}
	w.last[r] = now.UnixNano()
	w.seen |= 1 << r
}

// DecideCPlusWarm runs C+warm for a request at now: L_eff = L + α·T_cold only
// for regions not warm (no request within o.KeepAlive), then the cleanest
// feasible region, else the nearest. It records the request in w.
func DecideCPlusWarm(s *Site, pool RegionSet, slaMs float64, c *HourCarbon, o Options, w *WarmState, now time.Time) Decision {
	d := choose(s, pool, FeasibleCold(s, pool, slaMs, o, w.Warm(now, o.KeepAlive)), c)
	w.Touch(d.Region, now)
	return d
}

// CapState holds per-region capacities and outstanding requests for C-cap,
// as the switch's region_outstanding register and capacity parameter do.
type CapState struct {
	Capacity    [MaxRegions]int // 0 = unlimited
	Outstanding [MaxRegions]int
}

// Full returns the regions at or above capacity.
func (cs *CapState) Full() RegionSet {
	var f RegionSet
	for r := range MaxRegions {
		if cs.Capacity[r] > 0 && cs.Outstanding[r] >= cs.Capacity[r] {
			f |= 1 << r
		}
	}
	return f
}

// Release frees one slot of region r (never below zero).
func (cs *CapState) Release(r Index) {
	if r < MaxRegions && cs.Outstanding[r] > 0 {
		cs.Outstanding[r]--
	}
}

// DecideCCap runs C-cap and takes a slot of the chosen region: candidates
// are the feasible regions that are not full; if every feasible region is
// full the feasible set is kept (never leave it); if none is feasible, the
// nearest region. Spilled is set when a full feasible region was masked out.
func DecideCCap(s *Site, pool RegionSet, slaMs float64, c *HourCarbon, cs *CapState) Decision {
	feas := Feasible(s, pool, slaMs)
	cand := feas &^ cs.Full()
	spilled := cand != 0 && cand != feas
	if cand == 0 {
		cand = feas
	}
	d := choose(s, pool, cand, c)
	d.Spilled = spilled
	if d.Region < MaxRegions {
		cs.Outstanding[d.Region]++
	}
	return d
}

// Router applies policies to requests at wall-clock times, reading a carbon
// table: the "(site, SLA, t) → region" form of the policies.
type Router struct {
	Table   *CarbonTable
	Pool    RegionSet
	Options Options
}

// Route decides a stateless policy for site s, SLA slaMs at time t.
func (rt *Router) Route(p Policy, s *Site, slaMs float64, t time.Time) (Decision, error) {
	c, err := rt.Table.At(t)
	if err != nil {
		return Decision{}, fmt.Errorf("route: %w", err)
	}
	return Decide(p, s, rt.Pool, slaMs, c, rt.Options), nil
}
