package main

import (
	"github.com/spf13/cobra"

	"github.com/p4ctl/p4ctl/pkg/cmdutil"
	"github.com/p4ctl/p4ctl/research/sim/micro"
)

func newTuneCmd(s *streams) *cobra.Command {
	return groupCmd("tune", "Choose dispatch parameters from simulation", newTuneJBSQCmd(s))
}

// tuneJBSQOptions is `p4ctl tune jbsq`: micro.TuneOptions bound to the
// command's flags.
type tuneJBSQOptions struct {
	micro.TuneOptions
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
	bindScenario(fs, &o.Scenario, true)
	bindRuns(fs, &o.Runs, "out/tune")
	o.Flags = cmdutil.Flags{Set: fs}
	fs.IntVar(&o.Cores, "cores", 128, "total cores (hosts = cores / cores-per-host)")
	fs.Float64Var(&o.Target, "target", 0.05, "largest acceptable SLO violation rate")
	fs.IntVar(&o.MaxHolds, "max-holds", 255, "the pool's max_holds: how often the switch resamples a request it cannot bind (--algorithm switch)")
	fs.StringVar(&o.OnFull, "on-full", "force", "the pool's on_full after max_holds: force or nack (a nack counts as a violation; --algorithm switch)")
	fs.StringVar(&o.Algorithm, "algorithm", micro.AlgorithmSwitch, "dispatcher to tune for: switch (the switch's one-pass algorithm; hosts must be a power of two) or ideal (the study's central JBSQ)")
	return cmd
}

// Complete has nothing to derive: Validate builds the scenario from the
// flags once they are checked.
func (o *tuneJBSQOptions) Complete(*cobra.Command, []string) error { return nil }
