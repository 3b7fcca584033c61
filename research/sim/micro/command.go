package micro

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/p4ctl/p4ctl/pkg/cmdutil"
	"github.com/p4ctl/p4ctl/pkg/output"
	"github.com/p4ctl/p4ctl/research/sim/dist"
	"github.com/p4ctl/p4ctl/research/sim/verdict"
)

// The commands of the simulator (`p4ctl sim micro`, `p4ctl tune jbsq`),
// kubectl style: cmd/p4ctl binds each flag to a field of their Options and
// calls Complete, Validate and Run; every check of a flag's value or of
// flags that do not go together is here, naming the flag (usage errors,
// exit 2).

// ScenarioOptions are the scenario's flags (--scenario and the values a
// given flag overrides); durations are the flags' own, converted to µs by
// Config.
type ScenarioOptions struct {
	Name                string
	Granularity         string
	SLOWindow           time.Duration
	Hosts, CoresPerHost int
	Load                float64
	ArrivalCV           float64
	ArrivalKind         string
	FlowsPerCore        int
	StaleReports        bool
	ForwardOneWay       bool
	Service             string
	ServiceMean         time.Duration
	Sigma               float64
	BimodalP            float64
	BimodalRatio        float64
	Delay, SLO          time.Duration
	BurstFactor         float64
	BurstOnFraction     float64
	BurstMeanOn         time.Duration
	StallInterval       time.Duration
	StallDuration       time.Duration
	NotifyLoss          float64
	CreditTTL           time.Duration
	TTLMode             string
	Recirc              time.Duration
	Refresh             time.Duration
	ForwardThreshold    int
	ForwardHops         int
	GatewayCores        int
	GatewayCost         time.Duration
	Connections         int
	ZipfAlpha           float64
	MigrateInterval     time.Duration
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// Config builds the scenario: the named one (Name), with every value
// whose flag was given (given reports it; nil: none) applied over it;
// hosts overrides Hosts when > 0.
func (f *ScenarioOptions) Config(given func(flag string) bool, hosts int) (Config, error) {
	named, err := LookupScenario(f.Name)
	if err != nil {
		return Config{}, cmdutil.Usagef("--scenario: %w", err)
	}
	c := named.Config
	set := func(name string) bool { return given != nil && given(name) }
	// Durations are checked here, naming the flag and its unit: the
	// scenario's own check sees µs without a flag ("delay -1 must be ≥ 0").
	for _, d := range []struct {
		name     string
		v        time.Duration
		positive bool
	}{
		{"delay", f.Delay, false}, {"slo", f.SLO, true}, {"slo-window", f.SLOWindow, false}, {"service-mean", f.ServiceMean, true},
		{"burst-mean-on", f.BurstMeanOn, true}, {"stall-interval", f.StallInterval, false}, {"stall-duration", f.StallDuration, false},
		{"credit-ttl", f.CreditTTL, false}, {"refresh", f.Refresh, false}, {"recirc", f.Recirc, false},
		{"gateway-cost", f.GatewayCost, false}, {"migrate-interval", f.MigrateInterval, false},
	} {
		switch {
		case !set(d.name):
		case d.v < 0:
			return c, cmdutil.Usagef("--%s %v: want a duration ≥ 0 (e.g. 4.5us)", d.name, d.v)
		case d.positive && d.v == 0:
			return c, cmdutil.Usagef("--%s %v: want a duration > 0 (e.g. 50us)", d.name, d.v)
		}
	}
	if hosts > 0 {
		f.Hosts = hosts
		c.Hosts = hosts
	} else if set("hosts") {
		if f.Hosts < 1 {
			return c, cmdutil.Usagef("--hosts %d: want ≥ 1", f.Hosts)
		}
		c.Hosts = f.Hosts
	}
	if set("cores-per-host") {
		if f.CoresPerHost < 1 {
			return c, cmdutil.Usagef("--cores-per-host %d: want ≥ 1", f.CoresPerHost)
		}
		c.CoresPerHost = f.CoresPerHost
	}
	if set("granularity") {
		c.Granularity = Granularity(f.Granularity)
	}
	if set("load") {
		if !(f.Load > 0 && f.Load < 4) {
			return c, cmdutil.Usagef("--load %v must be in (0, 4)", f.Load)
		}
		c.Load = f.Load
	}
	if set("arrival-cv") {
		c.ArrivalCV = f.ArrivalCV
	}
	if set("arrival-kind") {
		c.ArrivalKind = dist.ArrivalKind(f.ArrivalKind)
	}
	if set("flows-per-core") {
		c.FlowsPerCore = f.FlowsPerCore
	}
	if set("stale-reports") {
		c.StaleReports = f.StaleReports
	}
	if set("forward-one-way") {
		c.ForwardOneWay = f.ForwardOneWay
	}
	if set("service") {
		kind, err := dist.ParseServiceKind(f.Service)
		if err != nil {
			return c, cmdutil.Usagef("--service: %w", err)
		}
		c.Service.Kind = kind
	}
	if set("service-mean") {
		c.Service.Mean = us(f.ServiceMean)
	}
	if set("sigma") {
		c.Service.Sigma = f.Sigma
	}
	if set("bimodal-p") || c.Service.Kind == dist.ServiceBimodal && c.Service.BimodalP == 0 {
		c.Service.BimodalP = f.BimodalP
	}
	if set("bimodal-ratio") || c.Service.Kind == dist.ServiceBimodal && c.Service.BimodalRatio == 0 {
		c.Service.BimodalRatio = f.BimodalRatio
	}
	if set("delay") {
		c.Delay = us(f.Delay)
	}
	if set("slo") {
		c.SLO = us(f.SLO)
	}
	if set("slo-window") {
		c.SLOWindow = us(f.SLOWindow)
	}
	if set("burst-factor") || set("burst-on-fraction") || set("burst-mean-on") {
		b := c.Burst
		if !b.Enabled() { // the flags' defaults fill what a scenario without bursts lacks
			b = Burst{Factor: f.BurstFactor, OnFraction: f.BurstOnFraction, MeanOn: us(f.BurstMeanOn)}
		}
		if set("burst-factor") {
			b.Factor = f.BurstFactor
		}
		if set("burst-on-fraction") {
			b.OnFraction = f.BurstOnFraction
		}
		if set("burst-mean-on") {
			b.MeanOn = us(f.BurstMeanOn)
		}
		c.Burst = b
	}
	if set("stall-interval") || set("stall-duration") {
		c.Stall = Stall{Interval: us(f.StallInterval), Duration: us(f.StallDuration)}
		if f.StallInterval == 0 {
			c.Stall = Stall{}
		}
	}
	if set("notify-loss") {
		c.NotifyLoss = f.NotifyLoss
	}
	if set("credit-ttl") {
		c.CreditTTL = us(f.CreditTTL)
	}
	if set("ttl-mode") {
		c.TTLMode = TTLMode(f.TTLMode)
	} else if c.TTLMode == "" {
		c.TTLMode = TTLSilence
	}
	if set("refresh") {
		c.Refresh = us(f.Refresh)
	}
	if set("forward-threshold") {
		c.ForwardThreshold = f.ForwardThreshold
	}
	if set("forward-hops") {
		c.ForwardHops = f.ForwardHops
	}
	if set("gateway-cores") || set("gateway-cost") {
		c.Gateway = Gateway{Cores: f.GatewayCores, PerMessage: us(f.GatewayCost)}
	}
	if set("recirc") {
		c.Recirc = us(f.Recirc)
	} else if c.Recirc == 0 {
		c.Recirc = DefaultRecirc
	}
	if set("connections") {
		c.Connections = f.Connections
	}
	if set("zipf-alpha") || c.Connections > 0 && c.ZipfAlpha == 0 {
		c.ZipfAlpha = f.ZipfAlpha
	}
	if set("migrate-interval") || c.MigrateInterval == 0 {
		c.MigrateInterval = us(f.MigrateInterval)
	}
	if err := c.Validate(); err != nil {
		return c, cmdutil.Usagef("%w", err)
	}
	return c, nil
}

// MaxParallel bounds --parallel: far beyond any machine's cores, and each
// concurrent run holds its requests in memory.
const MaxParallel = 4096

// RunOptions are the flags every command of the simulator shares: the
// runs (Options but Progress) and where the result and plots go.
type RunOptions struct {
	Seeds    int
	Seed     uint64
	Requests int
	Quick    bool
	Parallel int
	OutDir   string
	NoPlots  bool
	Format   output.Format
}

// Validate checks the values, naming their flags.
func (r *RunOptions) Validate() error {
	if r.Parallel < 0 || r.Parallel > MaxParallel {
		return cmdutil.Usagef("--parallel %d: want 0..%d (0 = GOMAXPROCS)", r.Parallel, MaxParallel)
	}
	if r.Seeds < 0 || r.Seeds > 1000 {
		return cmdutil.Usagef("--seeds %d must be in [0, 1000]", r.Seeds)
	}
	if r.Requests < 0 || r.Requests > MaxRequests {
		return cmdutil.Usagef("--requests %d must be in [0, %d] (0 = the experiment's default; a run may hold all its requests in memory at once)", r.Requests, MaxRequests)
	}
	if r.Seed == 0 {
		return cmdutil.Usagef("--seed must be ≥ 1")
	}
	if !r.NoPlots {
		return cmdutil.CheckOutputDir("--out-dir", r.OutDir)
	}
	return nil
}

// Options returns the runs' options, reporting to progress.
func (r *RunOptions) Options(progress func(int, int)) Options {
	return Options{Seeds: r.Seeds, Seed: r.Seed, Requests: r.Requests, Quick: r.Quick, Parallel: r.Parallel, Progress: progress}
}

// WriteResult prints res and, unless NoPlots, writes its plots and names
// them on stderr.
func (r *RunOptions) WriteResult(s *cmdutil.Streams, res Plotter) error {
	if err := output.Print(s.Out, r.Format, res); err != nil {
		return err
	}
	if r.NoPlots {
		return nil
	}
	files, err := res.Plots(r.OutDir)
	if err != nil {
		return err
	}
	cmdutil.PrintPlots(s, files)
	return nil
}

// Experiments are the experiments of `sim micro`, in help order.
func Experiments() []string {
	return []string{"e1", "e2", "e3", "t40b", "gateway", "ttl", "switch", "figures", "run"}
}

// ExperimentFlags are the flags only some experiments read; given to
// another experiment they are a usage error rather than ignored.
func ExperimentFlags() map[string][]string {
	return map[string][]string{
		"axis": {"e3"}, "slo-rule": {"e3"}, "burst-scale": {"e3"}, "points": {"e3"},
		"costs": {"gateway"}, "dispatcher-cores": {"gateway"}, "loads": {"gateway"},
		"policy": {"e1", "run"}, "markdown": {"figures"},
	}
}

// ExperimentOptions are the flags of `p4ctl sim micro EXPERIMENT`.
type ExperimentOptions struct {
	Scenario        ScenarioOptions
	Runs            RunOptions
	Policies        []string
	Costs           []time.Duration
	DispatcherCores []int
	Loads           []float64
	E3Axis          string
	E3SLO           string
	E3Burst         string
	E3Points        []float64
	Markdown        string
	// Flags are the command line's: flags given to an experiment that
	// does not read them are refused, and given ones override the
	// scenario's values.
	cmdutil.Flags

	experiment string
	fitted     []Fitted
	scenario   Config
	parsed     []Policy
}

// Complete takes the experiment from the argument, refuses flags it does
// not read and parses the policies.
func (o *ExperimentOptions) Complete(experiment string) error {
	o.experiment = strings.ToLower(experiment)
	flags := ExperimentFlags()
	for _, name := range slices.Sorted(maps.Keys(flags)) {
		if exps := flags[name]; o.Given(name) && slices.Contains(Experiments(), o.experiment) && !slices.Contains(exps, o.experiment) {
			return cmdutil.Usagef("--%s applies to %s only, not %s", name, strings.Join(exps, " and "), o.experiment)
		}
	}
	for _, p := range o.Policies {
		q, err := ParsePolicy(p)
		if err != nil {
			return cmdutil.Usagef("--policy: %w", err)
		}
		o.parsed = append(o.parsed, q)
	}
	return nil
}

// Validate checks the values and builds the scenario.
func (o *ExperimentOptions) Validate() error {
	if err := cmdutil.CheckFiniteFloats(o.Set); err != nil {
		return err
	}
	if !slices.Contains(Experiments(), o.experiment) {
		return cmdutil.Usagef("unknown experiment %q (want one of %s)", o.experiment, strings.Join(Experiments(), ", "))
	}
	if err := o.Runs.Validate(); err != nil {
		return err
	}
	sc, err := o.Scenario.Config(o.Given, 0)
	if err != nil {
		return err
	}
	if axis := E3Axis(strings.ToLower(o.E3Axis)); axis != "" && axis != sc.Sweep.E3Axis {
		sc.Sweep.E3Axis = axis
		sc.Sweep.E3SLO = "" // another axis: its own rule unless --slo-rule says
	}
	if o.E3SLO != "" {
		sc.Sweep.E3SLO = E3SLO(strings.ToLower(o.E3SLO))
	}
	if o.E3Burst != "" {
		sc.Sweep.E3Burst = E3Burst(strings.ToLower(o.E3Burst))
	}
	for _, x := range o.E3Points {
		if !(x > 0 && x <= 100) {
			return cmdutil.Usagef("--points: D/S %v must be in (0, 100]", x)
		}
	}
	if len(o.E3Points) > 0 {
		sc.Sweep.E3Points = o.E3Points
	}
	if _, _, _, err := sc.Sweep.E3Rules(); err != nil {
		return cmdutil.Usagef("--axis, --slo-rule, --burst-scale: %w", err)
	}
	o.scenario = sc
	for _, p := range o.parsed {
		c := sc
		c.Policy = p
		if err := c.Validate(); err != nil {
			return cmdutil.Usagef("--policy %s: %w", p, err)
		}
	}
	for _, l := range o.Loads {
		if !(l > 0 && l < 4) {
			return cmdutil.Usagef("--loads: %v must be in (0, 4)", l)
		}
	}
	for _, c := range o.Costs {
		if c <= 0 {
			return cmdutil.Usagef("--costs: %v must be > 0", c)
		}
	}
	for _, n := range o.DispatcherCores {
		if n < 1 {
			return cmdutil.Usagef("--dispatcher-cores: %d must be ≥ 1", n)
		}
	}
	if o.Markdown != "" {
		if err := cmdutil.CheckOutputFile("--markdown", o.Markdown); err != nil {
			return err
		}
	}
	if named, err := LookupScenario(o.Scenario.Name); err == nil {
		o.fitted = named.Fitted
	}
	return nil
}

// Run runs the experiment, prints its result and writes its plots.
func (o *ExperimentOptions) Run(ctx context.Context, s *cmdutil.Streams) error {
	progress, done := cmdutil.NewProgress(s.Err, "sim micro "+o.experiment)
	defer done()
	opt := o.Runs.Options(progress)
	var (
		res Plotter
		err error
	)
	switch o.experiment {
	case "e1":
		res, err = E1(ctx, o.scenario, o.parsed, opt)
	case "e2":
		res, err = E2(ctx, o.scenario, opt)
	case "e3":
		res, err = E3(ctx, o.scenario, opt)
	case "t40b":
		res, err = T40b(ctx, o.scenario, opt)
	case "gateway":
		ns := make([]float64, len(o.Costs))
		for i, c := range o.Costs {
			ns[i] = float64(c) / float64(time.Nanosecond)
		}
		res, err = GatewaySweep(ctx, o.scenario, ns, o.DispatcherCores, o.Loads, opt)
	case "ttl":
		res, err = TTLAblation(ctx, o.scenario, opt)
	case "switch":
		res, err = SwitchGap(ctx, o.scenario, opt)
	case "figures":
		var figs *SeedFiguresResult
		if figs, err = SeedFigures(ctx, o.scenario, o.fitted, opt); err == nil {
			res = figs
			err = verdict.WriteMarkdownFile("--markdown", o.Markdown, "study", figs.Figures)
		}
	case "run":
		ps := o.parsed
		if len(ps) == 0 {
			ps = []Policy{MustPolicy("jbsq")}
		}
		res, err = RunSet(ctx, o.scenario, ps, opt)
	}
	done()
	if err != nil {
		return cmdutil.NothingLeft(err)
	}
	return o.Runs.WriteResult(s, res)
}

// TuneAlgorithmFlags are the flags only some --algorithm values of `tune
// jbsq` read; given with another they are a usage error rather than
// ignored.
func TuneAlgorithmFlags() map[string][]string {
	return map[string][]string{"max-holds": {AlgorithmSwitch}, "on-full": {AlgorithmSwitch}}
}

// TuneOptions are the flags of `p4ctl tune jbsq`.
type TuneOptions struct {
	Scenario  ScenarioOptions
	Runs      RunOptions
	Cores     int
	Target    float64
	Algorithm string
	MaxHolds  int
	OnFull    string
	// Flags are the command line's: given ones override the scenario's
	// values.
	cmdutil.Flags

	tc TuneConfig
}

// Validate checks the values and builds the scenario.
func (o *TuneOptions) Validate() error {
	if err := cmdutil.CheckFiniteFloats(o.Set); err != nil {
		return err
	}
	switch o.Algorithm {
	case AlgorithmSwitch, AlgorithmIdeal:
	default:
		return cmdutil.Usagef("--algorithm %q: want switch or ideal", o.Algorithm)
	}
	flags := TuneAlgorithmFlags()
	for _, name := range slices.Sorted(maps.Keys(flags)) {
		if algs := flags[name]; o.Given(name) && !slices.Contains(algs, o.Algorithm) {
			return cmdutil.Usagef("--%s applies to --algorithm %s only, not %s", name, strings.Join(algs, " and "), o.Algorithm)
		}
	}
	if !(o.Target > 0 && o.Target < 1) {
		return cmdutil.Usagef("--target %v must be in (0, 1)", o.Target)
	}
	if o.MaxHolds < 0 || o.MaxHolds > 255 {
		return cmdutil.Usagef("--max-holds %d must be in [0, 255] (the switch's 8-bit hold count)", o.MaxHolds)
	}
	if o.OnFull != "force" && o.OnFull != "nack" {
		return cmdutil.Usagef("--on-full %q: want force or nack", o.OnFull)
	}
	if o.Given("load") && !(o.Scenario.Load > 0 && o.Scenario.Load < 1) {
		return cmdutil.Usagef("--load %v must be in (0, 1): at ρ ≥ 1 the cores saturate whatever the bound", o.Scenario.Load)
	}
	cph := o.Scenario.CoresPerHost
	if cph < 1 || o.Cores < cph || o.Cores%cph != 0 {
		return cmdutil.Usagef("--cores %d must be a positive multiple of --cores-per-host %d", o.Cores, cph)
	}
	if err := o.Runs.Validate(); err != nil {
		return err
	}
	sc, err := o.Scenario.Config(o.Given, o.Cores/cph)
	if err != nil {
		return err
	}
	if !(sc.Load > 0 && sc.Load < 1) { // a --scenario's own load
		return cmdutil.Usagef("--load %v (the scenario's) must be in (0, 1): at ρ ≥ 1 the cores saturate whatever the bound", sc.Load)
	}
	if err := TuneLimits(sc); err != nil {
		return cmdutil.Usagef("--delay, --service-mean, --cores-per-host, --load: %w", err)
	}
	if o.Algorithm == AlgorithmSwitch {
		if h := sc.Hosts; h&(h-1) != 0 {
			return cmdutil.Usagef("--algorithm switch needs a power-of-two number of hosts (a switch pool's size), got --cores %d / --cores-per-host %d = %d; use --algorithm ideal", o.Cores, cph, h)
		}
		holds := o.MaxHolds
		sc.SwitchMaxHolds, sc.SwitchOnFull = &holds, o.OnFull
	}
	o.tc = TuneConfig{Scenario: sc, Target: o.Target, Algorithm: o.Algorithm}
	return nil
}

// Run tunes and prints the result; no bound meeting the target is an
// error (exit 1) after the curve is printed.
func (o *TuneOptions) Run(ctx context.Context, s *cmdutil.Streams) error {
	progress, done := cmdutil.NewProgress(s.Err, "tune jbsq")
	o.tc.Options = o.Runs.Options(progress)
	res, err := TuneJBSQ(ctx, o.tc)
	done()
	if err != nil {
		return cmdutil.NothingLeft(err)
	}
	if err := o.Runs.WriteResult(s, res); err != nil {
		return err
	}
	if !res.Met {
		// Printed above (the curve is the answer); the exit status says
		// there is no bound to push, as for a tuned pool (docs/CONFIG.md).
		return fmt.Errorf("no JBSQ bound meets the %.2g %% violation target (the best is n = %d): relax --target or --slo, or lower --load",
			100*res.Target, res.Bound)
	}
	return nil
}
