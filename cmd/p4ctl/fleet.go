package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/p4ctl/p4ctl/pkg/fleet"
	"github.com/p4ctl/p4ctl/pkg/output"
)

// fleetOptions are the flags of `p4ctl fleet`.
type fleetOptions struct {
	configFlag
	switches, unreachable, hours int
	outDir                       string
	noPlots, targetSites         bool
	format                       output.Format
}

func newFleetCmd(s *streams) *cobra.Command {
	o := &fleetOptions{}
	cmd := &cobra.Command{
		Use:   "fleet [--config FILE] [--switches 100] [--hours 8760] [--unreachable 1]",
		Short: "One controller, a fleet of embedded switches, replayed hours at full speed: measured",
		Long: `fleet starts --switches embedded switches in this process (P4Runtime on
loopback TCP ports) plus --unreachable targets nobody answers, runs the real
controller (p4ctl run's, replay clock unpaced) through --hours hours of the
configuration's carbon source, and prints hours per second, the p50/p99 of
one fleet-wide hourly update (submission to every reachable switch holding
the plan; grace period 0), RSS and goroutines over time, the final diff of
every reachable switch and p4ctl_target_lag_hours of the targets that lag.
Plots of memory over the hours and of the update-time CDF go to --out-dir.
Default configuration: examples/mumbai.yaml (its targets are ignored, unless
--target-sites: then switch i is target i and holds only its sites).
docs/SCALING.md has the figures of this machine.`,
		Args: cobra.NoArgs,
		RunE: runE(o, s),
	}
	f := cmd.Flags()
	o.configFlag.add(f)
	f.IntVar(&o.switches, "switches", 100, "embedded switches, 1..1000")
	f.IntVar(&o.unreachable, "unreachable", 1, "targets that never answer (loopback ports nobody listens on)")
	f.IntVar(&o.hours, "hours", 8760, "replayed hours")
	f.StringVar(&o.outDir, "out-dir", "out/fleet", "directory for PNG/SVG plots")
	f.BoolVar(&o.noPlots, "no-plots", false, "do not write plots")
	f.BoolVar(&o.targetSites, "target-sites", false, "switch i is the configuration's target i and holds only its sites (targets[].sites, p4ctl gen config --partition)")
	output.AddFlag(f, &o.format)
	return cmd
}

// Complete loads the configuration (the example by default).
func (o *fleetOptions) Complete(c *cobra.Command, _ []string) error {
	if o.ConfigPath == "" {
		o.ConfigPath = "examples/mumbai.yaml"
	}
	return o.load(c)
}

// Validate checks the sizes.
func (o *fleetOptions) Validate() error {
	if o.switches < 1 || o.switches > 1000 || o.unreachable < 0 || o.hours < 1 {
		return usageErrorf("--switches 1..1000, --unreachable ≥ 0, --hours ≥ 1")
	}
	if !o.noPlots {
		return checkOutputDir("--out-dir", o.outDir)
	}
	return nil
}

// fleetResult is the result with the plots written (its text is the
// result's; the plots are named on stderr, printPlots).
type fleetResult struct {
	*fleet.Result
	Plots []string `json:"plots,omitempty"`
}

// Run runs the fleet and prints the result.
func (o *fleetOptions) Run(ctx context.Context, s *streams) error {
	progress, done := newProgress(s.Err, "fleet")
	defer done()
	res, err := fleet.Run(ctx, fleet.Options{Config: o.cfg, Switches: o.switches, Unreachable: o.unreachable, Hours: o.hours, TargetSites: o.targetSites, Progress: progress})
	done()
	if err != nil {
		return err
	}
	out := fleetResult{Result: res}
	if !o.noPlots {
		if out.Plots, err = fleet.WritePlots(res, o.outDir); err != nil {
			return err
		}
	}
	if err := output.Print(s.Out, o.format, out); err != nil {
		return err
	}
	printPlots(s, out.Plots)
	return nil
}
