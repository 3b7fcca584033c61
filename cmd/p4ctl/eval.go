package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/p4ctl/p4ctl/pkg/cmdutil"
	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/inputfile"
	"github.com/p4ctl/p4ctl/pkg/output"
	"github.com/p4ctl/p4ctl/pkg/regions"
	"github.com/p4ctl/p4ctl/research/eval/carbon"
)

func newEvalCmd(s *streams) *cobra.Command {
	return groupCmd("eval", "Run the research evaluations and put our numbers beside the papers'", newEvalCarbonCmd(s), newEvalStabilityCmd(s), newEvalScaleCmd(s))
}

// evalCarbonOptions are the flags of `p4ctl eval carbon`.
type evalCarbonOptions struct {
	traces, metric, fill  string
	period, from, to      string
	carbonSeed, seed      uint64
	runs, requests, mixed int
	pools                 []int
	slas                  []float64
	sitesFile, site       string
	alpha, w, capShare    float64
	coldMissing           string
	keepAlive             time.Duration
	latencyModel          string
	latencySigma          float64
	outDir                string
	noPlots, quick        bool
	format                output.Format
	cfg                   carbon.Config
	sigmaGiven            bool // --latency-sigma was given
}

func newEvalCarbonCmd(s *streams) *cobra.Command {
	o := &evalCarbonOptions{}
	cmd := &cobra.Command{
		Use:   "carbon",
		Short: "Reproduce the SLA-constrained carbon-aware routing tables (policies A, B, C, C+, D, C+warm, C-cap)",
		Long: `Runs the paper's experiment: for each SLA class (300/500/800/1000/3000 ms) 30 runs
of 1000 requests at uniformly random hours of the period, plus 30 mixed runs of
5000 requests (20/30/20/20/10 %), in the 5- and 12-region pools, from the
Mumbai client site. Prints Table 3 and Table 4 analogues, 5→12 scaling,
decision times and the paper's figures beside ours (labelled), and writes
PNG and SVG plots.

Without --traces the carbon data is the built-in synthetic model (not measured
data, of lifecycle intensities: --metric direct needs --traces); every output
names the carbon source it used.

Limits (memory grows with them): --runs 2..10000, --requests and
--mixed-requests 1..2000000 per run, a period of at most ten years
(87840 hours), each --pools size once.

--sites FILE gives client sites other than the built-in mumbai (select one
with --site); its format (docs/CONFIG.md, "eval carbon --sites"):

  sites:
    - name: frankfurt-office
      prefixes: [10.8.0.0/16]          # optional
      latencies:                       # every region of every pool
        - {region: ap-south-1, p95_ms: 130, cold_ms: 420}
        - {region: Singapore, p95_ms: 170, cold_ms: 460}
        - {region: ap-southeast-2, p95_ms: 280}   # no cold_ms: unknown
        - {region: IE, p95_ms: 30, cold_ms: 260}
        - {region: us-east-1, p95_ms: 95, cold_ms: 380}

region is an AWS id, city or zone; p95_ms in (0, 65535), cold_ms in
[0, 65535). This is not the sites: block of a controller configuration
(latency: map, profile:, id:), which is refused.`,
		Example: `  p4ctl eval carbon
  p4ctl eval carbon --sites sites.yaml --site frankfurt-office --pools 5
  p4ctl eval carbon --traces ../shared/data/carbon --period 2022-01
  p4ctl eval carbon --latency-model sampled -o json`,
		Args: cobra.NoArgs,
		RunE: runE(o, s),
	}
	f := cmd.Flags()
	f.StringVar(&o.traces, "traces", "", "directory of hourly carbon CSVs (normalized or Electricity Maps portal); default: built-in synthetic model")
	f.StringVar(&o.metric, "metric", "lca", "Electricity Maps column of --traces: lca or direct (the synthetic model is lca)")
	f.StringVar(&o.fill, "fill", "none", "gaps in --traces: none (error), previous or linear")
	f.StringVar(&o.period, "period", "", "month YYYY-MM (default: the first whole month of the data)")
	f.StringVar(&o.from, "from", "", "period start YYYY-MM-DD or RFC 3339 (with --to, instead of --period)")
	f.StringVar(&o.to, "to", "", "period end, exclusive")
	f.Uint64Var(&o.carbonSeed, "carbon-seed", 1, "seed of the synthetic carbon model")
	f.Uint64Var(&o.seed, "seed", 1, "seed of the request sampling")
	f.IntVar(&o.runs, "runs", 30, fmt.Sprintf("runs per class, 2..%d", carbon.MaxRuns))
	f.IntVar(&o.requests, "requests", 1000, fmt.Sprintf("requests per run of one SLA class, 1..%d", carbon.MaxRequests))
	f.IntVar(&o.mixed, "mixed-requests", 5000, fmt.Sprintf("requests per mixed run, 1..%d", carbon.MaxRequests))
	f.IntSliceVar(&o.pools, "pools", []int{5, 12}, fmt.Sprintf("pool sizes (first n catalog regions, 1..%d), each once", regions.NumRegions))
	f.Float64SliceVar(&o.slas, "sla", []float64{300, 500, 800, 1000, 3000}, "SLA classes in ms (the mix applies to these five)")
	f.Lookup("sla").DefValue = "[300,500,800,1000,3000]" // not [300.000000,…]
	f.StringVar(&o.sitesFile, "sites", "", "YAML file of client sites: a top-level sites: list of {name, prefixes, latencies: [{region, p95_ms, cold_ms}]} (see above, docs/CONFIG.md; default: the built-in mumbai site)")
	f.StringVar(&o.site, "site", "mumbai", "client site name")
	f.Float64Var(&o.alpha, "alpha", 0.8, "C+: weight of the cold-start latency")
	f.Float64Var(&o.w, "w", 0.5, "D: weight of carbon (1-w for latency)")
	f.StringVar(&o.coldMissing, "cold-missing", "exclude", "C+ for regions without a cold latency: exclude or warm")
	f.DurationVar(&o.keepAlive, "keep-alive", 10*time.Minute, "C+warm: keep-alive window")
	f.Float64Var(&o.capShare, "cap-share", 0.4, "C-cap: capacity per region as a share of a run's requests")
	f.StringVar(&o.latencyModel, "latency-model", carbon.LatencyP95, "p95 (the paper) or sampled (log-normal RTT fitted to the P95)")
	f.Float64Var(&o.latencySigma, "latency-sigma", 0.2, "sampled latency (--latency-model sampled): log-normal σ of ln(RTT in ms), 0 < σ < 3")
	f.StringVar(&o.outDir, "out-dir", "out/eval-carbon", "directory for PNG and SVG plots")
	f.BoolVar(&o.noPlots, "no-plots", false, "do not write plots")
	f.BoolVar(&o.quick, "quick", false, "small run for tests: 4 runs, 200 requests, 1000 mixed")
	output.AddFlag(f, &o.format)
	return cmd
}

// Complete loads the carbon source and site and fills the experiment config.
func (o *evalCarbonOptions) Complete(c *cobra.Command, _ []string) error {
	if o.quick {
		if !c.Flags().Changed("runs") {
			o.runs = 4
		}
		if !c.Flags().Changed("requests") {
			o.requests = 200
		}
		if !c.Flags().Changed("mixed-requests") {
			o.mixed = 1000
		}
	}
	o.sigmaGiven = c.Flags().Changed("latency-sigma")
	metric, err := regions.ParseMetric(o.metric)
	if err != nil {
		return cmdutil.Usagef("--metric: %w", err)
	}
	if metric == regions.Direct && o.traces == "" {
		return cmdutil.Usagef("--metric direct: the synthetic model is of lifecycle (LCA) intensities; give --traces for direct ones")
	}
	fill, err := parseFillFlag(c, o.fill, o.traces)
	if err != nil {
		return err
	}
	cm, err := regions.ParseColdMissing(o.coldMissing)
	if err != nil {
		return cmdutil.Usagef("--cold-missing: %w", err)
	}
	var period regions.Period
	switch {
	case o.period != "" && (o.from != "" || o.to != ""):
		return cmdutil.Usagef("--period and --from/--to are exclusive")
	case o.period != "":
		if period, err = regions.ParseMonth(o.period); err != nil {
			return cmdutil.Usagef("--period: %w", err)
		}
	case o.from != "" || o.to != "":
		if o.from == "" || o.to == "" {
			return cmdutil.Usagef("--from and --to go together")
		}
		if period, err = regions.ParsePeriod(o.from, o.to); err != nil {
			return cmdutil.Usagef("--from/--to: %w", err)
		}
	}
	// Checked here, not in Validate: the synthetic model below is built
	// over the whole period, every hour held in memory.
	if n := period.Hours(); n > carbon.MaxPeriodHours {
		return cmdutil.Usagef("%s %s: longer than %d hours (ten years), the most the experiment holds in memory", periodFlag(o.period), period, carbon.MaxPeriodHours)
	}
	var src regions.CarbonSource
	if o.traces != "" {
		ts, err := regions.LoadTracesContext(cmdContext(c), o.traces, regions.LoadOptions{Metric: metric, Fill: fill})
		if errors.Is(err, fs.ErrNotExist) {
			return cmdutil.Usagef("--traces: %w\n  The hourly Electricity Maps traces are not part of the repository: ../shared/data/carbon (the README's example) is the project's shared data set, which sits beside a checkout only where it was provided. Without it, leave out --traces to run on the built-in synthetic model, or give a directory of your own hourly CSVs (timestamp_utc,zone,gco2_per_kwh, or Electricity Maps portal exports).", err)
		}
		if err != nil {
			return cmdutil.InputError(err)
		}
		src = ts
	} else {
		syn, mapped, err := regions.SyntheticFor(o.carbonSeed, period)
		if err != nil {
			return err
		}
		if mapped {
			fy := regions.DefaultSyntheticPeriod().From.Year()
			fmt.Fprintf(c.ErrOrStderr(), "note: the synthetic model is fitted to %d: the period %s gets %d's monthly means, diurnal shapes and noise, mapped onto its own dates (not a forecast)\n",
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
	if o.sitesFile != "" {
		sites, err := loadEvalSites(cmdContext(c), o.sitesFile)
		if err != nil {
			return cmdutil.InputError(err)
		}
		site = nil
		for _, s := range sites {
			if s.Name() == o.site {
				site = s
			}
		}
		if site == nil {
			return cmdutil.Usagef("--site %q not in %s", o.site, o.sitesFile)
		}
	} else if o.site != "mumbai" {
		return cmdutil.Usagef("--site %q: only the built-in site mumbai exists without --sites", o.site)
	}
	sig := regions.SignalLCA
	if metric == regions.Direct {
		sig = regions.SignalDirect
	}
	o.cfg = carbon.Config{
		Source: src, Signal: sig, Period: period, Site: site, Pools: o.pools, SLAs: o.slas,
		Runs: o.runs, Requests: o.requests, MixedRequests: o.mixed, Seed: o.seed,
		Options:  regions.Options{Alpha: o.alpha, W: o.w, ColdMissing: cm, KeepAlive: o.keepAlive},
		CapShare: o.capShare, LatencyModel: o.latencyModel, LatencySigma: o.latencySigma,
	}
	return nil
}

// Validate checks flag values.
func (o *evalCarbonOptions) Validate() error {
	if err := cmdutil.IntInRange("--runs", o.runs, 2, carbon.MaxRuns, "every row keeps each run's mean"); err != nil {
		return err
	}
	if err := cmdutil.IntInRange("--requests", o.requests, 1, carbon.MaxRequests, "a run's requests are held in memory"); err != nil {
		return err
	}
	if err := cmdutil.IntInRange("--mixed-requests", o.mixed, 1, carbon.MaxRequests, "a run's requests are held in memory"); err != nil {
		return err
	}
	if len(o.slas) != 5 {
		return cmdutil.Usagef("--sla: want 5 classes (the 20/30/20/20/10 mix applies to them), got %d", len(o.slas))
	}
	for _, v := range o.slas {
		if !(v > 0 && v <= 65535) {
			return cmdutil.Usagef("--sla %v: every SLA class is a latency budget in ms, > 0 and ≤ 65535", v)
		}
	}
	if o.latencyModel != carbon.LatencyP95 && o.latencyModel != carbon.LatencySampled {
		return cmdutil.Usagef("--latency-model %q: want p95 or sampled", o.latencyModel)
	}
	if err := validateLatencySigma(o.latencySigma); err != nil {
		return err
	}
	if o.sigmaGiven && o.latencyModel != carbon.LatencySampled {
		return cmdutil.Usagef("--latency-sigma applies to sampled latencies: give --latency-model sampled with it")
	}
	if err := o.cfg.Options.Validate(); err != nil {
		return cmdutil.Usagef("%w", err)
	}
	if !(o.capShare > 0 && o.capShare <= 1) {
		return cmdutil.Usagef("--cap-share %v: want 0 < share <= 1", o.capShare)
	}
	for i, p := range o.pools {
		if _, err := regions.PoolOf(p); err != nil {
			return cmdutil.Usagef("--pools: %w", err)
		}
		if slices.Contains(o.pools[:i], p) {
			return cmdutil.Usagef("--pools: pool size %d given twice", p)
		}
	}
	if !o.noPlots {
		return cmdutil.CheckOutputDir("--out-dir", o.outDir)
	}
	return nil
}

// Run executes the experiment, writes plots and prints the result.
func (o *evalCarbonOptions) Run(ctx context.Context, s *streams) error {
	_, err := cmdutil.RunExperiment(s, o.format, "eval carbon",
		func(progress func(done, total int)) (*carbon.Result, error) {
			o.cfg.Progress = progress
			return carbon.Run(ctx, o.cfg)
		},
		cmdutil.PlotsTo(o.noPlots, o.outDir, carbon.WritePlots),
		func(r *carbon.Result, files []string) any { r.Plots = files; return r })
	return err
}

// periodFlag names the flags that gave a period: --period, else --from/--to.
func periodFlag(month string) string {
	if month != "" {
		return "--period"
	}
	return "--from/--to"
}

// Validation shared by the eval commands.

// parseFillFlag parses --fill (none, previous or linear), with or without
// --traces; given without --traces, which it applies to, it is refused.
func parseFillFlag(c *cobra.Command, s, traces string) (regions.FillPolicy, error) {
	f, err := regions.ParseFill(s)
	if err != nil {
		return f, cmdutil.Usagef("--fill: %w", err)
	}
	if traces == "" && c.Flags().Changed("fill") {
		return f, cmdutil.Usagef("--fill %s: it fills gaps in --traces; give --traces with it", s)
	}
	return f, nil
}

// validateLatencySigma checks --latency-sigma: 0 < σ < 3.
func validateLatencySigma(v float64) error {
	if !(v > 0 && v < 3) {
		return cmdutil.Usagef("--latency-sigma %v: want 0 < sigma < 3", v)
	}
	return nil
}

// loadEvalSites reads an eval carbon --sites file. A controller
// configuration given instead is named as such, after ParseSites's
// file:line error for its first foreign key.
func loadEvalSites(ctx context.Context, path string) ([]*regions.Site, error) {
	b, err := inputfile.Read(ctx, path, inputfile.MaxSize)
	if err != nil {
		return nil, fmt.Errorf("--sites: %w", err)
	}
	sites, err := regions.ParseSites(path, b)
	if err != nil && !errors.Is(err, regions.ErrConfigSchema) {
		if ok, _ := config.LooksLikeConfig(b); ok {
			return nil, fmt.Errorf("%w: this is a controller configuration, not a sites file: %s", err, regions.SitesFormat)
		}
	}
	return sites, err
}
