package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/p4ctl/p4ctl/pkg/cmdutil"
	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/controller"
	"github.com/p4ctl/p4ctl/pkg/output"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
	"github.com/p4ctl/p4ctl/pkg/regions"
	"github.com/spf13/cobra"
)

// planOptions are the flags of `p4ctl plan`.
type planOptions struct {
	configFlag
	hourFlags
	cmdutil.Flags
	Epoch  int
	Policy string
	Tables []string
	Target string
	Format output.Format

	now func() time.Time

	// Set by Complete.
	policy *regions.Policy
	tables map[string]bool
}

func newPlanCmd(s *streams) *cobra.Command {
	o := &planOptions{Epoch: 1, now: time.Now}
	cmd := &cobra.Command{
		Use:   "plan --config FILE [--at TIME | --hour N]",
		Short: "Compile policy into desired switch state",
		Long: `plan loads and validates a controller configuration, reads the carbon
intensity of the chosen hour from the configured source, and prints the
table entries the switch should hold (no switch is contacted). With
--target, the switch is that configured target: only the sites its sites:
list names (every site when it has none).

Time: --at takes RFC 3339 (2022-01-10T12:00:00Z) or 2022-01-10T12; --hour N
is N hours after the schedule's replay start (or the carbon data's first
hour). Default: the replay start in replay mode, else now. The offline model
covers one year: other dates are mapped to the same day and hour of it.`,
		Args: cobra.NoArgs,
		RunE: runE(o, s),
	}
	f := cmd.Flags()
	o.configFlag.add(f)
	o.hourFlags.add(f)
	f.IntVar(&o.Epoch, "epoch", 1, "epoch (generation) to install the carbon ranking under, 0..255")
	f.StringVar(&o.Policy, "policy", "", "override the configured policy (A, B, C, C+, D, C-cap)")
	f.StringSliceVar(&o.Tables, "table", nil, "print only these tables (e.g. carbon_rank,sla_feasibility)")
	f.StringVar(&o.Target, "target", "", "plan the state of this configured target (only the sites its sites: list names)")
	output.AddFlag(f, &o.Format)
	return cmd
}

// Complete loads the configuration and resolves the flags.
func (o *planOptions) Complete(c *cobra.Command, _ []string) error {
	o.Flags = flagsOf(c)
	if err := o.load(c); err != nil {
		return err
	}
	if o.Target != "" {
		t, ok := o.cfg.Target(o.Target)
		if !ok {
			return cmdutil.Usagef("--target %q: no such target in %s", o.Target, o.ConfigPath)
		}
		if len(t.Sites) > 0 {
			sub, _, err := o.cfg.WithSites(t.Sites)
			if err != nil {
				return fmt.Errorf("--target %s: %w", o.Target, err)
			}
			o.cfg = sub
		}
	}
	if o.Policy != "" {
		name, ok := config.CanonicalPolicy(o.Policy)
		if !ok {
			return cmdutil.Usagef("--policy %q: want A, B, C, C+, D or C-cap", o.Policy)
		}
		p, err := regions.ParsePolicy(name)
		if err != nil {
			return cmdutil.Usagef("--policy: %w", err)
		}
		o.policy = &p
	}
	if len(o.Tables) > 0 {
		o.tables = map[string]bool{}
		for _, t := range o.Tables {
			name := t
			if !strings.Contains(name, ".") {
				name = pipeline.Control + "." + name
			}
			if _, ok := pipeline.Schema().Table(name); !ok {
				return cmdutil.Usagef("--table %q: no such table in the pipeline", t)
			}
			o.tables[name] = true
		}
	}
	return nil
}

// Validate checks flag combinations and values.
func (o *planOptions) Validate() error {
	if err := o.RefuseEmpty("policy", "at", "table", "target"); err != nil {
		return err
	}
	if err := o.HourOptions.Validate(); err != nil {
		return err
	}
	if o.Epoch < 0 || o.Epoch > 255 {
		return cmdutil.Usagef("--epoch %d out of range 0..255", o.Epoch)
	}
	return nil
}

// Run compiles and prints the plan.
func (o *planOptions) Run(ctx context.Context, s *streams) error {
	st, err := controller.CompileHour(ctx, o.cfg, &o.HourOptions, o.now(), uint8(o.Epoch), o.policy)
	if err != nil {
		return err
	}
	if o.tables != nil {
		kept := st.Entries[:0:0]
		for _, e := range st.Entries {
			if o.tables[e.Table] {
				kept = append(kept, e)
			}
		}
		st.Entries = kept
	}
	return output.Print(s.Out, o.Format, st)
}
