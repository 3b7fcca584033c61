package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/p4ctl/p4ctl/examples"
	"github.com/p4ctl/p4ctl/pkg/cmdutil"
	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/output"
	"github.com/p4ctl/p4ctl/pkg/regions"
	"github.com/p4ctl/p4ctl/research/eval/stability"
)

// evalStabilityOptions are the flags of `p4ctl eval stability`.
type evalStabilityOptions struct {
	configPath           string
	traces, signal, fill string
	year                 int
	from, to             string
	minGain              string
	minHold, horizon     time.Duration
	sweepGain            []string
	sweepHold, sweepHzn  []time.Duration
	requests             int
	sigma                float64
	seed                 uint64
	outDir               string
	noPlots, quick       bool
	format               output.Format
	cfg                  stability.Config
	configName, hystNote string
	changedFlag          func(string) bool
}

func newEvalStabilityCmd(s *streams) *cobra.Command {
	o := &evalStabilityOptions{}
	cmd := &cobra.Command{
		Use:   "stability",
		Short: "Routing stability over a year: region changes, cold starts and saving per policy and hysteresis setting",
		Long: `Evaluates every hour of a year of carbon data for the client sites, regions and
SLA classes of a controller configuration (default: the built-in
examples/mumbai.yaml, the Mumbai site and the second example site, 12
regions). For policies A, B, C, C+ and D without hysteresis, and B, C and C+
with the hysteresis of the configuration (policy.hysteresis, else the
defaults; --min-gain, --min-hold and --horizon override it), it reports the
carbon saving against A, changes of the chosen region per day per SLA class,
the share of requests sent to a region that received none of their class in
the hour before (a cold-start proxy), SLA violations with sampled latencies
(log-normal RTT with the profile's P95) and the switch writes of the ranking
updates; a sweep of min_gain × min_hold (and of the horizon) for policy C
gives the saving-vs-changes Pareto plot. The acceptance aim is at least 50 %
fewer changes than hourly C for at most 1 percentage point of saving.

Without --traces the carbon data is the configuration's source (the example's
is the built-in synthetic model: not measured data); every output names the
carbon source and the signal it used.`,
		Example: `  p4ctl eval stability
  p4ctl eval stability --traces ../shared/data/carbon --year 2022
  p4ctl eval stability --traces ../shared/data/carbon --min-gain 5% --min-hold 6h -o json`,
		Args: cobra.NoArgs,
		RunE: runE(o, s),
	}
	f := cmd.Flags()
	f.StringVarP(&o.configPath, "config", "c", "", "controller configuration file (YAML, docs/CONFIG.md: sites, regions, SLA classes, policy options, hysteresis; default: the built-in examples/mumbai.yaml)")
	f.StringVar(&o.traces, "traces", "", "directory of hourly carbon CSVs (default: the configuration's carbon source)")
	f.StringVar(&o.signal, "signal", "", "what the numbers are: lca or direct (average; Electricity Maps columns) or marginal (CSV traces of marginal rates); default: the configuration's carbon.signal")
	f.StringVar(&o.fill, "fill", "none", "gaps in --traces: none (error), previous or linear")
	f.IntVar(&o.year, "year", 0, "calendar year to evaluate (default: the first whole year of the data)")
	f.StringVar(&o.from, "from", "", "period start YYYY-MM-DD or RFC 3339 (with --to, instead of --year)")
	f.StringVar(&o.to, "to", "", "period end, exclusive")
	f.StringVar(&o.minGain, "min-gain", "", "hysteresis evaluated: min_gain, e.g. 10% or 50g/kWh (default: the configuration's, else 10%)")
	f.DurationVar(&o.minHold, "min-hold", 0, "hysteresis evaluated: min_hold, whole hours (default: the configuration's, else 3h)")
	f.DurationVar(&o.horizon, "horizon", 0, "hysteresis evaluated: horizon, whole hours (default: the configuration's, else 1h)")
	f.StringSliceVar(&o.sweepGain, "sweep-gain", []string{"0%", "2%", "5%", "10%", "20%"}, "min_gain values of policy C's sweep")
	f.DurationSliceVar(&o.sweepHold, "sweep-hold", []time.Duration{0, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour}, "min_hold values of the sweep")
	f.DurationSliceVar(&o.sweepHzn, "sweep-horizon", []time.Duration{time.Hour, 3 * time.Hour, 6 * time.Hour}, "horizons of the sweep (at the evaluated gain and hold)")
	f.IntVar(&o.requests, "requests-per-hour", 12, fmt.Sprintf("sampled requests per site and hour (violation rate), 1..10000, and hours × sites × this at most %d (they are held in memory)", stability.MaxSampledRequests))
	f.Float64Var(&o.sigma, "latency-sigma", 0.2, "sampled latency: log-normal σ of ln(RTT in ms), 0 < σ < 3")
	f.Uint64Var(&o.seed, "seed", 1, "seed of the sampled requests")
	f.StringVar(&o.outDir, "out-dir", "out/eval-stability", "directory for PNG and SVG plots")
	f.BoolVar(&o.noPlots, "no-plots", false, "do not write plots")
	f.BoolVar(&o.quick, "quick", false, "a smoke run: the first 28 days, sweep 0%,10% × 0h,3h, horizons 1h,3h (explicit flags win)")
	output.AddFlag(f, &o.format)
	return cmd
}

// Complete loads the configuration and the carbon data and fills the
// evaluation's config.
func (o *evalStabilityOptions) Complete(c *cobra.Command, _ []string) error {
	o.changedFlag = func(name string) bool { return cmdutil.Changed(c.Flags(), name) }
	if o.quick {
		if !o.changedFlag("sweep-gain") {
			o.sweepGain = []string{"0%", "10%"}
		}
		if !o.changedFlag("sweep-hold") {
			o.sweepHold = []time.Duration{0, 3 * time.Hour}
		}
		if !o.changedFlag("sweep-horizon") {
			o.sweepHzn = []time.Duration{time.Hour, 3 * time.Hour}
		}
	}
	var cfg *config.Config
	var err error
	if o.configPath == "" {
		if cfg, err = config.Parse(examples.Mumbai(), examples.MumbaiName); err != nil {
			return fmt.Errorf("built-in configuration: %w", err)
		}
		o.configName = examples.MumbaiName + " (built in)"
	} else {
		if cfg, err = loadControllerConfig(cmdContext(c), o.configPath, printTuned(c.ErrOrStderr())); err != nil {
			return err
		}
		o.configName = o.configPath
	}
	sites, err := cfg.RoutingSites()
	if err != nil {
		return err
	}
	ec := stability.Config{Sites: sites, Pool: cfg.Pool(), Options: cfg.Options(), RequestsPerHour: o.requests,
		LatencySigma: o.sigma, Seed: o.seed}
	for _, k := range cfg.SLAClasses {
		ec.SLAs, ec.Mix, ec.ClassNames = append(ec.SLAs, float64(k.MS)), append(ec.Mix, k.Share), append(ec.ClassNames, strconv.Itoa(k.MS))
	}

	// The hysteresis evaluated: the configuration's, else the defaults;
	// flags override.
	h := regions.DefaultHysteresis()
	o.hystNote = "defaults"
	if ch := cfg.RoutingHysteresis(); ch != nil {
		h, o.hystNote = *ch, "the configuration's policy.hysteresis"
	}
	if o.minGain != "" {
		if h.MinGain, err = regions.ParseGain(o.minGain); err != nil {
			return cmdutil.Usagef("--min-gain: %w", err)
		}
	}
	hours := func(flag string, d time.Duration) (int, error) {
		if d%time.Hour != 0 || d < 0 {
			return 0, cmdutil.Usagef("%s %s: want whole hours (e.g. 3h)", flag, d)
		}
		return int(d / time.Hour), nil
	}
	if o.changedFlag("min-hold") {
		if h.MinHold, err = hours("--min-hold", o.minHold); err != nil {
			return err
		}
	}
	if o.changedFlag("horizon") {
		if h.Horizon, err = hours("--horizon", o.horizon); err != nil {
			return err
		}
	}
	if err := h.Validate(); err != nil {
		return cmdutil.Usagef("%w", err)
	}
	ec.Hysteresis = h
	for _, g := range o.sweepGain {
		v, err := regions.ParseGain(g)
		if err != nil {
			return cmdutil.Usagef("--sweep-gain: %w", err)
		}
		ec.SweepGains = append(ec.SweepGains, v)
	}
	ec.SweepHolds, ec.SweepHorizons = []int{}, []int{}
	for _, d := range o.sweepHold {
		v, err := hours("--sweep-hold", d)
		if err != nil {
			return err
		}
		ec.SweepHolds = append(ec.SweepHolds, v)
	}
	for _, d := range o.sweepHzn {
		v, err := hours("--sweep-horizon", d)
		if err != nil {
			return err
		}
		ec.SweepHorizons = append(ec.SweepHorizons, v)
	}

	// Carbon data and signal.
	fill, err := parseFillFlag(c, o.fill, o.traces)
	if err != nil {
		return err
	}
	sig := cfg.CarbonSignal()
	if o.signal != "" {
		if sig, err = regions.ParseSignal(o.signal); err != nil {
			return cmdutil.Usagef("--signal: %w", err)
		}
	}
	var src regions.CarbonSource
	switch {
	case o.traces != "":
		ts, err := regions.LoadTracesContext(cmdContext(c), o.traces, regions.LoadOptions{Metric: sig.Metric(), Fill: fill})
		if errors.Is(err, fs.ErrNotExist) {
			return cmdutil.Usagef("--traces: %w\n  The hourly Electricity Maps traces are not part of the repository: ../shared/data/carbon is the project's shared data set beside a checkout, where it was provided. Without it, leave out --traces to run on the configuration's source (the example's: the built-in synthetic model).", err)
		}
		if err != nil {
			return cmdutil.InputError(err)
		}
		src = ts
	case cfg.Carbon.Live():
		return cmdutil.Usagef("the configuration's carbon source %s is live: a year's evaluation needs a year of history; give --traces", cfg.Carbon.Source)
	default:
		if src, err = cfg.OpenCarbonContext(cmdContext(c)); err != nil {
			return cmdutil.InputError(err)
		}
		if sig.Marginal() && cfg.Carbon.Source == config.SourceOffline {
			return cmdutil.Usagef("--signal marginal: the synthetic model is of average (lifecycle) intensities; give --traces with marginal rates")
		}
		if sig == regions.SignalDirect && cfg.Carbon.Source == config.SourceOffline {
			return cmdutil.Usagef("--signal direct: the synthetic model is of lifecycle (LCA) intensities; give --traces for direct ones")
		}
	}
	ec.Source, ec.Signal = src, sig

	// Period.
	switch {
	case o.year != 0 && (o.from != "" || o.to != ""):
		return cmdutil.Usagef("--year and --from/--to are exclusive")
	case o.year != 0:
		ec.Period = regions.Period{From: time.Date(o.year, 1, 1, 0, 0, 0, 0, time.UTC), To: time.Date(o.year+1, 1, 1, 0, 0, 0, 0, time.UTC)}
		if !ec.Period.Within(src.Period()) {
			return cmdutil.Usagef("--year %d: the carbon data covers %s (%s)", o.year, src.Period(), src.Describe())
		}
	case o.from != "" || o.to != "":
		if o.from == "" || o.to == "" {
			return cmdutil.Usagef("--from and --to go together")
		}
		if ec.Period, err = regions.ParsePeriod(o.from, o.to); err != nil {
			return cmdutil.Usagef("--from/--to: %w", err)
		}
	default:
		if ec.Period, err = src.Period().FirstWholeYear(); err != nil {
			return err
		}
	}
	if o.quick && o.year == 0 && o.from == "" {
		ec.Period.To = ec.Period.From.Add(28 * 24 * time.Hour)
	}
	o.cfg = ec
	return nil
}

// Validate checks flag values.
func (o *evalStabilityOptions) Validate() error {
	if o.requests < 1 || o.requests > 10000 {
		return cmdutil.Usagef("--requests-per-hour %d: want 1..10000", o.requests)
	}
	if err := validateLatencySigma(o.sigma); err != nil {
		return err
	}
	for i, g := range o.cfg.SweepGains {
		if err := (regions.Hysteresis{MinGain: g, Horizon: 1}).Validate(); err != nil {
			return cmdutil.Usagef("--sweep-gain %s: %w", o.sweepGain[i], err)
		}
	}
	for i, h := range o.cfg.SweepHolds {
		if err := (regions.Hysteresis{MinHold: h, Horizon: 1}).Validate(); err != nil {
			return cmdutil.Usagef("--sweep-hold %s: %w", o.sweepHold[i], err)
		}
	}
	for i, h := range o.cfg.SweepHorizons {
		if err := (regions.Hysteresis{Horizon: h}).Validate(); err != nil {
			return cmdutil.Usagef("--sweep-horizon %s: %w", o.sweepHzn[i], err)
		}
	}
	if !o.cfg.Period.Within(o.cfg.Source.Period()) {
		return cmdutil.Usagef("period %s: the carbon data covers %s (%s)", o.cfg.Period, o.cfg.Source.Period(), o.cfg.Source.Describe())
	}
	if len(o.cfg.SLAs) == 0 {
		return cmdutil.Usagef("%s has no sla_classes: the evaluation counts changes per SLA class", o.configName)
	}
	if n := o.cfg.Period.Hours() * len(o.cfg.Sites) * o.requests; n > stability.MaxSampledRequests {
		return cmdutil.Usagef("--requests-per-hour %d: %d hours × %d sites × %d = %d sampled requests, at most %d (held in memory, 8 bytes each): give fewer requests per hour or a shorter period",
			o.requests, o.cfg.Period.Hours(), len(o.cfg.Sites), o.requests, n, stability.MaxSampledRequests)
	}
	if !o.noPlots {
		return cmdutil.CheckOutputDir("--out-dir", o.outDir)
	}
	return nil
}

// Run evaluates, writes plots and prints the result.
func (o *evalStabilityOptions) Run(ctx context.Context, s *streams) error {
	_, err := cmdutil.RunExperiment(s, o.format, "eval stability",
		func(progress func(done, total int)) (*stability.Result, error) {
			o.cfg.Progress = progress
			res, err := stability.Run(ctx, o.cfg)
			if err == nil {
				res.Notes = append(res.Notes, fmt.Sprintf("Configuration: %s; hysteresis evaluated: %s (%s, flags override).", o.configName, res.Hysteresis, o.hystNote))
			}
			return res, err
		},
		cmdutil.PlotsTo(o.noPlots, o.outDir, stability.WritePlots),
		func(r *stability.Result, files []string) any { r.Plots = files; return r })
	return err
}
