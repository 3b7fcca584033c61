package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/p4ctl/p4ctl/pkg/cmdutil"
	"github.com/p4ctl/p4ctl/pkg/compiler"
)

// Exit codes: 0 success, 1 error (or drift, for diff), 2 usage (also a
// configuration whose state does not fit the target's tables); diff, as
// kubectl diff, keeps 1 for drift alone and exits exitDiffError on any
// other error, so a script can tell drift from failure.
const (
	exitOK        = 0
	exitError     = 1
	exitUsage     = 2
	exitDiffError = 3
)

// streams are the command's output streams (tests pass buffers).
type streams = cmdutil.Streams

// exitCodeError carries a specific exit code with an optional message (an
// empty message prints nothing, e.g. `diff` exiting 1 on drift).
type exitCodeError struct {
	code int
	msg  string
}

func (e exitCodeError) Error() string { return e.msg }

// codedError is an error that exits with code (printed as any error).
type codedError struct {
	code int
	err  error
}

func (e codedError) Error() string { return e.err.Error() }
func (e codedError) Unwrap() error { return e.err }

func newRootCmd(s *streams) *cobra.Command {
	root := &cobra.Command{
		Use:   "p4ctl",
		Short: "Carbon-aware, SLA-constrained request routing compiled into P4 switches",
		Long: `p4ctl compiles routing policy (SLA feasibility, carbon ranking, late-binding
dispatch) into P4 table entries, pushes them over P4Runtime to BMv2, Tofino or
its embedded target, keeps them right hour by hour, and reproduces the research
evaluations behind them.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return cmdutil.FlagError(err, c.CommandPath())
	})
	root.AddCommand(
		newVersionCmd(s),
		newEvalCmd(s),
		newSimCmd(s),
		newTuneCmd(s),
		newSwitchCmd(s),
		newRunCmd(s),
		newDemoCmd(s),
		newPlanCmd(s),
		newDiffCmd(s),
		newApplyCmd(s),
		newGetCmd(s),
		newPushCmd(s),
		newServeCmd(s),
		newLoadgenCmd(s),
		newGenCmd(s),
		newFleetCmd(s),
	)
	root.SetHelpCommand(newHelpCmd())
	// cobra adds `completion` when the command runs; made now, it gets a
	// group's RunE: without a shell, or with an unknown one, it is a usage
	// error (exit 2), where cobra's own printed its help and exited 0.
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" && c.Run == nil && c.RunE == nil {
			c.Args = cobra.NoArgs
			c.RunE = groupRunE
		}
	}
	registerCompletions(root)
	return root
}

// newHelpCmd is `p4ctl help [command]`: cobra's, except that an unknown
// topic is a usage error (exit 2) rather than the root's help and exit 0.
func newHelpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		Long:  "help prints the help of any command: p4ctl help [path to command], as p4ctl [path to command] --help.",
		ValidArgsFunction: func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			cmd, _, err := c.Root().Find(args)
			if err != nil || cmd == nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var out []cobra.Completion
			for _, sc := range cmd.Commands() {
				if sc.IsAvailableCommand() && strings.HasPrefix(sc.Name(), toComplete) {
					out = append(out, cobra.CompletionWithDesc(sc.Name(), sc.Short))
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			cmd, rest, err := c.Root().Find(args)
			if err != nil || cmd == nil || len(rest) > 0 {
				return cmdutil.Usagef("unknown help topic %q (see '%s --help')", strings.Join(args, " "), c.Root().CommandPath())
			}
			cmd.InitDefaultHelpFlag()
			cmd.InitDefaultVersionFlag()
			return cmd.Help()
		},
	}
}

// flagValues are the values shell completion offers for flags that take
// one of a fixed set, by flag name and, where commands differ, by command
// path ("" = any command).
var flagValues = map[string]map[string][]string{
	"output":        {"": {"table", "json", "yaml"}},
	"policy":        {"p4ctl plan": {"A", "B", "C", "C+", "D", "C-cap"}, "p4ctl gen config": {"A", "B", "C", "C+", "D", "C-cap"}, "p4ctl sim micro": {"random", "p2c", "jsw", "hash", "migrate", "jbsq", "jsq", "jiq"}, "p4ctl sim serverless": {"late", "early", "early-random", "early-exec", "pathfinder"}},
	"log-format":    {"": {"text", "json"}},
	"log-level":     {"": {"debug", "info", "warn", "error"}},
	"action":        {"": {"verify", "verify-and-save", "verify-and-commit", "commit", "reconcile-and-commit"}},
	"mode":          {"p4ctl serve": {"sleep", "busy"}},
	"metric":        {"": {"lca", "direct"}},
	"signal":        {"": {"lca", "direct", "marginal"}},
	"fill":          {"": {"none", "previous", "linear"}},
	"cold-missing":  {"": {"exclude", "warm"}},
	"latency-model": {"": {"p95", "sampled"}},
	"service":       {"": {"fixed", "exp", "bimodal", "lognormal"}},
	"arrival-kind":  {"": {"h2", "gamma"}},
	"ttl-mode":      {"": {"silence", "credit"}},
	"dist":          {"": {"azure", "zipf", "powerlaw"}},
}

// registerCompletions gives every flag in flagValues its completion, on
// the command that defines it (persistent flags once, on their group).
func registerCompletions(c *cobra.Command) {
	register := func(f *pflag.Flag) {
		byCmd, ok := flagValues[f.Name]
		if !ok || f.Hidden {
			return
		}
		vals, ok := byCmd[c.CommandPath()]
		if !ok {
			vals, ok = byCmd[""]
		}
		if !ok {
			return
		}
		_ = c.RegisterFlagCompletionFunc(f.Name, func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return vals, cobra.ShellCompDirectiveNoFileComp
		})
	}
	c.LocalNonPersistentFlags().VisitAll(register)
	c.PersistentFlags().VisitAll(register)
	for _, sc := range c.Commands() {
		registerCompletions(sc)
	}
}

// interruptGrace is how long a command may take to stop after Ctrl-C or
// SIGTERM before the process exits regardless (watchInterrupt).
const interruptGrace = time.Second

// exitInterrupted is the exit code of a command ended by watchInterrupt
// (128 + SIGINT, as a shell reports a process killed by Ctrl-C).
const exitInterrupted = 130

// watchInterrupt makes Ctrl-C and SIGTERM work everywhere: once ctx is
// done (the first signal) it calls stop, which restores the default
// handling so that a second signal ends the process at once, and if the
// command has not returned (done closed) within grace it says so on stderr
// and calls exit(exitInterrupted). Commands stop on ctx and print what they
// left; this bounds the ones blocked where they cannot look at it.
func watchInterrupt(ctx context.Context, done <-chan struct{}, stop func(), grace time.Duration, stderr io.Writer, exit func(int)) {
	select {
	case <-done:
		return
	case <-ctx.Done():
	}
	stop()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		fmt.Fprintf(stderr, "error: interrupted: the command did not stop within %v of the signal; exiting\n", grace)
		exit(exitInterrupted)
	}
}

// run executes p4ctl with args and returns the process exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	s := &streams{Out: stdout, Err: stderr}
	root := newRootCmd(s)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) && !strings.HasPrefix(err.Error(), "interrupted") {
		err = fmt.Errorf("interrupted: %w", err)
	}
	var ce codedError
	var ue cmdutil.UsageError
	if errors.As(err, &ce) && !errors.As(err, &ue) {
		fmt.Fprintln(stderr, "error:", err)
		return ce.code
	}
	var ec exitCodeError
	if errors.As(err, &ec) {
		if ec.msg != "" {
			fmt.Fprintln(stderr, "error:", ec.msg)
		}
		return ec.code
	}
	fmt.Fprintln(stderr, "error:", err)
	// A state that does not fit the target's tables is the configuration's
	// problem, as a validation error is (docs/SCALING.md).
	var oe *compiler.OverflowError
	if errors.As(err, &ue) || errors.As(err, &oe) || strings.HasPrefix(err.Error(), "unknown command") ||
		strings.HasPrefix(err.Error(), "accepts ") || strings.HasPrefix(err.Error(), "requires ") {
		return exitUsage
	}
	return exitError
}

// groupCmd is a command that only holds subcommands: without one, or with
// an unknown one, it is a usage error (exit 2) naming the subcommands.
func groupCmd(use, short string, subs ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short, Args: cobra.NoArgs}
	cmd.AddCommand(subs...)
	cmd.RunE = groupRunE
	return cmd
}

// groupRunE is the RunE of a group run without a subcommand: a usage error
// naming the subcommands.
func groupRunE(c *cobra.Command, _ []string) error {
	var names []string
	for _, sc := range c.Commands() {
		if sc.IsAvailableCommand() {
			names = append(names, sc.Name())
		}
	}
	return cmdutil.Usagef("%s what? %s (see '%s --help')", c.CommandPath(), strings.Join(names, ", "), c.CommandPath())
}

// options is the life cycle of a command's flags, kubectl style: Complete
// fills derived values (loads files, parses arguments), Validate rejects bad
// combinations as usage errors, Run does the work.
type options interface {
	Complete(c *cobra.Command, args []string) error
	Validate() error
	Run(ctx context.Context, s *streams) error
}

// runE is the RunE of a command with options o.
func runE(o options, s *streams) func(*cobra.Command, []string) error {
	return func(c *cobra.Command, args []string) error {
		cmdutil.WarnDeprecated(c.Flags(), s.Err)
		if err := o.Complete(c, args); err != nil {
			return err
		}
		if err := o.Validate(); err != nil {
			return err
		}
		return o.Run(c.Context(), s)
	}
}
