// Package carbon is the SLA-constrained carbon-aware routing experiment
// (`p4ctl eval carbon`): the paper's 30 runs × 1000 requests per SLA class
// and 30 × 5000 mixed requests, 5- and 12-region pools, policies A, B, C,
// C+, D and our C+warm and C-cap, with exact expectations beside sampled
// means, Mann–Whitney U p-values, routing shares, decision times and plots.
package carbon

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"time"

	"github.com/p4ctl/p4ctl/pkg/regions"
	"github.com/p4ctl/p4ctl/pkg/stats"
)

// Latency models for the violation rate.
const (
	LatencyP95     = "p95"     // a request's latency is its region's P95 (the paper; violations only by construction)
	LatencySampled = "sampled" // also draw each request's RTT from a log-normal fitted to the P95
)

// Bounds on an experiment; Config's validation refuses anything outside
// them. Memory grows with the requests of one run (every policy replays
// the same run, so its requests are held and sorted: about 32 bytes each),
// with the runs (each (pool, class, policy) row keeps every run's mean and
// saving: 16 bytes per run and row, printed as run_saving_pct) and with the
// hours of the period (the carbon table holds 256 bytes per hour and the
// synthetic model one value per zone and hour). The decision-time samples
// are capped at MaxTimingSamples whatever the runs and requests.
const (
	MaxRequests      = 2_000_000 // requests per run (Requests and MixedRequests)
	MaxRuns          = 10_000    // runs per class
	MaxPeriodHours   = 10 * 8784 // hours of the period: ten (leap) years
	MaxTimingSamples = 1_000_000 // policy-C decision times kept (the first ones)
)

// z95 is the standard normal 95th percentile.
const z95 = 1.6448536269514722

// Config describes one experiment.
type Config struct {
	Source        regions.CarbonSource // carbon data (required)
	Signal        regions.Signal       // what its numbers are (default lca: average, lifecycle)
	Period        regions.Period       // hours requests are drawn from (required)
	Site          *regions.Site        // client site (default regions.Mumbai())
	Pools         []int                // pool sizes (default 5 and 12: the first n catalog regions)
	SLAs          []float64            // SLA classes, ms (default 300, 500, 800, 1000, 3000)
	Mix           []float64            // mixed-workload share of each class (default 20/30/20/20/10 %)
	Runs          int                  // runs per class (default 30)
	Requests      int                  // requests per run of one SLA class (default 1000)
	MixedRequests int                  // requests per mixed run (default 5000)
	Seed          uint64               // randomness of the requests (and of nothing else)
	Options       regions.Options      // policy parameters (default regions.DefaultOptions())
	// CapShare is C-cap's capacity per region, as a share of a run's
	// requests (default 0.4). Each run is treated as one burst: requests
	// stay outstanding until the run ends, so a region takes at most
	// ceil(CapShare·requests) of them.
	CapShare     float64
	LatencyModel string  // LatencyP95 (default) or LatencySampled
	LatencySigma float64 // log-normal σ of the sampled RTT (default 0.2)
	// Progress, if set, is called after each run with (done, total).
	Progress func(done, total int)
}

func (c *Config) defaults() error {
	if c.Source == nil {
		return errors.New("eval carbon: no carbon source")
	}
	if c.Site == nil {
		c.Site = regions.Mumbai()
	}
	if len(c.Pools) == 0 {
		c.Pools = []int{5, 12}
	}
	if len(c.SLAs) == 0 {
		c.SLAs = []float64{300, 500, 800, 1000, 3000}
	}
	if len(c.Mix) == 0 {
		c.Mix = []float64{0.2, 0.3, 0.2, 0.2, 0.1}
	}
	if c.Runs == 0 {
		c.Runs = 30
	}
	if c.Requests == 0 {
		c.Requests = 1000
	}
	if c.MixedRequests == 0 {
		c.MixedRequests = 5000
	}
	if c.Options == (regions.Options{}) {
		c.Options = regions.DefaultOptions()
	}
	if c.CapShare == 0 {
		c.CapShare = 0.4
	}
	if c.LatencyModel == "" {
		c.LatencyModel = LatencyP95
	}
	if c.LatencySigma == 0 {
		c.LatencySigma = 0.2
	}
	switch {
	case len(c.Mix) != len(c.SLAs):
		return fmt.Errorf("eval carbon: %d mix shares for %d SLA classes", len(c.Mix), len(c.SLAs))
	case c.Runs < 2 || c.Requests < 1 || c.MixedRequests < 1:
		return fmt.Errorf("eval carbon: need runs >= 2 and requests >= 1 (runs %d, requests %d, mixed %d)", c.Runs, c.Requests, c.MixedRequests)
	case c.Runs > MaxRuns || c.Requests > MaxRequests || c.MixedRequests > MaxRequests:
		return fmt.Errorf("eval carbon: at most %d runs and %d requests per run (runs %d, requests %d, mixed %d)", MaxRuns, MaxRequests, c.Runs, c.Requests, c.MixedRequests)
	case c.Period.Hours() > MaxPeriodHours:
		return fmt.Errorf("eval carbon: period %s: %d hours, at most %d (ten years)", c.Period, c.Period.Hours(), MaxPeriodHours)
	case !(c.CapShare > 0 && c.CapShare <= 1):
		return fmt.Errorf("eval carbon: cap share %v: want 0 < share <= 1", c.CapShare)
	case c.LatencyModel != LatencyP95 && c.LatencyModel != LatencySampled:
		return fmt.Errorf("eval carbon: latency model %q: want p95 or sampled", c.LatencyModel)
	case !(c.LatencySigma > 0 && c.LatencySigma < 3):
		return fmt.Errorf("eval carbon: latency sigma %v: want 0 < sigma < 3", c.LatencySigma)
	}
	var sum float64
	for _, w := range c.Mix {
		if w < 0 {
			return fmt.Errorf("eval carbon: negative mix share %v", w)
		}
		sum += w
	}
	if math.Abs(sum-1) > 1e-9 {
		return fmt.Errorf("eval carbon: mix shares sum to %v, want 1", sum)
	}
	for _, s := range c.SLAs {
		if !(s > 0) {
			return fmt.Errorf("eval carbon: SLA %v ms: want > 0", s)
		}
	}
	return c.Options.Validate()
}

// Row is one (pool, policy, class) result: the documented JSON interface.
type Row struct {
	Pool   int     `json:"pool"`   // pool size: 5 or 12
	Policy string  `json:"policy"` // A, B, C, C+, D, C+warm, C-cap
	SLAms  float64 `json:"sla_ms"` // SLA class in ms; 0 for the mixed workload
	Class  string  `json:"class"`  // "300" … "3000" or "mixed"
	Mean   float64 `json:"mean_gco2_per_kwh"`
	Std    float64 `json:"std_gco2_per_kwh"`    // std across runs of the per-run mean
	StdErr float64 `json:"stderr_gco2_per_kwh"` // Std/√runs
	// ExactMean is the expectation over every hour of the period (no
	// sampling); null for the stateful variants (C+warm, C-cap).
	ExactMean *float64 `json:"exact_mean_gco2_per_kwh"`
	// ExactWithin3SE says whether |Mean − ExactMean| ≤ 3·StdErr.
	ExactWithin3SE *bool    `json:"exact_within_3se,omitempty"`
	SavingPct      float64  `json:"saving_pct"`       // (A − this)/A·100 on the sampled means
	ExactSavingPct *float64 `json:"exact_saving_pct"` // the same on exact means
	ViolationPct   float64  `json:"violation_pct"`    // requests whose region's P95 exceeds their SLA
	// SampledViolationPct is the share of requests whose sampled RTT
	// exceeds their SLA (latency model "sampled" only).
	SampledViolationPct *float64 `json:"sampled_violation_pct,omitempty"`
	FallbackPct         float64  `json:"fallback_pct"`        // nothing feasible: nearest region
	SpillPct            float64  `json:"spill_pct,omitempty"` // C-cap: a full feasible region was skipped
	PValueVsA           *float64 `json:"p_value_vs_A"`        // Mann–Whitney U, per-run means vs A's; null for A
	// RouteShare is the fraction of requests per region id.
	RouteShare map[string]float64 `json:"route_share"`
	// RunSavingPct is the saving vs A of each run (same requests).
	RunSavingPct []float64 `json:"run_saving_pct"`
	runMeans     []float64
}

// ScalingRow compares policy C's saving in the two pools for one class.
type ScalingRow struct {
	Class       string  `json:"class"`
	SLAms       float64 `json:"sla_ms"`
	Saving5Pct  float64 `json:"saving_pool5_pct"`
	Saving12Pct float64 `json:"saving_pool12_pct"`
}

// DecisionTime summarizes the measured time of policy C decisions.
type DecisionTime struct {
	Samples int     `json:"samples"`
	P50ns   float64 `json:"p50_ns"`
	P99ns   float64 `json:"p99_ns"`
	ClockNs float64 `json:"clock_overhead_p50_ns"` // median cost of the clock reads included in each sample
	Method  string  `json:"method"`
}

// ZoneRow is the carbon intensity of one region's zone over the period.
type ZoneRow struct {
	Region string  `json:"region"`
	City   string  `json:"city"`
	Zone   string  `json:"zone"`
	Mean   float64 `json:"mean_gco2_per_kwh"`
	Min    float64 `json:"min_gco2_per_kwh"`
	Max    float64 `json:"max_gco2_per_kwh"`
	Paper  string  `json:"paper_jan2025,omitempty"` // the paper's figure, labelled
}

// Result is the whole experiment's output.
type Result struct {
	CarbonSource  string         `json:"carbon_source"`
	Signal        string         `json:"signal"` // e.g. "average (lifecycle)"
	Period        regions.Period `json:"period"`
	Hours         int            `json:"hours"`
	Site          string         `json:"site"`
	Seed          uint64         `json:"seed"`
	Runs          int            `json:"runs"`
	Requests      int            `json:"requests_per_run"`
	MixedRequests int            `json:"mixed_requests_per_run"`
	SLAs          []float64      `json:"sla_classes_ms"`
	Mix           []float64      `json:"mix"`
	Pools         []int          `json:"pools"`
	Options       OptionsJSON    `json:"options"`
	LatencyModel  string         `json:"latency_model"`
	LatencySigma  float64        `json:"latency_sigma,omitempty"`
	Rows          []Row          `json:"rows"`
	Scaling       []ScalingRow   `json:"scaling"`
	DecisionTime  DecisionTime   `json:"decision_time"`
	Zones         []ZoneRow      `json:"zones"`
	Paper         PaperFigures   `json:"paper"`
	// PaperArithmetic is the paper's figures recomputed from its own
	// tables (labelled; not measured).
	PaperArithmetic []PaperArithmetic `json:"paper_arithmetic"`
	Notes           []string          `json:"notes"`
	Plots           []string          `json:"plots,omitempty"`
	table           *regions.CarbonTable
}

// OptionsJSON are the policy parameters as reported.
type OptionsJSON struct {
	Alpha        float64 `json:"alpha"`
	W            float64 `json:"w"`
	ColdMissing  string  `json:"cold_missing"`
	KeepAliveSec float64 `json:"keep_alive_s"`
	CapShare     float64 `json:"cap_share"`
}

// Table is the carbon table the experiment used (for plots).
func (r *Result) Table() *regions.CarbonTable { return r.table }

// Find returns the row of (pool, policy, class), class "mixed" or an SLA.
func (r *Result) Find(pool int, policy, class string) (Row, bool) {
	for _, row := range r.Rows {
		if row.Pool == pool && row.Policy == policy && row.Class == class {
			return row, true
		}
	}
	return Row{}, false
}

type class struct {
	name  string
	sla   float64 // 0 = mixed
	index int     // position among the classes (seed derivation)
}

type request struct {
	hour int
	at   time.Duration // offset from the period start (hour + uniform within)
	sla  float64
	z    float64 // standard normal for the sampled RTT
}

// accum gathers one (pool, class, policy) over runs.
type accum struct {
	runMeans          []float64
	n                 int
	viol, sviol, fall int
	spill             int
	share             [regions.MaxRegions]int
}

// Run executes the experiment.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	var union regions.RegionSet
	pools := make([]regions.RegionSet, len(cfg.Pools))
	for i, n := range cfg.Pools {
		p, err := regions.PoolOf(n)
		if err != nil {
			return nil, fmt.Errorf("eval carbon: %w", err)
		}
		if p&^cfg.Site.Regions() != 0 {
			return nil, fmt.Errorf("eval carbon: site %s has no latency for %s", cfg.Site.Name(), p&^cfg.Site.Regions())
		}
		pools[i], union = p, union|p
	}
	tab, err := regions.NewCarbonTable(cfg.Source, union, cfg.Period)
	if err != nil {
		return nil, fmt.Errorf("eval carbon: %w", err)
	}
	classes := make([]class, 0, len(cfg.SLAs)+1)
	for i, s := range cfg.SLAs {
		classes = append(classes, class{name: fmt.Sprintf("%g", s), sla: s, index: i})
	}
	classes = append(classes, class{name: "mixed", index: len(cfg.SLAs)})
	res := &Result{
		CarbonSource: cfg.Source.Describe(), Signal: cfg.Signal.Describe(), Period: cfg.Period, Hours: tab.Hours(), Site: cfg.Site.Name(),
		Seed: cfg.Seed, Runs: cfg.Runs, Requests: cfg.Requests, MixedRequests: cfg.MixedRequests,
		SLAs: cfg.SLAs, Mix: cfg.Mix, Pools: cfg.Pools, LatencyModel: cfg.LatencyModel,
		Options: OptionsJSON{Alpha: cfg.Options.Alpha, W: cfg.Options.W, ColdMissing: cfg.Options.ColdMissing.String(),
			KeepAliveSec: cfg.Options.KeepAlive.Seconds(), CapShare: cfg.CapShare},
		Paper: Paper(), PaperArithmetic: PaperArithmetics(), table: tab,
	}
	if cfg.LatencyModel == LatencySampled {
		res.LatencySigma = cfg.LatencySigma
	}
	policies := regions.Policies()
	total := len(pools) * len(classes) * cfg.Runs
	done := 0
	var timings []float64
	for pi, pool := range pools {
		for _, cl := range classes {
			acc := make([]accum, len(policies))
			for run := range cfg.Runs {
				if err := ctx.Err(); err != nil {
					return nil, fmt.Errorf("eval carbon: %w", err)
				}
				reqs := makeRequests(&cfg, cl, pi, run, tab.Hours())
				for k, p := range policies {
					var tm *[]float64
					if p == regions.PolicyC && cl.sla == 0 && len(timings) < MaxTimingSamples {
						tm = &timings
					}
					simulate(&cfg, tab, pool, p, reqs, &acc[k], tm)
				}
				done++
				if cfg.Progress != nil {
					cfg.Progress(done, total)
				}
			}
			rows, err := makeRows(&cfg, tab, cfg.Pools[pi], pool, cl, policies, acc)
			if err != nil {
				return nil, err
			}
			res.Rows = append(res.Rows, rows...)
		}
	}
	res.Scaling = scaling(res, classes)
	res.DecisionTime = decisionTime(timings)
	res.Zones = zones(tab, union)
	res.Notes = notes(&cfg, res)
	return res, nil
}

// makeRequests draws one run's requests: uniform hours of the period (and a
// uniform instant within the hour), SLA classes by the mix, one standard
// normal each for the sampled RTT. The stream depends only on (seed, pool
// position, class, run), so every policy sees the same requests.
func makeRequests(cfg *Config, cl class, pool, run, hours int) []request {
	rng := rand.New(rand.NewPCG(cfg.Seed, uint64(pool)<<40|uint64(cl.index)<<24|uint64(run)))
	n := cfg.Requests
	if cl.sla == 0 {
		n = cfg.MixedRequests
	}
	reqs := make([]request, n)
	for i := range reqs {
		h := rng.IntN(hours)
		r := request{hour: h, at: time.Duration(h)*time.Hour + time.Duration(rng.Int64N(int64(time.Hour))), sla: cl.sla, z: rng.NormFloat64()}
		if cl.sla == 0 {
			u, k := rng.Float64(), 0
			for k < len(cfg.Mix)-1 && u >= cfg.Mix[k] {
				u -= cfg.Mix[k]
				k++
			}
			r.sla = cfg.SLAs[k]
		}
		reqs[i] = r
	}
	slices.SortFunc(reqs, func(a, b request) int { return cmp.Compare(a.at, b.at) })
	return reqs
}

// simulate runs one policy over one run's requests (in time order).
func simulate(cfg *Config, tab *regions.CarbonTable, pool regions.RegionSet, p regions.Policy, reqs []request, a *accum, timings *[]float64) {
	site, o := cfg.Site, cfg.Options
	var warm regions.WarmState
	var cs regions.CapState
	if p == regions.PolicyCCap {
		c := int(math.Ceil(cfg.CapShare * float64(len(reqs))))
		for _, r := range pool.Indices() {
			cs.Capacity[r] = c
		}
	}
	var sum float64
	for _, q := range reqs {
		c := tab.Hour(q.hour)
		var d regions.Decision
		switch p {
		case regions.PolicyC:
			if timings != nil && len(*timings) < MaxTimingSamples {
				t0 := time.Now()
				d.Region = regions.DecideC(site, pool, q.sla, c)
				*timings = append(*timings, float64(time.Since(t0)))
			} else {
				d.Region = regions.DecideC(site, pool, q.sla, c)
			}
			d.Fallback = regions.Feasible(site, pool, q.sla) == 0
		case regions.PolicyCPlusWarm:
			d = regions.DecideCPlusWarm(site, pool, q.sla, c, o, &warm, tab.Period().From.Add(q.at))
		case regions.PolicyCCap:
			d = regions.DecideCCap(site, pool, q.sla, c, &cs)
		default:
			d = regions.Decide(p, site, pool, q.sla, c, o)
		}
		sum += c[d.Region]
		a.n++
		a.share[d.Region]++
		l, _ := site.P95(d.Region)
		if l > q.sla {
			a.viol++
		}
		if cfg.LatencyModel == LatencySampled && l*math.Exp(cfg.LatencySigma*(q.z-z95)) > q.sla {
			a.sviol++
		}
		if d.Fallback {
			a.fall++
		}
		if d.Spilled {
			a.spill++
		}
	}
	a.runMeans = append(a.runMeans, sum/float64(len(reqs)))
}

// exactMean is the expectation of a stateless policy's carbon over every
// hour of the period for one SLA, or the mix-weighted sum for mixed.
func exactMean(cfg *Config, tab *regions.CarbonTable, pool regions.RegionSet, p regions.Policy, cl class) float64 {
	one := func(sla float64) float64 {
		var s float64
		for h := range tab.Hours() {
			c := tab.Hour(h)
			s += c[regions.Decide(p, cfg.Site, pool, sla, c, cfg.Options).Region]
		}
		return s / float64(tab.Hours())
	}
	if cl.sla != 0 {
		return one(cl.sla)
	}
	var s float64
	for k, sla := range cfg.SLAs {
		s += cfg.Mix[k] * one(sla)
	}
	return s
}

func makeRows(cfg *Config, tab *regions.CarbonTable, poolSize int, pool regions.RegionSet, cl class, policies []regions.Policy, acc []accum) ([]Row, error) {
	rows := make([]Row, len(policies))
	var base *Row
	for k, p := range policies {
		a := &acc[k]
		sum := stats.Summarize(a.runMeans)
		r := Row{Pool: poolSize, Policy: p.String(), SLAms: cl.sla, Class: cl.name, Mean: sum.Mean, Std: sum.Std, StdErr: sum.StdErr,
			ViolationPct: stats.Pct(a.viol, a.n), FallbackPct: stats.Pct(a.fall, a.n), SpillPct: stats.Pct(a.spill, a.n),
			RouteShare: map[string]float64{}, runMeans: a.runMeans}
		if p != regions.PolicyCPlusWarm && p != regions.PolicyCCap {
			e := exactMean(cfg, tab, pool, p, cl)
			ok := math.Abs(r.Mean-e) <= 3*r.StdErr+1e-9*math.Abs(e)
			r.ExactMean, r.ExactWithin3SE = &e, &ok
		}
		if cfg.LatencyModel == LatencySampled {
			v := stats.Pct(a.sviol, a.n)
			r.SampledViolationPct = &v
		}
		for _, i := range pool.Indices() {
			reg, _ := regions.RegionAt(i)
			r.RouteShare[reg.ID] = float64(a.share[i]) / float64(a.n)
		}
		rows[k] = r
		if p == regions.PolicyA {
			base = &rows[k]
		}
	}
	if base == nil {
		return nil, errors.New("eval carbon: policy A missing (the baseline)")
	}
	for k := range rows {
		r := &rows[k]
		r.SavingPct = stats.SavingPct(base.Mean, r.Mean)
		if r.ExactMean != nil && base.ExactMean != nil {
			s := stats.SavingPct(*base.ExactMean, *r.ExactMean)
			r.ExactSavingPct = &s
		}
		r.RunSavingPct = make([]float64, len(r.runMeans))
		for i := range r.runMeans {
			r.RunSavingPct[i] = stats.SavingPct(base.runMeans[i], r.runMeans[i])
		}
		if r.Policy == "A" {
			continue
		}
		mw, err := stats.MannWhitneyU(r.runMeans, base.runMeans)
		if err != nil {
			return nil, fmt.Errorf("eval carbon: %w", err)
		}
		p := mw.P
		r.PValueVsA = &p
	}
	return rows, nil
}

func scaling(res *Result, classes []class) []ScalingRow {
	var out []ScalingRow
	for _, cl := range classes {
		a, ok5 := res.Find(5, "C", cl.name)
		b, ok12 := res.Find(12, "C", cl.name)
		if !ok5 || !ok12 {
			continue
		}
		out = append(out, ScalingRow{Class: cl.name, SLAms: cl.sla, Saving5Pct: a.SavingPct, Saving12Pct: b.SavingPct})
	}
	return out
}

func decisionTime(samples []float64) DecisionTime {
	dt := DecisionTime{Samples: len(samples),
		Method: "wall time of each policy-C decision (DecideC) in the mixed runs, two clock reads around one call; includes the clock overhead"}
	if len(samples) >= MaxTimingSamples {
		dt.Method += fmt.Sprintf("; the first %d decisions", MaxTimingSamples)
	}
	if len(samples) == 0 {
		return dt
	}
	sort.Float64s(samples)
	dt.P50ns = stats.QuantileSorted(samples, 0.5)
	dt.P99ns = stats.QuantileSorted(samples, 0.99)
	clock := make([]float64, 10000)
	for i := range clock {
		t0 := time.Now()
		clock[i] = float64(time.Since(t0))
	}
	dt.ClockNs = stats.Quantile(clock, 0.5)
	return dt
}

func zones(tab *regions.CarbonTable, set regions.RegionSet) []ZoneRow {
	paper := Paper().ZoneJan2025
	var out []ZoneRow
	for _, i := range set.Indices() {
		reg, _ := regions.RegionAt(i)
		z := ZoneRow{Region: reg.ID, City: reg.City, Zone: reg.Zone, Min: math.Inf(1), Max: math.Inf(-1), Paper: paper[reg.ID]}
		for h := range tab.Hours() {
			v := tab.Hour(h)[i]
			z.Mean += v
			z.Min, z.Max = math.Min(z.Min, v), math.Max(z.Max, v)
		}
		z.Mean /= float64(tab.Hours())
		out = append(out, z)
	}
	return out
}

func notes(cfg *Config, res *Result) []string {
	n := []string{
		"Carbon source: " + res.CarbonSource + "; signal: " + res.Signal + ".",
		"Figures labelled 'paper' are the paper's (Electricity Maps, January 2025), quoted for comparison; ours are computed.",
		"std is the standard deviation of the per-run means across runs; exact is the expectation over every hour of the period (no sampling).",
		"p-value: two-sided Mann–Whitney U of the per-run means, policy vs A (exact distribution when there are no ties).",
		fmt.Sprintf("C+ uses Eq. 4 as written, L_eff = L + %.2g·T_cold; regions without a first-invocation latency are handled as cold-missing=%s.", cfg.Options.Alpha, cfg.Options.ColdMissing),
		fmt.Sprintf("C+warm: cold penalty only for regions without a request in the last %s of the run; C-cap: each region takes at most ceil(%.2g × requests) of a run's requests.", cfg.Options.KeepAlive, cfg.CapShare),
	}
	for _, r := range res.Rows {
		if r.ExactWithin3SE != nil && !*r.ExactWithin3SE {
			n = append(n, fmt.Sprintf("WARNING: pool %d %s %s: sampled mean %.2f and exact %.2f differ by more than 3 standard errors (%.2f).", r.Pool, r.Policy, r.Class, r.Mean, *r.ExactMean, r.StdErr))
		}
	}
	if cfg.LatencyModel == LatencySampled {
		n = append(n, fmt.Sprintf("Sampled latency: each request's RTT to region r is log-normal with P95 equal to the profile's P95 and σ = %.2g (median = P95·exp(−1.645σ)); an assumption, since the profile gives one quantile.", cfg.LatencySigma))
	}
	return n
}
