package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/p4ctl/p4ctl/pkg/cmdutil"
	"github.com/p4ctl/p4ctl/pkg/output"
	"github.com/p4ctl/p4ctl/research/eval/stability"
)

// evalStabilityOptions are the flags of `p4ctl eval stability`:
// stability.CommandOptions bound to the command's, and --config.
type evalStabilityOptions struct {
	stability.CommandOptions
	ConfigPath string
}

func newEvalStabilityCmd(s *cmdutil.Streams) *cobra.Command {
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
	f.StringVarP(&o.ConfigPath, "config", "c", "", "controller configuration file (YAML, docs/CONFIG.md: sites, regions, SLA classes, policy options, hysteresis; default: the built-in examples/mumbai.yaml)")
	f.StringVar(&o.Traces, "traces", "", "directory of hourly carbon CSVs (default: the configuration's carbon source)")
	f.StringVar(&o.Signal, "signal", "", "what the numbers are: lca or direct (average; Electricity Maps columns) or marginal (CSV traces of marginal rates); default: the configuration's carbon.signal")
	f.StringVar(&o.Fill, "fill", "none", "gaps in --traces: none (error), previous or linear")
	f.IntVar(&o.Year, "year", 0, "calendar year to evaluate (default: the first whole year of the data)")
	f.StringVar(&o.From, "from", "", "period start YYYY-MM-DD or RFC 3339 (with --to, instead of --year)")
	f.StringVar(&o.To, "to", "", "period end, exclusive")
	f.StringVar(&o.MinGain, "min-gain", "", "hysteresis evaluated: min_gain, e.g. 10% or 50g/kWh (default: the configuration's, else 10%)")
	f.DurationVar(&o.MinHold, "min-hold", 0, "hysteresis evaluated: min_hold, whole hours (default: the configuration's, else 3h)")
	f.DurationVar(&o.Horizon, "horizon", 0, "hysteresis evaluated: horizon, whole hours (default: the configuration's, else 1h)")
	f.StringSliceVar(&o.SweepGain, "sweep-gain", []string{"0%", "2%", "5%", "10%", "20%"}, "min_gain values of policy C's sweep")
	f.DurationSliceVar(&o.SweepHold, "sweep-hold", []time.Duration{0, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour}, "min_hold values of the sweep")
	f.DurationSliceVar(&o.SweepHorizon, "sweep-horizon", []time.Duration{time.Hour, 3 * time.Hour, 6 * time.Hour}, "horizons of the sweep (at the evaluated gain and hold)")
	f.IntVar(&o.Requests, "requests-per-hour", 12, fmt.Sprintf("sampled requests per site and hour (violation rate), 1..10000, and hours × sites × this at most %d (they are held in memory)", stability.MaxSampledRequests))
	f.Float64Var(&o.Sigma, "latency-sigma", 0.2, "sampled latency: log-normal σ of ln(RTT in ms), 0 < σ < 3")
	f.Uint64Var(&o.Seed, "seed", 1, "seed of the sampled requests")
	f.StringVar(&o.OutDir, "out-dir", "out/eval-stability", "directory for PNG and SVG plots")
	f.BoolVar(&o.NoPlots, "no-plots", false, "do not write plots")
	f.BoolVar(&o.Quick, "quick", false, "a smoke run: the first 28 days, sweep 0%,10% × 0h,3h, horizons 1h,3h (explicit flags win)")
	output.AddFlag(f, &o.Format)
	return cmd
}

// Complete loads the configuration (the built-in example by default), then
// the carbon data, and fills the evaluation's config.
func (o *evalStabilityOptions) Complete(c *cobra.Command, _ []string) error {
	o.Flags = flagsOf(c)
	var err error
	if o.Config, o.ConfigName, err = configOrBuiltin(c, o.ConfigPath); err != nil {
		return err
	}
	return o.CommandOptions.Complete(cmdContext(c))
}
