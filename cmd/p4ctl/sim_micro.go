package main

import (
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/p4ctl/p4ctl/pkg/cmdutil"
	"github.com/p4ctl/p4ctl/pkg/output"
	"github.com/p4ctl/p4ctl/research/sim/dist"
	"github.com/p4ctl/p4ctl/research/sim/micro"
)

// microExperiments are the experiments of `sim micro`, in help order.
var microExperiments = []string{"e1", "e2", "e3", "t40b", "gateway", "ttl", "switch", "figures", "run"}

// scenarioFlags bind the microsecond model's scenario to flags.
type scenarioFlags struct {
	fs                  *pflag.FlagSet
	name                string
	granularity         string
	sloWindow           time.Duration
	hosts, coresPerHost int
	load                float64
	arrivalCV           float64
	arrivalKind         string
	flowsPerCore        int
	staleReports        bool
	forwardOneWay       bool
	service             string
	serviceMean         time.Duration
	sigma               float64
	bimodalP            float64
	bimodalRatio        float64
	delay, slo          time.Duration
	burstFactor         float64
	burstOnFraction     float64
	burstMeanOn         time.Duration
	stallInterval       time.Duration
	stallDuration       time.Duration
	notifyLoss          float64
	creditTTL           time.Duration
	ttlMode             string
	recirc              time.Duration
	refresh             time.Duration
	forwardThreshold    int
	forwardHops         int
	gatewayCores        int
	gatewayCost         time.Duration
	connections         int
	zipfAlpha           float64
	migrateInterval     time.Duration
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func dur(x float64) time.Duration { return time.Duration(x * float64(time.Microsecond)) }

// bind registers the flags. tune (forTune) has --cores instead of --hosts
// and simulates JBSQ only, so the flags of other policies (load reports,
// forwarding, connections, migration) keep their defaults unexposed.
func (f *scenarioFlags) bind(fs *pflag.FlagSet, forTune bool) {
	d := micro.Scenario()
	f.fs = fs
	fs.StringVar(&f.name, "scenario", micro.ScenarioPooled, "named scenario the flags below start from: pooled (default: hosts pool their cores), study (the late-binding study's documented model, nothing fitted) or study-burst (an exploration with common bursts and three values chosen by looking at results); docs/REPRODUCTION.md §2. A flag given explicitly overrides the scenario's value; the defaults shown are pooled's")
	fs.StringVar(&f.granularity, "granularity", string(micro.GranularityHost), "what a policy binds to: host (its cores share one queue), core (every core its own queue) or rss (early binding onto per-core queues, late binding onto host queues)")
	fs.DurationVar(&f.sloWindow, "slo-window", 0, "judge the SLO on the p99 of windows of this length (0 = per request)")
	policyFS := fs
	if forTune {
		policyFS = pflag.NewFlagSet("not exposed by tune", pflag.ContinueOnError)
	} else {
		fs.IntVar(&f.hosts, "hosts", d.Hosts, "number of hosts N")
	}
	fs.IntVar(&f.coresPerHost, "cores-per-host", d.CoresPerHost, "cores per host m (one FCFS queue shared by the host's cores)")
	fs.Float64Var(&f.load, "load", d.Load, "offered load ρ = λ·E[S]/(N·m)")
	fs.Float64Var(&f.arrivalCV, "arrival-cv", d.ArrivalCV, "coefficient of variation of inter-arrival times (1 = Poisson)")
	fs.StringVar(&f.arrivalKind, "arrival-kind", string(d.ArrivalKind), "how CV ≠ 1 is generated: h2 (balanced-means hyper-exponential; gamma below 1) or gamma")
	fs.IntVar(&f.flowsPerCore, "flows-per-core", 0, "split arrivals into this many renewal flows per core, each of the arrival CV; random places a request by its flow (0 = one aggregate stream)")
	fs.StringVar(&f.service, "service", string(d.Service.Kind), "service-time distribution: fixed, exp, bimodal, lognormal")
	fs.DurationVar(&f.serviceMean, "service-mean", dur(d.Service.Mean), "mean service time S")
	fs.Float64Var(&f.sigma, "sigma", d.Service.Sigma, "lognormal service: σ of ln(service time); 1 gives CV ≈ 1.31")
	fs.Float64Var(&f.bimodalP, "bimodal-p", 0.1, "bimodal: probability of a long request")
	fs.Float64Var(&f.bimodalRatio, "bimodal-ratio", 10, "bimodal: long/short service time")
	fs.DurationVar(&f.delay, "delay", dur(d.Delay), "one-way network delay D (host → host costs 2D)")
	fs.DurationVar(&f.slo, "slo", dur(d.SLO), "SLO on end-to-end latency (ingress arrival → reply back at the ingress)")
	fs.Float64Var(&f.burstFactor, "burst-factor", 0, "micro-bursts: rate during on periods as a multiple of the mean (≤ 1 = off)")
	fs.Float64Var(&f.burstOnFraction, "burst-on-fraction", 0.2, "micro-bursts: fraction of time on")
	fs.DurationVar(&f.burstMeanOn, "burst-mean-on", 50*time.Microsecond, "micro-bursts: mean on-period")
	fs.DurationVar(&f.stallInterval, "stall-interval", 0, "host stalls: mean time between a host's pauses (0 = none)")
	fs.DurationVar(&f.stallDuration, "stall-duration", 100*time.Microsecond, "host stalls: pause length")
	fs.Float64Var(&f.notifyLoss, "notify-loss", 0, "probability a completion notification is lost")
	fs.DurationVar(&f.creditTTL, "credit-ttl", 0, "JBSQ credit TTL (0 = none)")
	fs.StringVar(&f.ttlMode, "ttl-mode", string(micro.TTLSilence), "what the TTL expires: silence (the switch's rule) or credit (per request)")
	policyFS.DurationVar(&f.refresh, "refresh", dur(d.Refresh), "load-report period for p2c and jsw")
	policyFS.BoolVar(&f.staleReports, "stale-reports", false, "p2c and jsw use each load report as it arrived, without adding what they sent since")
	policyFS.BoolVar(&f.forwardOneWay, "forward-one-way", false, "a forward costs D (host to host), not 2D")
	policyFS.IntVar(&f.forwardThreshold, "forward-threshold", 0, "requests waiting at a server before it forwards (0 = its cores)")
	policyFS.IntVar(&f.forwardHops, "forward-hops", 1, "how often one request may be forwarded (-1 = no limit)")
	fs.DurationVar(&f.recirc, "recirc", time.Duration(micro.DefaultRecirc*float64(time.Microsecond)), "switch policies: the time one recirculation adds to a request")
	fs.IntVar(&f.gatewayCores, "gateway-cores", 0, "software dispatcher cores (0 = offloaded switch)")
	fs.DurationVar(&f.gatewayCost, "gateway-cost", 350*time.Nanosecond, "software dispatcher cost per message")
	policyFS.IntVar(&f.connections, "connections", 0, "connections (Zipf-skewed), needed by hash, migrate, passive and passive-miss")
	policyFS.Float64Var(&f.zipfAlpha, "zipf-alpha", 0.5, "Zipf exponent of connection popularity")
	policyFS.DurationVar(&f.migrateInterval, "migrate-interval", 100*time.Microsecond, "connection migration period")
}

// config builds the scenario: the named --scenario, with every flag given
// on the command line applied over it; hosts overrides --hosts when > 0.
func (f *scenarioFlags) config(hosts int) (micro.Config, error) {
	named, err := micro.LookupScenario(f.name)
	if err != nil {
		return micro.Config{}, cmdutil.Usagef("--scenario: %w", err)
	}
	c := named.Config
	set := func(name string) bool { return f.fs != nil && changed(f.fs, name) }
	// Durations are checked here, naming the flag and its unit: the
	// scenario's own check sees µs without a flag ("delay -1 must be ≥ 0").
	for _, d := range []struct {
		name     string
		v        time.Duration
		positive bool
	}{
		{"delay", f.delay, false}, {"slo", f.slo, true}, {"slo-window", f.sloWindow, false}, {"service-mean", f.serviceMean, true},
		{"burst-mean-on", f.burstMeanOn, true}, {"stall-interval", f.stallInterval, false}, {"stall-duration", f.stallDuration, false},
		{"credit-ttl", f.creditTTL, false}, {"refresh", f.refresh, false}, {"recirc", f.recirc, false},
		{"gateway-cost", f.gatewayCost, false}, {"migrate-interval", f.migrateInterval, false},
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
		f.hosts = hosts
		c.Hosts = hosts
	} else if set("hosts") {
		c.Hosts = f.hosts
	}
	if set("cores-per-host") {
		c.CoresPerHost = f.coresPerHost
	}
	if set("granularity") {
		c.Granularity = micro.Granularity(f.granularity)
	}
	if set("load") {
		if !(f.load > 0 && f.load < 4) {
			return c, cmdutil.Usagef("--load %v must be in (0, 4)", f.load)
		}
		c.Load = f.load
	}
	if set("arrival-cv") {
		c.ArrivalCV = f.arrivalCV
	}
	if set("arrival-kind") {
		c.ArrivalKind = dist.ArrivalKind(f.arrivalKind)
	}
	if set("flows-per-core") {
		c.FlowsPerCore = f.flowsPerCore
	}
	if set("stale-reports") {
		c.StaleReports = f.staleReports
	}
	if set("forward-one-way") {
		c.ForwardOneWay = f.forwardOneWay
	}
	if set("service") {
		kind, err := dist.ParseServiceKind(f.service)
		if err != nil {
			return c, cmdutil.Usagef("--service: %w", err)
		}
		c.Service.Kind = kind
	}
	if set("service-mean") {
		c.Service.Mean = us(f.serviceMean)
	}
	if set("sigma") {
		c.Service.Sigma = f.sigma
	}
	if set("bimodal-p") || c.Service.Kind == dist.ServiceBimodal && c.Service.BimodalP == 0 {
		c.Service.BimodalP = f.bimodalP
	}
	if set("bimodal-ratio") || c.Service.Kind == dist.ServiceBimodal && c.Service.BimodalRatio == 0 {
		c.Service.BimodalRatio = f.bimodalRatio
	}
	if set("delay") {
		c.Delay = us(f.delay)
	}
	if set("slo") {
		c.SLO = us(f.slo)
	}
	if set("slo-window") {
		c.SLOWindow = us(f.sloWindow)
	}
	if set("burst-factor") || set("burst-on-fraction") || set("burst-mean-on") {
		b := c.Burst
		if !b.Enabled() { // the flags' defaults fill what a scenario without bursts lacks
			b = micro.Burst{Factor: f.burstFactor, OnFraction: f.burstOnFraction, MeanOn: us(f.burstMeanOn)}
		}
		if set("burst-factor") {
			b.Factor = f.burstFactor
		}
		if set("burst-on-fraction") {
			b.OnFraction = f.burstOnFraction
		}
		if set("burst-mean-on") {
			b.MeanOn = us(f.burstMeanOn)
		}
		c.Burst = b
	}
	if set("stall-interval") || set("stall-duration") {
		c.Stall = micro.Stall{Interval: us(f.stallInterval), Duration: us(f.stallDuration)}
		if f.stallInterval == 0 {
			c.Stall = micro.Stall{}
		}
	}
	if set("notify-loss") {
		c.NotifyLoss = f.notifyLoss
	}
	if set("credit-ttl") {
		c.CreditTTL = us(f.creditTTL)
	}
	if set("ttl-mode") {
		c.TTLMode = micro.TTLMode(f.ttlMode)
	} else if c.TTLMode == "" {
		c.TTLMode = micro.TTLSilence
	}
	if set("refresh") {
		c.Refresh = us(f.refresh)
	}
	if set("forward-threshold") {
		c.ForwardThreshold = f.forwardThreshold
	}
	if set("forward-hops") {
		c.ForwardHops = f.forwardHops
	}
	if set("gateway-cores") || set("gateway-cost") {
		c.Gateway = micro.Gateway{Cores: f.gatewayCores, PerMessage: us(f.gatewayCost)}
	}
	if set("recirc") {
		c.Recirc = us(f.recirc)
	} else if c.Recirc == 0 {
		c.Recirc = micro.DefaultRecirc
	}
	if set("connections") {
		c.Connections = f.connections
	}
	if set("zipf-alpha") || c.Connections > 0 && c.ZipfAlpha == 0 {
		c.ZipfAlpha = f.zipfAlpha
	}
	if set("migrate-interval") || c.MigrateInterval == 0 {
		c.MigrateInterval = us(f.migrateInterval)
	}
	if err := c.Validate(); err != nil {
		return c, cmdutil.Usagef("%w", err)
	}
	return c, nil
}

// maxParallel bounds --parallel: far beyond any machine's cores, and each
// concurrent run holds its requests in memory.
const maxParallel = 4096

// runFlags are the flags every experiment shares.
type runFlags struct {
	seeds    int
	seed     uint64
	requests int
	quick    bool
	parallel int
	outDir   string
	noPlots  bool
	format   output.Format
}

func (r *runFlags) bind(fs *pflag.FlagSet, outDir string) {
	fs.IntVar(&r.seeds, "seeds", 0, "seeds per cell (0 = the experiment's default)")
	fs.Uint64Var(&r.seed, "seed", 1, "first seed; the same seed gives identical output")
	fs.IntVar(&r.requests, "requests", 0, "measured requests per run (0 = the experiment's default)")
	fs.BoolVar(&r.quick, "quick", false, "a few-second variant (fewer seeds, requests and grid points)")
	fs.IntVar(&r.parallel, "parallel", 0, "concurrent runs (0 = GOMAXPROCS); never changes results")
	fs.StringVar(&r.outDir, "out-dir", outDir, "directory for PNG and SVG plots")
	fs.BoolVar(&r.noPlots, "no-plots", false, "do not write plots")
	output.AddFlag(fs, &r.format)
}

func (r *runFlags) validate() error {
	if r.parallel < 0 || r.parallel > maxParallel {
		return cmdutil.Usagef("--parallel %d: want 0..%d (0 = GOMAXPROCS)", r.parallel, maxParallel)
	}
	if r.seeds < 0 || r.seeds > 1000 {
		return cmdutil.Usagef("--seeds %d must be in [0, 1000]", r.seeds)
	}
	if r.requests < 0 || r.requests > micro.MaxRequests {
		return cmdutil.Usagef("--requests %d must be in [0, %d] (0 = the experiment's default; a run may hold all its requests in memory at once)", r.requests, micro.MaxRequests)
	}
	if r.seed == 0 {
		return cmdutil.Usagef("--seed must be ≥ 1")
	}
	if !r.noPlots {
		return cmdutil.CheckOutputDir("--out-dir", r.outDir)
	}
	return nil
}

func (r *runFlags) options(progress func(int, int)) micro.Options {
	return micro.Options{Seeds: r.seeds, Seed: r.seed, Requests: r.requests, Quick: r.quick, Parallel: r.parallel, Progress: progress}
}

// writeResult prints res and, unless disabled, its plots.
func writeResult(s *streams, r *runFlags, res micro.Plotter) error {
	if err := output.Print(s.Out, r.format, res); err != nil {
		return err
	}
	if r.noPlots {
		return nil
	}
	files, err := res.Plots(r.outDir)
	if err != nil {
		return err
	}
	cmdutil.PrintPlots(s, files)
	return nil
}

// simMicroOptions is `p4ctl sim micro`.
type simMicroOptions struct {
	scen       scenarioFlags
	run        runFlags
	policies   []string
	costs      []time.Duration
	dispCores  []int
	loads      []float64
	e3Axis     string
	e3SLO      string
	e3Burst    string
	e3Points   []float64
	fitted     []micro.Fitted
	markdown   string
	experiment string
	scenario   micro.Config
	parsed     []micro.Policy
}

func newSimMicroCmd(s *streams) *cobra.Command {
	o := &simMicroOptions{}
	cmd := &cobra.Command{
		Use:   "micro {e1|e2|e3|t40b|gateway|ttl|switch|figures|run}",
		Short: "Simulate µs-scale late binding (JBSQ/JIQ vs ingress balancing and movement)",
		Long: `Discrete-event simulation of N hosts × m cores behind an ingress or
dispatcher, with renewal arrivals of a chosen CV (one aggregate stream or
one flow per core), optional micro-bursts and host stalls, one-way network
delay D on every message a policy needs, and an SLO on end-to-end latency.

Experiments (each reproduces part of the late-binding study; the study's
figures are printed beside ours, labelled):
  e1       violations per policy on 16×8 cores at ρ=0.85 (box plot)
  e2       ideal-movement reduction Δ for m = 1…16 cores per host (95 % CIs)
  e3       violations against D/S; JBSQ with fixed, Little and tuned n
  t40b     Zipf(0.5) connection skew: static hash, migration, request credits
  gateway  a software dispatcher (1 core, 200–500 ns/message) against load
  ttl      credit TTL ablation under lost notifications and host stalls
  switch   the study's ideal dispatchers beside the switch's one-pass algorithm
  figures  every seed figure of the study these experiments compute (E1,
           E2, E3, T40b, gateway, TTL at their default sizes): the study's,
           ours with its 95 % CI, the rule, a verdict and the values chosen
           by looking at results (none for --scenario study)
  run      one scenario, the policies given by --policy

A tuned JBSQ(n*) is the bound with the fewest violations on seeds disjoint
from the scored ones, shown beside the Little bound.

E3 moves D/S along --axis (delay, service, product: D·S kept, unloaded:
2D + S kept), the SLO by --slo-rule and the bursts' on-period by
--burst-scale; every rule passes through the scenario's own point, and
--points picks the D/S values.

Policies: random, p2c, jsw, hash, migrate, passive, passive-miss
[+fwd|+ideal] (hash and the migrations need --connections); jbsq[:n][/least|
/random|/p2c] (n per host: 1..65535, inf or 0 = unbounded as the switch's
bound 0, default the Little bound ⌈m(1+2D/S)⌉); jsq (= jbsq:inf); jiq;
switch[:n][/random] and switch-jiq, the switch's own one-pass algorithm
(pkg/pipeline; --recirc is the time a recirculation adds).

Scenarios (--scenario): pooled (the default: each host's cores share one
queue, one H2 stream of CV 2), study (the late-binding study's documented
model: one CV-2.5 flow per core hashed to its core, early binding onto
per-core queues and late binding onto host queues, stale load reports,
forwarding at D per move without a hop limit, E3 at D = 4.5 µs and SLO
50 µs with S = D/x, a centralized gateway) or study-burst (an exploration:
bursts common to all hosts and three values chosen by looking at results,
listed as such). The scenario sets every flag's starting value; a flag
given explicitly overrides it. The same --seed gives byte-identical output.`,
		Example: `  p4ctl sim micro e1
  p4ctl sim micro e1 --scenario study
  p4ctl sim micro e3 --scenario study --quick -o json
  p4ctl sim micro figures --scenario study -o json
  p4ctl sim micro run --policy random --policy jbsq:32 --cores-per-host 4 --hosts 32`,
		ValidArgs: microExperiments,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) != 1 { // as a group without a subcommand (decision 24)
				return cmdutil.Usagef("%s what? %s (see '%s --help')", c.CommandPath(), strings.Join(microExperiments, ", "), c.CommandPath())
			}
			return nil
		},
		RunE: runE(o, s),
	}
	fs := cmd.Flags()
	o.scen.bind(fs, false)
	o.run.bind(fs, "out/sim-micro")
	fs.StringArrayVar(&o.policies, "policy", nil, "e1 and run: policy to run (repeatable)")
	fs.DurationSliceVar(&o.costs, "costs", []time.Duration{200 * time.Nanosecond, 350 * time.Nanosecond, 500 * time.Nanosecond}, "gateway: per-message costs")
	fs.IntSliceVar(&o.dispCores, "dispatcher-cores", []int{1}, "gateway: software dispatcher core counts")
	fs.Float64SliceVar(&o.loads, "loads", nil, "gateway: loads to sweep (empty: 0.025…0.85)")
	fs.Lookup("loads").DefValue = "" // no "(default [])": the usage text says what empty means
	fs.StringVar(&o.e3Axis, "axis", "", "e3: how D/S moves: "+micro.NameList(micro.E3Axes())+" (default: the scenario's, delay for both)")
	fs.StringVar(&o.e3SLO, "slo-rule", "", "e3: how the SLO moves along the axis: "+micro.NameList(micro.E3SLOs())+" (default: the scenario's, round-trip pooled, round-trip-hop study; with --axis naming another axis, fixed on the service axis and round-trip on the others)")
	fs.StringVar(&o.e3Burst, "burst-scale", "", "e3: how the bursts' mean on-period moves along the axis: "+micro.NameList(micro.E3Bursts())+" (default fixed)")
	fs.StringVar(&o.markdown, "markdown", "", "figures: also write the table as Markdown to this file (for docs/REPRODUCTION.md)")
	fs.Float64SliceVar(&o.e3Points, "points", nil, "e3: the D/S values to run (empty: the axis's grid)")
	fs.Lookup("points").DefValue = ""
	return cmd
}

// microExperimentFlags are the flags only some experiments read; given to
// another experiment they are a usage error rather than ignored.
func microExperimentFlags() map[string][]string {
	return map[string][]string{
		"axis": {"e3"}, "slo-rule": {"e3"}, "burst-scale": {"e3"}, "points": {"e3"},
		"costs": {"gateway"}, "dispatcher-cores": {"gateway"}, "loads": {"gateway"},
		"policy": {"e1", "run"}, "markdown": {"figures"},
	}
}

// Complete fills derived fields.
func (o *simMicroOptions) Complete(cmd *cobra.Command, args []string) error {
	o.experiment = strings.ToLower(args[0])
	flags := microExperimentFlags()
	for _, name := range slices.Sorted(maps.Keys(flags)) {
		if exps := flags[name]; changed(cmd.Flags(), name) && slices.Contains(microExperiments, o.experiment) && !slices.Contains(exps, o.experiment) {
			return cmdutil.Usagef("--%s applies to %s only, not %s", name, strings.Join(exps, " and "), o.experiment)
		}
	}
	for _, p := range o.policies {
		q, err := micro.ParsePolicy(p)
		if err != nil {
			return cmdutil.Usagef("--policy: %w", err)
		}
		o.parsed = append(o.parsed, q)
	}
	return nil
}

// Validate checks flags.
func (o *simMicroOptions) Validate() error {
	if err := cmdutil.CheckFiniteFloats(o.scen.fs); err != nil {
		return err
	}
	known := false
	for _, e := range microExperiments {
		known = known || e == o.experiment
	}
	if !known {
		return cmdutil.Usagef("unknown experiment %q (want one of %s)", o.experiment, strings.Join(microExperiments, ", "))
	}
	if err := o.run.validate(); err != nil {
		return err
	}
	sc, err := o.scen.config(0)
	if err != nil {
		return err
	}
	if axis := micro.E3Axis(strings.ToLower(o.e3Axis)); axis != "" && axis != sc.Sweep.E3Axis {
		sc.Sweep.E3Axis = axis
		sc.Sweep.E3SLO = "" // another axis: its own rule unless --slo-rule says
	}
	if o.e3SLO != "" {
		sc.Sweep.E3SLO = micro.E3SLO(strings.ToLower(o.e3SLO))
	}
	if o.e3Burst != "" {
		sc.Sweep.E3Burst = micro.E3Burst(strings.ToLower(o.e3Burst))
	}
	for _, x := range o.e3Points {
		if !(x > 0 && x <= 100) {
			return cmdutil.Usagef("--points: D/S %v must be in (0, 100]", x)
		}
	}
	if len(o.e3Points) > 0 {
		sc.Sweep.E3Points = o.e3Points
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
	for _, l := range o.loads {
		if !(l > 0 && l < 4) {
			return cmdutil.Usagef("--loads: %v must be in (0, 4)", l)
		}
	}
	for _, c := range o.costs {
		if c <= 0 {
			return cmdutil.Usagef("--costs: %v must be > 0", c)
		}
	}
	for _, n := range o.dispCores {
		if n < 1 {
			return cmdutil.Usagef("--dispatcher-cores: %d must be ≥ 1", n)
		}
	}
	if o.markdown != "" {
		if err := cmdutil.CheckOutputFile("--markdown", o.markdown); err != nil {
			return err
		}
	}
	if named, err := micro.LookupScenario(o.scen.name); err == nil {
		o.fitted = named.Fitted
	}
	return nil
}

// Run runs the experiment.
func (o *simMicroOptions) Run(ctx context.Context, s *streams) error {
	progress, done := cmdutil.NewProgress(s.Err, "sim micro "+o.experiment)
	defer done()
	opt := o.run.options(progress)
	var (
		res micro.Plotter
		err error
	)
	switch o.experiment {
	case "e1":
		res, err = micro.E1(ctx, o.scenario, o.parsed, opt)
	case "e2":
		res, err = micro.E2(ctx, o.scenario, opt)
	case "e3":
		res, err = micro.E3(ctx, o.scenario, opt)
	case "t40b":
		res, err = micro.T40b(ctx, o.scenario, opt)
	case "gateway":
		ns := make([]float64, len(o.costs))
		for i, c := range o.costs {
			ns[i] = float64(c) / float64(time.Nanosecond)
		}
		res, err = micro.GatewaySweep(ctx, o.scenario, ns, o.dispCores, o.loads, opt)
	case "ttl":
		res, err = micro.TTLAblation(ctx, o.scenario, opt)
	case "switch":
		res, err = micro.SwitchGap(ctx, o.scenario, opt)
	case "figures":
		var figs *micro.SeedFiguresResult
		if figs, err = micro.SeedFigures(ctx, o.scenario, o.fitted, opt); err == nil {
			res = figs
			err = writeMarkdown(o.markdown, "study", figs.Figures)
		}
	case "run":
		ps := o.parsed
		if len(ps) == 0 {
			ps = []micro.Policy{micro.MustPolicy("jbsq")}
		}
		res, err = micro.RunSet(ctx, o.scenario, ps, opt)
	}
	done()
	if err != nil {
		return err
	}
	return writeResult(s, &o.run, res)
}
