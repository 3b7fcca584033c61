package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/p4ctl/p4ctl/pkg/cmdutil"
	"github.com/p4ctl/p4ctl/pkg/compiler"
	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/controller"
	"github.com/p4ctl/p4ctl/pkg/output"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

// diffOptions are the flags of `p4ctl diff`.
type diffOptions struct {
	configFlag
	hourFlags
	cmdutil.Flags
	conn   connFlags
	Format output.Format

	now func() time.Time

	targets []controller.Target
}

func newDiffCmd(s *streams) *cobra.Command {
	o := &diffOptions{now: time.Now}
	cmd := &cobra.Command{
		Use:   "diff --config FILE [--grpc-addr HOST:PORT] [--at TIME | --hour N]",
		Short: "Show drift between the desired and the actual switch state (exit 1 on drift, 3 on error)",
		Long: `diff reads every entry the switch holds (no arbitration needed: it only
reads), compiles the configuration for the chosen hour under the switch's
active epoch, and prints what differs: + entries missing from the switch,
~ entries with other actions, - entries the switch should not hold.
Exit status, as kubectl diff's: 0 when the switch holds exactly the desired
state, 1 on drift (and only then), 2 on usage errors (a configuration
that is missing, unreadable or invalid too), 3 on any other error (the
switch is unreachable or refuses the read, …). Targets: --grpc-addr, else
the configuration's.`,
		Args: cobra.NoArgs,
		RunE: runE(o, s),
	}
	f := cmd.Flags()
	o.configFlag.add(f)
	o.hourFlags.add(f)
	o.conn.add(f, "", 0, "unused: diff only reads and never arbitrates (accepted for p4runtime-shell compatibility)")
	output.AddFlag(f, &o.Format)
	return cmd
}

// Complete loads the configuration. A configuration that is missing,
// unreadable or invalid is a usage error (2, the rule of every command);
// one that loads but cannot be used (a tune block no bound meets) means
// diff could not check: exitDiffError, never 1, which means drift alone.
func (o *diffOptions) Complete(c *cobra.Command, _ []string) error {
	o.Flags = flagsOf(c)
	return diffError(o.load(c))
}

// Validate checks the flags and resolves the targets.
func (o *diffOptions) Validate() error {
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
	t, err := o.conn.targets(o.cfg, p4rt.ElectionID{})
	if err != nil {
		return err
	}
	o.targets = t
	return nil
}

// diffResult is the drift of every target.
type diffResult struct {
	Hour    time.Time    `json:"hour"`
	Policy  string       `json:"policy"`
	Stale   bool         `json:"stale,omitempty"`
	Targets []targetDiff `json:"targets"`
}

type targetDiff struct {
	Target      string           `json:"target"`
	Addr        string           `json:"addr"`
	ActiveEpoch uint8            `json:"active_epoch"`
	Drift       bool             `json:"drift"`
	Changes     compiler.Changes `json:"changes"`
}

func (r *diffResult) WriteText(w io.Writer) error {
	for _, t := range r.Targets {
		fmt.Fprintf(w, "# %s (%s), active epoch %d, desired: policy %s at %s\n", t.Target, t.Addr, t.ActiveEpoch, r.Policy, r.Hour.Format(time.RFC3339))
		if !t.Drift {
			fmt.Fprintln(w, "no drift: the switch holds exactly the desired state")
			continue
		}
		for _, l := range []struct {
			mark string
			es   []compiler.Entry
		}{{"+", t.Changes.Insert}, {"~", t.Changes.Modify}, {"-", t.Changes.Delete}} {
			for _, e := range l.es {
				fmt.Fprintf(w, "%s %s\n", l.mark, e.String())
			}
		}
		fmt.Fprintf(w, "drift: %d missing, %d different, %d extra\n", len(t.Changes.Insert), len(t.Changes.Modify), len(t.Changes.Delete))
	}
	return nil
}

// Run reads every target and prints the drift; exit 1 when any drifted,
// exitDiffError on any error but a usage error.
func (o *diffOptions) Run(ctx context.Context, s *streams) error {
	return diffError(o.run(ctx, s))
}

// diffError gives err diff's exit code: usage errors and exit codes as
// they are (2; 1 on drift), any other error exitDiffError.
func diffError(err error) error {
	if err == nil {
		return nil
	}
	var ue cmdutil.UsageError
	var ec exitCodeError
	if errors.As(err, &ue) || errors.As(err, &ec) {
		return err
	}
	return codedError{code: exitDiffError, err: err}
}

func (o *diffOptions) run(ctx context.Context, s *streams) error {
	p, err := controller.PlanHour(ctx, o.cfg, &o.HourOptions, o.now())
	if err != nil {
		return err
	}
	res := &diffResult{Hour: p.Hour, Policy: p.Effective.String(), Stale: p.Stale}
	drift := false
	for _, t := range o.targets {
		td, err := diffTarget(ctx, t, p, o.conn.Timeout)
		if err != nil {
			return err
		}
		drift = drift || td.Drift
		res.Targets = append(res.Targets, td)
	}
	if err := output.Print(s.Out, o.Format, res); err != nil {
		return err
	}
	if drift {
		if o.At == "" && o.Hour < 0 {
			// The README walk-through's trap: diff after apply --hour 3
			// compares with the default hour, not the one pushed.
			fmt.Fprintf(s.Err, "note: compared with the plan for %s (no --hour or --at: %s); a switch pushed for another hour (apply --hour N, a replay) drifts from it in its carbon ranking: give diff the same --hour or --at\n",
				p.Hour.Format(time.RFC3339), o.defaultHourSource())
		}
		return exitCodeError{code: exitError}
	}
	return nil
}

// defaultHourSource says where the hour compared with came from when
// neither --hour nor --at was given.
func (o *diffOptions) defaultHourSource() string {
	if o.cfg.Schedule.Mode == config.ScheduleReplay && o.cfg.Schedule.Replay != nil {
		return "the configuration's replay start"
	}
	return "the current hour"
}

func diffTarget(ctx context.Context, t controller.Target, p *controller.Plan, timeout time.Duration) (targetDiff, error) {
	c, err := dialTarget(t, false)
	if err != nil {
		return targetDiff{}, err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := probe(ctx, c, targetName(t)); err != nil {
		return targetDiff{}, err
	}
	idx, err := c.Index(ctx)
	if err != nil {
		return targetDiff{}, fmt.Errorf("target %s: %w", t.Name, err)
	}
	tr, err := controller.NewTranslator(idx)
	if err != nil {
		return targetDiff{}, fmt.Errorf("target %s: %w", t.Name, err)
	}
	cur, err := controller.ReadState(ctx, c, tr)
	if err != nil {
		return targetDiff{}, fmt.Errorf("target %s: %w", t.Name, err)
	}
	capa := tr.Capacity("the switch's P4Info")
	want, err := p.CompileFor(t.Sites, &capa, cur.ActiveEpoch())
	if err != nil {
		return targetDiff{}, err
	}
	ch := compiler.Diff(cur, want)
	return targetDiff{Target: t.Name, Addr: t.Addr, ActiveEpoch: cur.ActiveEpoch(), Drift: !ch.Empty(), Changes: ch}, nil
}
