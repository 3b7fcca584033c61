package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/p4ctl/p4ctl/pkg/cmdutil"
	"github.com/p4ctl/p4ctl/pkg/controller"
	"github.com/p4ctl/p4ctl/pkg/output"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

// applyOptions are the flags of `p4ctl apply`.
type applyOptions struct {
	configFlag
	hourFlags
	cmdutil.Flags
	conn   connFlags
	DryRun bool
	Grace  time.Duration
	Format output.Format

	now func() time.Time

	targets []controller.Target
}

func newApplyCmd(s *streams) *cobra.Command {
	o := &applyOptions{now: time.Now}
	cmd := &cobra.Command{
		Use:   "apply --config FILE [--grpc-addr HOST:PORT] [--at TIME | --hour N] [--dry-run]",
		Short: "Push the desired state to switches (hitless: new generation, flip, cleanup)",
		Long: `apply compiles the configuration for the chosen hour and makes every target
hold it, exactly as the daemon does each hour: it becomes the switch's
primary controller, reads what the switch holds, installs the new carbon
ranking under the inactive epoch, flips active_epoch in one write, waits
--grace and deletes the old generation. Re-running it writes nothing.
--dry-run reads the switch and prints the P4Runtime WriteRequests it would
send (protobuf text; -o json|yaml prints the name-based update plan), without
arbitrating or writing. Targets: --grpc-addr, else the configuration's.`,
		Args: cobra.NoArgs,
		RunE: runE(o, s),
	}
	f := cmd.Flags()
	o.configFlag.add(f)
	o.hourFlags.add(f)
	o.conn.add(f, "", 1, "election id to arbitrate with at --grpc-addr, and the one --dry-run's requests carry; configured targets use their own")
	f.BoolVar(&o.DryRun, "dry-run", false, "print the WriteRequests instead of sending them")
	f.DurationVar(&o.Grace, "grace", time.Second, "how long the old generation stays after the flip")
	output.AddFlag(f, &o.Format)
	return cmd
}

// Complete loads the configuration.
func (o *applyOptions) Complete(c *cobra.Command, _ []string) error {
	o.Flags = flagsOf(c)
	return o.load(c)
}

// Validate checks the flags and resolves the targets.
func (o *applyOptions) Validate() error {
	if err := o.RefuseEmpty(append([]string{"at"}, connFlagNames...)...); err != nil {
		return err
	}
	if err := o.HourOptions.Validate(); err != nil {
		return err
	}
	if err := o.conn.validate(false); err != nil {
		return err
	}
	if err := o.conn.refuseDeviceID(o.Flags, o.ConfigPath); err != nil {
		return err
	}
	if o.Grace < 0 {
		return cmdutil.Usagef("--grace must be ≥ 0")
	}
	if o.conn.ElectionID.IsZero() && !o.DryRun {
		return cmdutil.Usagef("--election-id must be ≥ 1 to write")
	}
	t, err := o.conn.targets(o.cfg, p4rt.ElectionID{})
	if err != nil {
		return err
	}
	o.targets = t
	return nil
}

// Run applies (or prints) the plan on every target.
func (o *applyOptions) Run(ctx context.Context, s *streams) error {
	p, err := controller.PlanHour(ctx, o.cfg, &o.HourOptions, o.now())
	if err != nil {
		return err
	}
	if o.DryRun {
		return o.dryRun(ctx, s, p)
	}
	grace := o.Grace
	if grace == 0 {
		grace = -1
	}
	res := &controller.ApplyResult{Hour: p.Hour, Policy: p.Effective.String(), Stale: p.Stale}
	for _, t := range o.targets {
		start := time.Now()
		c, err := dialTarget(t, true)
		if err != nil {
			return err
		}
		d := controller.NewDriverWithClient(t, c, controller.DriverOptions{Grace: grace, NoTakeover: true})
		err = func() error {
			defer c.Close()
			defer d.Close()
			cctx, cancel := context.WithTimeout(ctx, o.conn.Timeout)
			defer cancel()
			if err := probe(cctx, c, targetName(t)); err != nil {
				return err
			}
			if err := d.Connect(cctx); err != nil {
				return deviceHint(err, t.DeviceID)
			}
			rep, err := d.Sync(ctx, p)
			var ie *controller.InterruptedError
			if errors.As(err, &ie) {
				hint := "the switch is whole"
				if ie.LeftoverEntries > 0 {
					hint = "run the same apply again to delete them"
				}
				return fmt.Errorf("interrupted: %w; %s", err, hint)
			}
			if errors.Is(err, controller.ErrNotPrimary) {
				fix := "--election-id %s"
				if o.conn.GRPCAddr == "" {
					esc := func(s string) string { return strings.ReplaceAll(s, "%", "%%") }
					fix = "election_id: %s for target " + esc(t.Name) + " in " + esc(o.ConfigPath) + " (or --grpc-addr " + esc(t.Addr) + " --election-id %[1]s)"
				}
				return fmt.Errorf("%w\n%s", err, controller.NotPrimaryAdvice(c.State(), fix))
			}
			if err != nil {
				return err
			}
			res.Reports = append(res.Reports, controller.ApplyTarget{Report: rep, Total: time.Since(start)})
			return nil
		}()
		if err != nil {
			return err
		}
	}
	return output.Print(s.Out, o.Format, res)
}

func (o *applyOptions) dryRun(ctx context.Context, s *streams, p *controller.Plan) error {
	res := &controller.DryRunResult{Hour: p.Hour, Policy: p.Effective.String()}
	for _, t := range o.targets {
		c, err := dialTarget(t, false)
		if err != nil {
			return err
		}
		err = func() error {
			defer c.Close()
			cctx, cancel := context.WithTimeout(ctx, o.conn.Timeout)
			defer cancel()
			if err := probe(cctx, c, targetName(t)); err != nil {
				return err
			}
			d := controller.NewDriverWithClient(t, c, controller.DriverOptions{})
			if err := d.ConnectReadOnly(cctx); err != nil {
				return err
			}
			u, reqs, err := d.DryRun(cctx, p)
			if err != nil {
				return err
			}
			res.Add(t.Name, u, reqs)
			return nil
		}()
		if err != nil {
			return err
		}
	}
	return output.Print(s.Out, o.Format, res)
}
