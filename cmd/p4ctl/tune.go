package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/p4ctl/p4ctl/pkg/cmdutil"
	"github.com/p4ctl/p4ctl/research/sim/micro"
)

func newTuneCmd(s *streams) *cobra.Command {
	return groupCmd("tune", "Choose dispatch parameters from simulation", newTuneJBSQCmd(s))
}

// tuneJBSQOptions is `p4ctl tune jbsq`.
type tuneJBSQOptions struct {
	scen      scenarioFlags
	run       runFlags
	cores     int
	target    float64
	algorithm string
	maxHolds  int
	onFull    string
	tc        micro.TuneConfig
}

func newTuneJBSQCmd(s *streams) *cobra.Command {
	o := &tuneJBSQOptions{}
	cmd := &cobra.Command{
		Use:   "jbsq",
		Short: "Find the smallest JBSQ bound n per host that meets the SLO target",
		Long: `Simulates JBSQ(n) late binding for increasing n and reports the smallest n
whose SLO violation rate across seeds is at most --target, with the curve it
was read from. By default the simulated dispatcher is the switch's own
one-pass algorithm (--algorithm switch: per pass one aligned group of four
hosts, the first below the bound takes the request, else recirculate;
pkg/pipeline), the one the bound is pushed to; --algorithm ideal is the
late-binding study's central dispatcher (least outstanding among all hosts
below the bound). Completions are learned one network delay later. That n is what the controller
pushes as the bound parameter of the switch's set_pool action (per server,
i.e. per host). Bounds below the stability limit ⌈mρ(1+2D/S)⌉ cannot carry
the load and are not simulated; --load must be below 1 (at ρ ≥ 1 no bound
carries the load) and the stability limit at most 65535 (the switch's
16-bit bound). --max-holds and --on-full apply to --algorithm switch only.`,
		Example: `  p4ctl tune jbsq --delay 4.5us --service-mean 5us --cores 128 --load 0.85
  p4ctl tune jbsq --scenario study
  p4ctl tune jbsq --delay 20us --service-mean 5us --cores 128 --load 0.85 --slo 81us --target 0.01 -o json`,
		Args: cobra.NoArgs,
		RunE: runE(o, s),
	}
	fs := cmd.Flags()
	o.scen.bind(fs, true)
	o.run.bind(fs, "out/tune")
	fs.IntVar(&o.cores, "cores", 128, "total cores (hosts = cores / cores-per-host)")
	fs.Float64Var(&o.target, "target", 0.05, "largest acceptable SLO violation rate")
	fs.IntVar(&o.maxHolds, "max-holds", 255, "the pool's max_holds: how often the switch resamples a request it cannot bind (--algorithm switch)")
	fs.StringVar(&o.onFull, "on-full", "force", "the pool's on_full after max_holds: force or nack (a nack counts as a violation; --algorithm switch)")
	fs.StringVar(&o.algorithm, "algorithm", micro.AlgorithmSwitch, "dispatcher to tune for: switch (the switch's one-pass algorithm; hosts must be a power of two) or ideal (the study's central JBSQ)")
	return cmd
}

// tuneAlgorithmFlags are the flags only some --algorithm values read;
// given with another they are a usage error rather than ignored.
func tuneAlgorithmFlags() map[string][]string {
	return map[string][]string{"max-holds": {micro.AlgorithmSwitch}, "on-full": {micro.AlgorithmSwitch}}
}

// Complete has nothing to derive: Validate builds the scenario from the
// flags once they are checked.
func (o *tuneJBSQOptions) Complete(*cobra.Command, []string) error { return nil }

// Validate checks flags and builds the scenario.
func (o *tuneJBSQOptions) Validate() error {
	fs := o.scen.fs
	if err := cmdutil.CheckFiniteFloats(fs); err != nil {
		return err
	}
	switch o.algorithm {
	case micro.AlgorithmSwitch, micro.AlgorithmIdeal:
	default:
		return cmdutil.Usagef("--algorithm %q: want switch or ideal", o.algorithm)
	}
	flags := tuneAlgorithmFlags()
	for _, name := range slices.Sorted(maps.Keys(flags)) {
		if algs := flags[name]; changed(fs, name) && !slices.Contains(algs, o.algorithm) {
			return cmdutil.Usagef("--%s applies to --algorithm %s only, not %s", name, strings.Join(algs, " and "), o.algorithm)
		}
	}
	if !(o.target > 0 && o.target < 1) {
		return cmdutil.Usagef("--target %v must be in (0, 1)", o.target)
	}
	if o.maxHolds < 0 || o.maxHolds > 255 {
		return cmdutil.Usagef("--max-holds %d must be in [0, 255] (the switch's 8-bit hold count)", o.maxHolds)
	}
	if o.onFull != "force" && o.onFull != "nack" {
		return cmdutil.Usagef("--on-full %q: want force or nack", o.onFull)
	}
	if changed(fs, "load") && !(o.scen.load > 0 && o.scen.load < 1) {
		return cmdutil.Usagef("--load %v must be in (0, 1): at ρ ≥ 1 the cores saturate whatever the bound", o.scen.load)
	}
	if o.scen.coresPerHost < 1 || o.cores < o.scen.coresPerHost || o.cores%o.scen.coresPerHost != 0 {
		return cmdutil.Usagef("--cores %d must be a positive multiple of --cores-per-host %d", o.cores, o.scen.coresPerHost)
	}
	if err := o.run.validate(); err != nil {
		return err
	}
	sc, err := o.scen.config(o.cores / o.scen.coresPerHost)
	if err != nil {
		return err
	}
	if !(sc.Load > 0 && sc.Load < 1) { // a --scenario's own load
		return cmdutil.Usagef("--load %v (the scenario's) must be in (0, 1): at ρ ≥ 1 the cores saturate whatever the bound", sc.Load)
	}
	if err := micro.TuneLimits(sc); err != nil {
		return cmdutil.Usagef("--delay, --service-mean, --cores-per-host, --load: %w", err)
	}
	if o.algorithm == micro.AlgorithmSwitch {
		if h := sc.Hosts; h&(h-1) != 0 {
			return cmdutil.Usagef("--algorithm switch needs a power-of-two number of hosts (a switch pool's size), got --cores %d / --cores-per-host %d = %d; use --algorithm ideal", o.cores, o.scen.coresPerHost, h)
		}
		holds := o.maxHolds
		sc.SwitchMaxHolds, sc.SwitchOnFull = &holds, o.onFull
	}
	o.tc = micro.TuneConfig{Scenario: sc, Target: o.target, Algorithm: o.algorithm}
	return nil
}

// Run tunes and prints the result.
func (o *tuneJBSQOptions) Run(ctx context.Context, s *streams) error {
	progress, done := cmdutil.NewProgress(s.Err, "tune jbsq")
	o.tc.Options = o.run.options(progress)
	res, err := micro.TuneJBSQ(ctx, o.tc)
	done()
	if err != nil {
		return err
	}
	if err := writeResult(s, &o.run, res); err != nil {
		return err
	}
	if !res.Met {
		// Printed above (the curve is the answer); the exit status says
		// there is no bound to push, as for a tuned pool (docs/CONFIG.md).
		return exitCodeError{code: exitError, msg: fmt.Sprintf("no JBSQ bound meets the %.2g %% violation target (the best is n = %d): relax --target or --slo, or lower --load",
			100*res.Target, res.Bound)}
	}
	return nil
}
