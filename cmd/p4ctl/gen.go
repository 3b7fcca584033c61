package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/p4ctl/p4ctl/pkg/cmdutil"
	"github.com/p4ctl/p4ctl/pkg/output"
	"github.com/p4ctl/p4ctl/research/configgen"
)

func newGenCmd(s *streams) *cobra.Command {
	return groupCmd("gen", "Generate inputs for scale tests and planning", newGenConfigCmd(s))
}

// genConfigOptions are the flags of `p4ctl gen config`.
type genConfigOptions struct {
	cmdutil.Flags
	Sites, Regions, Switches int
	Partition                bool
	Policy                   string
	Seed                     uint64
	Out                      string
	Format                   output.Format
}

// genReport is what `gen config --file FILE` prints: the generator's report
// and where the configuration went.
type genReport struct {
	File string `json:"file"`
	configgen.Report
}

// WriteText renders the report for a person.
func (r genReport) WriteText(w io.Writer) error {
	_, err := fmt.Fprintf(w, "wrote %s: %d generated sites around %d metros, %d regions, %d switches, policy %s (seed %d)\nlatency: P95 = %.0f ms access + %.2f × great-circle fibre RTT (%s; RMS residual %.0f ms)\ncold starts for: %s\n",
		r.File, r.Sites, r.Metros, r.Regions, r.Switches, r.Policy, r.Seed, r.Model.AccessMs, r.Model.Stretch, r.Model.Fit, r.Model.RMSMs, strings.Join(r.ColdRegions, ", "))
	if err == nil && r.SitesPerSwitch[1] > 0 {
		_, err = fmt.Fprintf(w, "sites partitioned among the switches (targets[].sites): %d to %d per switch\n", r.SitesPerSwitch[0], r.SitesPerSwitch[1])
	}
	if err == nil && len(r.ProxyZones) > 0 {
		_, err = fmt.Fprintf(w, "carbon: zones %s use the proxy model (not measured data)\n", strings.Join(r.ProxyZones, ", "))
	}
	return err
}

func newGenConfigCmd(s *streams) *cobra.Command {
	o := &genConfigOptions{}
	cmd := &cobra.Command{
		Use:   "config --sites N --regions R [--switches S] [--file FILE]",
		Short: "Generate a large controller configuration: sites around real metros, latencies from geography",
		Long: `config writes a controller configuration (docs/CONFIG.md) with N client
sites clustered around large metropolitan areas, the first R catalog regions
(5 and 12 are the paper's pools, 32 the whole catalog) and S switches. Each
site's P95 to each region is derived from geography: access + stretch ×
the great-circle round trip at the speed of light in fibre, with access and
stretch fitted to the paper's measured Mumbai profile and the access term
varied per site; cold starts are the paper's per-region cold overheads where
it measured them. Everything is labelled as generated (the file's header,
site names gen-NNNNN-<metro>-K); docs/SCALING.md describes the model.

The configuration goes to stdout, as YAML with a header saying how it was
generated (-o json: as JSON, which config files may be too, without the
header), or to --file FILE as YAML with a report on stdout (-o json for
machine-readable). Table sizes are not checked here: compile
it (p4ctl plan) to see whether a target holds it. With --partition each
switch serves the sites of its own location (targets[].sites) and holds
only those: p4ctl plan --target edge-0000 shows one switch's state.`,
		Args: cobra.NoArgs,
		RunE: runE(o, s),
	}
	f := cmd.Flags()
	f.IntVar(&o.Sites, "sites", 100, "client sites, 1..65535")
	f.IntVar(&o.Regions, "regions", 12, "the first R catalog regions, 1..32")
	f.IntVar(&o.Switches, "switches", 1, "targets (edge switches), 0..10000")
	f.BoolVar(&o.Partition, "partition", false, "give each switch the sites of its location (targets[].sites): switches placed in the metros in proportion to their sites")
	f.StringVar(&o.Policy, "policy", "C", "policy of the configuration (A, B, C, C+, D, C-cap)")
	f.Uint64Var(&o.Seed, "seed", 1, "generator seed: the same seed writes the same file")
	f.StringVar(&o.Out, "file", "", "write the configuration to FILE and a report to stdout (default: the configuration to stdout)")
	output.AddFlag(f, &o.Format)
	return cmd
}

// Complete records the flags given (nothing to load).
func (o *genConfigOptions) Complete(c *cobra.Command, _ []string) error {
	o.Flags = flagsOf(c)
	return nil
}

// Validate checks the sizes and the output file.
func (o *genConfigOptions) Validate() error {
	if err := o.RefuseEmpty("policy", "file"); err != nil {
		return err
	}
	switch {
	case o.Sites < 1 || o.Sites > configgen.MaxSites:
		return cmdutil.Usagef("--sites %d: want 1..%d", o.Sites, configgen.MaxSites)
	case o.Regions < 1 || o.Regions > 32:
		return cmdutil.Usagef("--regions %d: want 1..32", o.Regions)
	case o.Switches < 0 || o.Switches > configgen.MaxSwitches:
		return cmdutil.Usagef("--switches %d: want 0..%d", o.Switches, configgen.MaxSwitches)
	case o.Partition && (o.Switches < 1 || o.Switches > o.Sites):
		return cmdutil.Usagef("--partition with %d switches and %d sites: want 1 ≤ switches ≤ sites", o.Switches, o.Sites)
	}
	return cmdutil.CheckOutputFile("--file", o.Out)
}

// Run generates and writes the configuration.
func (o *genConfigOptions) Run(ctx context.Context, s *streams) error {
	asJSON := (o.Out == "" || o.Out == "-") && o.Format == output.JSON // the same configuration, as JSON (no header: JSON has no comments)
	built, err := configgen.Build(ctx, configgen.Options{Sites: o.Sites, Regions: o.Regions, Switches: o.Switches, Partition: o.Partition, Policy: o.Policy, Seed: o.Seed}, !asJSON)
	if err != nil && !errors.Is(err, context.Canceled) { // Ctrl-C ends it at once, nothing written
		return cmdutil.Usagef("%w", err)
	} else if err != nil {
		return err
	}
	if asJSON {
		return output.Print(s.Out, output.JSON, built.Config)
	}
	if o.Out == "" || o.Out == "-" {
		_, err := s.Out.Write(built.YAML)
		return err
	}
	if err := os.WriteFile(o.Out, built.YAML, 0o644); err != nil {
		return fmt.Errorf("gen config: %w", err)
	}
	return output.Print(s.Out, o.Format, genReport{File: o.Out, Report: built.Report})
}
