package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/p4ctl/p4ctl/pkg/cmdutil"
	"github.com/p4ctl/p4ctl/pkg/output"
	"github.com/p4ctl/p4ctl/research/eval/scale"
)

// evalScaleOptions are the flags of `p4ctl eval scale`:
// scale.CommandOptions bound to the command's.
type evalScaleOptions struct{ scale.CommandOptions }

func newEvalScaleCmd(s *cmdutil.Streams) *cobra.Command {
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
	f.IntSliceVar(&o.Sites, "sites", scale.DefaultSites(), "numbers of sites N, 1..65535, each once")
	f.IntSliceVar(&o.Regions, "regions", scale.DefaultRegions(), "numbers of regions R (the first R catalog regions), 1..32, each once")
	f.StringSliceVar(&o.Policies, "policies", scale.DefaultPolicies(), "policies, each once: "+strings.Join(scale.Policies(), ", ")+" (C+warm is stateful: eval carbon)")
	f.IntVar(&o.Hours, "hours", 24, fmt.Sprintf("consecutive hours compiled per point (hours − 1 updates), 2..%d (the synthetic year from %s)", scale.MaxHours(scale.DefaultStart()), scale.DefaultStart().Format("2006-01-02")))
	f.Uint64Var(&o.Seed, "seed", 1, "generator seed")
	f.StringVar(&o.OutDir, "out-dir", "out/eval-scale", "directory for PNG/SVG plots")
	f.IntVar(&o.Switches, "switches", 0, "also measure a fleet of this many edge switches with the sites partitioned among them (targets[].sites): the largest switch's state")
	f.BoolVar(&o.NoPlots, "no-plots", false, "do not write plots")
	f.BoolVar(&o.Quick, "quick", false, "a seconds-long run: N up to 1000, 6 hours (flags given explicitly win)")
	output.AddFlag(f, &o.Format)
	return cmd
}

// Complete applies --quick.
func (o *evalScaleOptions) Complete(c *cobra.Command, _ []string) error {
	o.Flags = flagsOf(c)
	return o.CommandOptions.Complete()
}
