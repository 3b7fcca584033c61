package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/p4ctl/p4ctl/pkg/cmdutil"
	"github.com/p4ctl/p4ctl/pkg/output"
	"github.com/p4ctl/p4ctl/research/configgen"
	"github.com/p4ctl/p4ctl/research/eval/scale"
)

// evalScaleOptions are the flags of `p4ctl eval scale`.
type evalScaleOptions struct {
	sites, regions []int
	policies       []string
	hours          int
	switches       int
	seed           uint64
	outDir         string
	noPlots, quick bool
	format         output.Format
}

func newEvalScaleCmd(s *streams) *cobra.Command {
	o := &evalScaleOptions{}
	cmd := &cobra.Command{
		Use:   "scale [--sites 10,100,1000,10000] [--regions 5,12,32]",
		Short: "Entries, table fit, hourly writes and compile time versus sites and regions",
		Long: `scale generates configurations (p4ctl gen config: sites around real
metros, latencies from geography) for every N of --sites and R of --regions,
compiles --hours consecutive hours of each policy without table limits, and
prints per (N, R, policy) the entries per table, whether they fit the v1model
program (BMv2, embedded target) and the TNA program, the writes of each
hitless hourly update (mean, largest, hours that wrote anything) and the
median compile time and allocations; plots of the curves go to --out-dir.
Timings are one process on this machine (its core count is printed);
performance claims are the benchmarks (make bench BENCH=BenchmarkScale).
With --switches S each point with at least S sites is also measured as a
fleet of S edge switches each serving the sites of its own location
(p4ctl gen config --partition, targets[].sites): the largest switch's
entries and whether they fit. docs/SCALING.md explains the results. The
largest default point (10 000 sites × 32 regions × 5 policies) takes about
a minute.`,
		Args: cobra.NoArgs,
		RunE: runE(o, s),
	}
	f := cmd.Flags()
	f.IntSliceVar(&o.sites, "sites", scale.DefaultSites(), "numbers of sites N, 1..65535, each once")
	f.IntSliceVar(&o.regions, "regions", scale.DefaultRegions(), "numbers of regions R (the first R catalog regions), 1..32, each once")
	f.StringSliceVar(&o.policies, "policies", scale.DefaultPolicies(), "policies, each once: "+strings.Join(scale.Policies(), ", ")+" (C+warm is stateful: eval carbon)")
	f.IntVar(&o.hours, "hours", 24, fmt.Sprintf("consecutive hours compiled per point (hours − 1 updates), 2..%d (the synthetic year from %s)", scale.MaxHours(scale.DefaultStart()), scale.DefaultStart().Format("2006-01-02")))
	f.Uint64Var(&o.seed, "seed", 1, "generator seed")
	f.StringVar(&o.outDir, "out-dir", "out/eval-scale", "directory for PNG/SVG plots")
	f.IntVar(&o.switches, "switches", 0, "also measure a fleet of this many edge switches with the sites partitioned among them (targets[].sites): the largest switch's state")
	f.BoolVar(&o.noPlots, "no-plots", false, "do not write plots")
	f.BoolVar(&o.quick, "quick", false, "a seconds-long run: N up to 1000, 6 hours (flags given explicitly win)")
	output.AddFlag(f, &o.format)
	cmd.PreRun = func(c *cobra.Command, _ []string) {
		if o.quick {
			if !c.Flags().Changed("sites") {
				o.sites = []int{10, 100, 1000}
			}
			if !c.Flags().Changed("hours") {
				o.hours = 6
			}
		}
	}
	return cmd
}

// Complete has nothing to load.
func (o *evalScaleOptions) Complete(*cobra.Command, []string) error { return nil }

// Validate checks the grid (scale.Options.Validate's rules, each error
// naming its flag) and the plot directory.
func (o *evalScaleOptions) Validate() error {
	for i, n := range o.sites {
		if n < 1 || n > 65535 {
			return cmdutil.Usagef("--sites %d: want 1..65535", n)
		}
		if slices.Contains(o.sites[:i], n) {
			return cmdutil.Usagef("--sites %d given twice", n)
		}
	}
	for i, r := range o.regions {
		if r < 1 || r > 32 {
			return cmdutil.Usagef("--regions %d: want 1..32", r)
		}
		if slices.Contains(o.regions[:i], r) {
			return cmdutil.Usagef("--regions %d given twice", r)
		}
	}
	for i, p := range o.policies {
		if !slices.Contains(scale.Policies(), p) {
			return cmdutil.Usagef("--policies %s: want %s (C+warm is stateful per request and compiles to no table contents: p4ctl eval carbon evaluates it)", p, strings.Join(scale.Policies(), ", "))
		}
		if slices.Contains(o.policies[:i], p) {
			return cmdutil.Usagef("--policies %s given twice", p)
		}
	}
	if o.switches < 0 || o.switches > configgen.MaxSwitches {
		return cmdutil.Usagef("--switches %d: want 0..%d", o.switches, configgen.MaxSwitches)
	}
	if maxH := scale.MaxHours(scale.DefaultStart()); o.hours < 2 || o.hours > maxH {
		return cmdutil.Usagef("--hours %d: want 2..%d (an update needs two hours; the synthetic carbon year ends after %d hours from %s)", o.hours, maxH, maxH, scale.DefaultStart().Format("2006-01-02"))
	}
	if err := (scale.Options{Sites: o.sites, Regions: o.regions, Policies: o.policies, Hours: o.hours}).Validate(); err != nil {
		return cmdutil.Usagef("%w", err) // the flag checks above cover it; kept in step with Measure
	}
	if !o.noPlots {
		return cmdutil.CheckOutputDir("--out-dir", o.outDir)
	}
	return nil
}

// scaleResult is the result with the plots written.
type scaleResult struct {
	*scale.Result
	Plots []string `json:"plots,omitempty"`
}

// Run measures, plots and prints.
func (o *evalScaleOptions) Run(ctx context.Context, s *streams) error {
	_, err := cmdutil.RunExperiment(s, o.format, "eval scale",
		func(progress func(done, total int)) (*scale.Result, error) {
			return scale.Measure(ctx, scale.Options{Sites: o.sites, Regions: o.regions, Policies: o.policies, Hours: o.hours, Seed: o.seed, Switches: o.switches, Progress: progress})
		},
		cmdutil.PlotsTo(o.noPlots, o.outDir, scale.WritePlots),
		func(r *scale.Result, files []string) any { return scaleResult{Result: r, Plots: files} })
	return err
}
