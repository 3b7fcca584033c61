package micro

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/p4ctl/p4ctl/pkg/sim/dist"
)

// StudyTarget is one of the late-binding study's figures as an interval of
// violation rates (Lo = Hi for a single value), for measuring how far a
// scenario lands from it. The numbers are the study's as reported (the
// Study* strings); they score a search and never enter the model.
type StudyTarget struct {
	Figure string  `json:"figure"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
}

// Off is how far v lies outside the target, in percentage points (0
// inside).
func (t StudyTarget) Off(v float64) float64 {
	switch {
	case v < t.Lo:
		return 100 * (t.Lo - v)
	case v > t.Hi:
		return 100 * (v - t.Hi)
	}
	return 0
}

// The figures a search scores: E1's tiers (the 3–6 % for late
// binding), E2's Δ at m = 8 behind random, E3's D/S = 4 point.
var (
	targetE1Random  = StudyTarget{"E1 random", 0.35, 1}
	targetE1Strong  = StudyTarget{"E1 JSW and forwarding", 0.10, 0.15}
	targetE1Late    = StudyTarget{"E1 JBSQ(n*) and JIQ", 0.03, 0.06}
	targetE2M8      = StudyTarget{"E2 Δ at m = 8, random", 0.1171, 0.1171}
	targetE3Random  = StudyTarget{"E3 D/S = 4 random", 0.1878, 0.1878}
	targetE3Forward = StudyTarget{"E3 D/S = 4 random+fwd", 0.3547, 0.3547}
	targetE3JBSQ    = StudyTarget{"E3 D/S = 4 JBSQ(n*)", 0.0412, 0.0412}
)

// SearchTargets are the study figures Search scores, in the order its
// deviations are reported.
func SearchTargets() []StudyTarget {
	return []StudyTarget{targetE1Random, targetE1Strong, targetE1Late, targetE2M8, targetE3Random, targetE3Forward, targetE3JBSQ}
}

// SearchGrid is the structural grid Search walks. Empty lists take their
// defaults: σ 1, 1.25, 1.5 and every axis, SLO rule and burst rule (quick:
// σ 1, the service and delay axes, fixed and round-trip SLOs, fixed
// bursts).
type SearchGrid struct {
	// Sigmas are lognormal σ of the service time (its tail; the mean stays
	// the scenario's).
	Sigmas []float64 `json:"sigmas"`
	// BurstFactors are micro-burst intensities (Burst.Factor) to try;
	// empty: the scenario's own. The intensity is a value, not a structure
	// (the study scenario's was picked by looking at E1): searching it is a
	// fit, and the output says so.
	BurstFactors []float64 `json:"burst_factors,omitempty"`
	// Axes, SLOs and Bursts are E3's axes, SLO rules and burst rules
	// (Sweep.E3Axis, E3SLO, E3Burst) to combine.
	Axes   []E3Axis  `json:"axes"`
	SLOs   []E3SLO   `json:"slo_rules"`
	Bursts []E3Burst `json:"burst_rules"`
}

func (g SearchGrid) withDefaults(quick bool) SearchGrid {
	sigmas, axes, slos, bursts := []float64{1, 1.25, 1.5}, E3Axes(), E3SLOs(), E3Bursts()
	if quick {
		sigmas, axes, slos, bursts = []float64{1}, []E3Axis{AxisService, AxisDelay}, []E3SLO{SLOFixed, SLORoundTrip}, []E3Burst{BurstFixed}
	}
	if len(g.Sigmas) == 0 {
		g.Sigmas = sigmas
	}
	if len(g.BurstFactors) == 0 {
		g.BurstFactors = []float64{0} // the scenario's own
	}
	if len(g.Axes) == 0 {
		g.Axes = axes
	}
	if len(g.SLOs) == 0 {
		g.SLOs = slos
	}
	if len(g.Bursts) == 0 {
		g.Bursts = bursts
	}
	return g
}

// SearchTail is what one service tail gives at E1's point (E1 and E2 do
// not depend on E3's axis rules, which all pass through it).
type SearchTail struct {
	Sigma float64 `json:"sigma"`
	// BurstFactor is the micro-bursts' intensity it ran with.
	BurstFactor float64 `json:"burst_factor"`
	// E1 violation rates and the tuned bound.
	Random  float64 `json:"e1_random"`
	JSW     float64 `json:"e1_jsw"`
	Forward float64 `json:"e1_random_fwd"`
	JBSQ    float64 `json:"e1_jbsq_tuned"`
	JIQ     float64 `json:"e1_jiq"`
	Bound   int     `json:"e1_tuned_bound"`
	// E2M8 is E2's Δ at m = 8 behind random (nil when E2's grid has no
	// m = 8: quick); Monotone whether Δ falls with m behind every ingress.
	E2M8     *float64 `json:"e2_m8_random_delta,omitempty"`
	Monotone bool     `json:"e2_monotone"`
	// Off is the largest distance, in points, from the E1 and E2 targets
	// (monotonicity is judged apart).
	Off float64 `json:"off_points"`
}

// SearchRow is E3's D/S = 4 point for one combination of the grid.
type SearchRow struct {
	Sigma       float64 `json:"sigma"`
	BurstFactor float64 `json:"burst_factor"`
	Axis        E3Axis  `json:"axis"`
	SLO         E3SLO   `json:"slo_rule"`
	Burst       E3Burst `json:"burst_rule"`
	SLOAt4      float64 `json:"slo_us_at_4"`
	Random      Cell    `json:"random"`
	Forward     Cell    `json:"random_fwd"`
	JBSQ        Cell    `json:"jbsq_tuned"`
	// E3Off is the largest distance, in points, from E3's three figures;
	// Off also counts the tail's E1 and E2 figures, and Monotone is the
	// tail's E2 verdict.
	E3Off    float64 `json:"e3_off_points"`
	Off      float64 `json:"off_points"`
	Monotone bool    `json:"e2_monotone"`
	// Same lists the other combinations (axis/SLO rule/burst rule) that
	// put D/S = 4 at this very point and were not run again.
	Same []string `json:"same,omitempty"`
	// Scenario says the row is the searched scenario's own E3 point (its
	// tail, burst intensity and E3 rules).
	Scenario bool `json:"scenario,omitempty"`
}

// SearchResult is the grid's rows, closest first (rows whose tail leaves
// E2 non-monotone after the others).
type SearchResult struct {
	Scenario Config        `json:"scenario"`
	Options  Options       `json:"options"`
	Grid     SearchGrid    `json:"grid"`
	Targets  []StudyTarget `json:"targets"`
	Tails    []SearchTail  `json:"tails"`
	Rows     []SearchRow   `json:"rows"`
}

// Search walks the structural grid (service tail × E3 axis × SLO rule ×
// burst rule) from the scenario and measures, for every combination, how
// far E1, E2 and E3's D/S = 4 point land from the study's figures. Each
// tail runs E1 and E2 as their commands do, each combination E3 at D/S = 4
// only (tuned JBSQ included), with the same seeds and sizes, so a row
// repeats what `sim micro e3 --points 4` prints for it. It is a map of the
// structural choices, not a fit: no parameter is moved between grid values.
func Search(ctx context.Context, scenario Config, grid SearchGrid, o Options) (*SearchResult, error) {
	grid = grid.withDefaults(o.Quick)
	for _, sg := range grid.Sigmas {
		if !(sg > 0 && sg <= 3) {
			return nil, fmt.Errorf("search: σ %v must be in (0, 3]", sg)
		}
	}
	for _, f := range grid.BurstFactors {
		if f != 0 && !(f > 1 && f < 10) {
			return nil, fmt.Errorf("search: burst factor %v must be in (1, 10)", f)
		}
	}
	if len(grid.BurstFactors) > 1 || grid.BurstFactors[0] != 0 {
		if !scenario.Burst.Enabled() {
			return nil, fmt.Errorf("search: burst factors need a scenario with micro-bursts (--scenario study)")
		}
	}
	if scenario.Service.Kind != dist.ServiceLognormal {
		return nil, fmt.Errorf("search: the service tail is a lognormal σ; the scenario's service is %s", scenario.Service.Kind)
	}
	// Every name is checked before anything runs.
	for _, axis := range grid.Axes {
		for _, rule := range grid.SLOs {
			for _, burst := range grid.Bursts {
				if _, _, _, err := (Sweep{E3Axis: axis, E3SLO: rule, E3Burst: burst}).E3Rules(); err != nil {
					return nil, fmt.Errorf("search: %w", err)
				}
			}
		}
	}
	total := len(grid.Sigmas) * len(grid.BurstFactors) * (2 + len(grid.Axes)*len(grid.SLOs)*len(grid.Bursts))
	done := 0
	step := func() {
		done++
		if o.Progress != nil {
			o.Progress(done, total)
		}
	}
	sub := o
	sub.Progress = nil
	ownAxis, ownSLO, ownBurst, err := scenario.Sweep.E3Rules()
	if err != nil {
		return nil, fmt.Errorf("search: the scenario's E3: %w", err)
	}
	ownSigma := scenario.Service.Sigma
	if ownSigma == 0 {
		ownSigma = 1
	}
	res := &SearchResult{Scenario: stamp(scenario, o), Options: o, Grid: grid, Targets: SearchTargets()}
	type tailKey struct{ sigma, factor float64 }
	var tails []tailKey
	for _, sg := range grid.Sigmas {
		for _, f := range grid.BurstFactors {
			tails = append(tails, tailKey{sg, f})
		}
	}
	for _, tk := range tails {
		sg := tk.sigma
		sc := scenario
		sc.Service.Sigma = sg
		if tk.factor != 0 {
			sc.Burst.Factor = tk.factor
		}
		if err := sc.Validate(); err != nil {
			return nil, fmt.Errorf("search: σ = %g, bursts ×%g: %w", sg, sc.Burst.Factor, err)
		}
		tail, err := searchTail(ctx, sc, sub)
		if err != nil {
			return nil, fmt.Errorf("search: σ = %g, bursts ×%g: %w", sg, sc.Burst.Factor, err)
		}
		step()
		step()
		res.Tails = append(res.Tails, tail)
		seen := map[[4]float64]int{} // the point's D, S, SLO, on-period → its row
		for _, axis := range grid.Axes {
			for _, rule := range grid.SLOs {
				for _, burst := range grid.Bursts {
					c := sc
					c.Sweep.E3Axis, c.Sweep.E3SLO, c.Sweep.E3Burst, c.Sweep.E3Points = axis, rule, burst, []float64{4}
					at4, err := c.Sweep.E3Point(c, 4)
					if err != nil {
						return nil, fmt.Errorf("search: %w", err)
					}
					key := [4]float64{round9(at4.Delay), round9(at4.Service.Mean), round9(at4.SLO), round9(at4.Burst.MeanOn)}
					own := sg == ownSigma && (tk.factor == 0 || tk.factor == scenario.Burst.Factor) && axis == ownAxis && rule == ownSLO && burst == ownBurst
					if i, ok := seen[key]; ok {
						res.Rows[i].Scenario = res.Rows[i].Scenario || own
						res.Rows[i].Same = append(res.Rows[i].Same, fmt.Sprintf("%s/%s/%s", axis, rule, burst))
						step()
						continue
					}
					seen[key] = len(res.Rows)
					e3, err := E3(ctx, c, 0, sub)
					if err != nil {
						return nil, fmt.Errorf("search: σ = %g, bursts ×%g, %s/%s/%s: %w", sg, sc.Burst.Factor, axis, rule, burst, err)
					}
					row := SearchRow{Sigma: sg, BurstFactor: sc.Burst.Factor, Axis: axis, SLO: rule, Burst: burst, Monotone: tail.Monotone, Scenario: own}
					for _, p := range e3.Points {
						row.SLOAt4 = p.SLO
						switch p.Label {
						case "random":
							row.Random = p.Cell
						case "random+fwd":
							row.Forward = p.Cell
						case "jbsq tuned n":
							row.JBSQ = p.Cell
						}
					}
					row.E3Off = max(targetE3Random.Off(row.Random.Violation.Mean), targetE3Forward.Off(row.Forward.Violation.Mean), targetE3JBSQ.Off(row.JBSQ.Violation.Mean))
					row.Off = max(row.E3Off, tail.Off)
					res.Rows = append(res.Rows, row)
					step()
				}
			}
		}
	}
	slices.SortStableFunc(res.Rows, func(a, b SearchRow) int {
		if a.Monotone != b.Monotone {
			if a.Monotone {
				return -1
			}
			return 1
		}
		if a.Off != b.Off {
			return cmp.Compare(a.Off, b.Off)
		}
		return cmp.Compare(a.E3Off, b.E3Off)
	})
	return res, nil
}

// round9 rounds to 9 significant digits, so that points equal up to
// floating-point noise share a key.
func round9(x float64) float64 {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	e := math.Pow(10, 8-math.Floor(math.Log10(math.Abs(x))))
	return math.Round(x*e) / e
}

// searchTail runs E1 and E2 for one service tail.
func searchTail(ctx context.Context, sc Config, o Options) (SearchTail, error) {
	t := SearchTail{Sigma: sc.Service.Sigma, BurstFactor: sc.Burst.Factor}
	e1, err := E1(ctx, sc, nil, o)
	if err != nil {
		return t, err
	}
	t.Bound = e1.Tuned
	strong := 0.0 // the worst of JSW and the three forwarding policies
	for _, c := range e1.Cells {
		v := c.Violation.Mean
		switch c.Policy {
		case "random":
			t.Random = v
		case "jsw":
			t.JSW = v
			strong = max(strong, targetE1Strong.Off(v))
		case "random+fwd":
			t.Forward = v
			strong = max(strong, targetE1Strong.Off(v))
		case "p2c+fwd", "jsw+fwd":
			strong = max(strong, targetE1Strong.Off(v))
		case "jiq":
			t.JIQ = v
		}
		if e1.Tuned > 0 && c.Bound == e1.Tuned && strings.HasPrefix(c.Policy, "jbsq") {
			t.JBSQ = v
		}
	}
	e2, err := E2(ctx, sc, o)
	if err != nil {
		return t, err
	}
	t.Monotone = e2Monotone(e2.Rows)
	for _, r := range e2.Rows {
		if r.CoresPerHost == 8 && r.Ingress == "random" {
			d := r.Delta.Mean
			t.E2M8 = &d
		}
	}
	t.Off = max(targetE1Random.Off(t.Random), strong, targetE1Late.Off(t.JIQ))
	if t.Bound > 0 { // a scenario without a tune target has no JBSQ(n*)
		t.Off = max(t.Off, targetE1Late.Off(t.JBSQ))
	}
	if t.E2M8 != nil {
		t.Off = max(t.Off, targetE2M8.Off(*t.E2M8))
	}
	return t, nil
}

// WriteText implements output.TextWriter: the tails, then the rows.
func (r *SearchResult) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "Structural search — service tail × E3 axis × SLO rule × burst rule: how far each lands from the study's figures\n%s\n", scenarioLine(r.Scenario))
	fmt.Fprintf(w, "E1 %d seeds, E2 and E3 %d seeds, %d requests each; OFF = the largest distance, in points, from the study's figures (reported, labelled): ",
		r.Options.withDefaults(10, 3, 200000, 20000).Seeds, r.Options.withDefaults(5, 2, 200000, 20000).Seeds, r.Options.withDefaults(5, 2, 200000, 20000).Requests)
	for i, t := range r.Targets {
		if i > 0 {
			fmt.Fprint(w, "; ")
		}
		unit := "%"
		if t == targetE2M8 {
			unit = "pp"
		}
		if t.Lo == t.Hi {
			fmt.Fprintf(w, "%s %.2f %s", t.Figure, 100*t.Lo, unit)
		} else {
			fmt.Fprintf(w, "%s %g–%g %s", t.Figure, 100*t.Lo, 100*t.Hi, unit)
		}
	}
	fmt.Fprint(w, "\nrows whose tail leaves E2 non-monotone in m behind some ingress come last\n")
	factors := len(r.Grid.BurstFactors) > 1 || (len(r.Grid.BurstFactors) == 1 && r.Grid.BurstFactors[0] != 0)
	if factors {
		fmt.Fprint(w, "the bursts' intensity is searched too (BURSTS ×): it is a value, not a structure, so a row chosen from it is a fit\n")
	}
	fmt.Fprintln(w)
	lead := func(sigma, factor float64) []string {
		if factors {
			return []string{fmt.Sprintf("%g", sigma), fmt.Sprintf("%g", factor)}
		}
		return []string{fmt.Sprintf("%g", sigma)}
	}
	head := func(h ...string) []string {
		if factors {
			return append([]string{"σ", "BURSTS ×"}, h...)
		}
		return append([]string{"σ"}, h...)
	}
	rows := make([][]string, 0, len(r.Tails))
	for _, t := range r.Tails {
		jbsq, e2m8 := "-", "-"
		if t.Bound > 0 {
			jbsq = fmt.Sprintf("%.2f %% (%d)", 100*t.JBSQ, t.Bound)
		}
		if t.E2M8 != nil {
			e2m8 = fmt.Sprintf("%.2f pp", 100**t.E2M8)
		}
		rows = append(rows, append(lead(t.Sigma, t.BurstFactor), fmt.Sprintf("%.2f %%", 100*t.Random), fmt.Sprintf("%.2f %%", 100*t.JSW), fmt.Sprintf("%.2f %%", 100*t.Forward),
			jbsq, fmt.Sprintf("%.2f %%", 100*t.JIQ), e2m8, yesNo(t.Monotone), fmt.Sprintf("%.1f", t.Off)))
	}
	if err := writeTable(w, head("E1 RANDOM", "E1 JSW", "E1 RANDOM+FWD", "E1 JBSQ(n*)", "E1 JIQ", "E2 Δ m=8", "E2 MONOTONE", "OFF"), rows); err != nil {
		return err
	}
	fmt.Fprintln(w)
	rows = rows[:0]
	for _, x := range r.Rows {
		own := ""
		if x.Scenario {
			own = "← the scenario's"
		}
		rows = append(rows, append(lead(x.Sigma, x.BurstFactor), string(x.Axis), string(x.SLO), string(x.Burst), fmt.Sprintf("%.4g", x.SLOAt4),
			pct(x.Random.Violation), pct(x.Forward.Violation), fmt.Sprintf("%s (%d)", pct(x.JBSQ.Violation), x.JBSQ.Bound), fmt.Sprintf("%.1f", x.E3Off), fmt.Sprintf("%.1f", x.Off), yesNo(x.Monotone), own))
	}
	if err := writeTable(w, head("AXIS", "SLO RULE", "BURST", "SLO µs AT 4", "E3 RANDOM", "E3 RANDOM+FWD", "E3 JBSQ(n*)", "E3 OFF", "OFF", "E2 MONOTONE", ""), rows); err != nil {
		return err
	}
	same := 0
	for _, x := range r.Rows {
		same += len(x.Same)
	}
	if same > 0 {
		verb := "combinations put"
		if same == 1 {
			verb = "combination puts"
		}
		_, err := fmt.Fprintf(w, "%d more %s D/S = 4 at a point above (e.g. the service axis does not move D, so its round-trip rules are its fixed one); -o json lists them per row\n", same, verb)
		return err
	}
	return nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
