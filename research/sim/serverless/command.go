package serverless

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/p4ctl/p4ctl/pkg/cmdutil"
	"github.com/p4ctl/p4ctl/pkg/output"
	sdist "github.com/p4ctl/p4ctl/research/sim/serverless/dist"
	"github.com/p4ctl/p4ctl/research/sim/verdict"
)

// CommandOptions are the flags of `p4ctl sim serverless [EXPERIMENT]`,
// kubectl style: cmd/p4ctl binds each flag to a field and calls Complete,
// Validate and Run; every check of a value or of flags that do not go
// together is here, naming the flag (usage errors, exit 2).
type CommandOptions struct {
	Scenario    string
	Concurrency int
	Forward     time.Duration
	TimeScale   float64
	Hops        string
	Scales      string
	Dists       string
	Lambdas     string
	Policies    string
	Notify      string
	Seeds       int
	Seed        uint64
	Requests    int
	Warmup      float64
	Chain       string
	Noise       float64
	Pods        int
	RhoMax      float64
	Delta       float64
	WaitBound   string
	Timeout     time.Duration
	Workers     int
	Quick       bool
	OutDir      string
	NoPlots     bool
	Format      output.Format
	Markdown    string
	// Plot writes the plots of a sweep or notify result into a directory
	// (serverless/plots.Write, which imports this package).
	Plot func(*ExperimentResult, string) ([]string, error)
	// Flags are the command line's: a given flag overrides the
	// experiment's value, and one the experiment does not read is refused.
	cmdutil.Flags

	experiment  string
	ratioHops   []float64
	ratioScales []float64
	cfg         ExperimentConfig
	planOnly    bool
}

// Complete builds the experiment configuration from the arguments (none,
// or the experiment) and the flags.
func (o *CommandOptions) Complete(args []string) error {
	o.experiment = "sweep"
	if len(args) == 1 {
		o.experiment = args[0]
	}
	switch o.experiment {
	case "sweep", "figures":
		o.cfg = DefaultExperiment()
	case "notify":
		o.cfg = NotifyExperiment()
	case "bound":
		o.cfg = DefaultExperiment()
		o.cfg.Name = "bound"
		o.planOnly = true
	case "ratios":
		o.cfg = KnativeExperiment()
		o.cfg.Name = "ratios"
		o.cfg.Lambdas = []float64{10, 15, 20}
		o.cfg.Seeds, o.cfg.Requests = 5, 20000
		if !o.Given("scenario") {
			o.Scenario = "knative"
		}
		var err error
		if o.ratioHops, err = parseDurationsMS(o.Hops); err != nil {
			return cmdutil.Usagef("--hops: %w", err)
		}
		if o.ratioScales, err = parseFloats(o.Scales); err != nil {
			return cmdutil.Usagef("--time-scales: %w", err)
		}
	default:
		return cmdutil.Usagef("unknown experiment %q (want sweep, notify, figures, bound or ratios)", o.experiment)
	}
	c := &o.cfg
	switch o.Scenario {
	case "pathfinder":
		if o.experiment == "ratios" {
			return cmdutil.Usagef("ratios explores the knative setting only (--scenario knative)")
		}
	case "knative":
		if o.experiment == "figures" {
			return cmdutil.Usagef("figures judges PathFinder's claims on its evaluated system (--scenario pathfinder), not the knative exploration")
		}
		k := KnativeExperiment()
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
		return cmdutil.Usagef("--scenario %q: want pathfinder or knative", o.Scenario)
	}
	if o.Quick {
		*c = c.Quick()
	}
	var err error
	if o.Given("dist") {
		c.Dists = splitList(o.Dists)
	}
	if o.Given("lambda") {
		if c.Lambdas, err = parseFloats(o.Lambdas); err != nil {
			return cmdutil.Usagef("--lambda: %w", err)
		}
		c.CDFLambda = maxFloat(c.Lambdas)
	}
	if o.Given("policy") {
		if c.Policies, err = PolicyList(o.Policies); err != nil {
			return cmdutil.Usagef("--policy: %w", err)
		}
	}
	if o.Given("notify-delay") {
		c.NotifyDelays = nil
		for _, f := range splitList(o.Notify) {
			d, err := time.ParseDuration(f) // "0" is valid
			if err != nil {
				return cmdutil.Usagef("--notify-delay: %w", err)
			}
			c.NotifyDelays = append(c.NotifyDelays, ms(d))
		}
	}
	if o.Given("seeds") {
		c.Seeds = o.Seeds
	}
	if o.Given("seed") {
		c.BaseSeed = o.Seed
	}
	if o.Given("requests") {
		c.Requests = o.Requests
	}
	if o.Given("warmup") {
		c.Warmup = o.Warmup
	}
	if o.Given("chain") {
		if c.ChainMin, c.ChainMax, err = parseChain(o.Chain); err != nil {
			return cmdutil.Usagef("--chain: %w", err)
		}
		if c.ChainMax > 1 && c.Benchmark == "alu" {
			c.Benchmark = "chain"
		}
	}
	if o.Given("estimate-noise") {
		c.EstimateNoise = o.Noise
	}
	if o.Given("pods") {
		c.Pods = o.Pods
	}
	if o.Given("container-concurrency") {
		c.ContainerConcurrency = o.Concurrency
	}
	if o.Given("time-scale") {
		c.TimeScale = o.TimeScale
	}
	if o.Given("forward-delay") {
		c.ForwardDelay = ms(o.Forward)
	}
	if o.Given("rho-max") {
		c.RhoMax = o.RhoMax
	}
	if o.Given("delta") {
		c.Delta = o.Delta
	}
	if o.WaitBound != "auto" {
		d, err := time.ParseDuration(o.WaitBound) // "0" is valid
		if err != nil || d < 0 {
			return cmdutil.Usagef(`--wait-bound: want "auto" or a duration >= 0, have %q`, o.WaitBound)
		}
		c.WaitBound = ms(d)
	}
	if o.Given("request-timeout") {
		c.Timeout = ms(o.Timeout)
	}
	c.Workers = o.Workers
	return nil
}

// ExperimentFlags are the flags only some experiments read; given
// to another experiment they are a usage error rather than ignored (as
// micro.ExperimentFlags): ratios sweeps the hop and the time scale itself,
// bound simulates nothing, and only sweep and notify plot.
func ExperimentFlags() map[string][]string {
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
func (o *CommandOptions) Validate() error {
	flags := ExperimentFlags()
	for _, name := range slices.Sorted(maps.Keys(flags)) {
		if exps := flags[name]; o.Given(name) && !slices.Contains(exps, o.experiment) {
			return cmdutil.Usagef("--%s applies to %s only, not %s", name, andList(exps), o.experiment)
		}
	}
	if err := cmdutil.CheckFiniteFloats(o.Set); err != nil {
		return err
	}
	if o.Workers < 0 {
		return cmdutil.Usagef("--parallel must be >= 0")
	}
	c := o.cfg
	if o.Given("warmup") && !(c.Warmup >= 0 && c.Warmup < 1) {
		return cmdutil.Usagef("--warmup %g: want a share of each run's requests in [0, 1)", c.Warmup)
	}
	if c.Seeds < 1 || c.Seeds > MaxSeeds {
		return cmdutil.Usagef("--seeds %d must be in [1, %d]", c.Seeds, MaxSeeds)
	}
	if c.ChainMin >= 1 && c.ChainMax >= c.ChainMin && c.ChainMax <= 64 && (c.Requests < 1 || c.Requests > MaxRunStages/c.ChainMax) {
		return cmdutil.Usagef("--requests %d must be in [1, %d]: with chains of up to %d stages (--chain) a run may simulate at most %d stages, all of them in memory",
			c.Requests, MaxRunStages/c.ChainMax, c.ChainMax, MaxRunStages)
	}
	if c.Pods < 0 || c.Pods > MaxPoolSlots {
		return cmdutil.Usagef("--pods %d must be in [0, %d] (0 = sized for --rho-max)", c.Pods, MaxPoolSlots)
	}
	if c.ContainerConcurrency < 0 || c.ContainerConcurrency > MaxSlotsPerPod {
		return cmdutil.Usagef("--container-concurrency %d must be in [0, %d] (0 = sized for --rho-max)", c.ContainerConcurrency, MaxSlotsPerPod)
	}
	scales, scaleFlag := []float64{c.TimeScale}, "--time-scale"
	if o.experiment == "ratios" {
		scales, scaleFlag = o.ratioScales, "--time-scales"
	}
	for _, x := range scales {
		// 0 is the configuration's "unscaled", never a value to give.
		if x != 0 && !(x >= MinTimeScale && x <= MaxTimeScale) || x == 0 && (scaleFlag == "--time-scales" || o.Given("time-scale")) {
			return cmdutil.Usagef("%s %g must be in [%g, %g]", scaleFlag, x, MinTimeScale, MaxTimeScale)
		}
	}
	if err := o.checkPools(scales, scaleFlag); err != nil {
		return err
	}
	if err := c.Validate(); err != nil {
		return cmdutil.Usagef("%w", err)
	}
	if err := cmdutil.CheckOutputFile("--markdown", o.Markdown); err != nil {
		return err
	}
	if !o.NoPlots && (o.experiment == "sweep" || o.experiment == "notify") {
		return cmdutil.CheckOutputDir("--out-dir", o.OutDir)
	}
	return nil
}

// checkPools refuses a pool above MaxPoolSlots for any
// distribution at any of the time scales, naming the flags that size it.
func (o *CommandOptions) checkPools(scales []float64, scaleFlag string) error {
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
			if _, _, err := PoolSize(c, sd); err != nil {
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
func (o *CommandOptions) Run(ctx context.Context, s *cmdutil.Streams) error {
	if o.planOnly {
		res, err := PlanOnly(o.cfg)
		if err != nil {
			return err
		}
		return output.Print(s.Out, o.Format, res)
	}
	if o.experiment == "figures" {
		return o.runFigures(ctx, s)
	}
	if o.experiment == "ratios" {
		progress, done := cmdutil.NewProgress(s.Err, "sim serverless ratios")
		defer done()
		o.cfg.Progress = progress
		res, err := RatioSweep(ctx, o.cfg, o.ratioHops, o.ratioScales)
		done()
		if err != nil {
			return cmdutil.NothingLeft(err)
		}
		return output.Print(s.Out, o.Format, res)
	}
	_, err := cmdutil.RunExperiment(s, o.Format, "sim serverless "+o.cfg.Name,
		func(progress func(done, total int)) (*ExperimentResult, error) {
			o.cfg.Progress = progress
			return RunExperiment(ctx, o.cfg)
		},
		cmdutil.PlotsTo(o.NoPlots, o.OutDir, o.Plot),
		func(r *ExperimentResult, files []string) any { r.Plots = files; return r })
	return err
}

// runFigures runs PathFinder's figures: the ALU benchmark (late binding's
// feedback delay at 0, 5 and 50 ms unless --notify-delay says) and the
// function-chain benchmark, each with the flags' grid and sizes.
func (o *CommandOptions) runFigures(ctx context.Context, s *cmdutil.Streams) error {
	cfgs := FiguresExperiments()
	for i := range cfgs {
		c := o.cfg // the flags' sizes, seeds, λ grid and pool
		c.Name, c.Benchmark, c.ChainMin, c.ChainMax = cfgs[i].Name, cfgs[i].Benchmark, cfgs[i].ChainMin, cfgs[i].ChainMax
		c.CDFLambda = 0
		if !o.Given("notify-delay") {
			c.NotifyDelays = cfgs[i].NotifyDelays
		}
		cfgs[i] = c
	}
	progress, done := cmdutil.NewProgress(s.Err, "sim serverless figures")
	defer done()
	res, err := Figures(ctx, cfgs, progress)
	done()
	if err != nil {
		return cmdutil.NothingLeft(err)
	}
	if err := verdict.WriteMarkdownFile("--markdown", o.Markdown, "PathFinder", res.Figures); err != nil {
		return err
	}
	return output.Print(s.Out, o.Format, res)
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
