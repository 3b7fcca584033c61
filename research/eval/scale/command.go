package scale

import (
	"context"
	"slices"
	"strings"

	"github.com/p4ctl/p4ctl/pkg/cmdutil"
	"github.com/p4ctl/p4ctl/pkg/output"
	"github.com/p4ctl/p4ctl/research/configgen"
)

// CommandOptions are the flags of `p4ctl eval scale`, kubectl style:
// cmd/p4ctl binds each flag to a field and calls Complete, Validate and
// Run; every check of a value is here, naming the flag (usage errors,
// exit 2).
type CommandOptions struct {
	Sites, Regions []int
	Policies       []string
	Hours          int
	Switches       int
	Seed           uint64
	OutDir         string
	NoPlots, Quick bool
	Format         output.Format
	// Flags are the command line's: --quick leaves the values given alone.
	cmdutil.Flags
}

// Complete applies --quick to the flags not given.
func (o *CommandOptions) Complete() error {
	if o.Quick {
		if !o.Given("sites") {
			o.Sites = []int{10, 100, 1000}
		}
		if !o.Given("hours") {
			o.Hours = 6
		}
	}
	return nil
}

// Validate checks the grid (Options.Validate's rules, each error
// naming its flag) and the plot directory.
func (o *CommandOptions) Validate() error {
	for i, n := range o.Sites {
		if n < 1 || n > 65535 {
			return cmdutil.Usagef("--sites %d: want 1..65535", n)
		}
		if slices.Contains(o.Sites[:i], n) {
			return cmdutil.Usagef("--sites %d given twice", n)
		}
	}
	for i, r := range o.Regions {
		if r < 1 || r > 32 {
			return cmdutil.Usagef("--regions %d: want 1..32", r)
		}
		if slices.Contains(o.Regions[:i], r) {
			return cmdutil.Usagef("--regions %d given twice", r)
		}
	}
	for i, p := range o.Policies {
		if !slices.Contains(Policies(), p) {
			return cmdutil.Usagef("--policies %s: want %s (C+warm is stateful per request and compiles to no table contents: p4ctl eval carbon evaluates it)", p, strings.Join(Policies(), ", "))
		}
		if slices.Contains(o.Policies[:i], p) {
			return cmdutil.Usagef("--policies %s given twice", p)
		}
	}
	if o.Switches < 0 || o.Switches > configgen.MaxSwitches {
		return cmdutil.Usagef("--switches %d: want 0..%d", o.Switches, configgen.MaxSwitches)
	}
	if maxH := MaxHours(DefaultStart()); o.Hours < 2 || o.Hours > maxH {
		return cmdutil.Usagef("--hours %d: want 2..%d (an update needs two hours; the synthetic carbon year ends after %d hours from %s)", o.Hours, maxH, maxH, DefaultStart().Format("2006-01-02"))
	}
	if err := (Options{Sites: o.Sites, Regions: o.Regions, Policies: o.Policies, Hours: o.Hours}).Validate(); err != nil {
		return cmdutil.Usagef("%w", err) // the flag checks above cover it; kept in step with Measure
	}
	if !o.NoPlots {
		return cmdutil.CheckOutputDir("--out-dir", o.OutDir)
	}
	return nil
}

// plotted is the result with the plots written.
type plotted struct {
	*Result
	Plots []string `json:"plots,omitempty"`
}

// Run measures, plots and prints.
func (o *CommandOptions) Run(ctx context.Context, s *cmdutil.Streams) error {
	_, err := cmdutil.RunExperiment(s, o.Format, "eval scale",
		func(progress func(done, total int)) (*Result, error) {
			return Measure(ctx, Options{Sites: o.Sites, Regions: o.Regions, Policies: o.Policies, Hours: o.Hours, Seed: o.Seed, Switches: o.Switches, Progress: progress})
		},
		cmdutil.PlotsTo(o.NoPlots, o.OutDir, WritePlots),
		func(r *Result, files []string) any { return plotted{Result: r, Plots: files} })
	return err
}
