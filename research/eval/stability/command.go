package stability

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"time"

	"github.com/p4ctl/p4ctl/pkg/cmdutil"
	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/output"
	"github.com/p4ctl/p4ctl/pkg/regions"
	"github.com/p4ctl/p4ctl/research/eval"
)

// CommandOptions are the flags of `p4ctl eval stability`, kubectl style:
// cmd/p4ctl binds each flag to a field, loads the configuration (Config,
// ConfigName) and calls Complete, Validate and Run; every check of a value
// or of flags that do not go together is here, naming the flag (usage
// errors, exit 2).
type CommandOptions struct {
	Traces, Signal, Fill    string
	Year                    int
	From, To                string
	MinGain                 string
	MinHold, Horizon        time.Duration
	SweepGain               []string
	SweepHold, SweepHorizon []time.Duration
	Requests                int
	Sigma                   float64
	Seed                    uint64
	OutDir                  string
	NoPlots, Quick          bool
	Format                  output.Format
	// Config is the configuration evaluated: its sites, regions, SLA
	// classes, policy options and hysteresis; ConfigName names it in the
	// result.
	Config     *config.Config
	ConfigName string
	// Flags are the command line's: --quick leaves the sweeps given alone,
	// and a given --min-hold or --horizon overrides the configuration's.
	cmdutil.Flags

	cfg      Config
	hystNote string
}

// Complete loads the carbon data and fills the evaluation's config from
// Config and the flags.
func (o *CommandOptions) Complete(ctx context.Context) error {
	if o.Quick {
		if !o.Given("sweep-gain") {
			o.SweepGain = []string{"0%", "10%"}
		}
		if !o.Given("sweep-hold") {
			o.SweepHold = []time.Duration{0, 3 * time.Hour}
		}
		if !o.Given("sweep-horizon") {
			o.SweepHorizon = []time.Duration{time.Hour, 3 * time.Hour}
		}
	}
	cfg := o.Config
	sites, err := cfg.RoutingSites()
	if err != nil {
		return err
	}
	ec := Config{Sites: sites, Pool: cfg.Pool(), Options: cfg.Options(), RequestsPerHour: o.Requests,
		LatencySigma: o.Sigma, Seed: o.Seed}
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
	if o.MinGain != "" {
		if h.MinGain, err = regions.ParseGain(o.MinGain); err != nil {
			return cmdutil.Usagef("--min-gain: %w", err)
		}
	}
	hours := func(flag string, d time.Duration) (int, error) {
		if d%time.Hour != 0 || d < 0 {
			return 0, cmdutil.Usagef("%s %s: want whole hours (e.g. 3h)", flag, d)
		}
		return int(d / time.Hour), nil
	}
	if o.Given("min-hold") {
		if h.MinHold, err = hours("--min-hold", o.MinHold); err != nil {
			return err
		}
	}
	if o.Given("horizon") {
		if h.Horizon, err = hours("--horizon", o.Horizon); err != nil {
			return err
		}
	}
	if err := h.Validate(); err != nil {
		return cmdutil.Usagef("%w", err)
	}
	ec.Hysteresis = h
	for _, g := range o.SweepGain {
		v, err := regions.ParseGain(g)
		if err != nil {
			return cmdutil.Usagef("--sweep-gain: %w", err)
		}
		ec.SweepGains = append(ec.SweepGains, v)
	}
	ec.SweepHolds, ec.SweepHorizons = []int{}, []int{}
	for _, d := range o.SweepHold {
		v, err := hours("--sweep-hold", d)
		if err != nil {
			return err
		}
		ec.SweepHolds = append(ec.SweepHolds, v)
	}
	for _, d := range o.SweepHorizon {
		v, err := hours("--sweep-horizon", d)
		if err != nil {
			return err
		}
		ec.SweepHorizons = append(ec.SweepHorizons, v)
	}

	// Carbon data and signal.
	fill, err := eval.ParseFill(o.Fill, o.Given("fill"), o.Traces)
	if err != nil {
		return err
	}
	sig := cfg.CarbonSignal()
	if o.Signal != "" {
		if sig, err = regions.ParseSignal(o.Signal); err != nil {
			return cmdutil.Usagef("--signal: %w", err)
		}
	}
	var src regions.CarbonSource
	switch {
	case o.Traces != "":
		ts, err := regions.LoadTracesContext(ctx, o.Traces, regions.LoadOptions{Metric: sig.Metric(), Fill: fill})
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
		if src, err = cfg.OpenCarbonContext(ctx); err != nil {
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
	case o.Year != 0 && (o.From != "" || o.To != ""):
		return cmdutil.Usagef("--year and --from/--to are exclusive")
	case o.Year != 0:
		ec.Period = regions.Period{From: time.Date(o.Year, 1, 1, 0, 0, 0, 0, time.UTC), To: time.Date(o.Year+1, 1, 1, 0, 0, 0, 0, time.UTC)}
		if !ec.Period.Within(src.Period()) {
			return cmdutil.Usagef("--year %d: the carbon data covers %s (%s)", o.Year, src.Period(), src.Describe())
		}
	case o.From != "" || o.To != "":
		if o.From == "" || o.To == "" {
			return cmdutil.Usagef("--from and --to go together")
		}
		if ec.Period, err = regions.ParsePeriod(o.From, o.To); err != nil {
			return cmdutil.Usagef("--from/--to: %w", err)
		}
	default:
		if ec.Period, err = src.Period().FirstWholeYear(); err != nil {
			return err
		}
	}
	if o.Quick && o.Year == 0 && o.From == "" {
		ec.Period.To = ec.Period.From.Add(28 * 24 * time.Hour)
	}
	o.cfg = ec
	return nil
}

// Validate checks flag values.
func (o *CommandOptions) Validate() error {
	if o.Requests < 1 || o.Requests > 10000 {
		return cmdutil.Usagef("--requests-per-hour %d: want 1..10000", o.Requests)
	}
	if err := eval.CheckLatencySigma(o.Sigma); err != nil {
		return err
	}
	for i, g := range o.cfg.SweepGains {
		if err := (regions.Hysteresis{MinGain: g, Horizon: 1}).Validate(); err != nil {
			return cmdutil.Usagef("--sweep-gain %s: %w", o.SweepGain[i], err)
		}
	}
	for i, h := range o.cfg.SweepHolds {
		if err := (regions.Hysteresis{MinHold: h, Horizon: 1}).Validate(); err != nil {
			return cmdutil.Usagef("--sweep-hold %s: %w", o.SweepHold[i], err)
		}
	}
	for i, h := range o.cfg.SweepHorizons {
		if err := (regions.Hysteresis{Horizon: h}).Validate(); err != nil {
			return cmdutil.Usagef("--sweep-horizon %s: %w", o.SweepHorizon[i], err)
		}
	}
	if !o.cfg.Period.Within(o.cfg.Source.Period()) {
		return cmdutil.Usagef("period %s: the carbon data covers %s (%s)", o.cfg.Period, o.cfg.Source.Period(), o.cfg.Source.Describe())
	}
	if len(o.cfg.SLAs) == 0 {
		return cmdutil.Usagef("%s has no sla_classes: the evaluation counts changes per SLA class", o.ConfigName)
	}
	if n := o.cfg.Period.Hours() * len(o.cfg.Sites) * o.Requests; n > MaxSampledRequests {
		return cmdutil.Usagef("--requests-per-hour %d: %d hours × %d sites × %d = %d sampled requests, at most %d (held in memory, 8 bytes each): give fewer requests per hour or a shorter period",
			o.Requests, o.cfg.Period.Hours(), len(o.cfg.Sites), o.Requests, n, MaxSampledRequests)
	}
	if !o.NoPlots {
		return cmdutil.CheckOutputDir("--out-dir", o.OutDir)
	}
	return nil
}

// Run evaluates, writes plots and prints the result.
func (o *CommandOptions) Run(ctx context.Context, s *cmdutil.Streams) error {
	_, err := cmdutil.RunExperiment(s, o.Format, "eval stability",
		func(progress func(done, total int)) (*Result, error) {
			o.cfg.Progress = progress
			res, err := Run(ctx, o.cfg)
			if err == nil {
				res.Notes = append(res.Notes, fmt.Sprintf("Configuration: %s; hysteresis evaluated: %s (%s, flags override).", o.ConfigName, res.Hysteresis, o.hystNote))
			}
			return res, err
		},
		cmdutil.PlotsTo(o.NoPlots, o.OutDir, WritePlots),
		func(r *Result, files []string) any { r.Plots = files; return r })
	return err
}
