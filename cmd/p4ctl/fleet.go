package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/p4ctl/p4ctl/examples"
	"github.com/p4ctl/p4ctl/pkg/cmdutil"
	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/output"
	"github.com/p4ctl/p4ctl/research/fleet"
)

// fleetOptions are the flags of `p4ctl fleet`.
type fleetOptions struct {
	configFlag
	cmdutil.Flags
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
Default configuration: the built-in examples/mumbai.yaml (a configuration's
targets are ignored, unless --target-sites: then switch i is target i and
holds only its sites; --switches must not exceed the targets). Interrupted,
it prints the partial report and exits 1.
docs/SCALING.md has the figures of this machine.`,
		Args: cobra.NoArgs,
		RunE: runE(o, s),
	}
	f := cmd.Flags()
	o.configFlag.add(f)
	f.Lookup("config").Usage = "controller configuration file (YAML, docs/CONFIG.md; default: the built-in examples/mumbai.yaml)"
	f.IntVar(&o.switches, "switches", 100, "embedded switches, 1..1000")
	f.IntVar(&o.unreachable, "unreachable", 1, "targets that never answer (loopback ports nobody listens on), 0..1000")
	f.IntVar(&o.hours, "hours", 8760, "replayed hours")
	f.StringVar(&o.outDir, "out-dir", "out/fleet", "directory for PNG/SVG plots")
	f.BoolVar(&o.noPlots, "no-plots", false, "do not write plots")
	f.BoolVar(&o.targetSites, "target-sites", false, "switch i is the configuration's target i and holds only its sites (targets[].sites, p4ctl gen config --partition)")
	output.AddFlag(f, &o.format)
	return cmd
}

// Complete loads the configuration (the built-in examples/mumbai.yaml by
// default, wherever p4ctl runs).
func (o *fleetOptions) Complete(c *cobra.Command, _ []string) error {
	o.Flags = flagsOf(c)
	if err := o.RefuseEmpty("config"); err != nil {
		return err
	}
	if o.ConfigPath == "" {
		cfg, err := config.Parse(examples.Mumbai(), examples.MumbaiName)
		if err != nil {
			return fmt.Errorf("built-in configuration: %w", err)
		}
		o.cfg = cfg
		return nil
	}
	return o.load(c)
}

// Validate checks the sizes, each naming its flag.
func (o *fleetOptions) Validate() error {
	switch {
	case o.switches < 1 || o.switches > fleet.MaxSwitches:
		return cmdutil.Usagef("--switches %d: want 1..%d", o.switches, fleet.MaxSwitches)
	case o.unreachable < 0 || o.unreachable > fleet.MaxUnreachable:
		return cmdutil.Usagef("--unreachable %d: want 0..%d", o.unreachable, fleet.MaxUnreachable)
	case o.hours < 1:
		return cmdutil.Usagef("--hours %d: want ≥ 1", o.hours)
	case o.targetSites && len(o.cfg.Targets) < o.switches:
		return cmdutil.Usagef("--target-sites with --switches %d: the configuration has %d targets; give --switches %d or fewer (or a configuration with more targets)",
			o.switches, len(o.cfg.Targets), len(o.cfg.Targets))
	}
	if !o.noPlots {
		return cmdutil.CheckOutputDir("--out-dir", o.outDir)
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
	res, err := cmdutil.RunExperiment(s, o.format, "fleet",
		func(progress func(done, total int)) (*fleet.Result, error) {
			return fleet.Run(ctx, fleet.Options{Config: o.cfg, Switches: o.switches, Unreachable: o.unreachable, Hours: o.hours, TargetSites: o.targetSites, Progress: progress})
		},
		cmdutil.PlotsTo(o.noPlots, o.outDir, fleet.WritePlots),
		func(r *fleet.Result, files []string) any { return fleetResult{Result: r, Plots: files} })
	if err != nil {
		return err
	}
	// Interrupted (SIGINT, SIGTERM): the report above is partial, and the
	// exit status says so, as demo's and sim's do.
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("fleet: interrupted after %d of %d hours (%w): the report above is partial", len(res.UpdateMs), o.hours, err)
	}
	return nil
}
