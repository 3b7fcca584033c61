package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/p4ctl/p4ctl/pkg/sim/micro"
)

func newTuneCmd(s *streams) *cobra.Command {
	return groupCmd("tune", "Choose dispatch parameters from simulation", newTuneJBSQCmd(s))
}

// tuneJBSQOptions is `p4ctl tune jbsq`.
type tuneJBSQOptions struct {
	scen   scenarioFlags
	run    runFlags
	cores  int
	target float64
	tc     micro.TuneConfig
}

func newTuneJBSQCmd(s *streams) *cobra.Command {
	o := &tuneJBSQOptions{}
	cmd := &cobra.Command{
		Use:   "jbsq",
		Short: "Find the smallest JBSQ bound n per host that meets the SLO target",
		Long: `Simulates JBSQ(n) late binding (least-outstanding choice among hosts below
the bound, completions learned one network delay later) for increasing n and
reports the smallest n whose SLO violation rate across seeds is at most
--target, with the curve it was read from. That n is what the controller
pushes as the bound parameter of the switch's set_pool action (per server,
i.e. per host). Bounds below the stability limit ⌈mρ(1+2D/S)⌉ cannot carry
the load and are not simulated.`,
		Example: `  p4ctl tune jbsq --delay 4.5us --service-mean 5us --cores 128 --load 0.85
  p4ctl tune jbsq --delay 20us --service-mean 5us --cores 128 --load 0.85 --slo 81us --target 0.01 -o json`,
		Args: cobra.NoArgs,
		RunE: runE(o, s),
	}
	fs := cmd.Flags()
	o.scen.bind(fs, true)
	o.run.bind(fs, "out/tune")
	fs.IntVar(&o.cores, "cores", 128, "total cores (hosts = cores / cores-per-host)")
	fs.Float64Var(&o.target, "target", 0.05, "largest acceptable SLO violation rate")
	return cmd
}

// Complete builds the scenario.
func (o *tuneJBSQOptions) Complete(*cobra.Command, []string) error {
	if o.scen.coresPerHost < 1 || o.cores < o.scen.coresPerHost || o.cores%o.scen.coresPerHost != 0 {
		return usageErrorf("--cores %d must be a positive multiple of --cores-per-host %d", o.cores, o.scen.coresPerHost)
	}
	sc, err := o.scen.config(o.cores / o.scen.coresPerHost)
	if err != nil {
		return err
	}
	o.tc = micro.TuneConfig{Scenario: sc, Target: o.target}
	return nil
}

// Validate checks flags.
func (o *tuneJBSQOptions) Validate() error {
	if !(o.target > 0 && o.target < 1) {
		return usageErrorf("--target %v must be in (0, 1)", o.target)
	}
	return o.run.validate()
}

// Run tunes and prints the result.
func (o *tuneJBSQOptions) Run(ctx context.Context, s *streams) error {
	progress, done := newProgress(s.Err, "tune jbsq")
	o.tc.Options = o.run.options(progress)
	res, err := micro.TuneJBSQ(ctx, o.tc)
	done()
	if err != nil {
		return err
	}
	return writeResult(s, &o.run, res)
}
