package micro

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/p4ctl/p4ctl/pkg/stats"
	"github.com/p4ctl/p4ctl/research/sim/dist"
)

// Scenario is the base of every experiment: the late-binding study's E1
// setting (16 hosts × 8 cores, ρ = 0.85, D = 4.5 µs, SLO 50 µs) with the
// parts the study gives only as ranges fixed once, a priori: arrival CV 2.0
// (balanced-means H2, inside the study's 1.0–2.5) and lognormal service of
// mean 5 µs with σ = 1 (CV ≈ 1.31, a heavy-tailed µs RPC inside "1–10 µs").
func Scenario() Config {
	c := DefaultConfig()
	c.ArrivalCV = 2
	c.Service = dist.ServiceSpec{Kind: dist.ServiceLognormal, Mean: 5, Sigma: 1}
	return c
}

// Study figures, as the late-binding study reported them (labelled wherever
// shown; never used by the model).
const (
	StudyE1Random  = "> 35 %"
	StudyE1Strong  = "10–15 %" // JSW or forwarding
	StudyE1Late    = "≈ 4.1 %" // JBSQ / JIQ
	StudyE3Random  = "18.78 %"
	StudyE3Forward = "35.47 %"
	StudyE3JBSQ64  = "4.12 % (n = 64)"
	// StudyE3FailFirst: every early-binding + movement combination the
	// study tried fails at a smaller D/S than JBSQ.
	StudyE3FailFirst = "31 of 31 early-binding + movement combinations fail first"
	StudyT40bHash    = "13.26 %"
	StudyT40bCredit  = "3.61 % (0.351 msgs/RPC)"
	StudyT40bActive  = "12.94 % (Capybara-style active)"
	StudyT40bPassive = "27.24 %"
	StudyGateway     = "cliff near ρ ≈ 0.65 (1 core, 200–500 ns/message)"
	StudyE2          = "intra-host pooling (m ≥ 8) absorbs most imbalance"
	StudyTTL         = "no TTL significantly worsens violations (stale credits → herding): all 12 random and 11 of 12 p2c cells"
)

func studyE1(p Policy) string {
	switch {
	case (p.Binding == JBSQ && p.Bound != 0) || p.Binding == JIQ:
		return StudyE1Late
	case p.Movement == Forward || p.Ingress == JSW:
		if p.Movement != Ideal {
			return StudyE1Strong
		}
	case p.Ingress == Random && p.Movement == NoMovement:
		return StudyE1Random
	}
	return ""
}

// ---------------------------------------------------------------- E1 -----

// E1Policies are E1's default policies.
func E1Policies() []Policy {
	names := []string{"random", "p2c", "jsw", "random+fwd", "p2c+fwd", "jsw+fwd", "random+ideal", "jsq", "jbsq", "jiq"}
	out := make([]Policy, len(names))
	for i, n := range names {
		out[i] = MustPolicy(n)
	}
	return out
}

// E1Result is the violation rate per policy across seeds.
type E1Result struct {
	Scenario Config  `json:"scenario"`
	Options  Options `json:"options"`
	Cells    []Cell  `json:"cells"`
	// Tuned is the JBSQ(n*) added when the scenario asks for it
	// (Sweep.TunedJBSQ): chosen on seeds disjoint from the scored ones.
	Tuned *Tuned `json:"tuned,omitempty"`
}

// E1 runs every policy on the scenario (default Scenario()) across seeds:
// the study's headline comparison. With the default policies and a
// scenario whose Sweep asks for TunedJBSQ, JBSQ(n*) is added, n* chosen on
// seeds disjoint from the scored ones (tuneBest). Defaults: 10 seeds ×
// 200 000 requests; quick: 3 × 20 000.
func E1(ctx context.Context, scenario Config, policies []Policy, o Options) (*E1Result, error) {
	o = o.withDefaults(10, 3, 200000, 20000)
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("e1: %w", err)
	}
	tr := &tracker{fn: o.Progress}
	var tuned *Tuned
	if len(policies) == 0 {
		policies = E1Policies()
		if scenario.Sweep.TunedJBSQ {
			var err error
			if tuned, err = tuneBest(ctx, scenario, o, tr); err != nil {
				return nil, fmt.Errorf("e1: %w", err)
			}
			policies = append(policies, Policy{Binding: JBSQ, Ingress: Least, Bound: tuned.Bound})
		}
	}
	var cfgs []Config
	for _, p := range policies {
		c := scenario
		c.Policy = p
		if err := c.Validate(); err != nil {
			return nil, fmt.Errorf("e1: policy %s: %w", p, err)
		}
		cfgs = append(cfgs, seeded(c, o)...)
	}
	runs, err := runMany(ctx, cfgs, o.Parallel, tr)
	if err != nil {
		return nil, fmt.Errorf("e1: %w", err)
	}
	res := &E1Result{Scenario: stamp(scenario, o), Options: o, Tuned: tuned}
	for i, p := range policies {
		c := summarize(runs[i*o.Seeds : (i+1)*o.Seeds])
		c.Study = studyE1(p)
		res.Cells = append(res.Cells, c)
	}
	return res, nil
}

func scenarioLine(c Config) string {
	svc := describeService(c.Service)
	arr := fmt.Sprintf("arrivals CV %.2g (%s)", c.ArrivalCV, c.ArrivalKind)
	if k := c.FlowsPerCore; k > 0 {
		arr = fmt.Sprintf("arrivals %d flow per core, each CV %.2g (%s)", k, c.ArrivalCV, c.ArrivalKind)
	}
	s := fmt.Sprintf("%d hosts × %d cores, ρ=%.2f, %s, service %s mean %g µs, D=%g µs, SLO %g µs",
		c.Hosts, c.CoresPerHost, c.Load, arr, svc, c.Service.Mean, c.Delay, c.SLO)
	if c.StaleReports {
		s += ", stale load reports"
	}
	fwd := "2D"
	if c.ForwardOneWay {
		fwd = "D"
	}
	switch h := c.ForwardHops; {
	case h == ForwardUnlimited:
		s += fmt.Sprintf(", forwarding %s per move, no hop limit", fwd)
	case h > 1 || c.ForwardOneWay:
		s += fmt.Sprintf(", forwarding %s per move, up to %d", fwd, max(1, h))
	}
	switch c.Granularity {
	case GranularityCore:
		s += ", per-core queues"
	case GranularityRSS:
		s += ", early binding onto per-core RSS queues, late binding onto host queues"
	}
	if c.SLOWindow > 0 {
		s += fmt.Sprintf(", SLO judged on the p%g of %g µs windows", 100*c.SLOQuantileOrDefault(), c.SLOWindow)
	}
	if c.Burst.Enabled() {
		s += fmt.Sprintf(", bursts ×%g for %g%% of the time", c.Burst.Factor, 100*c.Burst.OnFraction)
	}
	if c.Stall.Interval > 0 {
		s += fmt.Sprintf(", stalls of %g µs every %g µs per host", c.Stall.Duration, c.Stall.Interval)
	}
	return s
}

func writeTable(w io.Writer, headers []string, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(headers, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

func seedsLine(o Options) string {
	return fmt.Sprintf("%d seeds (%d…%d) × %d requests after %d warm-up; ± is the 95 %% CI across seeds",
		o.Seeds, o.Seed, o.Seed+uint64(o.Seeds)-1, o.Requests, o.Requests/10)
}

// WriteText implements output.TextWriter.
func (r *E1Result) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "E1 — violation rate per policy\n%s\n%s\n", scenarioLine(r.Scenario), seedsLine(r.Options))
	if t := r.Tuned; t != nil {
		fmt.Fprintf(w, "last row: JBSQ(n*), n* = %d the bound with the fewest violations on seeds %s (not the scored %s); Little bound %d (row jbsq:%d)\n",
			t.Bound, t.TunedOn, t.ScoredOn, t.Little, t.Little)
	}
	fmt.Fprintln(w)
	rows := make([][]string, 0, len(r.Cells))
	for _, c := range r.Cells {
		rows = append(rows, []string{c.Policy, pct(c.Violation),
			fmt.Sprintf("%.2f–%.2f %%", 100*c.Violation.Min, 100*c.Violation.Max),
			num(c.P99, 1), num(c.MessagesPerRPC, 2), c.Study})
	}
	return writeTable(w, []string{"POLICY", "VIOLATIONS", "SEED RANGE", "P99 µs", "MSGS/RPC", "STUDY (REPORTED)"}, rows)
}

// ---------------------------------------------------------------- E2 -----

// E2Row is one (cores per host, ingress) pair.
type E2Row struct {
	CoresPerHost int    `json:"cores_per_host"`
	Hosts        int    `json:"hosts"`
	Ingress      string `json:"ingress"`
	None         Cell   `json:"no_movement"`
	Ideal        Cell   `json:"ideal_movement"`
	// Delta is the per-seed paired reduction none − ideal; DeltaPerSeed
	// its values.
	Delta        stats.Summary `json:"delta"`
	DeltaPerSeed []float64     `json:"delta_per_seed"`
}

// E2Result is the ideal-movement reduction per pool size and ingress.
type E2Result struct {
	Scenario   Config  `json:"scenario"`
	Options    Options `json:"options"`
	TotalCores int     `json:"total_cores"`
	Rows       []E2Row `json:"rows"`
	Study      string  `json:"study"`
}

// E2 splits the scenario's cores as m = 1, 2, 4, 8, 16 per host and measures
// how much ideal movement would reduce violations (Δ) behind each ingress:
// the room left for any movement scheme. Defaults 5 seeds × 200 000;
// quick: 2 seeds × 20 000 and m = 1, 4, 16.
func E2(ctx context.Context, scenario Config, o Options) (*E2Result, error) {
	o = o.withDefaults(5, 2, 200000, 20000)
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("e2: %w", err)
	}
	total := scenario.Cores()
	if g := scenario.Sweep.E2Granularity; g != "" {
		scenario.Granularity = g
	}
	ms := []int{1, 2, 4, 8, 16}
	if o.Quick {
		ms = []int{1, 4, 16}
	}
	ingresses := []string{"random", "p2c", "jsw"}
	var cfgs []Config
	type key struct{ m, in int }
	var keys []key
	for _, m := range ms {
		if total%m != 0 {
			return nil, fmt.Errorf("e2: %d cores do not split into hosts of %d", total, m)
		}
		for ii, in := range ingresses {
			for _, mv := range []string{"", "+ideal"} {
				c := scenario
				c.Hosts, c.CoresPerHost = total/m, m
				c.Policy = MustPolicy(in + mv)
				cfgs = append(cfgs, seeded(c, o)...)
			}
			keys = append(keys, key{m, ii})
		}
	}
	runs, err := runMany(ctx, cfgs, o.Parallel, &tracker{fn: o.Progress})
	if err != nil {
		return nil, fmt.Errorf("e2: %w", err)
	}
	res := &E2Result{Scenario: stamp(scenario, o), Options: o, TotalCores: total, Study: StudyE2}
	for i, k := range keys {
		none := runs[(2*i)*o.Seeds : (2*i+1)*o.Seeds]
		ideal := runs[(2*i+1)*o.Seeds : (2*i+2)*o.Seeds]
		d := make([]float64, o.Seeds)
		for s := range d {
			d[s] = none[s].ViolationRate - ideal[s].ViolationRate
		}
		res.Rows = append(res.Rows, E2Row{
			CoresPerHost: k.m, Hosts: total / k.m, Ingress: ingresses[k.in],
			None: summarize(none), Ideal: summarize(ideal), Delta: stats.Summarize(d), DeltaPerSeed: d,
		})
	}
	return res, nil
}

// WriteText implements output.TextWriter.
func (r *E2Result) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "E2 — ideal-movement reduction Δ = violations(no movement) − violations(ideal), %d cores split m per host\n%s\n%s\nstudy (reported): %s\n\n",
		r.TotalCores, strings.Replace(scenarioLine(r.Scenario), fmt.Sprintf("%d hosts × %d cores", r.Scenario.Hosts, r.Scenario.CoresPerHost), fmt.Sprintf("%d cores", r.TotalCores), 1),
		seedsLine(r.Options), r.Study)
	rows := make([][]string, 0, len(r.Rows))
	for _, x := range r.Rows {
		rows = append(rows, []string{fmt.Sprint(x.CoresPerHost), fmt.Sprint(x.Hosts), x.Ingress,
			pct(x.None.Violation), pct(x.Ideal.Violation), pct(x.Delta)})
	}
	return writeTable(w, []string{"M", "HOSTS", "INGRESS", "NO MOVEMENT", "IDEAL MOVEMENT", "Δ"}, rows)
}

// ---------------------------------------------------------------- E3 -----

// E3Point is one policy at one delay.
type E3Point struct {
	DelayOverService float64 `json:"delay_over_service"`
	Delay            float64 `json:"delay_us"`
	Service          float64 `json:"service_mean_us"`
	SLO              float64 `json:"slo_us"`
	Label            string  `json:"label"`
	Cell             Cell    `json:"cell"`
	// LosesToRandom: worse than random at this D/S (one-sided Mann–Whitney
	// U on the per-seed violation rates, p < SignificanceLevel).
	LosesToRandom bool   `json:"loses_to_random"`
	Study         string `json:"study,omitempty"`
}

// SignificanceLevel is the p-value below which a Mann–Whitney U test
// counts a difference (E3's losing to random, the TTL ablation's cells,
// E2's monotonicity).
const SignificanceLevel = 0.05

// E3Result is violation rate against network delay.
type E3Result struct {
	Scenario Config    `json:"scenario"`
	Options  Options   `json:"options"`
	Axis     E3Axis    `json:"axis"`
	SLORule  E3SLO     `json:"slo_rule"`
	Burst    E3Burst   `json:"burst_rule"`
	Points   []E3Point `json:"points"`
	// Tuned is JBSQ(n*) at every D/S, chosen on seeds disjoint from the
	// scored ones.
	Tuned []E3Tuned `json:"tuned"`
	// Failures says, for every curve, the smallest D/S at which it loses
	// to random.
	Failures []E3Failure `json:"failures"`
	// FailFirst counts the early-binding + movement curves (forwarding)
	// that lose to random somewhere on the grid; Early is how many there
	// are; JBSQHolds says the tuned JBSQ loses to random nowhere.
	FailFirst int  `json:"movement_fail_first"`
	Early     int  `json:"movement_curves"`
	JBSQHolds bool `json:"jbsq_never_loses"`
}

// E3Tuned is the tuned bound at one D/S.
type E3Tuned struct {
	DelayOverService float64 `json:"delay_over_service"`
	Tuned            Tuned   `json:"tuned"`
}

// E3Failure is where one curve first loses to random (0: never on the
// grid).
type E3Failure struct {
	Label  string  `json:"label"`
	FailAt float64 `json:"fails_at_delay_over_service"`
}

// E3Labels are the curves of E3, in order.
var e3Labels = []string{"random", "p2c", "jsw", "random+fwd", "p2c+fwd", "jsw+fwd", "jiq", "jbsq fixed n", "jbsq Little n", "jbsq tuned n"}

// E3 varies D/S, the one-way delay over the mean service time, and asks
// which early-binding + movement curves lose to random (the study's
// "fail first") while JBSQ keeps up when its bound grows with D/S. The
// scenario's Sweep says how (Sweep.E3Point): E3Axis AxisDelay (default)
// moves D = x·S at the scenario's service mean, the SLO keeping its slack
// over the base round trip (SLO + 2(D − D₀)); AxisService keeps D and the
// SLO and moves S = D/x; AxisProduct and AxisUnloaded move both; E3SLO and
// E3Burst override how the SLO and the bursts' on-period move along the
// axis. JBSQ runs with the scenario's Little bound held fixed, with the
// Little bound recomputed at each point, and with n* chosen at each point
// on seeds disjoint from the scored ones (tuneBest). Defaults 5 seeds ×
// 200 000 at D/S = 0.1 … 4 (service axis: 0.45 … 4, S within 1–10 µs at
// D = 4.5 µs); quick: 2 × 20 000 at three points.
func E3(ctx context.Context, scenario Config, o Options) (*E3Result, error) {
	o = o.withDefaults(5, 2, 200000, 20000)
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("e3: %w", err)
	}
	axis, rule, burst, err := scenario.Sweep.E3Rules()
	if err != nil {
		return nil, fmt.Errorf("e3: %w", err)
	}
	xs := []float64{0.1, 0.25, 0.5, 1, 2, 4}
	if o.Quick {
		xs = []float64{0.25, 1, 4}
	}
	if axis == AxisService {
		xs = []float64{0.45, 0.9, 1.5, 2, 3, 4}
		if o.Quick {
			xs = []float64{0.45, 0.9, 4}
		}
	}
	if ps := scenario.Sweep.E3Points; len(ps) > 0 {
		xs = slices.Sorted(slices.Values(ps))
		xs = slices.Compact(xs)
	}
	tr := &tracker{fn: o.Progress}
	fixed := LittleBound(scenario.ServerCores(), scenario.Delay, scenario.Service.Mean)
	res := &E3Result{Scenario: stamp(scenario, o), Options: o, Axis: axis, SLORule: rule, Burst: burst}
	var cfgs []Config
	var pts []E3Point
	for _, x := range xs {
		c, err := scenario.Sweep.E3Point(scenario, x)
		if err != nil {
			return nil, fmt.Errorf("e3: %w", err)
		}
		if err := c.Validate(); err != nil {
			return nil, fmt.Errorf("e3: D/S=%g: %w", x, err)
		}
		tuned, err := tuneBest(ctx, c, o, tr)
		if err != nil {
			return nil, fmt.Errorf("e3: D/S=%g: %w", x, err)
		}
		res.Tuned = append(res.Tuned, E3Tuned{DelayOverService: x, Tuned: *tuned})
		for _, l := range e3Labels {
			cc := c
			switch l {
			case "jbsq fixed n":
				cc.Policy = Policy{Binding: JBSQ, Ingress: Least, Bound: fixed}
			case "jbsq Little n":
				cc.Policy = Policy{Binding: JBSQ, Ingress: Least, Bound: BoundAuto}
			case "jbsq tuned n":
				cc.Policy = Policy{Binding: JBSQ, Ingress: Least, Bound: tuned.Bound}
			default:
				cc.Policy = MustPolicy(l)
			}
			cfgs = append(cfgs, seeded(cc, o)...)
			pts = append(pts, E3Point{DelayOverService: x, Delay: c.Delay, Service: c.Service.Mean, SLO: c.SLO, Label: l})
		}
	}
	runs, err := runMany(ctx, cfgs, o.Parallel, tr)
	if err != nil {
		return nil, fmt.Errorf("e3: %w", err)
	}
	var rnd Cell
	for i := range pts {
		pts[i].Cell = summarize(runs[i*o.Seeds : (i+1)*o.Seeds])
		if pts[i].Label == "random" {
			rnd = pts[i].Cell
		}
		pts[i].LosesToRandom = pts[i].Label != "random" && worse(pts[i].Cell.PerSeed, rnd.PerSeed)
		if pts[i].DelayOverService == 4 {
			switch pts[i].Label {
			case "random":
				pts[i].Study = StudyE3Random
			case "random+fwd":
				pts[i].Study = StudyE3Forward
			case "jbsq tuned n":
				pts[i].Study = StudyE3JBSQ64
			}
		}
	}
	res.Points = pts
	res.Failures, res.FailFirst, res.Early, res.JBSQHolds = e3Failures(pts)
	return res, nil
}

// worse reports whether the sample x is stochastically larger than y:
// a one-sided Mann–Whitney U test at SignificanceLevel.
func worse(x, y []float64) bool {
	r, err := stats.MannWhitneyU(x, y)
	return err == nil && r.PGreater() < SignificanceLevel
}

// e3Failures finds where each curve first loses to random and counts the
// early-binding + movement curves (forwarding) that do, and whether the
// tuned JBSQ never does.
func e3Failures(pts []E3Point) ([]E3Failure, int, int, bool) {
	var out []E3Failure
	at := map[string]int{}
	holds := true
	for _, p := range pts {
		i, ok := at[p.Label]
		if !ok {
			i = len(out)
			at[p.Label] = i
			out = append(out, E3Failure{Label: p.Label})
		}
		if out[i].FailAt == 0 && p.LosesToRandom {
			out[i].FailAt = p.DelayOverService
		}
		if p.Label == "jbsq tuned n" && p.LosesToRandom {
			holds = false
		}
	}
	n, early := 0, 0
	for _, f := range out {
		if !strings.Contains(f.Label, "+fwd") {
			continue
		}
		early++
		if f.FailAt > 0 {
			n++
		}
	}
	return out, n, early, holds
}

// e3Title says what E3 moved: the axis, the SLO rule and the burst rule.
func (r *E3Result) e3Title() string {
	sc := r.Scenario
	var t string
	switch r.Axis {
	case AxisService:
		t = fmt.Sprintf("moving the service mean S = D/x (D = %g µs fixed)", sc.Delay)
	case AxisProduct:
		t = fmt.Sprintf("moving D and S with D·S = %g µs² fixed", sc.Delay*sc.Service.Mean)
	case AxisUnloaded:
		t = fmt.Sprintf("moving D and S with the unloaded latency 2D + S = %g µs fixed", 2*sc.Delay+sc.Service.Mean)
	default:
		t = fmt.Sprintf("moving the one-way delay D = x·S (service mean %g µs fixed)", sc.Service.Mean)
	}
	switch r.SLORule {
	case SLOFixed:
		t += fmt.Sprintf(", SLO %g µs fixed", sc.SLO)
	case SLORoundTrip:
		t += fmt.Sprintf(", SLO = %g µs + 2(D − %g µs)", sc.SLO, sc.Delay)
	case SLORoundTripHop:
		t += fmt.Sprintf(", SLO = %g µs + 4(D − %g µs) (the round trip and one forwarding hop)", sc.SLO, sc.Delay)
	case SLOSlack:
		t += fmt.Sprintf(", SLO = 2D + %.3g·S (the slack in service times kept)", (sc.SLO-2*sc.Delay)/sc.Service.Mean)
	case SLOSlowdown:
		t += fmt.Sprintf(", SLO = %.3g·S (a slowdown bound)", sc.SLO/sc.Service.Mean)
	case SLOUnloaded:
		t += fmt.Sprintf(", SLO = %.3g·(2D + S) (a multiple of the unloaded latency)", sc.SLO/(2*sc.Delay+sc.Service.Mean))
	}
	switch r.Burst {
	case BurstService:
		t += ", burst on-period ∝ S"
	case BurstDelay:
		t += ", burst on-period ∝ D"
	}
	return t
}

// WriteText implements output.TextWriter.
func (r *E3Result) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "E3 — violations against D/S, %s\n%s\n%s\n", r.e3Title(), scenarioLine(r.Scenario), seedsLine(r.Options))
	fmt.Fprintf(w, "jbsq fixed n = Little bound at the scenario's point (%d); Little n = ⌈m(1 + 2D/S)⌉ at each point; tuned n = n* with the fewest violations on disjoint seeds\n",
		LittleBound(r.Scenario.ServerCores(), r.Scenario.Delay, r.Scenario.Service.Mean))
	fmt.Fprintf(w, "loses to random: one-sided Mann–Whitney U on the per-seed rates, p < %g; %d of %d early-binding + forwarding curves lose to random somewhere, tuned JBSQ never: %s (study (reported): %s)\n\n",
		SignificanceLevel, r.FailFirst, r.Early, yesNo(r.JBSQHolds), StudyE3FailFirst)
	rows := make([][]string, 0, len(r.Points))
	for _, p := range r.Points {
		lose := ""
		if p.LosesToRandom {
			lose = "yes"
		}
		policy := p.Cell.Policy
		if n, ok := strings.CutPrefix(p.Label, "jbsq "); ok { // the three JBSQ curves may share a bound
			policy += " (" + strings.TrimSuffix(n, " n") + ")"
		}
		rows = append(rows, []string{fmt.Sprintf("%g", p.DelayOverService), fmt.Sprintf("%.4g", p.Delay), fmt.Sprintf("%.4g", p.Service), fmt.Sprintf("%.4g", p.SLO),
			policy, pct(p.Cell.Violation), num(p.Cell.P99, 1), lose, p.Study})
	}
	return writeTable(w, []string{"D/S", "D µs", "S µs", "SLO µs", "POLICY", "VIOLATIONS", "P99 µs", "LOSES TO RANDOM", "STUDY (REPORTED)"}, rows)
}

// --------------------------------------------------------------- T40b ----

// T40bResult compares connection-level and request-level dispatch under
// connection skew.
type T40bResult struct {
	Scenario Config  `json:"scenario"`
	Options  Options `json:"options"`
	Cells    []Cell  `json:"cells"`
	// Tuned is the credits' JBSQ(n*), when the scenario asks for it.
	Tuned *Tuned `json:"tuned,omitempty"`
}

// T40bPolicies are the T40b policies: static connection hash, active
// connection migration (the ingress moves connections, as Capybara's switch
// does), passive migration (a host hands a connection away when it finds
// a queue of ForwardThreshold, or after one of its requests missed the SLO),
// request-level credits returned per completion (JBSQ) or by idle cores
// (JIQ: a core that frees with nothing queued returns one credit, so a busy
// host sends none), and per-request random hashing as a reference.
func T40bPolicies() []Policy {
	return []Policy{MustPolicy("hash"), MustPolicy("migrate"), MustPolicy("passive"), MustPolicy("passive-miss"), MustPolicy("jbsq"), MustPolicy("jiq"), MustPolicy("random")}
}

// T40b runs the scenario with connections Zipf(α = 0.5)-skewed (default
// 1024 connections, 64 per host). Defaults 10 seeds × 200 000 (the static
// hash's outcome depends on where each seed's hash puts the heavy
// connections); quick 2 × 20 000.
func T40b(ctx context.Context, scenario Config, o Options) (*T40bResult, error) {
	o = o.withDefaults(10, 2, 200000, 20000)
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("t40b: %w", err)
	}
	if scenario.Connections == 0 {
		scenario.Connections = 64 * scenario.Hosts
	}
	if scenario.ZipfAlpha == 0 {
		scenario.ZipfAlpha = 0.5
	}
	if g := scenario.Sweep.T40bGranularity; g != "" {
		scenario.Granularity = g
	}
	tr := &tracker{fn: o.Progress}
	ps := T40bPolicies()
	var tuned *Tuned
	if scenario.Sweep.TunedJBSQ {
		// Request-level credits at JBSQ(n*), chosen as in E1.
		var err error
		if tuned, err = tuneBest(ctx, scenario, o, tr); err != nil {
			return nil, fmt.Errorf("t40b: %w", err)
		}
		for i, p := range ps {
			if p.Binding == JBSQ {
				ps[i].Bound = tuned.Bound
			}
		}
	}
	var cfgs []Config
	for _, p := range ps {
		c := scenario
		c.Policy = p
		if err := c.Validate(); err != nil {
			return nil, fmt.Errorf("t40b: %w", err)
		}
		cfgs = append(cfgs, seeded(c, o)...)
	}
	runs, err := runMany(ctx, cfgs, o.Parallel, tr)
	if err != nil {
		return nil, fmt.Errorf("t40b: %w", err)
	}
	res := &T40bResult{Scenario: stamp(scenario, o), Options: o, Tuned: tuned}
	for i, p := range ps {
		c := summarize(runs[i*o.Seeds : (i+1)*o.Seeds])
		switch {
		case p.Ingress == Hash:
			c.Study = StudyT40bHash
		case p.Ingress == Migrate:
			c.Study = StudyT40bActive
		case p.Ingress == Passive, p.Ingress == PassiveMiss:
			c.Study = StudyT40bPassive
		case p.Binding == JBSQ, p.Binding == JIQ:
			c.Study = StudyT40bCredit
		}
		res.Cells = append(res.Cells, c)
	}
	return res, nil
}

// WriteText implements output.TextWriter.
func (r *T40bResult) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "T40b — %d connections, Zipf α = %g: static hash vs connection migration vs request-level credits\n%s\n%s\n\n",
		r.Scenario.Connections, r.Scenario.ZipfAlpha, scenarioLine(r.Scenario), seedsLine(r.Options))
	rows := make([][]string, 0, len(r.Cells))
	for _, c := range r.Cells {
		rows = append(rows, []string{t40bName(c.Policy), c.Policy, pct(c.Violation), num(c.P99, 1), num(c.MessagesPerRPC, 3), c.Study})
	}
	return writeTable(w, []string{"SCHEME", "POLICY", "VIOLATIONS", "P99 µs", "EXTRA MSGS/RPC", "STUDY (REPORTED)"}, rows)
}

func t40bName(p string) string {
	switch {
	case p == "hash":
		return "static hash"
	case p == "migrate":
		return "active migration (Capybara-style)"
	case p == "passive":
		return "passive migration, at a queue"
	case p == "passive-miss":
		return "passive migration, after a miss"
	case strings.HasPrefix(p, "jbsq"):
		return "request-level credits, one per completion"
	case p == "jiq":
		return "request-level credits, one per idle core (a reading chosen after the study's 0.351 msgs/RPC)"
	case p == "random":
		return "per-request random (reference)"
	}
	return p
}

// ------------------------------------------------------------ gateway ----

// GatewayPoint is one (cost, cores, load) run.
type GatewayPoint struct {
	PerMessageNS float64 `json:"per_message_ns"` // 0 = offloaded switch
	Cores        int     `json:"cores"`
	Load         float64 `json:"load"`
	Cell         Cell    `json:"cell"`
	Utilization  float64 `json:"gateway_utilization"`
}

// GatewayCliff is where one software dispatcher falls over.
type GatewayCliff struct {
	PerMessageNS float64 `json:"per_message_ns"`
	Cores        int     `json:"cores"`
	// Analytic is the load at which the dispatcher's cores are saturated:
	// k / (messages per request × cost × λ at ρ = 1).
	Analytic float64 `json:"analytic_load"`
	// Measured is the lowest load on the grid whose violation rate exceeds
	// max(5 %, 2 × the switch's); 0 if none does.
	Measured float64 `json:"measured_load"`
}

// GatewayResult is violation rate against load for software dispatchers
// and the offloaded switch.
type GatewayResult struct {
	Scenario Config         `json:"scenario"`
	Options  Options        `json:"options"`
	Policy   string         `json:"policy"`
	Points   []GatewayPoint `json:"points"`
	Cliffs   []GatewayCliff `json:"cliffs"`
	Study    string         `json:"study"`
}

// GatewaySweep sweeps load for a software dispatcher with the given cores and
// per-message costs (default 1 core at 200, 350 and 500 ns) running JBSQ
// (2 messages per request: the request and its completion), beside the
// offloaded switch. Defaults 3 seeds × 100 000; quick 2 × 10 000 on a
// coarser grid.
func GatewaySweep(ctx context.Context, scenario Config, costsNS []float64, cores []int, loads []float64, o Options) (*GatewayResult, error) {
	o = o.withDefaults(3, 2, 100000, 10000)
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	if len(costsNS) == 0 {
		costsNS = []float64{200, 350, 500}
	}
	if len(cores) == 0 {
		cores = []int{1}
	}
	if h := scenario.Sweep.GatewayHosts; h > 0 {
		scenario.Hosts = h
	}
	if len(loads) == 0 {
		loads = []float64{0.025, 0.05, 0.075, 0.1, 0.125, 0.15, 0.2, 0.3, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.85}
		if o.Quick {
			loads = []float64{0.05, 0.1, 0.2, 0.65}
		}
		if scenario.Sweep.GatewayHosts > 0 {
			loads = []float64{0.3, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9}
			if o.Quick {
				loads = []float64{0.4, 0.6, 0.7, 0.85}
			}
		}
	}
	if scenario.Policy.Binding != JBSQ {
		scenario.Policy = Policy{Binding: JBSQ, Ingress: Least, Bound: BoundAuto}
	}
	type variant struct {
		ns float64
		k  int
	}
	vs := []variant{{0, 0}}
	for _, k := range cores {
		for _, ns := range costsNS {
			if ns <= 0 || k < 1 {
				return nil, fmt.Errorf("gateway: cost %g ns and cores %d must be positive", ns, k)
			}
			vs = append(vs, variant{ns, k})
		}
	}
	var cfgs []Config
	var pts []GatewayPoint
	for _, v := range vs {
		for _, l := range loads {
			c := scenario
			c.Load = l
			c.Gateway = Gateway{Cores: v.k, PerMessage: v.ns / 1000}
			if err := c.Validate(); err != nil {
				return nil, fmt.Errorf("gateway: %w", err)
			}
			cfgs = append(cfgs, seeded(c, o)...)
			pts = append(pts, GatewayPoint{PerMessageNS: v.ns, Cores: v.k, Load: l})
		}
	}
	runs, err := runMany(ctx, cfgs, o.Parallel, &tracker{fn: o.Progress})
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	res := &GatewayResult{Scenario: stamp(scenario, o), Options: o, Policy: scenario.Policy.String(), Study: StudyGateway}
	for i := range pts {
		rs := runs[i*o.Seeds : (i+1)*o.Seeds]
		pts[i].Cell = summarize(rs)
		for _, r := range rs {
			pts[i].Utilization += r.GatewayUtilization / float64(len(rs))
		}
	}
	res.Points = pts
	// Cliffs: compare with the switch at the same load.
	sw := map[float64]float64{}
	for _, p := range pts {
		if p.Cores == 0 {
			sw[p.Load] = p.Cell.Violation.Mean
		}
	}
	capacity := float64(scenario.Cores()) / scenario.Service.Mean // requests per µs at ρ = 1
	for _, v := range vs[1:] {
		cl := GatewayCliff{PerMessageNS: v.ns, Cores: v.k, Analytic: float64(v.k) / (2 * v.ns / 1000 * capacity)}
		for _, p := range pts {
			if p.Cores == v.k && p.PerMessageNS == v.ns && p.Cell.Violation.Mean > math.Max(0.05, 2*sw[p.Load]) {
				cl.Measured = p.Load
				break
			}
		}
		res.Cliffs = append(res.Cliffs, cl)
	}
	return res, nil
}

func gwName(ns float64, k int) string {
	if k == 0 {
		return "switch (offloaded)"
	}
	return fmt.Sprintf("software %d core × %g ns", k, ns)
}

// WriteText implements output.TextWriter.
func (r *GatewayResult) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "Gateway saturation — %s dispatched by a software gateway vs the switch\n%s\n%s\nstudy (reported): %s\n\n",
		r.Policy, scenarioLine(r.Scenario), seedsLine(r.Options), r.Study)
	rows := [][]string{}
	for _, c := range r.Cliffs {
		m := "none on the grid"
		if c.Measured > 0 {
			m = fmt.Sprintf("ρ = %g", c.Measured)
		}
		rows = append(rows, []string{gwName(c.PerMessageNS, c.Cores), fmt.Sprintf("ρ = %.3f", c.Analytic), m})
	}
	if err := writeTable(w, []string{"DISPATCHER", "SATURATES AT (ANALYTIC)", "CLIFF (MEASURED)"}, rows); err != nil {
		return err
	}
	fmt.Fprintln(w)
	rows = rows[:0]
	for _, p := range r.Points {
		u := "-"
		if p.Cores > 0 {
			u = fmt.Sprintf("%.0f %%", 100*p.Utilization)
		}
		rows = append(rows, []string{gwName(p.PerMessageNS, p.Cores), fmt.Sprintf("%g", p.Load), pct(p.Cell.Violation), num(p.Cell.P99, 1), u})
	}
	return writeTable(w, []string{"DISPATCHER", "LOAD", "VIOLATIONS", "P99 µs", "GATEWAY BUSY"}, rows)
}

// ---------------------------------------------------------------- TTL ----

// TTLPoint is one (choice, fault, TTL mode, TTL) cell.
type TTLPoint struct {
	Choice string  `json:"choice"`
	Fault  string  `json:"fault"`
	Mode   TTLMode `json:"mode,omitempty"`
	TTL    float64 `json:"ttl_us"` // 0 = no TTL
	Cell   Cell    `json:"cell"`
	// StaleResets per request: credits given up by the TTL.
	StaleResets float64 `json:"stale_resets_per_request"`
	// WorseWithout: the same fault without a TTL is significantly worse
	// than this cell (TTL cells only): a one-sided Mann–Whitney U test of
	// the per-seed violation rates, P below SignificanceLevel.
	WorseWithout bool    `json:"worse_without_ttl,omitempty"`
	P            float64 `json:"p_worse_without_ttl,omitempty"`
}

// TTLTally counts, per JBSQ choice rule, the TTL cells (fault × mode ×
// TTL) whose fault is worse without a TTL.
type TTLTally struct {
	Choice string `json:"choice"`
	Worse  int    `json:"worse_without_ttl"`
	Cells  int    `json:"cells"`
}

// TTLResult is the credit-TTL ablation.
type TTLResult struct {
	Scenario Config     `json:"scenario"`
	Options  Options    `json:"options"`
	Points   []TTLPoint `json:"points"`
	Tallies  []TTLTally `json:"tallies"`
	Study    string     `json:"study"`
}

// TTLAblation ablates the JBSQ credit TTL (none vs the switch's silence TTL vs
// per-credit expiry) under faults that make credits stale. By default: JBSQ
// with its least-outstanding choice, lost completion notifications (0.1 %)
// and host stalls (100 µs every 2 ms per host), both TTL modes at 25–500
// µs; a scenario's Sweep can name the choice rules, faults, mode and TTLs
// (the study scenario: random and p2c, 12 cells each). Defaults 5 seeds ×
// 200 000; quick 2 × 20 000 and two TTLs.
func TTLAblation(ctx context.Context, scenario Config, o Options) (*TTLResult, error) {
	o = o.withDefaults(5, 2, 200000, 20000)
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("ttl: %w", err)
	}
	sw := scenario.Sweep
	choices := sw.TTLChoices
	if len(choices) == 0 {
		choices = []Ingress{Least}
		if scenario.Policy.Binding == JBSQ {
			choices = []Ingress{scenario.Policy.Ingress}
		}
	}
	ttls := sw.TTLs
	if len(ttls) == 0 {
		ttls = []float64{25, 50, 100, 200, 500}
	}
	if o.Quick {
		ttls = []float64{ttls[min(1, len(ttls)-1)], ttls[min(3, len(ttls)-1)]}
	}
	faults := sw.TTLFaults
	if len(faults) == 0 {
		faults = []TTLFault{LossFault(0.001), StallFault(2000, 100)}
	}
	modes := []TTLMode{TTLSilence, TTLCredit}
	if sw.TTLMode != "" {
		modes = []TTLMode{sw.TTLMode}
	}
	var cfgs []Config
	var pts []TTLPoint
	for _, ch := range choices {
		pol := Policy{Binding: JBSQ, Ingress: ch, Bound: BoundAuto}
		for _, f := range faults {
			base := scenario
			base.Policy = pol
			f.apply(&base)
			if err := base.Validate(); err != nil {
				return nil, fmt.Errorf("ttl: %w", err)
			}
			cfgs = append(cfgs, seeded(base, o)...)
			pts = append(pts, TTLPoint{Choice: pol.String(), Fault: f.Name()})
			for _, mode := range modes {
				for _, t := range ttls {
					c := base
					c.CreditTTL, c.TTLMode = t, mode
					cfgs = append(cfgs, seeded(c, o)...)
					pts = append(pts, TTLPoint{Choice: pol.String(), Fault: f.Name(), Mode: mode, TTL: t})
				}
			}
		}
	}
	runs, err := runMany(ctx, cfgs, o.Parallel, &tracker{fn: o.Progress})
	if err != nil {
		return nil, fmt.Errorf("ttl: %w", err)
	}
	res := &TTLResult{Scenario: stamp(scenario, o), Options: o, Study: StudyTTL}
	var none []float64
	for i := range pts {
		rs := runs[i*o.Seeds : (i+1)*o.Seeds]
		pts[i].Cell = summarize(rs)
		var sr, n float64
		for _, r := range rs {
			sr += float64(r.StaleResets)
			n += float64(r.Requests + r.Requests/10)
		}
		pts[i].StaleResets = sr / n
		if pts[i].TTL == 0 {
			none = pts[i].Cell.PerSeed
			continue
		}
		if mw, err := stats.MannWhitneyU(none, pts[i].Cell.PerSeed); err == nil {
			pts[i].P = mw.PGreater()
			pts[i].WorseWithout = pts[i].P < SignificanceLevel
		}
		if k := len(res.Tallies); k == 0 || res.Tallies[k-1].Choice != pts[i].Choice {
			res.Tallies = append(res.Tallies, TTLTally{Choice: pts[i].Choice})
		}
		t := &res.Tallies[len(res.Tallies)-1]
		t.Cells++
		if pts[i].WorseWithout {
			t.Worse++
		}
	}
	res.Points = pts
	return res, nil
}

// WriteText implements output.TextWriter.
func (r *TTLResult) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "Credit TTL ablation — jbsq\n%s\n%s\nstudy (reported): %s\n", scenarioLine(r.Scenario), seedsLine(r.Options), r.Study)
	for _, t := range r.Tallies {
		fmt.Fprintf(w, "%s: %d of %d TTL cells are significantly worse without a TTL (one-sided Mann–Whitney U, p < %g)\n", t.Choice, t.Worse, t.Cells, SignificanceLevel)
	}
	fmt.Fprintln(w)
	rows := make([][]string, 0, len(r.Points))
	for _, p := range r.Points {
		mode, ttl, worse := "no TTL", "-", ""
		if p.TTL > 0 {
			mode, ttl = string(p.Mode), fmt.Sprintf("%g", p.TTL)
			worse = "no"
			if p.WorseWithout {
				worse = "yes"
			}
		}
		pv := "-"
		if p.TTL > 0 {
			pv = fmt.Sprintf("%.3g", p.P)
		}
		rows = append(rows, []string{p.Choice, p.Fault, mode, ttl, pct(p.Cell.Violation), num(p.Cell.P99, 1), fmt.Sprintf("%.4f", p.StaleResets), worse, pv})
	}
	return writeTable(w, []string{"POLICY", "FAULT", "TTL MODE", "TTL µs", "VIOLATIONS", "P99 µs", "EXPIRED CREDITS/REQ", "WORSE WITHOUT TTL", "P"}, rows)
}

// ---------------------------------------------------------------- run ----

// RunSetResult is a single scenario run with several policies.
type RunSetResult struct {
	Scenario Config  `json:"scenario"`
	Options  Options `json:"options"`
	Cells    []Cell  `json:"cells"`
}

// RunSet runs one scenario for each policy across seeds. Defaults 5 seeds
// × the scenario's Requests; quick 2 × 20 000.
func RunSet(ctx context.Context, scenario Config, policies []Policy, o Options) (*RunSetResult, error) {
	o = o.withDefaults(5, 2, scenario.Requests, 20000)
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	if len(policies) == 0 {
		policies = []Policy{scenario.Policy}
	}
	var cfgs []Config
	for _, p := range policies {
		c := scenario
		c.Policy = p
		if err := c.Validate(); err != nil {
			return nil, fmt.Errorf("run: policy %s: %w", p, err)
		}
		cfgs = append(cfgs, seeded(c, o)...)
	}
	runs, err := runMany(ctx, cfgs, o.Parallel, &tracker{fn: o.Progress})
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	res := &RunSetResult{Scenario: stamp(scenario, o), Options: o}
	for i := range policies {
		res.Cells = append(res.Cells, summarize(runs[i*o.Seeds:(i+1)*o.Seeds]))
	}
	return res, nil
}

// WriteText implements output.TextWriter.
func (r *RunSetResult) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "%s\n%s\n\n", scenarioLine(r.Scenario), seedsLine(r.Options))
	rows := make([][]string, 0, len(r.Cells))
	for _, c := range r.Cells {
		rows = append(rows, []string{c.Policy, pct(c.Violation), num(c.MeanLatency, 2), num(c.P99, 1), pct(c.HoldRate), num(c.MessagesPerRPC, 3), num(c.RecircPerRPC, 3)})
	}
	return writeTable(w, []string{"POLICY", "VIOLATIONS", "MEAN µs", "P99 µs", "HELD", "MSGS/RPC", "RECIRC/RPC"}, rows)
}

// ------------------------------------------------------------ switch -----

// SwitchPairs are the switch experiment's comparisons: each ideal policy of
// the late-binding study beside the switch's one-pass version of it.
func SwitchPairs() [][2]Policy {
	return [][2]Policy{
		{MustPolicy("jbsq"), MustPolicy("switch")},               // JBSQ(n), n = the Little bound
		{MustPolicy("jbsq/random"), MustPolicy("switch/random")}, // random among hosts below n
		{MustPolicy("jsq"), MustPolicy("switch:inf")},            // unbounded: least loaded
	}
}

// SwitchGapRow is one ideal policy and its switch version.
type SwitchGapRow struct {
	Ideal  Cell `json:"ideal"`
	Switch Cell `json:"switch"`
	// Gap is the switch's violation rate minus the ideal's (percentage
	// points as a fraction), with a 95 % CI from the per-seed differences
	// (common random numbers: the same arrivals and service times).
	Gap stats.Summary `json:"gap"`
}

// SwitchGapResult compares ideal dispatchers with the switch's algorithm.
type SwitchGapResult struct {
	Scenario Config         `json:"scenario"`
	Options  Options        `json:"options"`
	Rows     []SwitchGapRow `json:"rows"`
}

// SwitchGap runs each SwitchPairs pair on the scenario (default Scenario(),
// the study's E1 point): the gap between the study's central dispatcher
// (every host visible, a FIFO of waiting requests) and what the switch can
// execute in one pass per decision (one group of four hosts, recirculation
// instead of a queue), in violations and recirculations per request.
// Defaults 5 seeds × 200 000 requests; quick 2 × 20 000.
func SwitchGap(ctx context.Context, scenario Config, o Options) (*SwitchGapResult, error) {
	o = o.withDefaults(5, 2, 200000, 20000)
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("switch: %w", err)
	}
	pairs := SwitchPairs()
	var cfgs []Config
	for _, pr := range pairs {
		for _, p := range pr {
			c := scenario
			c.Policy = p
			if err := c.Validate(); err != nil {
				return nil, fmt.Errorf("switch: policy %s: %w", p, err)
			}
			cfgs = append(cfgs, seeded(c, o)...)
		}
	}
	runs, err := runMany(ctx, cfgs, o.Parallel, &tracker{fn: o.Progress})
	if err != nil {
		return nil, fmt.Errorf("switch: %w", err)
	}
	res := &SwitchGapResult{Scenario: stamp(scenario, o), Options: o}
	for i := range pairs {
		ideal := runs[2*i*o.Seeds : (2*i+1)*o.Seeds]
		sw := runs[(2*i+1)*o.Seeds : (2*i+2)*o.Seeds]
		d := make([]float64, o.Seeds)
		for k := range d {
			d[k] = sw[k].ViolationRate - ideal[k].ViolationRate
		}
		res.Rows = append(res.Rows, SwitchGapRow{Ideal: summarize(ideal), Switch: summarize(sw), Gap: stats.Summarize(d)})
	}
	return res, nil
}

// WriteText implements output.TextWriter.
func (r *SwitchGapResult) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "ideal dispatcher (the study's) vs the switch's one-pass algorithm (pkg/pipeline); recirculation %.2g µs\n%s\n%s\n\n",
		recircOf(r.Scenario), scenarioLine(r.Scenario), seedsLine(r.Options))
	rows := make([][]string, 0, len(r.Rows))
	for _, x := range r.Rows {
		rows = append(rows, []string{x.Ideal.Policy, pct(x.Ideal.Violation), x.Switch.Policy, pct(x.Switch.Violation),
			fmt.Sprintf("%+.2f ± %.2f pp", 100*x.Gap.Mean, 100*x.Gap.CI95), num(x.Ideal.P99, 1), num(x.Switch.P99, 1),
			num(x.Switch.RecircPerRPC, 3), pct(x.Switch.HoldRate)})
	}
	return writeTable(w, []string{"IDEAL", "VIOLATIONS", "SWITCH", "VIOLATIONS", "GAP", "P99 µs IDEAL", "P99 µs SWITCH", "RECIRC/RPC", "HOLDS/RPC"}, rows)
}

func recircOf(c Config) float64 {
	if c.Recirc == 0 {
		return DefaultRecirc
	}
	return c.Recirc
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
