package serverless

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/p4ctl/p4ctl/pkg/stats"
	"github.com/p4ctl/p4ctl/research/sim/serverless/dist"
)

// ExperimentConfig is a grid of scenarios (distribution × λ × notification
// delay) run under several policies and seeds.
type ExperimentConfig struct {
	// Name is the experiment's name ("sweep", "notify", "bound").
	Name string `json:"name"`
	// Dists are distribution names as dist.New accepts them.
	Dists []string `json:"distributions"`
	// Lambdas are the Poisson arrival rates (req/s).
	Lambdas []float64 `json:"lambdas_rps"`
	// NotifyDelays are the delays (ms) with which the scheduler learns
	// that a pod is free.
	NotifyDelays []float64 `json:"notify_delays_ms"`
	// Policies are run on every scenario.
	Policies []Policy `json:"policies"`
	// Seeds is the number of runs per scenario and policy (CIs are across
	// seeds), with seeds BaseSeed, BaseSeed+1, ….
	Seeds    int    `json:"seeds"`
	BaseSeed uint64 `json:"base_seed"`
	// Requests per run, of which the first fraction Warmup is left out of
	// the metrics.
	Requests int     `json:"requests"`
	Warmup   float64 `json:"warmup"`
	// ChainMin and ChainMax bound the number of sequential stages of a
	// request (uniform).
	ChainMin int `json:"chain_min"`
	ChainMax int `json:"chain_max"`
	// EstimateNoise: see WorkloadSpec.
	EstimateNoise float64 `json:"estimate_noise"`
	// Scenario names the setting ("pathfinder": PathFinder's evaluated
	// system, DefaultExperiment's; "knative": KnativeExperiment's).
	Scenario string `json:"scenario,omitempty"`
	// Benchmark names the workload ("alu": single calls, PathFinder's ALU
	// microbenchmark; "chain": function chains).
	Benchmark string `json:"benchmark,omitempty"`
	// Pods fixes the pool size; 0 sizes it per distribution so that the
	// utilization at RefLambda is RhoMax.
	Pods int `json:"pods"`
	// ContainerConcurrency is the stages one pod runs at once (Knative's
	// containerConcurrency): 0 sizes it, when Pods is fixed, so that the
	// utilization at RefLambda is RhoMax; with Pods = 0 it defaults to 1.
	ContainerConcurrency int `json:"container_concurrency"`
	// ForwardDelay (ms) is the hop from the dispatcher to the pod that
	// every bound stage pays; with the notify delay it is the per-bind
	// round trip of a central queue.
	ForwardDelay float64 `json:"forward_delay_ms"`
	// TimeScale multiplies every execution time (0 or 1: the traces' own
	// scale): the same shapes with fewer concurrent invocations per req/s.
	TimeScale float64 `json:"time_scale,omitempty"`
	// ScaleToLoad gives each distribution the unit that puts the pool at
	// utilization RhoMax at RefLambda (a time scale per distribution,
	// applied after TimeScale): the evaluated load, whatever unit the
	// distribution's parameters were written in.
	ScaleToLoad bool    `json:"scale_to_load,omitempty"`
	RhoMax      float64 `json:"rho_max"`
	RefLambda   float64 `json:"ref_lambda_rps"` // req/s
	// MaxWaitMS caps PathFinder's per-class wait (PathFinder §4.3,
	// max-wait-ms; 0: no cap).
	MaxWaitMS float64 `json:"max_wait_ms,omitempty"`
	// WaitRule is how PathFinder's per-class wait is set: WaitExec (the
	// class's expected execution time) or WaitDerived (WaitBounds).
	WaitRule string `json:"wait_rule,omitempty"`
	// Delta is the bound derivation's tolerance (WaitBounds).
	Delta float64 `json:"delta"`
	// WaitBound < 0 derives the bounds (WaitBounds); >= 0 uses that bound
	// (ms) for every class.
	WaitBound float64 `json:"wait_bound_ms"`
	// Timeout (ms): a request slower than this end to end counts as a
	// timeout.
	Timeout float64 `json:"timeout_ms"`
	// Workers is the number of simulations run in parallel (0 =
	// GOMAXPROCS); it never changes results.
	Workers int `json:"-"`
	// CDFLambda keeps seed 0's per-request samples of the scenarios at this
	// λ for CDF plots (0 keeps none).
	CDFLambda float64 `json:"-"`
	// Progress, if set, is called after each finished job.
	Progress func(done, total int) `json:"-"`
}

// Wait rules (ExperimentConfig.WaitRule).
const (
	// WaitExec holds a stage of class k for E[S | k], capped at MaxWaitMS:
	// a stage binds in order of arrival plus expected execution time, so a
	// shorter stage arriving later binds before a longer one (PathFinder
	// §2.4 step 6, §3.1) and no stage waits beyond the cap (§4.3).
	WaitExec = "exec"
	// WaitDerived holds a stage for WaitBounds' derivation (capped too).
	WaitDerived = "derived"
)

// PathFinder's evaluated system (PathFinder §5.2–§5.4).
const (
	// PathFinderPods: 8 worker nodes, one function pod of one logical core
	// each (§5.2).
	PathFinderPods = 8
	// PathFinderMaxWaitMS is the example max-wait-ms of §4.3: no stage is
	// held longer.
	PathFinderMaxWaitMS = 100
	// PathFinderRhoAt20 is the pool's utilization at λ = 20 req/s, the
	// unit each distribution is given (ScaleToLoad): the text states no
	// load, only that every policy's tail rises with λ up to 20, so the
	// pool must carry 20 req/s; 0.9 was this simulator's reference load
	// before issue 25 and is kept, a priori, not chosen on results.
	PathFinderRhoAt20 = 0.9
)

// DefaultExperiment is PathFinder's evaluated system running the ALU
// microbenchmark: single calls (§5.4) on 8 one-core pods (§5.2), Poisson
// arrivals at λ = 10 … 20 req/s, the three execution-time distributions
// each in the unit that puts the pool at ρ = PathFinderRhoAt20 at 20 req/s,
// the four policies of §5.3, PathFinder's waits capped at 100 ms (§4.3),
// 10 seeds.
func DefaultExperiment() ExperimentConfig {
	return ExperimentConfig{
		Name:                 "sweep",
		Scenario:             "pathfinder",
		Benchmark:            "alu",
		Dists:                dist.Names(),
		Lambdas:              []float64{10, 12.5, 15, 17.5, 20},
		NotifyDelays:         []float64{0},
		Policies:             Policies(),
		Seeds:                10,
		BaseSeed:             1,
		Requests:             50000,
		Warmup:               0.1,
		ChainMin:             1,
		ChainMax:             1,
		EstimateNoise:        0.5,
		Pods:                 PathFinderPods,
		ContainerConcurrency: 1,
		ScaleToLoad:          true,
		RhoMax:               PathFinderRhoAt20,
		RefLambda:            20,
		MaxWaitMS:            PathFinderMaxWaitMS,
		WaitRule:             WaitExec,
		Delta:                0.01,
		WaitBound:            -1,
		Timeout:              300000,
		CDFLambda:            20,
	}
}

// ChainExperiment is DefaultExperiment on the function-chain benchmark:
// 1–3 sequential stages per request (the chain lengths of §5.4 come from
// CDFs the text does not give; uniform 1–3 is this simulator's assumption),
// each bound on its own.
func ChainExperiment() ExperimentConfig {
	c := DefaultExperiment()
	c.Benchmark = "chain"
	c.ChainMin, c.ChainMax = 1, 3
	return c
}

// NotifyExperiment varies the feedback delay with which late binding
// learns that a pod is idle (the pod's completion report, §4.2), at
// λ = 20: the cost of binding late.
func NotifyExperiment() ExperimentConfig {
	c := DefaultExperiment()
	c.Name = "notify"
	c.Lambdas = []float64{20}
	c.NotifyDelays = []float64{0, 1, 5, 20, 100}
	c.Policies = []Policy{LateBinding, EarlyExecTime, PathFinder}
	c.CDFLambda = 0
	return c
}

// Knative-shaped exploration (KnativeExperiment): a small test cluster's
// pool and the activator's per-bind round trip.
const (
	// KnativePods is the pool: a 4-node test cluster (kind or a small
	// managed cluster) running 4 pods of the function per node.
	KnativePods = 16
	// KnativeHopMS is one hop between the activator and a pod's
	// queue-proxy (ms): a bind costs the hop to the pod and, before the
	// slot can be reused from the activator's queue, the hop back that
	// reports it free.
	KnativeHopMS = 5
)

// KnativeExperiment is an exploration, not the reproduction: the
// distributions in their literal units (Zipf values as ms, the power-law
// scale as s, hundreds of concurrent invocations at 20 req/s) carried by
// 16 pods whose containerConcurrency is sized for ρ = 0.9 at 20 req/s, the
// slots of a pod not slowing each other (as if the work were I/O), chains
// of 1–3 stages and a 5 ms hop each way per bind.
func KnativeExperiment() ExperimentConfig {
	c := DefaultExperiment()
	c.Name = "knative"
	c.Scenario = "knative"
	c.Benchmark = "chain"
	c.ChainMin, c.ChainMax = 1, 3
	c.ScaleToLoad = false
	c.MaxWaitMS = 0
	c.WaitRule = WaitDerived
	c.Pods = KnativePods
	c.ContainerConcurrency = 0
	c.NotifyDelays = []float64{KnativeHopMS}
	c.ForwardDelay = KnativeHopMS
	return c
}

// Quick shrinks an experiment for tests and smoke runs.
func (c ExperimentConfig) Quick() ExperimentConfig {
	c.Seeds = 3
	c.Requests = 4000
	return c
}

// Size limits of an experiment. Memory grows with the stages of a run
// (Requests × ChainMax: the workload, every stage's state and, when the
// pool is overloaded, the queue of stages waiting, all of them at worst),
// with the pool (Pods × ContainerConcurrency slots: per-pod state and the
// idle-slot list) and with the grid (one result per run); these bound each.
const (
	// MaxSeeds is the most seeds per scenario.
	MaxSeeds = 1000
	// MaxRunStages bounds Requests × ChainMax, the stages one run may
	// generate (at most about StageBytes each, every one of them queued
	// when the pool cannot keep up: about 1.7 GB).
	MaxRunStages = 1 << 23
	// MaxPoolSlots bounds a pool's pods × containerConcurrency, given or
	// sized for RhoMax (a distribution's mean far above the pool a λ needs
	// would otherwise size hundreds of millions of pods).
	MaxPoolSlots = 1 << 20
	// MaxSlotsPerPod is the largest containerConcurrency.
	MaxSlotsPerPod = 1 << 16
	// MaxRuns bounds the grid: distributions × λ × seeds × notify delays ×
	// policies simulations, whose results are all kept.
	MaxRuns = 1000000
	// MinTimeScale and MaxTimeScale bound TimeScale (0 = 1).
	MinTimeScale, MaxTimeScale = 1e-6, 1e6
	// StageBytes is the most memory one stage of a run takes (workload,
	// run state, events, queue entries, the heap's headroom): what the
	// experiment budgets concurrent runs by.
	StageBytes = 200
	// SlotBytes is the most memory one pod slot takes (its pod's state
	// shared out, the idle-slot list).
	SlotBytes = 128
	// MemoryBudget is the memory the concurrent runs of an experiment may
	// hold at worst: fewer run at once than Workers asks for when their
	// stages and slots would exceed it, which never changes results.
	MemoryBudget = 2 << 30
)

// PoolSize is the pool a run of c gives distribution d (already scaled by
// TimeScale): Pods and ContainerConcurrency as given, the one that is 0
// sized so that the utilization at RefLambda is RhoMax. It fails when the
// pool would exceed MaxPoolSlots slots or a pod MaxSlotsPerPod.
func PoolSize(c ExperimentConfig, d dist.Distribution) (pods, slots int, err error) {
	meanChain := float64(c.ChainMin+c.ChainMax) / 2
	need := c.RefLambda * meanChain * d.Mean() / 1000 / c.RhoMax // busy slots at RhoMax
	p, s := float64(c.Pods), float64(c.ContainerConcurrency)
	switch {
	case c.Pods == 0:
		s = math.Max(1, s)
		p = math.Max(1, math.Ceil(need/s))
	case c.ContainerConcurrency == 0:
		s = math.Max(1, math.Ceil(need/p))
	}
	sized := "as given"
	if c.Pods == 0 || c.ContainerConcurrency == 0 {
		sized = fmt.Sprintf("sized for ρ = %g at %g req/s, mean %s", c.RhoMax, c.RefLambda, FormatMS(d.Mean()))
	}
	switch {
	case !(s <= MaxSlotsPerPod):
		return 0, 0, fmt.Errorf("%s: %.0f slots per pod (%s) is above %d", d.Name(), s, sized, MaxSlotsPerPod)
	case !(p*s <= MaxPoolSlots):
		return 0, 0, fmt.Errorf("%s: %.0f pods × %.0f slots (%s) is above the %d (2^20) slots a run may simulate", d.Name(), p, s, sized, MaxPoolSlots)
	}
	return int(p), int(s), nil
}

// Runs is the number of simulations the grid of c runs.
func (c ExperimentConfig) Runs() int {
	n := 1
	for _, k := range []int{len(c.Dists), len(c.Lambdas), c.Seeds, len(c.NotifyDelays), len(c.Policies)} {
		if k <= 0 {
			return 0
		}
		if n > MaxRuns/k+1 {
			return MaxRuns + 1
		}
		n *= k
	}
	return n
}

// Validate checks the configuration.
func (c ExperimentConfig) Validate() error {
	var errs []error
	scaleOK := c.TimeScale == 0 || c.TimeScale >= MinTimeScale && c.TimeScale <= MaxTimeScale
	if len(c.Dists) == 0 || len(c.Lambdas) == 0 || len(c.Policies) == 0 || len(c.NotifyDelays) == 0 {
		errs = append(errs, errors.New("need at least one distribution, λ, notify delay and policy"))
	}
	for _, name := range c.Dists {
		d, err := dist.New(name)
		if err == nil && scaleOK && c.TimeScale != 0 {
			d, err = dist.NewScaled(d, c.TimeScale)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if c.Pods >= 0 && c.Pods <= MaxPoolSlots && c.ContainerConcurrency >= 0 && c.ContainerConcurrency <= MaxSlotsPerPod &&
			c.RhoMax > 0 && c.RhoMax < 1 && c.RefLambda > 0 && c.ChainMin >= 1 && c.ChainMax >= c.ChainMin {
			if _, _, err := PoolSize(c, d); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for _, l := range c.Lambdas {
		if !(l > 0) || math.IsInf(l, 0) {
			errs = append(errs, fmt.Errorf("λ = %g req/s must be positive", l))
		}
	}
	for _, d := range c.NotifyDelays {
		if !(d >= 0) || math.IsInf(d, 0) {
			errs = append(errs, fmt.Errorf("notify delay %g ms must be >= 0", d))
		}
	}
	if c.Seeds < 1 || c.Seeds > MaxSeeds {
		errs = append(errs, fmt.Errorf("seeds = %d, need 1..%d", c.Seeds, MaxSeeds))
	}
	if n := c.Runs(); n > MaxRuns {
		errs = append(errs, fmt.Errorf("the grid (distributions × λ × seeds × notify delays × policies) has more than %d runs", MaxRuns))
	}
	if c.Requests > 0 && c.ChainMax > 0 && c.Requests > MaxRunStages/c.ChainMax {
		errs = append(errs, fmt.Errorf("requests %d × chains of up to %d stages is above the %d (2^23) stages a run may simulate", c.Requests, c.ChainMax, MaxRunStages))
	}
	if c.Pods > MaxPoolSlots {
		errs = append(errs, fmt.Errorf("pods = %d, need 0..%d", c.Pods, MaxPoolSlots))
	}
	if c.Pods < 0 || ((c.Pods == 0 || c.ContainerConcurrency == 0) && !(c.RhoMax > 0 && c.RhoMax < 1 && c.RefLambda > 0)) {
		errs = append(errs, fmt.Errorf("pods = %d, container concurrency %d: a pool to size needs 0 < rho-max < 1 and a positive reference λ", c.Pods, c.ContainerConcurrency))
	}
	if c.ContainerConcurrency < 0 || c.ContainerConcurrency > MaxSlotsPerPod {
		errs = append(errs, fmt.Errorf("container concurrency %d must be in 0..%d", c.ContainerConcurrency, MaxSlotsPerPod))
	}
	if !scaleOK {
		errs = append(errs, fmt.Errorf("time scale %g must be 0 (= 1) or in [%g, %g]", c.TimeScale, MinTimeScale, MaxTimeScale))
	}
	if !(c.ForwardDelay >= 0) || math.IsInf(c.ForwardDelay, 0) {
		errs = append(errs, fmt.Errorf("forward delay %g ms must be >= 0", c.ForwardDelay))
	}
	if c.WaitRule != "" && c.WaitRule != WaitExec && c.WaitRule != WaitDerived {
		errs = append(errs, fmt.Errorf("wait rule %q must be %s or %s", c.WaitRule, WaitExec, WaitDerived))
	}
	if !(c.MaxWaitMS >= 0) || math.IsInf(c.MaxWaitMS, 0) {
		errs = append(errs, fmt.Errorf("max wait %g ms must be >= 0", c.MaxWaitMS))
	}
	if c.ScaleToLoad && (c.Pods < 1 || c.ContainerConcurrency < 1) {
		errs = append(errs, fmt.Errorf("scaling to the load needs the pool given (pods %d, container concurrency %d)", c.Pods, c.ContainerConcurrency))
	}
	if !(c.Delta > 0 && c.Delta < 1) {
		errs = append(errs, fmt.Errorf("delta = %g must be in (0, 1)", c.Delta))
	}
	if math.IsNaN(c.WaitBound) || math.IsInf(c.WaitBound, 0) {
		errs = append(errs, fmt.Errorf("wait bound %g is not a number of ms", c.WaitBound))
	}
	if err := (WorkloadSpec{Dist: dist.Exponential{MeanMS: 1}, Lambda: 1, Requests: c.Requests,
		ChainMin: c.ChainMin, ChainMax: c.ChainMax, EstimateNoise: c.EstimateNoise}).Validate(); err != nil {
		errs = append(errs, err)
	}
	if !(c.Warmup >= 0 && c.Warmup < 1) || !(c.Timeout >= 0) {
		errs = append(errs, fmt.Errorf("warm-up %g must be in [0, 1) and timeout %g ms >= 0", c.Warmup, c.Timeout))
	}
	return errors.Join(errs...)
}

// DistInfo describes a distribution as the experiment used it.
type DistInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Scale is the factor applied to the distribution's values (TimeScale
	// and, with ScaleToLoad, the unit that gives the evaluated load).
	Scale   float64 `json:"scale"`
	MeanMS  float64 `json:"mean_ms"`
	P50MS   float64 `json:"p50_ms"`
	P99MS   float64 `json:"p99_ms"`
	Pods    int     `json:"pods"`
	Slots   int     `json:"container_concurrency"`
	Classes Classes `json:"classes"`
}

// BoundInfo is the derived PathFinder configuration at one (dist, λ).
type BoundInfo struct {
	Dist     string       `json:"distribution"`
	Lambda   float64      `json:"lambda_rps"`
	Rho      float64      `json:"rho"`
	BoundsMS []float64    `json:"wait_bounds_ms"`
	Switch   SwitchConfig `json:"switch"`
}

// Metrics summarises a scenario across seeds (mean, std, 95 % CI).
type Metrics struct {
	P99LatencyMS   stats.Summary `json:"p99_latency_ms"`
	P50LatencyMS   stats.Summary `json:"p50_latency_ms"`
	MeanLatencyMS  stats.Summary `json:"mean_latency_ms"`
	P99ResponseMS  stats.Summary `json:"p99_response_ms"`
	P50ResponseMS  stats.Summary `json:"p50_response_ms"`
	MeanResponseMS stats.Summary `json:"mean_response_ms"`
	OvertakeRate   stats.Summary `json:"overtake_rate"`
	ForcedRate     stats.Summary `json:"forced_rate"`
	MeanQueue      stats.Summary `json:"mean_queue"`
	MaxQueue       stats.Summary `json:"max_queue"`
	TimeoutRate    stats.Summary `json:"timeout_rate"`
	ThroughputRPS  stats.Summary `json:"throughput_rps"`
	Utilization    stats.Summary `json:"utilization"`
	BusyCoV        stats.Summary `json:"busy_cov"`
	// MaxHoldExcessMS is the largest hold beyond a class bound over all
	// seeds (<= 0: the bound was never exceeded).
	MaxHoldExcessMS float64 `json:"max_hold_excess_ms"`
}

// Scenario is one (dist, λ, notify delay, policy) cell.
type Scenario struct {
	Dist          string  `json:"distribution"`
	Lambda        float64 `json:"lambda_rps"`
	NotifyDelayMS float64 `json:"notify_delay_ms"`
	Policy        Policy  `json:"policy"`
	Pods          int     `json:"pods"`
	Slots         int     `json:"container_concurrency"`
	Rho           float64 `json:"rho"`
	Metrics       Metrics `json:"metrics"`
	latencies     []float64
	responses     []float64
}

// Samples returns seed 0's per-request latencies and response times (ms),
// kept only at ExperimentConfig.CDFLambda.
func (s *Scenario) Samples() (latencies, responses []float64) { return s.latencies, s.responses }

// RatioFloorMS is the floor applied to both P99s before taking a ratio: a
// P99 wait under 1 ms is indistinguishable from none at serverless scale
// (and would divide by zero).
const RatioFloorMS = 1.0

// Ratio is baseline P99 / PathFinder P99 ("× lower"), both floored at
// RatioFloorMS, computed per seed (paired: same requests) and summarised
// across seeds.
type Ratio struct {
	Dist          string        `json:"distribution"`
	Lambda        float64       `json:"lambda_rps"`
	NotifyDelayMS float64       `json:"notify_delay_ms"`
	Baseline      Policy        `json:"baseline"`
	Metric        string        `json:"metric"`
	Ratio         stats.Summary `json:"ratio"`
	// FlooredSeeds counts seeds where PathFinder's P99 was below the floor:
	// the true ratio is then at least the one shown (a lower bound).
	FlooredSeeds int `json:"pathfinder_floored_seeds"`
	// NoWait is set when both P99s were below the floor in every seed.
	NoWait bool `json:"no_wait"`
}

// PaperClaim is a figure reported by the PathFinder paper, shown beside ours.
type PaperClaim struct {
	Source   string  `json:"source"`
	Baseline Policy  `json:"baseline"`
	Low      float64 `json:"low"`
	High     float64 `json:"high"`
	Text     string  `json:"text"`
}

// PaperClaims are PathFinder's reported P99 improvements (not ours).
func PaperClaims() []PaperClaim {
	const src = "PathFinder paper (reported, not computed here)"
	const txt = "Azure, Zipf and power-law traces, Poisson λ = 10–20 req/s"
	return []PaperClaim{
		{src, EarlyBinding, 1.49, 2.75, "P99 1.49–2.75× lower than early binding; " + txt},
		{src, LateBinding, 2.10, 4.10, "P99 2.10–4.10× lower than late binding; " + txt},
	}
}

// ExperimentResult is everything an experiment computed.
type ExperimentResult struct {
	Config        ExperimentConfig `json:"config"`
	Distributions []DistInfo       `json:"distributions"`
	Bounds        []BoundInfo      `json:"bounds"`
	Scenarios     []*Scenario      `json:"scenarios"`
	Ratios        []Ratio          `json:"ratios"`
	// PaperRanges counts the ratios inside the paper's ranges
	// (PaperRanges of Ratios).
	PaperRanges []RatioRange `json:"paper_ranges"`
	Paper       []PaperClaim `json:"paper"`
	Plots       []string     `json:"plots,omitempty"`
}

type point struct {
	dist   int
	lambda float64
}

type setup struct {
	d       dist.Distribution
	classes Classes
	pods    int
	slots   int
}

// capacity is the number of stages the pool runs at once.
func (su setup) capacity() float64 { return float64(su.pods * su.slots) }

// RunExperiment runs the grid. Jobs (one per distribution, λ and seed; all
// notify delays and policies of a job share its workload) run on
// cfg.Workers goroutines (default GOMAXPROCS); results do not depend on the
// number of workers.
func RunExperiment(ctx context.Context, cfg ExperimentConfig) (*ExperimentResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("experiment %s: %w", cfg.Name, err)
	}
	res := &ExperimentResult{Config: cfg, Paper: PaperClaims()}
	meanChain := float64(cfg.ChainMin+cfg.ChainMax) / 2
	setups, bounds, err := plan(cfg, res)
	if err != nil {
		return nil, err
	}

	type job struct {
		dist   int
		lambda float64
		seed   int
	}
	var jobs []job
	for i := range cfg.Dists {
		for _, l := range cfg.Lambdas {
			for s := range cfg.Seeds {
				jobs = append(jobs, job{i, l, s})
			}
		}
	}
	np := len(cfg.Policies)
	results := make([][]RunResult, len(jobs)) // [job][delay*np + policy]
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, memoryWorkers(cfg, setups))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu       sync.Mutex
		firstErr error
		done     int
		wg       sync.WaitGroup
	)
	next := make(chan int)
	for range workers {
		wg.Go(func() {
			for ji := range next {
				j := jobs[ji]
				su := setups[j.dist]
				seed := cfg.BaseSeed + uint64(j.seed)
				out, err := runJob(ctx, cfg, su, j.lambda, seed, bounds[point{j.dist, j.lambda}], j.seed == 0 && j.lambda == cfg.CDFLambda)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("experiment %s: %s λ=%g seed %d: %w", cfg.Name, cfg.Dists[j.dist], j.lambda, seed, err)
					cancel()
				}
				results[ji] = out
				done++
				if cfg.Progress != nil {
					cfg.Progress(done, len(jobs))
				}
				mu.Unlock()
			}
		})
	}
feed:
	for ji := range jobs {
		select {
		case next <- ji:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("experiment %s: %w", cfg.Name, err)
	}

	// Aggregate per scenario, in (dist, λ, delay, policy) order.
	for i, name := range cfg.Dists {
		su := setups[i]
		for _, l := range cfg.Lambdas {
			var runs [][]RunResult // [seed][delay*np+policy]
			for ji, j := range jobs {
				if j.dist == i && j.lambda == l {
					runs = append(runs, results[ji])
				}
			}
			rho := l * meanChain * su.d.Mean() / 1000 / su.capacity()
			for di, d := range cfg.NotifyDelays {
				pf := slices.Index(cfg.Policies, PathFinder)
				for pi, p := range cfg.Policies {
					col := di*np + pi
					sc := &Scenario{Dist: name, Lambda: l, NotifyDelayMS: d, Policy: p, Pods: su.pods, Slots: su.slots, Rho: rho,
						Metrics: summarize(runs, col)}
					sc.latencies, sc.responses = runs[0][col].Latencies, runs[0][col].Responses
					res.Scenarios = append(res.Scenarios, sc)
					if pf < 0 || p == PathFinder {
						continue
					}
					for _, m := range []string{"p99_latency", "p99_response"} {
						q := ratio(runs, col, di*np+pf, m)
						q.Dist, q.Lambda, q.NotifyDelayMS, q.Baseline, q.Metric = name, l, d, p, m
						res.Ratios = append(res.Ratios, q)
					}
				}
			}
		}
	}
	res.PaperRanges = PaperRanges(res.Ratios)
	return res, nil
}

// memoryWorkers is how many runs of cfg may run at once within
// MemoryBudget (at least one).
func memoryWorkers(cfg ExperimentConfig, setups []setup) int {
	slots := 0
	for _, su := range setups {
		slots = max(slots, su.pods*su.slots)
	}
	per := cfg.Requests*cfg.ChainMax*StageBytes + slots*SlotBytes
	return max(1, MemoryBudget/max(1, per))
}

// plan sizes the pools and derives the wait bounds of every (dist, λ),
// recording them in res.
func plan(cfg ExperimentConfig, res *ExperimentResult) ([]setup, map[point][]float64, error) {
	meanChain := float64(cfg.ChainMin+cfg.ChainMax) / 2
	setups := make([]setup, len(cfg.Dists))
	for i, name := range cfg.Dists {
		d, err := dist.New(name)
		if err != nil {
			return nil, nil, err
		}
		scale := 1.0
		if cfg.TimeScale != 0 {
			scale = cfg.TimeScale
		}
		if cfg.ScaleToLoad {
			scale *= loadScale(cfg, d.Mean()*scale)
		}
		if scale != 1 {
			if d, err = dist.NewScaled(d, scale); err != nil {
				return nil, nil, err
			}
		}
		pods, slots, err := PoolSize(cfg, d)
		if err != nil {
			return nil, nil, fmt.Errorf("experiment %s: %w", cfg.Name, err)
		}
		su := setup{d: d, classes: NewClasses(d), pods: pods, slots: slots}
		setups[i] = su
		res.Distributions = append(res.Distributions, DistInfo{Name: name, Description: d.Describe(), Scale: scale, MeanMS: d.Mean(),
			P50MS: d.Quantile(0.5), P99MS: d.Quantile(0.99), Pods: su.pods, Slots: su.slots, Classes: su.classes})
	}
	bounds := map[point][]float64{}
	for i, su := range setups {
		for _, l := range cfg.Lambdas {
			rho := l * meanChain * su.d.Mean() / 1000 / su.capacity()
			b, err := WaitBounds(BoundInput{Classes: su.classes, MeanExec: su.d.Mean(),
				StageRate: l * meanChain / 1000, Pods: su.pods * su.slots, Delta: cfg.Delta})
			if err != nil {
				return nil, nil, fmt.Errorf("experiment %s: %s λ=%g: %w", cfg.Name, cfg.Dists[i], l, err)
			}
			for k := range b {
				if cfg.WaitRule == WaitExec {
					b[k] = su.classes.Estimate[k]
				}
				if cfg.WaitBound >= 0 {
					b[k] = cfg.WaitBound
				}
				if cfg.MaxWaitMS > 0 {
					b[k] = math.Min(b[k], cfg.MaxWaitMS)
				}
			}
			bounds[point{i, l}] = b
			res.Bounds = append(res.Bounds, BoundInfo{Dist: cfg.Dists[i], Lambda: l, Rho: rho, BoundsMS: b,
				Switch: SuggestSwitch(su.classes, su.d.Mean(), rho, cfg.Delta, b)})
		}
	}
	return setups, bounds, nil
}

// loadScale is the factor that puts a pool of cfg's pods × slots at
// utilization RhoMax at RefLambda when a stage's mean is mean.
func loadScale(cfg ExperimentConfig, mean float64) float64 {
	meanChain := float64(cfg.ChainMin+cfg.ChainMax) / 2
	return cfg.RhoMax * float64(cfg.Pods*cfg.ContainerConcurrency) * 1000 / (cfg.RefLambda * meanChain * mean)
}

// PlanOnly sizes the pools and derives the PathFinder bounds and switch
// mapping of cfg without simulating: what a controller would push.
func PlanOnly(cfg ExperimentConfig) (*ExperimentResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("experiment %s: %w", cfg.Name, err)
	}
	res := &ExperimentResult{Config: cfg, Paper: PaperClaims()}
	if _, _, err := plan(cfg, res); err != nil {
		return nil, err
	}
	return res, nil
}

func runJob(ctx context.Context, cfg ExperimentConfig, su setup, lambda float64, seed uint64, bounds []float64, keep bool) ([]RunResult, error) {
	w, err := NewWorkload(WorkloadSpec{Dist: su.d, Lambda: lambda, Requests: cfg.Requests, ChainMin: cfg.ChainMin,
		ChainMax: cfg.ChainMax, EstimateNoise: cfg.EstimateNoise, Seed: seed}, su.classes)
	if err != nil {
		return nil, err
	}
	var out []RunResult
	for _, d := range cfg.NotifyDelays {
		for _, p := range cfg.Policies {
			r, err := Run(ctx, w, RunConfig{Policy: p, Pods: su.pods, Slots: su.slots, ForwardDelay: cfg.ForwardDelay, Bounds: bounds, NotifyDelay: d,
				Timeout: cfg.Timeout, Warmup: cfg.Warmup, Seed: seed, KeepSamples: keep})
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
	}
	return out, nil
}

func summarize(runs [][]RunResult, col int) Metrics {
	get := func(f func(r *RunResult) float64) stats.Summary {
		xs := make([]float64, len(runs))
		for s := range runs {
			xs[s] = f(&runs[s][col])
		}
		return stats.Summarize(xs)
	}
	m := Metrics{
		P99LatencyMS:   get(func(r *RunResult) float64 { return r.P99Latency }),
		P50LatencyMS:   get(func(r *RunResult) float64 { return r.P50Latency }),
		MeanLatencyMS:  get(func(r *RunResult) float64 { return r.MeanLatency }),
		P99ResponseMS:  get(func(r *RunResult) float64 { return r.P99Response }),
		P50ResponseMS:  get(func(r *RunResult) float64 { return r.P50Response }),
		MeanResponseMS: get(func(r *RunResult) float64 { return r.MeanResponse }),
		OvertakeRate:   get(func(r *RunResult) float64 { return r.OvertakeRate }),
		ForcedRate:     get(func(r *RunResult) float64 { return r.ForcedRate }),
		MeanQueue:      get(func(r *RunResult) float64 { return r.MeanQueue }),
		MaxQueue:       get(func(r *RunResult) float64 { return float64(r.MaxQueue) }),
		TimeoutRate:    get(func(r *RunResult) float64 { return r.TimeoutRate }),
		ThroughputRPS:  get(func(r *RunResult) float64 { return r.Throughput }),
		Utilization:    get(func(r *RunResult) float64 { return r.Utilization }),
		BusyCoV:        get(func(r *RunResult) float64 { return r.BusyCoV }),
	}
	m.MaxHoldExcessMS = math.Inf(-1)
	for s := range runs {
		m.MaxHoldExcessMS = math.Max(m.MaxHoldExcessMS, runs[s][col].MaxHoldExcess)
	}
	return m
}

func ratio(runs [][]RunResult, base, pf int, metric string) Ratio {
	var q Ratio
	xs := make([]float64, len(runs))
	q.NoWait = true
	for s := range runs {
		b, p := runs[s][base].P99Latency, runs[s][pf].P99Latency
		if metric == "p99_response" {
			b, p = runs[s][base].P99Response, runs[s][pf].P99Response
		}
		if p < RatioFloorMS {
			q.FlooredSeeds++
		}
		if b >= RatioFloorMS || p >= RatioFloorMS {
			q.NoWait = false
		}
		xs[s] = math.Max(b, RatioFloorMS) / math.Max(p, RatioFloorMS)
	}
	q.Ratio = stats.Summarize(xs)
	return q
}
