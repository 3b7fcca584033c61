package regions

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Gain is the least improvement that lets a region overtake another in a
// hysteretic ranking: a share of the incumbent's value (Relative, Value in
// percent) or an absolute difference (Value in gCO2eq/kWh).
type Gain struct {
	Value    float64 `json:"value"`
	Relative bool    `json:"relative"`
}

// MaxAbsoluteGain bounds an absolute gain: nothing is cleaner than another
// region by more than the largest plausible intensity.
const MaxAbsoluteGain = MaxIntensity

// ParseGain parses "5%" (relative to the incumbent's value) or "20g/kWh"
// (also "20 g/kWh", "20gCO2/kWh", "20 gCO2eq/kWh"; absolute). A number
// without a unit is an error: 5 could mean either.
func ParseGain(s string) (Gain, error) {
	t := strings.TrimSpace(s)
	var g Gain
	switch {
	case strings.HasSuffix(t, "%"):
		t, g.Relative = strings.TrimSpace(strings.TrimSuffix(t, "%")), true
	default:
		unit := ""
		for _, u := range []string{"gCO2eq/kWh", "gCO2/kWh", "g/kWh"} {
			if strings.HasSuffix(t, u) {
				unit = u
				break
			}
		}
		if unit == "" {
			return Gain{}, fmt.Errorf("gain %q: give a unit: \"5%%\" (relative to the current region's value) or \"20g/kWh\" (absolute)", s)
		}
		t = strings.TrimSpace(strings.TrimSuffix(t, unit))
	}
	v, err := strconv.ParseFloat(t, 64)
	switch {
	case err != nil || math.IsNaN(v) || math.IsInf(v, 0):
		return Gain{}, fmt.Errorf("gain %q: %q is not a number", s, t)
	case v < 0:
		return Gain{}, fmt.Errorf("gain %q: must be >= 0", s)
	case g.Relative && v >= 100:
		return Gain{}, fmt.Errorf("gain %q: a relative gain must be below 100%%", s)
	case !g.Relative && v > MaxAbsoluteGain:
		return Gain{}, fmt.Errorf("gain %q: above %d g/kWh, no region could ever take over", s, MaxAbsoluteGain)
	}
	g.Value = v
	return g, nil
}

// String renders the gain as ParseGain reads it: "5%" or "20g/kWh".
func (g Gain) String() string {
	v := strconv.FormatFloat(g.Value, 'g', -1, 64)
	if g.Relative {
		return v + "%"
	}
	return v + "g/kWh"
}

// MarshalText writes String, so JSON shows "5%".
func (g Gain) MarshalText() ([]byte, error) { return []byte(g.String()), nil }

// UnmarshalText parses with ParseGain.
func (g *Gain) UnmarshalText(b []byte) error {
	v, err := ParseGain(string(b))
	if err != nil {
		return err
	}
	*g = v
	return nil
}

// Beats reports whether a region of value challenger may overtake one of
// value incumbent: challenger is strictly lower and lower by at least the
// gain (a share of incumbent's value, or an absolute amount). A zero gain
// is plain "strictly lower".
func (g Gain) Beats(challenger, incumbent float64) bool {
	if !(challenger < incumbent) {
		return false
	}
	need := g.Value
	if g.Relative {
		need = g.Value / 100 * incumbent
	}
	return incumbent-challenger >= need
}

// Hysteresis parameterises the hysteretic carbon ranking (docs/ARCHITECTURE.md
// decision 42): a region overtakes another in the ranking only when it is
// cleaner by at least MinGain and the region it overtakes has not itself
// moved up within the last MinHold hours; regions are compared by the mean
// of the next Horizon hours (1: the current hour only). Feasibility is not
// part of the ranking: the data plane masks infeasible regions out before
// it ranks, so infeasibility always wins at once.
type Hysteresis struct {
	MinGain Gain `json:"min_gain"`
	// MinHold is in whole hours (0: no hold).
	MinHold int `json:"min_hold_h"`
	// Horizon is in whole hours, >= 1.
	Horizon int `json:"horizon_h"`
}

// MaxHorizon and MaxHold bound Horizon and MinHold (hours): the forecasts
// the live sources give reach a day or two, and a hold beyond a week would
// make the ranking ignore the weekly pattern altogether.
const (
	MaxHorizon = 72
	MaxHold    = 168
)

// DefaultHysteresis is what a configured hysteresis block without values
// means: min_gain 10 %, min_hold 3 h, horizon 1 h (the current hour, no
// forecast needed). It was chosen from the sweep of `p4ctl eval
// stability` on the 2022 traces, where it meets the acceptance aim of
// issue 12 (docs/REPRODUCTION.md §1e has the computed figures).
func DefaultHysteresis() Hysteresis {
	return Hysteresis{MinGain: Gain{Value: 10, Relative: true}, MinHold: 3, Horizon: 1}
}

// Validate checks the ranges.
func (h Hysteresis) Validate() error {
	switch {
	case h.MinGain.Value < 0 || math.IsNaN(h.MinGain.Value) || (h.MinGain.Relative && h.MinGain.Value >= 100) || (!h.MinGain.Relative && h.MinGain.Value > MaxAbsoluteGain):
		return fmt.Errorf("hysteresis: min_gain %s out of range (0%% <= relative < 100%%, 0 <= absolute <= %d g/kWh)", h.MinGain, MaxAbsoluteGain)
	case h.MinHold < 0 || h.MinHold > MaxHold:
		return fmt.Errorf("hysteresis: min_hold %dh out of range 0..%dh", h.MinHold, MaxHold)
	case h.Horizon < 1 || h.Horizon > MaxHorizon:
		return fmt.Errorf("hysteresis: horizon %dh out of range 1..%dh", h.Horizon, MaxHorizon)
	}
	return nil
}

// String renders the parameters: "min_gain 5%, min_hold 3h, horizon 1h".
func (h Hysteresis) String() string {
	return fmt.Sprintf("min_gain %s, min_hold %dh, horizon %dh", h.MinGain, h.MinHold, h.Horizon)
}

// Applies reports whether hysteresis can act on policy p's ranking: the
// policies that rank by carbon (B, C, C+, C-cap and the evaluation's
// C+warm). A ignores carbon; D ranks by a normalized per-site score, for
// which a gain in % or g/kWh has no meaning.
func Applies(p Policy) bool {
	switch p {
	case PolicyB, PolicyC, PolicyCPlus, PolicyCCap, PolicyCPlusWarm:
		return true
	}
	return false
}

// never is the promotion hour of a region that has not moved up: far
// enough in the past that every hold is over.
const never = math.MinInt64 / 2

// RankState is the state of a hysteretic ranking after one hour: the
// ranking and, per region, the hour it last moved up. It is a value (no
// pointers): copy it to keep a state, and Next never changes its input.
// The zero value is "no ranking yet".
type RankState struct {
	order    [MaxRegions]Index
	n        int
	promoted [MaxRegions]int64 // unix hour of the last move up; never
	hour     int64             // unix hour of the state
	valid    bool
}

// Valid reports whether the state holds a ranking.
func (s *RankState) Valid() bool { return s.valid }

// Hour is the hour of the state (zero time if none).
func (s *RankState) Hour() time.Time {
	if !s.valid {
		return time.Time{}
	}
	return time.Unix(s.hour*3600, 0).UTC()
}

// Order returns the ranking, cleanest first (a fresh slice).
func (s *RankState) Order() []Index { return append([]Index(nil), s.order[:s.n]...) }

// Pool is the set of regions ranked.
func (s *RankState) Pool() RegionSet {
	var p RegionSet
	for _, r := range s.order[:s.n] {
		p = p.Add(r)
	}
	return p
}

// First returns the first region of the ranking within set, as the switch's
// carbon_rank does after masking set (NoRegion if none).
func (s *RankState) First(set RegionSet) Index {
	for _, r := range s.order[:s.n] {
		if set.Has(r) {
			return r
		}
	}
	return NoRegion
}

// PromotedAt returns the hour region r last moved up in the ranking, and
// false when it never did (since the state began).
func (s *RankState) PromotedAt(r Index) (time.Time, bool) {
	if !s.valid || r >= MaxRegions || s.promoted[r] == never {
		return time.Time{}, false
	}
	return time.Unix(s.promoted[r]*3600, 0).UTC(), true
}

func unixHour(t time.Time) int64 {
	u := t.Unix()
	h := u / 3600
	if u < 0 && u%3600 != 0 {
		h-- // floor
	}
	return h
}

// ErrHourOrder is returned by Next for an hour that is not after the state's.
var ErrHourOrder = errors.New("hysteresis: hours must increase")

// Next returns the ranking of pool at hour, given the state of an earlier
// hour (zero: none yet) and score, the value each region is ranked by (the
// carbon of the hour, or its mean over the horizon: HorizonMean). It is a
// pure function of its arguments.
//
// The ranking is built from the top. At each place, the candidates are the
// regions not placed yet; the incumbent of the place is the one of them
// ranked highest before (new pool regions come after the old ranking, by
// index). A candidate x may take the place if, for every region y still
// unplaced that was ranked above x, x beats y by MinGain (Gain.Beats on the
// scores) and y has not moved up within the last MinHold hours; of the
// candidates that may, the one with the lowest score takes it (ties: the
// higher-ranked before). Hence two regions swap places only when the
// lower one is cleaner by MinGain and the upper one has held its place
// MinHold hours — for every feasible set at once: the switch picks the
// first ranked region of a set, which can change from c to x only when x
// overtakes c (decision 42).
//
// Without a state (the first hour), the ranking is by score, ties by index
// (Rank(nil, pool, score)), and counts as every region's move up: the
// first choice, too, holds min_hold hours.
func (h Hysteresis) Next(prev RankState, hour time.Time, pool RegionSet, score *HourCarbon) (RankState, error) {
	now := unixHour(hour)
	if prev.valid && now <= prev.hour {
		return prev, fmt.Errorf("%w: %s after %s", ErrHourOrder, hour.UTC().Format(time.RFC3339), prev.Hour().Format(time.RFC3339))
	}
	next := RankState{hour: now, valid: true}
	for i := range next.promoted {
		next.promoted[i] = never
	}
	// Candidates in the previous order: the old ranking within pool, then
	// pool regions it did not hold, by index.
	var rem [MaxRegions]Index
	n := 0
	var held RegionSet
	if prev.valid {
		for _, r := range prev.order[:prev.n] {
			if pool.Has(r) {
				rem[n] = r
				n++
				held = held.Add(r)
				next.promoted[r] = prev.promoted[r]
			}
		}
	}
	fresh := !prev.valid
	for _, r := range (pool &^ held).Indices() {
		rem[n] = r
		n++
	}
	if fresh {
		// The first ranking is by score, and every region has just taken
		// its place: the first choice holds min_hold hours like any other.
		idx := rem[:n]
		sortByScore(idx, score)
		next.n = copy(next.order[:], idx)
		for _, r := range idx {
			next.promoted[r] = now
		}
		return next, nil
	}
	holdOver := func(y Index) bool { return now-next.promoted[y] >= int64(h.MinHold) }
	for n > 0 {
		best := 0
		for j := 1; j < n; j++ {
			x := rem[j]
			if !(score[x] < score[rem[best]]) {
				continue
			}
			ok := true
			for i := range j {
				y := rem[i]
				if !h.MinGain.Beats(score[x], score[y]) || !holdOver(y) {
					ok = false
					break
				}
			}
			if ok {
				best = j
			}
		}
		x := rem[best]
		if best > 0 {
			next.promoted[x] = now
		}
		next.order[next.n] = x
		next.n++
		copy(rem[best:n-1], rem[best+1:n])
		n--
	}
	return next, nil
}

// sortByScore sorts idx by score, ties by index (insertion sort: ≤ 32).
func sortByScore(idx []Index, score *HourCarbon) {
	for i := 1; i < len(idx); i++ {
		for j := i; j > 0; j-- {
			a, b := idx[j-1], idx[j]
			if score[b] < score[a] || (score[b] == score[a] && b < a) {
				idx[j-1], idx[j] = b, a
				continue
			}
			break
		}
	}
}

// HorizonMean returns, per region, the mean of hours h .. h+horizon−1 of
// tab (clipped at the table's end: the last hours average what is left),
// the perfect forecast a trace gives of itself. horizon 1 is hour h.
func HorizonMean(tab *CarbonTable, h, horizon int) HourCarbon {
	last := min(h+max(horizon, 1), tab.Hours())
	var out HourCarbon
	for h2 := h; h2 < last; h2++ {
		c := tab.Hour(h2)
		for i := range out {
			out[i] += c[i]
		}
	}
	k := float64(last - h)
	for i := range out {
		out[i] /= k
	}
	return out
}

// DecideRanked is the switch's decision under a given carbon ranking:
// the first region of order among policy p's candidates (Candidates), else
// the site's nearest region (fallback). With order = Rank(s, pool, c) it
// equals Decide for A, B, C, C+ and C-cap; with a hysteretic ranking it is
// what carbon_rank does when the compiler installs that ranking. D is
// decided by its own score (Decide).
func DecideRanked(p Policy, s *Site, pool RegionSet, slaMs float64, order []Index, o Options) Decision {
	cand := Candidates(p, s, pool, slaMs, o)
	for _, r := range order {
		if cand.Has(r) {
			return Decision{Region: r}
		}
	}
	return Decision{Region: Nearest(s, pool), Fallback: true}
}
