package main

import (
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/p4ctl/p4ctl/pkg/cmdutil"
	"github.com/p4ctl/p4ctl/pkg/output"
	"github.com/p4ctl/p4ctl/research/sim/micro"
)

func dur(x float64) time.Duration { return time.Duration(x * float64(time.Microsecond)) }

// bindScenario binds the microsecond model's scenario to flags. tune
// (forTune) has --cores instead of --hosts and simulates JBSQ only, so the
// flags of other policies (load reports, forwarding, connections,
// migration) keep their defaults unexposed.
func bindScenario(fs *pflag.FlagSet, f *micro.ScenarioOptions, forTune bool) {
	d := micro.Scenario()
	fs.StringVar(&f.Name, "scenario", micro.ScenarioPooled, "named scenario the flags below start from: pooled (default: hosts pool their cores), study (the late-binding study's documented model, nothing fitted) or study-burst (an exploration with common bursts and three values chosen by looking at results); docs/REPRODUCTION.md §2. A flag given explicitly overrides the scenario's value; the defaults shown are pooled's")
	fs.StringVar(&f.Granularity, "granularity", string(micro.GranularityHost), "what a policy binds to: host (its cores share one queue), core (every core its own queue) or rss (early binding onto per-core queues, late binding onto host queues)")
	fs.DurationVar(&f.SLOWindow, "slo-window", 0, "judge the SLO on the p99 of windows of this length (0 = per request)")
	policyFS := fs
	if forTune {
		policyFS = pflag.NewFlagSet("not exposed by tune", pflag.ContinueOnError)
	} else {
		fs.IntVar(&f.Hosts, "hosts", d.Hosts, "number of hosts N")
	}
	fs.IntVar(&f.CoresPerHost, "cores-per-host", d.CoresPerHost, "cores per host m (one FCFS queue shared by the host's cores)")
	fs.Float64Var(&f.Load, "load", d.Load, "offered load ρ = λ·E[S]/(N·m)")
	fs.Float64Var(&f.ArrivalCV, "arrival-cv", d.ArrivalCV, "coefficient of variation of inter-arrival times (1 = Poisson)")
	fs.StringVar(&f.ArrivalKind, "arrival-kind", string(d.ArrivalKind), "how CV ≠ 1 is generated: h2 (balanced-means hyper-exponential; gamma below 1) or gamma")
	fs.IntVar(&f.FlowsPerCore, "flows-per-core", 0, "split arrivals into this many renewal flows per core, each of the arrival CV; random places a request by its flow (0 = one aggregate stream)")
	fs.StringVar(&f.Service, "service", string(d.Service.Kind), "service-time distribution: fixed, exp, bimodal, lognormal")
	fs.DurationVar(&f.ServiceMean, "service-mean", dur(d.Service.Mean), "mean service time S")
	fs.Float64Var(&f.Sigma, "sigma", d.Service.Sigma, "lognormal service: σ of ln(service time); 1 gives CV ≈ 1.31")
	fs.Float64Var(&f.BimodalP, "bimodal-p", 0.1, "bimodal: probability of a long request")
	fs.Float64Var(&f.BimodalRatio, "bimodal-ratio", 10, "bimodal: long/short service time")
	fs.DurationVar(&f.Delay, "delay", dur(d.Delay), "one-way network delay D (host → host costs 2D)")
	fs.DurationVar(&f.SLO, "slo", dur(d.SLO), "SLO on end-to-end latency (ingress arrival → reply back at the ingress)")
	fs.Float64Var(&f.BurstFactor, "burst-factor", 0, "micro-bursts: rate during on periods as a multiple of the mean (≤ 1 = off)")
	fs.Float64Var(&f.BurstOnFraction, "burst-on-fraction", 0.2, "micro-bursts: fraction of time on")
	fs.DurationVar(&f.BurstMeanOn, "burst-mean-on", 50*time.Microsecond, "micro-bursts: mean on-period")
	fs.DurationVar(&f.StallInterval, "stall-interval", 0, "host stalls: mean time between a host's pauses (0 = none)")
	fs.DurationVar(&f.StallDuration, "stall-duration", 100*time.Microsecond, "host stalls: pause length")
	fs.Float64Var(&f.NotifyLoss, "notify-loss", 0, "probability a completion notification is lost")
	fs.DurationVar(&f.CreditTTL, "credit-ttl", 0, "JBSQ credit TTL (0 = none)")
	fs.StringVar(&f.TTLMode, "ttl-mode", string(micro.TTLSilence), "what the TTL expires: silence (the switch's rule) or credit (per request)")
	policyFS.DurationVar(&f.Refresh, "refresh", dur(d.Refresh), "load-report period for p2c and jsw")
	policyFS.BoolVar(&f.StaleReports, "stale-reports", false, "p2c and jsw use each load report as it arrived, without adding what they sent since")
	policyFS.BoolVar(&f.ForwardOneWay, "forward-one-way", false, "a forward costs D (host to host), not 2D")
	policyFS.IntVar(&f.ForwardThreshold, "forward-threshold", 0, "requests waiting at a server before it forwards (0 = its cores)")
	policyFS.IntVar(&f.ForwardHops, "forward-hops", 1, "how often one request may be forwarded (-1 = no limit)")
	fs.DurationVar(&f.Recirc, "recirc", time.Duration(micro.DefaultRecirc*float64(time.Microsecond)), "switch policies: the time one recirculation adds to a request")
	fs.IntVar(&f.GatewayCores, "gateway-cores", 0, "software dispatcher cores (0 = offloaded switch)")
	fs.DurationVar(&f.GatewayCost, "gateway-cost", 350*time.Nanosecond, "software dispatcher cost per message")
	policyFS.IntVar(&f.Connections, "connections", 0, "connections (Zipf-skewed), needed by hash, migrate, passive and passive-miss")
	policyFS.Float64Var(&f.ZipfAlpha, "zipf-alpha", 0.5, "Zipf exponent of connection popularity")
	policyFS.DurationVar(&f.MigrateInterval, "migrate-interval", 100*time.Microsecond, "connection migration period")
}

// bindRuns binds the flags every experiment shares.
func bindRuns(fs *pflag.FlagSet, r *micro.RunOptions, outDir string) {
	fs.IntVar(&r.Seeds, "seeds", 0, "seeds per cell (0 = the experiment's default)")
	fs.Uint64Var(&r.Seed, "seed", 1, "first seed; the same seed gives identical output")
	fs.IntVar(&r.Requests, "requests", 0, "measured requests per run (0 = the experiment's default)")
	fs.BoolVar(&r.Quick, "quick", false, "a few-second variant (fewer seeds, requests and grid points)")
	fs.IntVar(&r.Parallel, "parallel", 0, "concurrent runs (0 = GOMAXPROCS); never changes results")
	fs.StringVar(&r.OutDir, "out-dir", outDir, "directory for PNG and SVG plots")
	fs.BoolVar(&r.NoPlots, "no-plots", false, "do not write plots")
	output.AddFlag(fs, &r.Format)
}

// simMicroOptions is `p4ctl sim micro`: micro.ExperimentOptions bound to
// the command's flags.
type simMicroOptions struct {
	micro.ExperimentOptions
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
		ValidArgs: micro.Experiments(),
		Args: func(c *cobra.Command, args []string) error {
			if len(args) != 1 { // as a group without a subcommand (decision 24)
				return cmdutil.Usagef("%s what? %s (see '%s --help')", c.CommandPath(), strings.Join(micro.Experiments(), ", "), c.CommandPath())
			}
			return nil
		},
		RunE: runE(o, s),
	}
	fs := cmd.Flags()
	bindScenario(fs, &o.Scenario, false)
	bindRuns(fs, &o.Runs, "out/sim-micro")
	o.Flags = cmdutil.Flags{Set: fs}
	fs.StringArrayVar(&o.Policies, "policy", nil, "e1 and run: policy to run (repeatable)")
	fs.DurationSliceVar(&o.Costs, "costs", []time.Duration{200 * time.Nanosecond, 350 * time.Nanosecond, 500 * time.Nanosecond}, "gateway: per-message costs")
	fs.IntSliceVar(&o.DispatcherCores, "dispatcher-cores", []int{1}, "gateway: software dispatcher core counts")
	fs.Float64SliceVar(&o.Loads, "loads", nil, "gateway: loads to sweep (empty: 0.025…0.85)")
	fs.Lookup("loads").DefValue = "" // no "(default [])": the usage text says what empty means
	fs.StringVar(&o.E3Axis, "axis", "", "e3: how D/S moves: "+micro.NameList(micro.E3Axes())+" (default: the scenario's, delay for both)")
	fs.StringVar(&o.E3SLO, "slo-rule", "", "e3: how the SLO moves along the axis: "+micro.NameList(micro.E3SLOs())+" (default: the scenario's, round-trip pooled, round-trip-hop study; with --axis naming another axis, fixed on the service axis and round-trip on the others)")
	fs.StringVar(&o.E3Burst, "burst-scale", "", "e3: how the bursts' mean on-period moves along the axis: "+micro.NameList(micro.E3Bursts())+" (default fixed)")
	fs.StringVar(&o.Markdown, "markdown", "", "figures: also write the table as Markdown to this file (for docs/REPRODUCTION.md)")
	fs.Float64SliceVar(&o.E3Points, "points", nil, "e3: the D/S values to run (empty: the axis's grid)")
	fs.Lookup("points").DefValue = ""
	return cmd
}

// Complete takes the experiment from the argument.
func (o *simMicroOptions) Complete(_ *cobra.Command, args []string) error {
	return o.ExperimentOptions.Complete(args[0])
}
