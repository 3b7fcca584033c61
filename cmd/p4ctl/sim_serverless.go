package main

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/p4ctl/p4ctl/pkg/cmdutil"
	"github.com/p4ctl/p4ctl/pkg/output"
	"github.com/p4ctl/p4ctl/research/sim/serverless"
	sdist "github.com/p4ctl/p4ctl/research/sim/serverless/dist"
	"github.com/p4ctl/p4ctl/research/sim/serverless/plots"
	"github.com/p4ctl/p4ctl/research/sim/verdict"
)

// simServerlessOptions are the flags of `p4ctl sim serverless`.
type simServerlessOptions struct {
	experiment  string
	scenario    string
	concurrency int
	forward     time.Duration
	timeScale   float64
	hops        string
	scales      string
	ratioHops   []float64
	ratioScales []float64
	dists       string
	lambdas     string
	policies    string
	notify      string
	seeds       int
	seed        uint64
	requests    int
	warmup      float64
	chain       string
	noise       float64
	pods        int
	rhoMax      float64
	delta       float64
	waitBound   string
	timeout     time.Duration
	workers     int
	quick       bool
	outDir      string
	noPlots     bool
	format      output.Format
	changed     func(string) bool
	fs          *pflag.FlagSet
	cfg         serverless.ExperimentConfig
	planOnly    bool
	markdown    string
}

const simServerlessLong = `Simulate dispatch of serverless requests (Poisson arrivals; single calls or
chains of sequential stages) to a pool of pods under four policies
(PathFinder §5.3): late binding (a central FCFS queue served when a pod
reports idle, after a feedback delay), early binding (round robin at
arrival), early binding on expected remaining work (power of two) and
PathFinder (each stage held in the activator for min(E[S | class], 100 ms)
on a timer, so shorter stages bind first, then expected-remaining-work
power of two). Latency is end to end (arrival → completion), response time
arrival → start of execution (PathFinder §4.2, §5.5). Execution times
follow an Azure-Functions-like log-normal fit, a bounded Zipf
(a = 1.294789, m = 1571585) or a power law (a = 0.416, scale 54.37), each
in the unit that puts the pool at ρ = 0.9 at 20 req/s. Results are means
with 95 % CIs across seeds.

Experiments:
  sweep    (default) λ = 10, 12.5, 15, 17.5, 20 req/s × 3 distributions × 4 policies
  notify   λ = 20: late binding as its feedback delay grows (0–100 ms)
  figures  PathFinder's headline claims (§5.6) on the ALU and function-chain
           benchmarks: ours with CIs, the rule and a verdict
  bound    no simulation: the PathFinder waits per class and the set_pool /
           exec_class_cost values a controller could push
  ratios   the knative exploration swept over the activator ↔ pod hop
           (--hops) and the execution-time scale (--time-scales)

Scenarios (--scenario): pathfinder (the default: PathFinder's evaluated
system, 8 one-core pods, the ALU benchmark as single calls; --chain 1-3
for the function-chain benchmark) or knative (an exploration, not the
reproduction: the distributions in their literal units on 16 pods with
many slots each that do not slow each other, a 5 ms hop each way per bind).

Flags override the experiment's grid; giving one distribution, λ and policy
runs a single scenario. Plots (PNG and SVG) go to --out-dir.`

func newSimServerlessCmd(s *streams) *cobra.Command {
	o := &simServerlessOptions{}
	cmd := &cobra.Command{
		Use:   "serverless [sweep|notify|figures|bound|ratios]",
		Short: "Simulate serverless dispatch: late/early binding vs PathFinder's bounded wait",
		Long:  simServerlessLong,
		Example: `  p4ctl sim serverless
  p4ctl sim serverless --quick -o json
  p4ctl sim serverless --dist zipf --lambda 20 --policy late,pathfinder --seeds 20
  p4ctl sim serverless notify
  p4ctl sim serverless figures -o json
  p4ctl sim serverless bound --dist azure --lambda 20
  p4ctl sim serverless --scenario knative
  p4ctl sim serverless ratios --quick`,
		Args: cobra.MaximumNArgs(1),
		RunE: runE(o, s),
	}
	f := cmd.Flags()
	f.StringVar(&o.dists, "dist", "", "distributions, comma-separated: azure, zipf, powerlaw, exp:MEAN_MS (default: the experiment's)")
	f.StringVar(&o.lambdas, "lambda", "", "arrival rates in req/s, comma-separated (default: the experiment's)")
	f.StringVar(&o.policies, "policy", "", "policies: late, early, early-random, early-exec, pathfinder, pathfinder-idle (default: the experiment's)")
	f.StringVar(&o.notify, "notify-delay", "", "not ratios: late binding's feedback delays (a pod reporting idle), comma-separated durations (default 0; notify: 0,1ms,5ms,20ms,100ms)")
	f.IntVar(&o.seeds, "seeds", 10, fmt.Sprintf("seeds per scenario, 1..%d (CIs are across seeds)", serverless.MaxSeeds))
	f.Uint64Var(&o.seed, "seed", 1, "first seed")
	f.IntVar(&o.requests, "requests", 50000, fmt.Sprintf("requests per run; requests × the longest chain at most %d stages", serverless.MaxRunStages))
	f.Float64Var(&o.warmup, "warmup", 0.1, "fraction of requests left out of the metrics")
	f.StringVar(&o.chain, "chain", "1", "stages per request, MIN-MAX (uniform) or N (default: 1, the ALU benchmark; knative 1-3)")
	f.Float64Var(&o.noise, "estimate-noise", 0.5, "σ of the log-normal error of class recognition (0 = exact classes)")
	f.StringVar(&o.scenario, "scenario", "pathfinder", "setting: pathfinder (PathFinder's evaluated system, §5.2) or knative (an exploration: literal units, 16 pods of many slots, a 5 ms hop each way per bind; docs/REPRODUCTION.md §3)")
	f.IntVar(&o.pods, "pods", 8, fmt.Sprintf("pods (pathfinder: 8; knative: 16); 0 sizes each distribution's pool for utilization --rho-max at 20 req/s; a pool has at most %d pods × slots", serverless.MaxPoolSlots))
	f.IntVar(&o.concurrency, "container-concurrency", 1, "stages one pod runs at once (pathfinder: 1, a pod has one core); 0 sizes it for --rho-max when --pods is given")
	f.StringVar(&o.markdown, "markdown", "", "figures: also write the table as Markdown to this file (for docs/REPRODUCTION.md)")
	f.StringVar(&o.hops, "hops", "0,5ms,50ms,250ms,500ms", "ratios: activator ↔ pod hops to sweep (each both the notify and the forward delay)")
	f.StringVar(&o.scales, "time-scales", "1,0.1,0.05", fmt.Sprintf("ratios: execution-time scales to sweep (each in [%g, %g])", serverless.MinTimeScale, serverless.MaxTimeScale))
	f.Float64Var(&o.timeScale, "time-scale", 1, fmt.Sprintf("not ratios: multiply every execution time, in [%g, %g] (the same shapes on another time scale: fewer concurrent invocations per req/s)", serverless.MinTimeScale, serverless.MaxTimeScale))
	f.DurationVar(&o.forward, "forward-delay", 0, "not ratios: hop from the dispatcher to the pod every bound stage pays (knative: 5ms)")
	f.Float64Var(&o.rhoMax, "rho-max", 0.9, "utilization at λ = 20 req/s: the unit each distribution is given (pathfinder), or the pool sized (--pods 0)")
	f.Float64Var(&o.delta, "delta", 0.01, "tolerance of the wait-bound derivation (probability a held stage is still unbound at its bound)")
	f.StringVar(&o.waitBound, "wait-bound", "auto", `PathFinder's wait: "auto" (per class: min(E[S | class], 100 ms); knative: derived) or a duration for every class`)
	f.DurationVar(&o.timeout, "request-timeout", 5*time.Minute, "a simulated request slower than this end to end counts as a timeout")
	f.IntVar(&o.workers, "parallel", 0, "concurrent simulations (0 = GOMAXPROCS); never changes results")
	deprecatedAlias(f, "timeout", "request-timeout")
	deprecatedAlias(f, "workers", "parallel")
	f.BoolVar(&o.quick, "quick", false, "3 seeds × 4000 requests (smoke test, < 10 s)")
	f.StringVar(&o.outDir, "out-dir", "out/sim-serverless", "sweep and notify: directory for PNG and SVG plots")
	f.BoolVar(&o.noPlots, "no-plots", false, "do not write plots")
	output.AddFlag(f, &o.format)
	return cmd
}

// Complete builds the experiment configuration from the argument and flags.
func (o *simServerlessOptions) Complete(cmd *cobra.Command, args []string) error {
	o.fs = cmd.Flags()
	o.changed = func(name string) bool { return changed(cmd.Flags(), name) }
	o.experiment = "sweep"
	if len(args) == 1 {
		o.experiment = args[0]
	}
	switch o.experiment {
	case "sweep", "figures":
		o.cfg = serverless.DefaultExperiment()
	case "notify":
		o.cfg = serverless.NotifyExperiment()
	case "bound":
		o.cfg = serverless.DefaultExperiment()
		o.cfg.Name = "bound"
		o.planOnly = true
	case "ratios":
		o.cfg = serverless.KnativeExperiment()
		o.cfg.Name = "ratios"
		o.cfg.Lambdas = []float64{10, 15, 20}
		o.cfg.Seeds, o.cfg.Requests = 5, 20000
		if !o.changed("scenario") {
			o.scenario = "knative"
		}
		var err error
		if o.ratioHops, err = parseDurationsMS(o.hops); err != nil {
			return cmdutil.Usagef("--hops: %w", err)
		}
		if o.ratioScales, err = parseFloats(o.scales); err != nil {
			return cmdutil.Usagef("--time-scales: %w", err)
		}
	default:
		return cmdutil.Usagef("unknown experiment %q (want sweep, notify, figures, bound or ratios)", o.experiment)
	}
	c := &o.cfg
	switch o.scenario {
	case "pathfinder":
		if o.experiment == "ratios" {
			return cmdutil.Usagef("ratios explores the knative setting only (--scenario knative)")
		}
	case "knative":
		if o.experiment == "figures" {
			return cmdutil.Usagef("figures judges PathFinder's claims on its evaluated system (--scenario pathfinder), not the knative exploration")
		}
		k := serverless.KnativeExperiment()
		c.Scenario, c.Pods, c.ContainerConcurrency, c.ForwardDelay = k.Scenario, k.Pods, k.ContainerConcurrency, k.ForwardDelay
		c.ScaleToLoad, c.MaxWaitMS, c.WaitRule, c.Benchmark, c.ChainMin, c.ChainMax = k.ScaleToLoad, k.MaxWaitMS, k.WaitRule, k.Benchmark, k.ChainMin, k.ChainMax
		if o.experiment == "sweep" || o.experiment == "bound" {
			c.NotifyDelays = k.NotifyDelays
			c.Name = k.Name
			if o.planOnly {
				c.Name = "bound"
			}
		}
	default:
		return cmdutil.Usagef("--scenario %q: want pathfinder or knative", o.scenario)
	}
	if o.quick {
		*c = c.Quick()
	}
	var err error
	if o.changed("dist") {
		c.Dists = splitList(o.dists)
	}
	if o.changed("lambda") {
		if c.Lambdas, err = parseFloats(o.lambdas); err != nil {
			return cmdutil.Usagef("--lambda: %w", err)
		}
		c.CDFLambda = maxFloat(c.Lambdas)
	}
	if o.changed("policy") {
		if c.Policies, err = serverless.PolicyList(o.policies); err != nil {
			return cmdutil.Usagef("--policy: %w", err)
		}
	}
	if o.changed("notify-delay") {
		c.NotifyDelays = nil
		for _, f := range splitList(o.notify) {
			d, err := time.ParseDuration(f) // "0" is valid
			if err != nil {
				return cmdutil.Usagef("--notify-delay: %w", err)
			}
			c.NotifyDelays = append(c.NotifyDelays, ms(d))
		}
	}
	if o.changed("seeds") {
		c.Seeds = o.seeds
	}
	if o.changed("seed") {
		c.BaseSeed = o.seed
	}
	if o.changed("requests") {
		c.Requests = o.requests
	}
	if o.changed("warmup") {
		c.Warmup = o.warmup
	}
	if o.changed("chain") {
		if c.ChainMin, c.ChainMax, err = parseChain(o.chain); err != nil {
			return cmdutil.Usagef("--chain: %w", err)
		}
		if c.ChainMax > 1 && c.Benchmark == "alu" {
			c.Benchmark = "chain"
		}
	}
	if o.changed("estimate-noise") {
		c.EstimateNoise = o.noise
	}
	if o.changed("pods") {
		c.Pods = o.pods
	}
	if o.changed("container-concurrency") {
		c.ContainerConcurrency = o.concurrency
	}
	if o.changed("time-scale") {
		c.TimeScale = o.timeScale
	}
	if o.changed("forward-delay") {
		c.ForwardDelay = ms(o.forward)
	}
	if o.changed("rho-max") {
		c.RhoMax = o.rhoMax
	}
	if o.changed("delta") {
		c.Delta = o.delta
	}
	if o.waitBound != "auto" {
		d, err := time.ParseDuration(o.waitBound) // "0" is valid
		if err != nil || d < 0 {
			return cmdutil.Usagef(`--wait-bound: want "auto" or a duration >= 0, have %q`, o.waitBound)
		}
		c.WaitBound = ms(d)
	}
	if o.changed("request-timeout") {
		c.Timeout = ms(o.timeout)
	}
	c.Workers = o.workers
	return nil
}

// serverlessExperimentFlags are the flags only some experiments read; given
// to another experiment they are a usage error rather than ignored (as
// microExperimentFlags): ratios sweeps the hop and the time scale itself,
// bound simulates nothing, and only sweep and notify plot.
func serverlessExperimentFlags() map[string][]string {
	notRatios := []string{"sweep", "notify", "figures", "bound"}
	simulating := []string{"sweep", "notify", "figures", "ratios"}
	return map[string][]string{
		"hops": {"ratios"}, "time-scales": {"ratios"}, "markdown": {"figures"},
		"time-scale": notRatios, "notify-delay": notRatios, "forward-delay": notRatios,
		"seeds": simulating, "seed": simulating, "requests": simulating, "warmup": simulating, "estimate-noise": simulating,
		"policy": simulating, "request-timeout": simulating, "parallel": simulating, "quick": simulating,
		"out-dir": {"sweep", "notify"},
		"dist":    {"sweep", "notify", "bound", "ratios"}, "lambda": {"sweep", "notify", "bound", "ratios"}, "chain": {"sweep", "notify", "bound", "ratios"},
	}
}

// Validate checks the completed configuration.
func (o *simServerlessOptions) Validate() error {
	flags := serverlessExperimentFlags()
	for _, name := range slices.Sorted(maps.Keys(flags)) {
		if exps := flags[name]; o.changed(name) && !slices.Contains(exps, o.experiment) {
			return cmdutil.Usagef("--%s applies to %s only, not %s", name, andList(exps), o.experiment)
		}
	}
	if err := cmdutil.CheckFiniteFloats(o.fs); err != nil {
		return err
	}
	if o.workers < 0 {
		return cmdutil.Usagef("--parallel must be >= 0")
	}
	c := o.cfg
	if c.Seeds < 1 || c.Seeds > serverless.MaxSeeds {
		return cmdutil.Usagef("--seeds %d must be in [1, %d]", c.Seeds, serverless.MaxSeeds)
	}
	if c.ChainMin >= 1 && c.ChainMax >= c.ChainMin && c.ChainMax <= 64 && (c.Requests < 1 || c.Requests > serverless.MaxRunStages/c.ChainMax) {
		return cmdutil.Usagef("--requests %d must be in [1, %d]: with chains of up to %d stages (--chain) a run may simulate at most %d stages, all of them in memory",
			c.Requests, serverless.MaxRunStages/c.ChainMax, c.ChainMax, serverless.MaxRunStages)
	}
	if c.Pods < 0 || c.Pods > serverless.MaxPoolSlots {
		return cmdutil.Usagef("--pods %d must be in [0, %d] (0 = sized for --rho-max)", c.Pods, serverless.MaxPoolSlots)
	}
	if c.ContainerConcurrency < 0 || c.ContainerConcurrency > serverless.MaxSlotsPerPod {
		return cmdutil.Usagef("--container-concurrency %d must be in [0, %d] (0 = sized for --rho-max)", c.ContainerConcurrency, serverless.MaxSlotsPerPod)
	}
	scales, scaleFlag := []float64{c.TimeScale}, "--time-scale"
	if o.experiment == "ratios" {
		scales, scaleFlag = o.ratioScales, "--time-scales"
	}
	for _, x := range scales {
		if x != 0 && !(x >= serverless.MinTimeScale && x <= serverless.MaxTimeScale) || x == 0 && scaleFlag == "--time-scales" {
			return cmdutil.Usagef("%s %g must be in [%g, %g]", scaleFlag, x, serverless.MinTimeScale, serverless.MaxTimeScale)
		}
	}
	if err := o.checkPools(scales, scaleFlag); err != nil {
		return err
	}
	if err := c.Validate(); err != nil {
		return cmdutil.Usagef("%w", err)
	}
	if err := cmdutil.CheckOutputFile("--markdown", o.markdown); err != nil {
		return err
	}
	if !o.noPlots && (o.experiment == "sweep" || o.experiment == "notify") {
		return cmdutil.CheckOutputDir("--out-dir", o.outDir)
	}
	return nil
}

// checkPools refuses a pool above serverless.MaxPoolSlots for any
// distribution at any of the time scales, naming the flags that size it.
func (o *simServerlessOptions) checkPools(scales []float64, scaleFlag string) error {
	c := o.cfg
	if !(c.RhoMax > 0 && c.RhoMax < 1) || !(c.RefLambda > 0) || c.ChainMin < 1 || c.ChainMax < c.ChainMin {
		return nil // reported by the configuration's Validate
	}
	for _, name := range c.Dists {
		d, err := sdist.New(name)
		if err != nil {
			return cmdutil.Usagef("--dist: %w", err)
		}
		for _, x := range scales {
			sd := d
			if x != 0 {
				if sd, err = sdist.NewScaled(d, x); err != nil {
					return cmdutil.Usagef("%s: %w", scaleFlag, err)
				}
			}
			c.TimeScale = x
			if _, _, err := serverless.PoolSize(c, sd); err != nil {
				if c.Pods > 0 && c.ContainerConcurrency > 0 {
					return cmdutil.Usagef("--pods %d × --container-concurrency %d: %w", c.Pods, c.ContainerConcurrency, err)
				}
				return cmdutil.Usagef("--dist %s: %w: lower the mean (--dist, %s), raise --rho-max or give --pods and --container-concurrency", name, err, scaleFlag)
			}
		}
	}
	return nil
}

// Run runs the experiment, writes the plots and prints the result.
func (o *simServerlessOptions) Run(ctx context.Context, s *streams) error {
	if o.planOnly {
		res, err := serverless.PlanOnly(o.cfg)
		if err != nil {
			return err
		}
		return output.Print(s.Out, o.format, res)
	}
	if o.experiment == "figures" {
		return o.runFigures(ctx, s)
	}
	if o.experiment == "ratios" {
		progress, done := cmdutil.NewProgress(s.Err, "sim serverless ratios")
		defer done()
		o.cfg.Progress = progress
		res, err := serverless.RatioSweep(ctx, o.cfg, o.ratioHops, o.ratioScales)
		done()
		if err != nil {
			return err
		}
		return output.Print(s.Out, o.format, res)
	}
	_, err := cmdutil.RunExperiment(s, o.format, "sim serverless "+o.cfg.Name,
		func(progress func(done, total int)) (*serverless.ExperimentResult, error) {
			o.cfg.Progress = progress
			return serverless.RunExperiment(ctx, o.cfg)
		},
		cmdutil.PlotsTo(o.noPlots, o.outDir, plots.Write),
		func(r *serverless.ExperimentResult, files []string) any { r.Plots = files; return r })
	return err
}

// runFigures runs PathFinder's figures: the ALU benchmark (late binding's
// feedback delay at 0, 5 and 50 ms unless --notify-delay says) and the
// function-chain benchmark, each with the flags' grid and sizes.
func (o *simServerlessOptions) runFigures(ctx context.Context, s *streams) error {
	cfgs := serverless.FiguresExperiments()
	for i := range cfgs {
		c := o.cfg // the flags' sizes, seeds, λ grid and pool
		c.Name, c.Benchmark, c.ChainMin, c.ChainMax = cfgs[i].Name, cfgs[i].Benchmark, cfgs[i].ChainMin, cfgs[i].ChainMax
		c.CDFLambda = 0
		if !o.changed("notify-delay") {
			c.NotifyDelays = cfgs[i].NotifyDelays
		}
		cfgs[i] = c
	}
	progress, done := cmdutil.NewProgress(s.Err, "sim serverless figures")
	defer done()
	res, err := serverless.Figures(ctx, cfgs, progress)
	done()
	if err != nil {
		return err
	}
	if err := verdict.WriteMarkdownFile("--markdown", o.markdown, "PathFinder", res.Figures); err != nil {
		return err
	}
	return output.Print(s.Out, o.format, res)
}

// andList joins xs as "a, b and c".
func andList(xs []string) string {
	if len(xs) < 2 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func splitList(s string) []string {
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func parseFloats(s string) ([]float64, error) {
	var out []float64
	for _, f := range splitList(s) {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%q is not a finite number", f)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("empty list")
	}
	return out, nil
}

func parseChain(s string) (lo, hi int, err error) {
	a, b, found := strings.Cut(s, "-")
	if !found {
		b = a
	}
	lo, err1 := strconv.Atoi(strings.TrimSpace(a))
	hi, err2 := strconv.Atoi(strings.TrimSpace(b))
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("want MIN-MAX or N, have %q", s)
	}
	return lo, hi, nil
}

func parseDurationsMS(s string) ([]float64, error) {
	var out []float64
	for _, f := range splitList(s) {
		d, err := time.ParseDuration(f)
		if err != nil || d < 0 {
			return nil, fmt.Errorf("%q is not a duration >= 0", f)
		}
		out = append(out, ms(d))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("empty list")
	}
	return out, nil
}

func maxFloat(xs []float64) float64 {
	m := xs[0]
	for _, x := range xs[1:] {
		m = max(m, x)
	}
	return m
}
