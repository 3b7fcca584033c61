package carbon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/p4ctl/p4ctl/pkg/cmdutil"
	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/inputfile"
	"github.com/p4ctl/p4ctl/pkg/output"
	"github.com/p4ctl/p4ctl/pkg/regions"
	"github.com/p4ctl/p4ctl/research/eval"
)

// CommandOptions are the flags of `p4ctl eval carbon`, kubectl style:
// cmd/p4ctl binds each flag to a field and calls Complete, Validate and
// Run; every check of a value or of flags that do not go together is
// here, naming the flag (usage errors, exit 2).
type CommandOptions struct {
	Traces, Metric, Fill  string
	Period, From, To      string
	CarbonSeed, Seed      uint64
	Runs, Requests, Mixed int
	Pools                 []int
	SLAs                  []float64
	SitesFile, Site       string
	Alpha, W, CapShare    float64
	ColdMissing           string
	KeepAlive             time.Duration
	LatencyModel          string
	LatencySigma          float64
	OutDir                string
	NoPlots, Quick        bool
	Format                output.Format
	// Flags are the command line's: --quick leaves the sizes given alone.
	cmdutil.Flags

	cfg        Config
	sigmaGiven bool // --latency-sigma was given
}

// Complete loads the carbon source and site and fills the experiment config.
func (o *CommandOptions) Complete(ctx context.Context, errOut io.Writer) error {
	if o.Quick {
		if !o.Given("runs") {
			o.Runs = 4
		}
		if !o.Given("requests") {
			o.Requests = 200
		}
		if !o.Given("mixed-requests") {
			o.Mixed = 1000
		}
	}
	o.sigmaGiven = o.Given("latency-sigma")
	metric, err := regions.ParseMetric(o.Metric)
	if err != nil {
		return cmdutil.Usagef("--metric: %w", err)
	}
	if metric == regions.Direct && o.Traces == "" {
		return cmdutil.Usagef("--metric direct: the synthetic model is of lifecycle (LCA) intensities; give --traces for direct ones")
	}
	fill, err := eval.ParseFill(o.Fill, o.Given("fill"), o.Traces)
	if err != nil {
		return err
	}
	cm, err := regions.ParseColdMissing(o.ColdMissing)
	if err != nil {
		return cmdutil.Usagef("--cold-missing: %w", err)
	}
	var period regions.Period
	switch {
	case o.Period != "" && (o.From != "" || o.To != ""):
		return cmdutil.Usagef("--period and --from/--to are exclusive")
	case o.Period != "":
		if period, err = regions.ParseMonth(o.Period); err != nil {
			return cmdutil.Usagef("--period: %w", err)
		}
	case o.From != "" || o.To != "":
		if o.From == "" || o.To == "" {
			return cmdutil.Usagef("--from and --to go together")
		}
		if period, err = regions.ParsePeriod(o.From, o.To); err != nil {
			return cmdutil.Usagef("--from/--to: %w", err)
		}
	}
	// Checked here, not in Validate: the synthetic model below is built
	// over the whole period, every hour held in memory.
	if n := period.Hours(); n > MaxPeriodHours {
		return cmdutil.Usagef("%s %s: longer than %d hours (ten years), the most the experiment holds in memory", periodFlag(o.Period), period, MaxPeriodHours)
	}
	var src regions.CarbonSource
	if o.Traces != "" {
		ts, err := regions.LoadTracesContext(ctx, o.Traces, regions.LoadOptions{Metric: metric, Fill: fill})
		if errors.Is(err, fs.ErrNotExist) {
			return cmdutil.Usagef("--traces: %w\n  The hourly Electricity Maps traces are not part of the repository: ../shared/data/carbon (the README's example) is the project's shared data set, which sits beside a checkout only where it was provided. Without it, leave out --traces to run on the built-in synthetic model, or give a directory of your own hourly CSVs (timestamp_utc,zone,gco2_per_kwh, or Electricity Maps portal exports).", err)
		}
		if err != nil {
			return cmdutil.InputError(err)
		}
		src = ts
	} else {
		syn, mapped, err := regions.SyntheticFor(o.CarbonSeed, period)
		if err != nil {
			return err
		}
		if mapped {
			fy := regions.DefaultSyntheticPeriod().From.Year()
			fmt.Fprintf(errOut, "note: the synthetic model is fitted to %d: the period %s gets %d's monthly means, diurnal shapes and noise, mapped onto its own dates (not a forecast)\n",
				fy, period, fy)
		}
		src = syn
	}
	if period.Hours() == 0 {
		if period, err = src.Period().FirstWholeMonth(); err != nil {
			return err
		}
	}
	site := regions.Mumbai()
	if o.SitesFile != "" {
		sites, err := loadSites(ctx, o.SitesFile)
		if err != nil {
			return cmdutil.InputError(err)
		}
		site = nil
		for _, s := range sites {
			if s.Name() == o.Site {
				site = s
			}
		}
		if site == nil {
			return cmdutil.Usagef("--site %q not in %s", o.Site, o.SitesFile)
		}
	} else if o.Site != "mumbai" {
		return cmdutil.Usagef("--site %q: only the built-in site mumbai exists without --sites", o.Site)
	}
	sig := regions.SignalLCA
	if metric == regions.Direct {
		sig = regions.SignalDirect
	}
	o.cfg = Config{
		Source: src, Signal: sig, Period: period, Site: site, Pools: o.Pools, SLAs: o.SLAs,
		Runs: o.Runs, Requests: o.Requests, MixedRequests: o.Mixed, Seed: o.Seed,
		Options:  regions.Options{Alpha: o.Alpha, W: o.W, ColdMissing: cm, KeepAlive: o.KeepAlive},
		CapShare: o.CapShare, LatencyModel: o.LatencyModel, LatencySigma: o.LatencySigma,
	}
	return nil
}

// Validate checks flag values.
func (o *CommandOptions) Validate() error {
	if err := cmdutil.IntInRange("--runs", o.Runs, 2, MaxRuns, "every row keeps each run's mean"); err != nil {
		return err
	}
	if err := cmdutil.IntInRange("--requests", o.Requests, 1, MaxRequests, "a run's requests are held in memory"); err != nil {
		return err
	}
	if err := cmdutil.IntInRange("--mixed-requests", o.Mixed, 1, MaxRequests, "a run's requests are held in memory"); err != nil {
		return err
	}
	if !(o.W >= 0 && o.W <= 1) {
		return cmdutil.Usagef("--w %v: want policy D's weight in [0, 1]", o.W)
	}
	if len(o.SLAs) != 5 {
		return cmdutil.Usagef("--sla: want 5 classes (the 20/30/20/20/10 mix applies to them), got %d", len(o.SLAs))
	}
	for _, v := range o.SLAs {
		if !(v > 0 && v <= 65535) {
			return cmdutil.Usagef("--sla %v: every SLA class is a latency budget in ms, > 0 and ≤ 65535", v)
		}
	}
	if o.LatencyModel != LatencyP95 && o.LatencyModel != LatencySampled {
		return cmdutil.Usagef("--latency-model %q: want p95 or sampled", o.LatencyModel)
	}
	if err := eval.CheckLatencySigma(o.LatencySigma); err != nil {
		return err
	}
	if o.sigmaGiven && o.LatencyModel != LatencySampled {
		return cmdutil.Usagef("--latency-sigma applies to sampled latencies: give --latency-model sampled with it")
	}
	if err := o.cfg.Options.Validate(); err != nil {
		return cmdutil.Usagef("%w", err)
	}
	if !(o.CapShare > 0 && o.CapShare <= 1) {
		return cmdutil.Usagef("--cap-share %v: want 0 < share <= 1", o.CapShare)
	}
	for i, p := range o.Pools {
		if _, err := regions.PoolOf(p); err != nil {
			return cmdutil.Usagef("--pools: %w", err)
		}
		if slices.Contains(o.Pools[:i], p) {
			return cmdutil.Usagef("--pools: pool size %d given twice", p)
		}
	}
	if !o.NoPlots {
		return cmdutil.CheckOutputDir("--out-dir", o.OutDir)
	}
	return nil
}

// Run executes the experiment, writes plots and prints the result.
func (o *CommandOptions) Run(ctx context.Context, s *cmdutil.Streams) error {
	_, err := cmdutil.RunExperiment(s, o.Format, "eval carbon",
		func(progress func(done, total int)) (*Result, error) {
			o.cfg.Progress = progress
			return Run(ctx, o.cfg)
		},
		cmdutil.PlotsTo(o.NoPlots, o.OutDir, WritePlots),
		func(r *Result, files []string) any { r.Plots = files; return r })
	return err
}

// periodFlag names the flags that gave a period: --period, else --from/--to.
func periodFlag(month string) string {
	if month != "" {
		return "--period"
	}
	return "--from/--to"
}

// loadSites reads an eval carbon --sites file. A controller
// configuration given instead is named as such, after ParseSites's
// file:line error for its first foreign key; a file whose only top-level
// key is sites: is a sites file, its error its own (issue 27: a sites
// file with a bad prefix was called a controller configuration).
func loadSites(ctx context.Context, path string) ([]*regions.Site, error) {
	b, err := inputfile.Read(ctx, path, inputfile.MaxSize)
	if err != nil {
		return nil, fmt.Errorf("--sites: %w", err)
	}
	sites, err := regions.ParseSites(path, b)
	if err != nil && !errors.Is(err, regions.ErrConfigSchema) {
		var top map[string]any
		if ok, _ := config.LooksLikeConfig(b); ok && (yaml.Unmarshal(b, &top) != nil || len(top) != 1 || top["sites"] == nil) {
			return nil, fmt.Errorf("%w: this is a controller configuration, not a sites file: %s", err, regions.SitesFormat)
		}
	}
	return sites, err
}
