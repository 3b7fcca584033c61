// Package stability is the year-long evaluation of routing stability
// (`p4ctl eval stability`): over every hour of a year of carbon data, for
// the client sites of a controller configuration, it measures per policy
// and hysteresis setting (regions.Hysteresis, docs/ARCHITECTURE.md
// decision 42) the carbon saving against the nearest region (policy A),
// how often each SLA class's chosen region changes, the share of requests
// sent to a region that received none of their class in the hour before
// (a cold-start proxy), SLA violations under sampled latencies, and the
// switch writes the ranking updates cost; a sweep of min_gain × min_hold
// (and of the horizon) gives the saving-vs-changes Pareto front.
//
// Everything is computed from the carbon data: no figure is typed in. The
// paper's figures appear beside ours, labelled, and are never used.
package stability

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/p4ctl/p4ctl/pkg/regions"
	"github.com/p4ctl/p4ctl/pkg/stats"
)

// z95 is the standard normal 95th percentile.
const z95 = 1.6448536269514722

// Config describes one evaluation. Source, Period and Sites are required;
// the rest have defaults (Defaults).
type Config struct {
	// Source is the carbon data; Signal says what its numbers are.
	Source regions.CarbonSource
	Signal regions.Signal
	// Period is the hours evaluated (a year: 8760 hours for 2022).
	Period regions.Period
	// Sites are the client sites; every one needs a latency to every
	// region of Pool.
	Sites []*regions.Site
	// Pool is the regions requests may go to (default: the 12-region
	// catalog).
	Pool regions.RegionSet
	// SLAs and Mix are the SLA classes (ms) and their traffic shares
	// (default: the paper's 300/500/800/1000/3000 ms at 20/30/20/20/10 %).
	SLAs []float64
	Mix  []float64
	// ClassNames name the classes in reports (default: the SLA in ms).
	ClassNames []string
	// Options are the policies' parameters (default regions.DefaultOptions).
	Options regions.Options
	// Policies are evaluated without hysteresis and, those that rank by
	// carbon (regions.Applies), with Hysteresis (default A, B, C, C+, D).
	Policies []regions.Policy
	// Hysteresis is the setting evaluated for every policy and checked
	// against the acceptance aim (default regions.DefaultHysteresis).
	Hysteresis regions.Hysteresis
	// SweepGains × SweepHolds are swept for policy C at Hysteresis's
	// horizon, and SweepHorizons at its gain and hold (defaults 0, 2, 5,
	// 10, 20 % × 0, 3, 6, 12, 24 h; horizons 1, 3, 6 h).
	SweepGains    []regions.Gain
	SweepHolds    []int
	SweepHorizons []int
	// RequestsPerHour is the number of requests each site sends per hour,
	// sampled for the violation rate (default 12).
	RequestsPerHour int
	// LatencySigma is σ of the log-normal RTT (default 0.2).
	LatencySigma float64
	// Seed drives the sampled requests (classes and latencies) and
	// nothing else.
	Seed uint64
	// Progress, if set, is called after each setting with (done, total).
	Progress func(done, total int)
}

// MaxSampledRequests bounds hours × sites × RequestsPerHour: every sampled
// request is drawn before the settings are evaluated and held (8 bytes
// each, so about 1.6 GB at the bound) for all of them to see the same ones.
// A year of the two example sites at 10 000 requests per hour is 175 M.
const MaxSampledRequests = 200_000_000

// DefaultSweepGains is the default sweep of min_gain (relative, %).
func DefaultSweepGains() []regions.Gain {
	return []regions.Gain{{Value: 0, Relative: true}, {Value: 2, Relative: true}, {Value: 5, Relative: true}, {Value: 10, Relative: true}, {Value: 20, Relative: true}}
}

// DefaultSweepHolds is the default sweep of min_hold, hours.
func DefaultSweepHolds() []int { return []int{0, 3, 6, 12, 24} }

// DefaultSweepHorizons is the default sweep of the horizon, hours.
func DefaultSweepHorizons() []int { return []int{1, 3, 6} }

func (c *Config) defaults() error {
	switch {
	case c.Source == nil:
		return errors.New("eval stability: no carbon source")
	case c.Period.Hours() < 2:
		return fmt.Errorf("eval stability: period %s: want at least 2 hours", c.Period)
	case len(c.Sites) == 0:
		return errors.New("eval stability: no client sites")
	}
	if c.Pool == 0 {
		c.Pool = regions.Pool12
	}
	if len(c.SLAs) == 0 {
		c.SLAs = []float64{300, 500, 800, 1000, 3000}
		if len(c.Mix) == 0 {
			c.Mix = []float64{0.2, 0.3, 0.2, 0.2, 0.1}
		}
	}
	if len(c.ClassNames) == 0 {
		for _, s := range c.SLAs {
			c.ClassNames = append(c.ClassNames, fmt.Sprintf("%g", s))
		}
	}
	if c.Options == (regions.Options{}) {
		c.Options = regions.DefaultOptions()
	}
	if len(c.Policies) == 0 {
		c.Policies = []regions.Policy{regions.PolicyA, regions.PolicyB, regions.PolicyC, regions.PolicyCPlus, regions.PolicyD}
	}
	if c.Hysteresis == (regions.Hysteresis{}) {
		c.Hysteresis = regions.DefaultHysteresis()
	}
	if c.SweepGains == nil {
		c.SweepGains = DefaultSweepGains()
	}
	if c.SweepHolds == nil {
		c.SweepHolds = DefaultSweepHolds()
	}
	if c.SweepHorizons == nil {
		c.SweepHorizons = DefaultSweepHorizons()
	}
	if c.RequestsPerHour == 0 {
		c.RequestsPerHour = 12
	}
	if c.LatencySigma == 0 {
		c.LatencySigma = 0.2
	}
	switch {
	case len(c.Mix) != len(c.SLAs) || len(c.ClassNames) != len(c.SLAs):
		return fmt.Errorf("eval stability: %d SLA classes, %d shares, %d names", len(c.SLAs), len(c.Mix), len(c.ClassNames))
	case c.RequestsPerHour < 1 || c.RequestsPerHour > 10000:
		return fmt.Errorf("eval stability: %d requests per hour: want 1..10000", c.RequestsPerHour)
	case c.Period.Hours()*len(c.Sites)*c.RequestsPerHour > MaxSampledRequests:
		return fmt.Errorf("eval stability: %d hours × %d sites × %d requests per hour = %d sampled requests: at most %d (they are held in memory)",
			c.Period.Hours(), len(c.Sites), c.RequestsPerHour, c.Period.Hours()*len(c.Sites)*c.RequestsPerHour, MaxSampledRequests)
	case !(c.LatencySigma > 0 && c.LatencySigma < 3):
		return fmt.Errorf("eval stability: latency sigma %v: want 0 < sigma < 3", c.LatencySigma)
	case !slices.Contains(c.Policies, regions.PolicyA):
		return errors.New("eval stability: policy A (the baseline) must be evaluated")
	}
	var sum float64
	for k, w := range c.Mix {
		if !(w >= 0) || !(c.SLAs[k] > 0) {
			return fmt.Errorf("eval stability: class %s: share %v, SLA %v ms", c.ClassNames[k], w, c.SLAs[k])
		}
		sum += w
	}
	if math.Abs(sum-1) > 1e-9 {
		return fmt.Errorf("eval stability: shares sum to %v, want 1", sum)
	}
	for _, p := range c.Policies {
		if p == regions.PolicyCPlusWarm || p == regions.PolicyCCap {
			return fmt.Errorf("eval stability: policy %s is stateful per request; evaluate it with p4ctl eval carbon", p)
		}
	}
	for _, s := range c.Sites {
		if c.Pool&^s.Regions() != 0 {
			return fmt.Errorf("eval stability: site %s has no latency for %s", s.Name(), c.Pool&^s.Regions())
		}
	}
	if err := c.Hysteresis.Validate(); err != nil {
		return fmt.Errorf("eval stability: %w", err)
	}
	for _, g := range c.SweepGains {
		if err := (regions.Hysteresis{MinGain: g, Horizon: 1}).Validate(); err != nil {
			return fmt.Errorf("eval stability: sweep: %w", err)
		}
	}
	for _, h := range c.SweepHolds {
		if err := (regions.Hysteresis{MinHold: h, Horizon: 1}).Validate(); err != nil {
			return fmt.Errorf("eval stability: sweep: %w", err)
		}
	}
	for _, h := range c.SweepHorizons {
		if err := (regions.Hysteresis{Horizon: h}).Validate(); err != nil {
			return fmt.Errorf("eval stability: sweep: %w", err)
		}
	}
	return c.Options.Validate()
}

// Setting names of Row.Setting.
const (
	SettingHourly     = "hourly"     // the ranking of each hour's carbon alone (pure hourly policy)
	SettingHysteresis = "hysteresis" // Config.Hysteresis
)

// Row is one (policy, setting) over all sites and classes: the documented
// JSON interface.
type Row struct {
	Policy  string `json:"policy"`
	Setting string `json:"setting"` // hourly or hysteresis
	// Hysteresis is the setting's parameters (null when hourly).
	Hysteresis *regions.Hysteresis `json:"hysteresis"`
	// MeanGCO2 is the mean carbon intensity of the chosen region per
	// request (classes weighted by their shares, sites alike).
	MeanGCO2 float64 `json:"mean_gco2_per_kwh"`
	// SavingPct is (A − this)/A · 100 on those means, all sites;
	// SiteSavingPct the same per site.
	SavingPct     float64            `json:"saving_pct"`
	SiteSavingPct map[string]float64 `json:"site_saving_pct"`
	// ChangesPerDay is how many times per day the chosen region of a
	// (site, SLA class) changes, summed over sites and classes;
	// SiteChangesPerDay the same per site.
	ChangesPerDay     float64            `json:"changes_per_day"`
	SiteChangesPerDay map[string]float64 `json:"site_changes_per_day"`
	// ColdSharePct is the share of requests routed to a region that
	// received no request of their class (from any site) in the hour
	// before: the cold-start proxy.
	ColdSharePct float64 `json:"cold_share_pct"`
	// SampledViolationPct is the share of the sampled requests whose RTT
	// exceeds their SLA; ExactViolationPct its expectation.
	SampledViolationPct float64 `json:"sampled_violation_pct"`
	ExactViolationPct   float64 `json:"exact_violation_pct"`
	// RankingUpdatesPerDay counts the hours per day the switch's
	// carbon_rank changes; WritesPerDay the P4Runtime writes they cost
	// (2·entries+1 each: decision 6).
	RankingUpdatesPerDay float64 `json:"ranking_updates_per_day"`
	WritesPerDay         float64 `json:"writes_per_day"`
}

// ClassRow is one (policy, setting, site, class).
type ClassRow struct {
	Policy              string             `json:"policy"`
	Setting             string             `json:"setting"`
	Site                string             `json:"site"`
	Class               string             `json:"class"`
	SLAms               float64            `json:"sla_ms"`
	MeanGCO2            float64            `json:"mean_gco2_per_kwh"`
	SavingPct           float64            `json:"saving_pct"`
	Changes             int                `json:"changes"`
	ChangesPerDay       float64            `json:"changes_per_day"`
	ColdSharePct        float64            `json:"cold_share_pct"`
	SampledViolationPct float64            `json:"sampled_violation_pct"`
	ExactViolationPct   float64            `json:"exact_violation_pct"`
	FallbackPct         float64            `json:"fallback_pct"`
	RouteShare          map[string]float64 `json:"route_share"`
}

// SweepPoint is one hysteresis setting of policy C's sweep.
type SweepPoint struct {
	Hysteresis           regions.Hysteresis `json:"hysteresis"`
	SavingPct            float64            `json:"saving_pct"`
	ChangesPerDay        float64            `json:"changes_per_day"`
	ColdSharePct         float64            `json:"cold_share_pct"`
	SampledViolationPct  float64            `json:"sampled_violation_pct"`
	RankingUpdatesPerDay float64            `json:"ranking_updates_per_day"`
	// Pareto marks the points no other point (nor hourly C) beats on
	// both saving and changes.
	Pareto bool `json:"pareto"`
	// Horizon marks the points of the horizon sweep (at the evaluated
	// setting's gain and hold); the others are min_gain × min_hold.
	Horizon bool `json:"horizon_sweep,omitempty"`
	// Site values, by site name.
	SiteSavingPct     map[string]float64 `json:"site_saving_pct"`
	SiteChangesPerDay map[string]float64 `json:"site_changes_per_day"`
}

// Acceptance compares the evaluated hysteresis with hourly C: the aim is
// at least 50 % fewer changes for at most 1 percentage point of saving.
type Acceptance struct {
	Hysteresis          regions.Hysteresis `json:"hysteresis"`
	HourlyChangesPerDay float64            `json:"hourly_changes_per_day"`
	ChangesPerDay       float64            `json:"changes_per_day"`
	ChangeReductionPct  float64            `json:"change_reduction_pct"`
	HourlySavingPct     float64            `json:"hourly_saving_pct"`
	SavingPct           float64            `json:"saving_pct"`
	SavingLossPP        float64            `json:"saving_loss_pp"`
	// Met says whether both aims hold on these data.
	Met bool `json:"met"`
	// Best is the sweep point with the largest saving among those with at
	// least 50 % fewer changes than hourly C (null if none): what the
	// data allow.
	Best *SweepPoint `json:"best_in_sweep"`
}

// Result is the evaluation's output.
type Result struct {
	CarbonSource string         `json:"carbon_source"`
	Signal       string         `json:"signal"`      // e.g. "average (lifecycle)"
	SignalType   string         `json:"signal_type"` // average or marginal
	Period       regions.Period `json:"period"`
	Hours        int            `json:"hours"`
	Days         float64        `json:"days"`
	Sites        []string       `json:"sites"`
	Pool         []string       `json:"pool"`
	SLAs         []float64      `json:"sla_classes_ms"`
	Classes      []string       `json:"classes"`
	Mix          []float64      `json:"mix"`
	Options      OptionsJSON    `json:"options"`
	// Hysteresis is the setting evaluated for every policy.
	Hysteresis      regions.Hysteresis `json:"hysteresis"`
	LatencyModel    string             `json:"latency_model"`
	RequestsPerHour int                `json:"requests_per_site_and_hour"`
	Seed            uint64             `json:"seed"`
	Rows            []Row              `json:"rows"`
	ClassRows       []ClassRow         `json:"class_rows"`
	Sweep           []SweepPoint       `json:"sweep"`
	Acceptance      Acceptance         `json:"acceptance"`
	Paper           PaperFigures       `json:"paper"`
	Notes           []string           `json:"notes"`
	Plots           []string           `json:"plots,omitempty"`
}

// OptionsJSON are the policy parameters as reported.
type OptionsJSON struct {
	Alpha       float64 `json:"alpha"`
	W           float64 `json:"w"`
	ColdMissing string  `json:"cold_missing"`
}

// PaperFigures are the reference paper's numbers that bear on this
// evaluation, as quoted in the design brief; printed beside ours,
// labelled, never used in computation. The paper reports no
// region-change, cold-start or hysteresis figures.
type PaperFigures struct {
	Data             string  `json:"data"`
	MixedSaving12Pct float64 `json:"mixed_saving_pool12_pct"` // C vs A, Mumbai, 12 regions, January 2025
	ViolationPct     float64 `json:"violation_pct"`           // SLA violations of C (P95)
	Note             string  `json:"note"`
}

// Paper returns the paper's figures.
func Paper() PaperFigures {
	return PaperFigures{
		Data:             "Electricity Maps hourly data, January 2025 (not publicly available); Mumbai client",
		MixedSaving12Pct: 47.5,
		ViolationPct:     0,
		Note:             "the paper evaluates one month from one site and reports no region changes, cold starts or hysteresis",
	}
}

// Find returns the row of (policy, setting).
func (r *Result) Find(policy, setting string) (Row, bool) {
	for _, row := range r.Rows {
		if row.Policy == policy && row.Setting == setting {
			return row, true
		}
	}
	return Row{}, false
}

// FindClass returns the class row of (policy, setting, site, class).
func (r *Result) FindClass(policy, setting, site, class string) (ClassRow, bool) {
	for _, row := range r.ClassRows {
		if row.Policy == policy && row.Setting == setting && row.Site == site && row.Class == class {
			return row, true
		}
	}
	return ClassRow{}, false
}

// sample is one sampled request: its class and standard normal.
type sample struct {
	class uint8
	z     float32
}

// evaluator holds what every setting shares.
type evaluator struct {
	cfg     *Config
	tab     *regions.CarbonTable
	nearest []regions.Index
	cand    map[regions.Policy][]regions.RegionSet // [site*K+k]
	reqs    []sample                               // hour-major: (h*S+s)*N+i
	scores  map[int][]regions.HourCarbon           // horizon → per hour
	R       int
}

// outcome accumulates one setting.
type outcome struct {
	sum, base  [][]float64 // [site][class] Σ over hours of the chosen / nearest region's carbon
	changes    [][]int
	cold       [][]int
	fall       [][]int
	pviol      [][]float64 // Σ over hours of the violation probability
	sviol, sn  [][]int
	share      [][][regions.MaxRegions]int
	updates    int
	writes     int
	hours      int
	hysteresis *regions.Hysteresis
}

func newOutcome(S, K int) *outcome {
	o := &outcome{}
	mk := func() [][]float64 {
		x := make([][]float64, S)
		for i := range x {
			x[i] = make([]float64, K)
		}
		return x
	}
	mki := func() [][]int {
		x := make([][]int, S)
		for i := range x {
			x[i] = make([]int, K)
		}
		return x
	}
	o.sum, o.base, o.pviol = mk(), mk(), mk()
	o.changes, o.cold, o.fall, o.sviol, o.sn = mki(), mki(), mki(), mki(), mki()
	o.share = make([][][regions.MaxRegions]int, S)
	for i := range o.share {
		o.share[i] = make([][regions.MaxRegions]int, K)
	}
	return o
}

// Run executes the evaluation.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	tab, err := regions.NewCarbonTable(cfg.Source, cfg.Pool, cfg.Period)
	if err != nil {
		return nil, fmt.Errorf("eval stability: %w", err)
	}
	S, K := len(cfg.Sites), len(cfg.SLAs)
	ev := &evaluator{cfg: &cfg, tab: tab, cand: map[regions.Policy][]regions.RegionSet{}, scores: map[int][]regions.HourCarbon{}, R: cfg.Pool.Len()}
	for _, s := range cfg.Sites {
		ev.nearest = append(ev.nearest, regions.Nearest(s, cfg.Pool))
	}
	for _, p := range cfg.Policies {
		c := make([]regions.RegionSet, S*K)
		for si, s := range cfg.Sites {
			for k, sla := range cfg.SLAs {
				c[si*K+k] = regions.Candidates(p, s, cfg.Pool, sla, cfg.Options)
			}
		}
		ev.cand[p] = c
	}
	if err := ev.sampleRequests(ctx); err != nil {
		return nil, fmt.Errorf("eval stability: %w", err)
	}

	type job struct {
		p     regions.Policy
		h     *regions.Hysteresis
		sweep int // -1: a policy row; else index into sweep
	}
	var jobs []job
	for _, p := range cfg.Policies {
		jobs = append(jobs, job{p, nil, -1})
		if regions.Applies(p) {
			h := cfg.Hysteresis
			jobs = append(jobs, job{p, &h, -1})
		}
	}
	var sweep []regions.Hysteresis
	var horizonSweep []bool
	for _, g := range cfg.SweepGains {
		for _, hold := range cfg.SweepHolds {
			sweep = append(sweep, regions.Hysteresis{MinGain: g, MinHold: hold, Horizon: cfg.Hysteresis.Horizon})
			horizonSweep = append(horizonSweep, false)
		}
	}
	for _, hz := range cfg.SweepHorizons {
		h := cfg.Hysteresis
		h.Horizon = hz
		if !slices.Contains(sweep, h) {
			sweep = append(sweep, h)
			horizonSweep = append(horizonSweep, true)
		}
	}
	for i := range sweep {
		jobs = append(jobs, job{regions.PolicyC, &sweep[i], i})
	}
	outs := make([]*outcome, len(jobs))
	for i, j := range jobs {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("eval stability: %w", err)
		}
		o, err := ev.simulate(ctx, j.p, j.h)
		if err != nil {
			return nil, err
		}
		outs[i] = o
		if cfg.Progress != nil {
			cfg.Progress(i+1, len(jobs))
		}
	}

	res := &Result{CarbonSource: cfg.Source.Describe(), Signal: cfg.Signal.Describe(), SignalType: cfg.Signal.Type(),
		Period: cfg.Period, Hours: tab.Hours(), Days: float64(tab.Hours()) / 24,
		SLAs: cfg.SLAs, Classes: cfg.ClassNames, Mix: cfg.Mix, Hysteresis: cfg.Hysteresis,
		Options:      OptionsJSON{Alpha: cfg.Options.Alpha, W: cfg.Options.W, ColdMissing: cfg.Options.ColdMissing.String()},
		LatencyModel: latencyModel(cfg.LatencySigma), RequestsPerHour: cfg.RequestsPerHour, Seed: cfg.Seed, Paper: Paper()}
	for _, s := range cfg.Sites {
		res.Sites = append(res.Sites, s.Name())
	}
	for _, r := range cfg.Pool.Indices() {
		reg, _ := regions.RegionAt(r)
		res.Pool = append(res.Pool, reg.ID)
	}
	var baseline *outcome
	for i, j := range jobs {
		if j.p == regions.PolicyA && j.h == nil {
			baseline = outs[i]
		}
	}
	for i, j := range jobs {
		if j.sweep >= 0 {
			continue
		}
		row, classes := ev.rows(j.p, outs[i], baseline)
		res.Rows = append(res.Rows, row)
		res.ClassRows = append(res.ClassRows, classes...)
	}
	for i, j := range jobs {
		if j.sweep < 0 {
			continue
		}
		row, _ := ev.rows(j.p, outs[i], baseline)
		res.Sweep = append(res.Sweep, SweepPoint{Hysteresis: *j.h, SavingPct: row.SavingPct, ChangesPerDay: row.ChangesPerDay,
			ColdSharePct: row.ColdSharePct, SampledViolationPct: row.SampledViolationPct, RankingUpdatesPerDay: row.RankingUpdatesPerDay,
			Horizon: horizonSweep[j.sweep], SiteSavingPct: row.SiteSavingPct, SiteChangesPerDay: row.SiteChangesPerDay})
	}
	hourly, _ := res.Find(regions.PolicyC.String(), SettingHourly)
	markPareto(res.Sweep, hourly)
	res.Acceptance = acceptance(res, hourly)
	res.Notes = notes(&cfg, res)
	return res, nil
}

func latencyModel(sigma float64) string {
	return fmt.Sprintf("log-normal RTT per request, P95 = the site's P95 to the region, σ = %.2g of ln(RTT) (median = P95·exp(−1.645σ)); an assumption, the profiles give one quantile", sigma)
}

// sampleRequests draws RequestsPerHour requests per site and hour: a class
// by the mix and a standard normal for the RTT. Every setting sees the
// same requests. Up to MaxSampledRequests take seconds: ctx is checked
// every 2¹⁶ requests, so Ctrl-C ends it at once.
func (ev *evaluator) sampleRequests(ctx context.Context) error {
	cfg := ev.cfg
	S, N := len(cfg.Sites), cfg.RequestsPerHour
	if err := ctx.Err(); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5ab1e))
	ev.reqs = make([]sample, ev.tab.Hours()*S*N)
	for i := range ev.reqs {
		if i&(1<<16-1) == 0 {
			if err := ctx.Err(); err != nil {
				ev.reqs = nil
				return err
			}
		}
		u, k := rng.Float64(), 0
		for k < len(cfg.Mix)-1 && u >= cfg.Mix[k] {
			u -= cfg.Mix[k]
			k++
		}
		ev.reqs[i] = sample{class: uint8(k), z: float32(rng.NormFloat64())}
	}
	return nil
}

// horizonScores returns the per-hour scores for a horizon (cached).
func (ev *evaluator) horizonScores(horizon int) []regions.HourCarbon {
	if sc, ok := ev.scores[horizon]; ok {
		return sc
	}
	sc := make([]regions.HourCarbon, ev.tab.Hours())
	for h := range sc {
		sc[h] = regions.HorizonMean(ev.tab, h, horizon)
	}
	ev.scores[horizon] = sc
	return sc
}

// simulate runs one (policy, hysteresis) setting over every hour.
func (ev *evaluator) simulate(ctx context.Context, p regions.Policy, h *regions.Hysteresis) (*outcome, error) {
	cfg, tab := ev.cfg, ev.tab
	S, K, N := len(cfg.Sites), len(cfg.SLAs), cfg.RequestsPerHour
	o := newOutcome(S, K)
	o.hysteresis, o.hours = h, tab.Hours()
	cand := ev.cand[p]
	var scores []regions.HourCarbon
	if h != nil {
		scores = ev.horizonScores(h.Horizon)
	}
	var st regions.RankState
	prev := make([]regions.Index, S*K)
	cur := make([]regions.Index, S*K)
	var prevRecv, recv []regions.RegionSet = make([]regions.RegionSet, K), make([]regions.RegionSet, K)
	var prevRank [][]regions.Index
	for hr := range tab.Hours() {
		if err := ctx.Err(); err != nil { // a year of sampled requests takes seconds
			return nil, fmt.Errorf("eval stability: %w", err)
		}
		c := tab.Hour(hr)
		var order []regions.Index
		var ranks [][]regions.Index // what carbon_rank holds: one shared ranking, or per site (D)
		if h != nil {
			var err error
			if st, err = h.Next(st, cfg.Period.From.Add(time.Duration(hr)*time.Hour), cfg.Pool, &scores[hr]); err != nil {
				return nil, fmt.Errorf("eval stability: %w", err)
			}
			order = st.Order()
			ranks = [][]regions.Index{order}
		} else {
			ranks = ev.hourlyRanking(p, c)
		}
		if prevRank != nil && !equalRanks(ranks, prevRank) {
			o.updates++
			entries := 0
			for _, r := range ranks {
				entries += len(r)
			}
			o.writes += 2*entries + 1
		}
		prevRank = ranks
		for k := range recv {
			recv[k] = 0
		}
		for si, s := range cfg.Sites {
			for k, sla := range cfg.SLAs {
				var d regions.Decision
				if h != nil {
					d = regions.Decision{Region: regions.NoRegion}
					set := cand[si*K+k]
					for _, r := range order {
						if set.Has(r) {
							d.Region = r
							break
						}
					}
					if d.Region == regions.NoRegion {
						d = regions.Decision{Region: ev.nearest[si], Fallback: true}
					}
				} else {
					d = regions.Decide(p, s, cfg.Pool, sla, c, cfg.Options)
				}
				r := d.Region
				cur[si*K+k] = r
				o.sum[si][k] += c[r]
				o.base[si][k] += c[ev.nearest[si]]
				o.share[si][k][r]++
				if d.Fallback {
					o.fall[si][k]++
				}
				if hr > 0 {
					if r != prev[si*K+k] {
						o.changes[si][k]++
					}
					if !prevRecv[k].Has(r) {
						o.cold[si][k]++
					}
				}
				if cfg.Mix[k] > 0 {
					recv[k] = recv[k].Add(r)
				}
				l, _ := s.P95(r)
				o.pviol[si][k] += violationProb(l, sla, cfg.LatencySigma)
			}
			// The sampled requests of this site and hour.
			base := (hr*S + si) * N
			for _, q := range ev.reqs[base : base+N] {
				k := int(q.class)
				l, _ := s.P95(cur[si*K+k])
				o.sn[si][k]++
				if l*math.Exp(cfg.LatencySigma*(float64(q.z)-z95)) > cfg.SLAs[k] {
					o.sviol[si][k]++
				}
			}
		}
		prev, cur = cur, prev
		prevRecv, recv = recv, prevRecv
	}
	return o, nil
}

// hourlyRanking is what the compiler installs in carbon_rank for policy p
// at an hour without hysteresis (ties aside): by index for A (it never
// changes), per site by D's score for D, else by carbon.
func (ev *evaluator) hourlyRanking(p regions.Policy, c *regions.HourCarbon) [][]regions.Index {
	cfg := ev.cfg
	switch p {
	case regions.PolicyA:
		return [][]regions.Index{cfg.Pool.Indices()}
	case regions.PolicyD:
		var out [][]regions.Index
		for _, s := range cfg.Sites {
			sc := regions.ScoresD(s, cfg.Pool, c, cfg.Options)
			r := regions.Rank(s, cfg.Pool&s.Regions(), &sc)
			if len(out) == 0 || !slices.Equal(out[0], r) {
				out = append(out, r) // a site with its own ranking adds R entries
			}
		}
		return out
	}
	return [][]regions.Index{regions.Rank(nil, cfg.Pool, c)}
}

func equalRanks(a, b [][]regions.Index) bool {
	return slices.EqualFunc(a, b, func(x, y []regions.Index) bool { return slices.Equal(x, y) })
}

// violationProb is P(RTT > sla) for a log-normal RTT with P95 p95 and σ.
func violationProb(p95, sla, sigma float64) float64 {
	x := z95 + math.Log(sla/p95)/sigma
	return 0.5 * math.Erfc(x/math.Sqrt2)
}

// rows summarizes an outcome as a Row and its ClassRows.
func (ev *evaluator) rows(p regions.Policy, o, baseline *outcome) (Row, []ClassRow) {
	cfg := ev.cfg
	S, K := len(cfg.Sites), len(cfg.SLAs)
	days := float64(o.hours) / 24
	setting := SettingHourly
	if o.hysteresis != nil {
		setting = SettingHysteresis
	}
	row := Row{Policy: p.String(), Setting: setting, Hysteresis: o.hysteresis,
		SiteSavingPct: map[string]float64{}, SiteChangesPerDay: map[string]float64{},
		RankingUpdatesPerDay: float64(o.updates) / days, WritesPerDay: float64(o.writes) / days}
	var classes []ClassRow
	var sum, base, cold, pviol float64
	var sviol, sn, changes int
	for si, s := range cfg.Sites {
		var ssum, sbase float64
		schanges := 0
		for k := range K {
			w := cfg.Mix[k]
			ssum += w * o.sum[si][k]
			sbase += w * baseline.sum[si][k]
			schanges += o.changes[si][k]
			cold += w * float64(o.cold[si][k]) / float64(o.hours-1)
			pviol += w * o.pviol[si][k] / float64(o.hours)
			sviol += o.sviol[si][k]
			sn += o.sn[si][k]
			cr := ClassRow{Policy: p.String(), Setting: setting, Site: s.Name(), Class: cfg.ClassNames[k], SLAms: cfg.SLAs[k],
				MeanGCO2:            o.sum[si][k] / float64(o.hours),
				SavingPct:           stats.SavingPct(baseline.sum[si][k], o.sum[si][k]),
				Changes:             o.changes[si][k],
				ChangesPerDay:       float64(o.changes[si][k]) / days,
				ColdSharePct:        100 * float64(o.cold[si][k]) / float64(o.hours-1),
				SampledViolationPct: stats.Pct(o.sviol[si][k], o.sn[si][k]),
				ExactViolationPct:   100 * o.pviol[si][k] / float64(o.hours),
				FallbackPct:         stats.Pct(o.fall[si][k], o.hours),
				RouteShare:          map[string]float64{}}
			for _, r := range cfg.Pool.Indices() {
				if n := o.share[si][k][r]; n > 0 {
					reg, _ := regions.RegionAt(r)
					cr.RouteShare[reg.ID] = float64(n) / float64(o.hours)
				}
			}
			classes = append(classes, cr)
		}
		row.SiteSavingPct[s.Name()] = stats.SavingPct(sbase, ssum)
		row.SiteChangesPerDay[s.Name()] = float64(schanges) / days
		sum += ssum
		base += sbase
		changes += schanges
	}
	row.MeanGCO2 = sum / float64(S*o.hours)
	row.SavingPct = stats.SavingPct(base, sum)
	row.ChangesPerDay = float64(changes) / days
	row.ColdSharePct = 100 * cold / float64(S)
	row.SampledViolationPct = stats.Pct(sviol, sn)
	row.ExactViolationPct = 100 * pviol / float64(S)
	return row, classes
}

// markPareto marks the sweep points that no other point, nor hourly C,
// dominates (at least as much saving and at most as many changes, one of
// them strictly).
func markPareto(pts []SweepPoint, hourly Row) {
	type xy struct{ save, chg float64 }
	all := []xy{{hourly.SavingPct, hourly.ChangesPerDay}}
	for _, p := range pts {
		all = append(all, xy{p.SavingPct, p.ChangesPerDay})
	}
	for i := range pts {
		me := all[i+1]
		pts[i].Pareto = true
		for j, o := range all {
			if j != i+1 && o.save >= me.save && o.chg <= me.chg && (o.save > me.save || o.chg < me.chg) {
				pts[i].Pareto = false
				break
			}
		}
	}
}

func acceptance(res *Result, hourly Row) Acceptance {
	a := Acceptance{Hysteresis: res.Hysteresis, HourlyChangesPerDay: hourly.ChangesPerDay, HourlySavingPct: hourly.SavingPct}
	if h, ok := res.Find(regions.PolicyC.String(), SettingHysteresis); ok {
		a.ChangesPerDay, a.SavingPct = h.ChangesPerDay, h.SavingPct
	}
	if hourly.ChangesPerDay > 0 {
		a.ChangeReductionPct = 100 * (1 - a.ChangesPerDay/hourly.ChangesPerDay)
	}
	a.SavingLossPP = hourly.SavingPct - a.SavingPct
	a.Met = a.ChangeReductionPct >= 50 && a.SavingLossPP <= 1
	for i, p := range res.Sweep {
		if hourly.ChangesPerDay > 0 && p.ChangesPerDay <= hourly.ChangesPerDay/2 && (a.Best == nil || p.SavingPct > a.Best.SavingPct) {
			a.Best = &res.Sweep[i]
		}
	}
	return a
}

func notes(cfg *Config, res *Result) []string {
	n := []string{
		"Carbon source: " + res.CarbonSource + "; signal: " + res.Signal + ".",
		fmt.Sprintf("Every hour of %s (%d hours), sites %v, pool of %d regions; saving = (A − policy)/A of the mean carbon intensity of the chosen region per request, classes weighted %v, sites alike.", res.Period, res.Hours, res.Sites, len(res.Pool), res.Mix),
		"hourly = each hour's carbon ranking (the policy as the paper defines it); hysteresis = " + res.Hysteresis.String() + " on the shared carbon_rank order (docs/ARCHITECTURE.md decision 42); D ranks by a per-site score and A ignores carbon, so they have no hysteresis row.",
		"A change is an hour whose chosen region of a (site, SLA class) differs from the hour before; changes per day are summed over sites and classes.",
		"Cold share: requests sent to a region that received none of their class (from any site) in the hour before, a proxy for cold starts (the keep-alive of serverless platforms is minutes, so every such request meets a cold instance).",
		fmt.Sprintf("Violations: %d requests per site and hour with classes drawn by the mix and RTTs from the latency model (%s); exact = their expectation.", cfg.RequestsPerHour, res.LatencyModel),
		fmt.Sprintf("Horizon > 1 h ranks by the mean of the next hours of the data itself: a perfect forecast (live sources use their forecast, pkg/controller); the routed carbon is always the hour's own. Sweep: policy C, min_gain %v × min_hold %v h at horizon %d h, and horizons %v h at the evaluated gain and hold.", gains(cfg.SweepGains), cfg.SweepHolds, cfg.Hysteresis.Horizon, cfg.SweepHorizons),
		"Writes per day: each ranking update installs a new carbon_rank generation, 2·entries + 1 writes (entries = R for a shared ranking; D adds R per site with its own).",
		"Figures labelled PAPER are the paper's (" + res.Paper.Data + "), quoted for comparison; " + res.Paper.Note + ".",
	}
	a := res.Acceptance
	verdict := "meets"
	if !a.Met {
		verdict = "does not meet"
	}
	n = append(n, fmt.Sprintf("Acceptance aim (≥ 50 %% fewer changes for ≤ 1 pp of saving): %s gives %.1f %% fewer changes (%.2f → %.2f per day) for %.2f pp of saving (%.2f → %.2f %%): it %s the aim on these data.",
		a.Hysteresis, a.ChangeReductionPct, a.HourlyChangesPerDay, a.ChangesPerDay, a.SavingLossPP, a.HourlySavingPct, a.SavingPct, verdict))
	return n
}

func gains(gs []regions.Gain) []string {
	out := make([]string, len(gs))
	for i, g := range gs {
		out[i] = g.String()
	}
	return out
}
