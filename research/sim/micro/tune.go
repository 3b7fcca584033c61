package micro

import (
	"context"
	"fmt"
	"io"
	"math"
	"sort"
)

// Algorithms TuneJBSQ can tune.
const (
	// AlgorithmSwitch is the switch's one-pass dispatch (policy switch:n),
	// what the controller's bound is pushed to: the default.
	AlgorithmSwitch = "switch"
	// AlgorithmIdeal is the late-binding study's central dispatcher
	// (jbsq:n: least outstanding among all hosts below the bound).
	AlgorithmIdeal = "ideal"
)

// TuneConfig asks for the smallest JBSQ bound meeting an SLO target.
type TuneConfig struct {
	// Scenario is the cluster and workload; its policy is replaced by
	// the Algorithm's JBSQ(n).
	Scenario Config `json:"scenario"`
	// Algorithm is AlgorithmSwitch (default; needs a power-of-two number of
	// hosts, as a switch pool has) or AlgorithmIdeal.
	Algorithm string `json:"algorithm"`
	// Target is the largest acceptable violation rate (default 0.05).
	Target float64 `json:"target"`
	// Options: defaults 3 seeds × 100 000 requests; quick 2 × 10 000.
	Options Options `json:"options"`
}

// TunePoint is the violation rate at one bound.
type TunePoint struct {
	Bound int  `json:"bound"`
	Cell  Cell `json:"cell"`
	Meets bool `json:"meets_target"`
	// Unstable marks bounds below the stability limit, not simulated.
	Unstable bool `json:"unstable,omitempty"`
}

// TuneResult is the chosen bound and the curve it was read from.
type TuneResult struct {
	Scenario  Config  `json:"scenario"`
	Algorithm string  `json:"algorithm"`
	Target    float64 `json:"target"`
	Options   Options `json:"options"`
	// Bound is the smallest n per host whose mean violation rate across
	// seeds is ≤ Target: the value the controller pushes as set_pool's
	// bound. When no n meets the target, Met is false and Bound is the n
	// with the lowest violation rate.
	Bound int  `json:"bound"`
	Met   bool `json:"met"`
	// Little is the Little's-law bound ⌈m(1 + 2D/S)⌉, for comparison.
	Little int `json:"little_bound"`
	// Stable is the smallest bound that can carry the load at all: a credit
	// cycles in at least S + 2D, so a host with n credits completes at most
	// n/(S + 2D) requests per µs; below ⌈mρ(1 + 2D/S)⌉ it is overloaded.
	Stable int `json:"stability_limit"`
	// Headroom is how much more load the chosen bound can carry before it
	// becomes the bottleneck: n / (mρ(1 + 2D/S)) − 1. A bound that barely
	// meets the target at the stability limit has little headroom.
	Headroom float64 `json:"headroom"`
	// Curve holds every evaluated bound, ascending.
	Curve []TunePoint `json:"curve"`
}

// TuneLimits reports why no JBSQ bound can carry sc's load: a load ρ ≥ 1
// saturates the cores whatever the bound, and a stability limit
// ⌈mρ(1 + 2D/S)⌉ above 65535 lies beyond the switch's 16-bit bound.
func TuneLimits(sc Config) error {
	if !(sc.Load > 0 && sc.Load < 1) {
		return fmt.Errorf("load %v must be in (0, 1): at ρ ≥ 1 no bound carries the load", sc.Load)
	}
	if s := float64(sc.CoresPerHost) * sc.Load * (1 + 2*sc.Delay/sc.Service.Mean); !(s <= 65535) {
		return fmt.Errorf("stability limit ⌈mρ(1 + 2D/S)⌉ = %.0f is above 65535, the switch's 16-bit bound (cores per host %d, load %v, delay %v µs, service mean %v µs)",
			math.Ceil(s), sc.CoresPerHost, sc.Load, sc.Delay, sc.Service.Mean)
	}
	return nil
}

// TuneJBSQ finds the smallest JBSQ bound n (per host) whose violation rate
// meets the target. Bounds below the stability limit ⌈mρ(1 + 2D/S)⌉ cannot
// carry the load and are not simulated; from that limit it evaluates n,
// 2n, 4n, … up to max(64, 4 × the Little bound) (plus the Little bound
// itself), then bisects between the last failing and the first passing grid
// point, reusing the same seeds for every n (common random numbers) so the
// curve is smooth.
func TuneJBSQ(ctx context.Context, tc TuneConfig) (*TuneResult, error) {
	return tuneJBSQ(ctx, tc, &tracker{fn: tc.Options.Progress})
}

func tuneJBSQ(ctx context.Context, tc TuneConfig, tr *tracker) (*TuneResult, error) {
	o := tc.Options.withDefaults(3, 2, 100000, 10000)
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("tune jbsq: %w", err)
	}
	if tc.Target == 0 {
		tc.Target = 0.05
	}
	if !(tc.Target > 0 && tc.Target < 1) {
		return nil, fmt.Errorf("tune jbsq: target %v must be in (0, 1)", tc.Target)
	}
	sc := tc.Scenario
	switch tc.Algorithm {
	case "", AlgorithmSwitch:
		tc.Algorithm = AlgorithmSwitch
		sc.Policy = Policy{Binding: Switch, Ingress: Least, Bound: 1}
	case AlgorithmIdeal:
		sc.Policy = Policy{Binding: JBSQ, Ingress: Least, Bound: 1}
	default:
		return nil, fmt.Errorf("tune jbsq: algorithm %q must be %s or %s", tc.Algorithm, AlgorithmSwitch, AlgorithmIdeal)
	}
	if err := sc.Validate(); err != nil {
		return nil, fmt.Errorf("tune jbsq: %w", err)
	}
	if err := TuneLimits(sc); err != nil {
		return nil, fmt.Errorf("tune jbsq: %w", err)
	}
	little := LittleBound(sc.CoresPerHost, sc.Delay, sc.Service.Mean)
	stable := StabilityBound(sc.CoresPerHost, sc.Load, sc.Delay, sc.Service.Mean)
	res := &TuneResult{Scenario: stamp(sc, o), Algorithm: tc.Algorithm, Target: tc.Target, Options: o, Little: little, Stable: stable}
	seen := map[int]*TunePoint{}
	eval := func(ns []int) error {
		var todo []int
		for _, n := range ns {
			if _, ok := seen[n]; !ok && n >= 1 {
				seen[n] = nil
				todo = append(todo, n)
			}
		}
		var cfgs []Config
		for _, n := range todo {
			c := sc
			c.Policy.Bound = n
			cfgs = append(cfgs, seeded(c, o)...)
		}
		runs, err := runMany(ctx, cfgs, o.Parallel, tr)
		if err != nil {
			return err
		}
		for i, n := range todo {
			cell := summarize(runs[i*o.Seeds : (i+1)*o.Seeds])
			seen[n] = &TunePoint{Bound: n, Cell: cell, Meets: cell.Violation.Mean <= tc.Target}
		}
		return nil
	}
	gridMax := min(65535, max(64, 4*little, stable))
	grid := []int{min(little, 65535)}
	for n := stable; n <= gridMax; n *= 2 {
		grid = append(grid, n)
	}
	if err := eval(grid); err != nil {
		return nil, fmt.Errorf("tune jbsq: %w", err)
	}
	sort.Ints(grid)
	lo, hi := stable-1, -1
	for _, n := range grid {
		if seen[n].Meets {
			hi = n
			break
		}
		lo = n
	}
	if hi > 0 {
		for hi-lo > 1 {
			mid := (lo + hi) / 2
			if err := eval([]int{mid}); err != nil {
				return nil, fmt.Errorf("tune jbsq: %w", err)
			}
			if seen[mid].Meets {
				hi = mid
			} else {
				lo = mid
			}
		}
		res.Bound, res.Met = hi, true
	}
	for _, p := range seen {
		res.Curve = append(res.Curve, *p)
	}
	for n := 1; n < stable; n *= 2 {
		res.Curve = append(res.Curve, TunePoint{Bound: n, Unstable: true})
	}
	sort.Slice(res.Curve, func(i, j int) bool { return res.Curve[i].Bound < res.Curve[j].Bound })
	if !res.Met {
		best := -1
		for i, p := range res.Curve {
			if !p.Unstable && (best < 0 || p.Cell.Violation.Mean < res.Curve[best].Cell.Violation.Mean) {
				best = i
			}
		}
		res.Bound = res.Curve[best].Bound
	}
	need := float64(sc.CoresPerHost) * sc.Load * (1 + 2*sc.Delay/sc.Service.Mean)
	res.Headroom = float64(res.Bound)/need - 1
	return res, nil
}

// WriteText implements output.TextWriter.
func (r *TuneResult) WriteText(w io.Writer) error {
	verdict := fmt.Sprintf("smallest n meeting %.2g %% violations: %d per host (push as set_pool bound)", 100*r.Target, r.Bound)
	if !r.Met {
		verdict = fmt.Sprintf("no n meets %.2g %% violations; the best is n = %d", 100*r.Target, r.Bound)
	}
	fmt.Fprintf(w, "tune jbsq (%s) — %s\n%s\n%s\nLittle's-law bound ⌈m(1 + 2D/S)⌉ = %d; stability limit ⌈mρ(1 + 2D/S)⌉ = %d; n = %d carries %.1f %% more load before it saturates\n",
		r.algorithmName(), verdict, scenarioLine(r.Scenario), seedsLine(r.Options), r.Little, r.Stable, r.Bound, 100*r.Headroom)
	if r.Headroom < 0.1 {
		fmt.Fprintf(w, "note: little headroom — a load increase of %.0f %% makes n = %d unstable; the Little bound %d leaves %.0f %%\n",
			100*r.Headroom, r.Bound, r.Little, 100*(float64(r.Little)/float64(r.Bound)*(1+r.Headroom)-1))
	}
	fmt.Fprintln(w)
	rows := make([][]string, 0, len(r.Curve))
	for _, p := range r.Curve {
		mark := ""
		if p.Bound == r.Bound {
			mark = "←"
		}
		if p.Unstable {
			rows = append(rows, []string{fmt.Sprint(p.Bound), "unstable (below the stability limit, not simulated)", "", "", ""})
			continue
		}
		held := pct(p.Cell.HoldRate)
		if r.Algorithm != AlgorithmIdeal {
			held = num(p.Cell.RecircPerRPC, 2)
		}
		rows = append(rows, []string{fmt.Sprint(p.Bound), pct(p.Cell.Violation), num(p.Cell.P99, 1), held, mark})
	}
	held := "RECIRCULATIONS/REQUEST"
	if r.Algorithm == AlgorithmIdeal {
		held = "HELD AT DISPATCHER"
	}
	if err := writeTable(w, []string{"N", "VIOLATIONS", "P99 µs", held, ""}, rows); err != nil {
		return err
	}
	if r.Algorithm != AlgorithmIdeal {
		_, err := fmt.Fprintln(w, "\nthe switch binds first fit below n within a group of four: an n far above the Little bound packs servers, so violations rise again with n")
		return err
	}
	return nil
}

// algorithmName says which dispatch the bound was tuned for.
func (r *TuneResult) algorithmName() string {
	if r.Algorithm == AlgorithmIdeal {
		return "the study's central dispatcher, jbsq:n"
	}
	return "the switch's one-pass dispatch, switch:n"
}

// TuneSeedOffset separates the seeds a bound is tuned on from the seeds
// it is scored on: an experiment scoring seeds s … s+k−1 tunes on seeds
// s+TuneSeedOffset … (Options allows at most 1000 seeds, so the two sets
// never overlap).
const TuneSeedOffset = 1 << 20

// SeedRange is the seeds first … first+count−1.
type SeedRange struct {
	First uint64 `json:"first"`
	Count int    `json:"count"`
}

// Overlaps reports whether r and q share a seed.
func (r SeedRange) Overlaps(q SeedRange) bool {
	if r.Count < 1 || q.Count < 1 {
		return false
	}
	return r.First < q.First+uint64(q.Count) && q.First < r.First+uint64(r.Count)
}

// String is "first…last".
func (r SeedRange) String() string {
	return fmt.Sprintf("%d…%d", r.First, r.First+uint64(r.Count)-1)
}

// seedsOf is the seed range an experiment's options run.
func seedsOf(o Options) SeedRange { return SeedRange{First: o.Seed, Count: o.Seeds} }

// tuningOptions are the options a bound scored with o is tuned with: the
// same sizes on the disjoint seeds TuneSeedOffset further.
func tuningOptions(o Options) Options {
	t := o
	t.Seed = o.Seed + TuneSeedOffset
	t.Progress = nil
	return t
}

// Tuned is a JBSQ(n*) bound chosen on seeds disjoint from those it is
// scored on, with the untuned bounds beside it.
type Tuned struct {
	// Bound is n*: the n per host with the lowest mean violation rate on
	// the tuning seeds (ties: the smallest), over a grid from the stability
	// limit to 3 × the Little bound in steps of 15 % (plus the Little
	// bound). No violation target is involved.
	Bound int `json:"bound"`
	// Little and Stable are the Little's-law bound and the stability limit.
	Little int `json:"little_bound"`
	Stable int `json:"stability_limit"`
	// TunedOn are the seeds n* was chosen on; ScoredOn those it is scored
	// on (never overlapping).
	TunedOn  SeedRange `json:"tuned_on"`
	ScoredOn SeedRange `json:"scored_on"`
	// Curve is the mean violation rate at every evaluated bound on the
	// tuning seeds, ascending in n.
	Curve []TunePoint `json:"curve"`
}

// tuneGrid is the grid tuneBest evaluates: the stability limit, then
// steps of 15 % up to 3 × the Little bound, and the Little bound itself.
func tuneGrid(stable, little int) []int {
	top := min(65535, max(3*little, stable+1))
	grid := []int{little}
	for n := stable; n <= top; n = max(n+1, int(math.Ceil(float64(n)*1.15))) {
		grid = append(grid, n)
	}
	sort.Ints(grid)
	out := grid[:0]
	for i, n := range grid {
		if i == 0 || n != grid[i-1] {
			out = append(out, n)
		}
	}
	return out
}

// tuneBest chooses JBSQ(n*) for sc (least outstanding, the study's central
// dispatcher) on the seeds tuningOptions(o) gives, for scoring on o's.
func tuneBest(ctx context.Context, sc Config, o Options, tr *tracker) (*Tuned, error) {
	t := tuningOptions(o)
	sc.Policy = Policy{Binding: JBSQ, Ingress: Least, Bound: 1}
	if err := sc.Validate(); err != nil {
		return nil, fmt.Errorf("tune jbsq: %w", err)
	}
	if err := TuneLimits(sc); err != nil {
		return nil, fmt.Errorf("tune jbsq: %w", err)
	}
	m := sc.ServerCores()
	res := &Tuned{Little: LittleBound(m, sc.Delay, sc.Service.Mean), Stable: StabilityBound(m, sc.Load, sc.Delay, sc.Service.Mean),
		TunedOn: seedsOf(t), ScoredOn: seedsOf(o)}
	grid := tuneGrid(res.Stable, res.Little)
	var cfgs []Config
	for _, n := range grid {
		c := sc
		c.Policy.Bound = n
		cfgs = append(cfgs, seeded(c, t)...)
	}
	runs, err := runMany(ctx, cfgs, t.Parallel, tr)
	if err != nil {
		return nil, fmt.Errorf("tune jbsq: %w", err)
	}
	best := -1
	for i, n := range grid {
		cell := summarize(runs[i*t.Seeds : (i+1)*t.Seeds])
		res.Curve = append(res.Curve, TunePoint{Bound: n, Cell: cell})
		if best < 0 || cell.Violation.Mean < res.Curve[best].Cell.Violation.Mean {
			best = i
		}
	}
	res.Bound = res.Curve[best].Bound
	return res, nil
}
