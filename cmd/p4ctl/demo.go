package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/p4ctl/p4ctl/pkg/cmdutil"
	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/demo"
	"github.com/p4ctl/p4ctl/pkg/output"
)

// demoOptions are the flags of `p4ctl demo`.
type demoOptions struct {
	ConfigPath string
	Hours      int
	Requests   int
	Speed      string
	Start      string
	Seed       uint64
	OutDir     string
	GRPCAddr   string
	EnergyWh   float64
	Quick      bool
	Drift      bool
	DriftAfter int
	Format     output.Format

	cmdutil.Flags

	cfg     *config.Config
	cfgName string
	speed   float64
	start   time.Time
}

func newDemoCmd(s *streams) *cobra.Command {
	o := &demoOptions{}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the end-to-end demo on the embedded switch (no hardware, no root, no API key)",
		Long: `demo starts the embedded p4ctl switch with its P4Runtime server in-process,
runs the controller in replay over 24 hours of the configured carbon source
(default: the built-in examples/mumbai.yaml on the offline synthetic model),
and every hour drives the paper's mixed workload (20/30/20/20/10 % of
requests with 300/500/800/1000/3000 ms SLAs) through the data plane, with
simulated servers answering so that slots are released. Per hour it prints
the carbon ranking, the entries the controller wrote, the requests per region
read back from the switch's region_routed counter over P4Runtime, the
estimated gCO2 against the nearest-region baseline and SLA violations; then
totals, and PNG/SVG plots in --out-dir. It checks that the switch's counters
equal what pkg/regions' policy decides for the same requests and fails
(exit 1) if they differ.

Mid-run (--drift, on by default; --drift-after), between two replayed
hours, it closes the latency loop in real time: for one latency window
replies come back after emulated round trips (70 % of each profile P95),
then for 2.5 s the round trip of a (site, region) pair that carries an SLA
class rises past the class's budget, and the class then has four windows
to come back (the run takes that much longer; the moments it prints are
seconds since the episode began, and they come in its first half). The switch times
requests in band and reports round trips as P4Runtime digests; the
controller's sliding-window P95 crosses the budget, sla_feasibility is
recompiled and pushed, and the class goes elsewhere; after the recovery it
comes back. The demo prints these moments and fails (exit 1) unless the
class left within a second of the crossing, nothing was routed over budget
once the estimator had converged, and the class came back. With
latency.source static it learns with demo settings (blend, 3 s window,
2 s dwell; demo.DemoLatency).`,
		Args: cobra.NoArgs,
		RunE: runE(o, s),
	}
	f := cmd.Flags()
	f.StringVarP(&o.ConfigPath, "config", "c", "", "controller configuration file (YAML, docs/CONFIG.md; default: the built-in examples/mumbai.yaml)")
	f.IntVar(&o.Hours, "hours", demo.DefaultHours, "hours to replay")
	f.IntVar(&o.Requests, "requests", demo.DefaultRequestsPerHour, "requests per hour")
	f.StringVar(&o.Speed, "speed", fmt.Sprintf("%gx", float64(demo.DefaultSpeed)), "replay speed (3600x = one hour per second; max = unpaced)")
	f.StringVar(&o.Start, "start", "", "first hour (default: the configuration's replay start)")
	f.Uint64Var(&o.Seed, "seed", 1, "workload seed")
	f.StringVar(&o.OutDir, "out-dir", "out/demo", "directory for PNG and SVG plots (\"\" = none)")
	cmdutil.DeprecatedAlias(f, "out", "out-dir")
	f.StringVar(&o.GRPCAddr, "grpc-addr", "", "also serve the switch's P4Runtime on this loopback address (watch it with p4ctl get)")
	f.Float64Var(&o.EnergyWh, "energy-per-request-wh", 1, "assumed energy per request for the gCO2 estimate (Wh, > 0 and at most 1000)")
	f.BoolVar(&o.Quick, "quick", false, "a smoke test: 6 hours × 500 requests, unpaced, no drift episode (explicit --hours, --requests, --speed, --drift win)")
	f.BoolVar(&o.Drift, "drift", true, "run the latency-drift episode mid-run (real time: a latency window, 2.5 s of drift, four windows to recover; a region slows past an SLA class's budget, the switch measures it, the controller stops routing the class there, then takes it back)")
	f.IntVar(&o.DriftAfter, "drift-after", 0, "run the drift episode after this many hours (0 = half of --hours)")
	output.AddFlag(f, &o.Format)
	return cmd
}

// Complete loads the configuration (the built-in example by default).
func (o *demoOptions) Complete(c *cobra.Command, _ []string) error {
	o.Flags = flagsOf(c)
	var err error
	o.cfg, o.cfgName, err = configOrBuiltin(c, o.ConfigPath)
	return err
}

// Validate checks the flags.
func (o *demoOptions) Validate() error {
	if o.Quick { // explicit flags win, as with every other --quick
		if !o.Given("hours") {
			o.Hours = 6
		}
		if !o.Given("requests") {
			o.Requests = 500
		}
		if !o.Given("speed") {
			o.Speed = "max"
		}
		if !o.Given("drift") {
			o.Drift = false
		}
	}
	if err := o.RefuseEmpty("config", "start", "grpc-addr", "speed"); err != nil {
		return err
	}
	// --hours first: --drift-after's range depends on it.
	if o.Hours < 1 || o.Hours > 24*366 {
		return cmdutil.Usagef("--hours %d: want 1..8784", o.Hours)
	}
	if o.DriftAfter < 0 || o.DriftAfter > o.Hours {
		return cmdutil.Usagef("--drift-after %d: want 0..--hours (%d)", o.DriftAfter, o.Hours)
	}
	if o.Requests < 1 || o.Requests > 10_000_000 {
		return cmdutil.Usagef("--requests %d: want 1..10000000", o.Requests)
	}
	v, err := cmdutil.ParseSpeed(o.Speed)
	if err != nil {
		return cmdutil.Usagef("--speed %w", err)
	}
	o.speed = v
	if o.Start != "" {
		t, err := cmdutil.ParseHour(o.Start)
		if err != nil {
			return cmdutil.Usagef("--start: %w", err)
		}
		o.start = t
	}
	if err := cmdutil.CheckEnergy("--energy-per-request-wh", o.EnergyWh); err != nil {
		return err
	}
	if o.GRPCAddr != "" {
		if err := cmdutil.CheckHostPort("--grpc-addr", o.GRPCAddr, true); err != nil {
			return err
		}
		if !cmdutil.IsLoopbackAddr(o.GRPCAddr) {
			return cmdutil.Usagef("--grpc-addr %q: the demo serves on loopback only", o.GRPCAddr)
		}
	}
	switch o.cfg.Carbon.Source {
	case config.SourceOffline, config.SourceCSV, config.SourceElectricityMapsCSV:
	default:
		return cmdutil.Usagef("the demo replays traces or the offline model; carbon.source %s is live", o.cfg.Carbon.Source)
	}
	return cmdutil.CheckOutputDir("--out-dir", o.OutDir)
}

// Run runs the demo, streaming hours in table mode.
func (o *demoOptions) Run(ctx context.Context, s *streams) error {
	table := o.Format == output.Table
	opts := demo.Options{Config: o.cfg, ConfigName: o.cfgName, Start: o.start, Hours: o.Hours, RequestsPerHour: o.Requests,
		Speed: o.speed, Seed: o.Seed, EnergyPerRequestWh: o.EnergyWh, GRPCAddr: o.GRPCAddr}
	if o.Drift {
		opts.Drift = &demo.DriftOptions{AfterHour: o.DriftAfter}
	}
	bar := cmdutil.NewHourBar(s.Err, o.Hours)
	defer bar.Finish()
	opts.Progress = bar.Set
	if table {
		opts.OnStart = func(r *demo.Result) {
			bar.Clear()
			_ = demo.WriteHeader(s.Out, r)
		}
		opts.OnHour = func(h demo.Hour) {
			bar.Clear()
			fmt.Fprintln(s.Out, demo.HourLine(h))
		}
		opts.OnDriftStart = func(r *demo.DriftReport) {
			bar.Clear()
			_ = demo.WriteDriftHeader(s.Out, r)
		}
		opts.OnMoment = func(m demo.Moment) {
			bar.Clear()
			fmt.Fprintln(s.Out, demo.MomentLine(m))
		}
	}
	res, err := demo.Run(ctx, opts)
	bar.Finish()
	if res != nil && o.OutDir != "" && len(res.Hours) > 0 {
		if _, perr := demo.WritePlots(res, o.OutDir); perr != nil && err == nil {
			err = perr
		}
		defer cmdutil.PrintPlots(s, res.Plots) // after the totals
	}
	if res != nil {
		if table {
			if werr := demo.WriteTotals(s.Out, res); werr != nil && err == nil {
				err = werr
			}
		} else if perr := output.Print(s.Out, o.Format, res); perr != nil && err == nil {
			err = perr
		}
	}
	if res != nil && res.Interrupted != "" && errors.Is(err, context.Canceled) { // its switch was in memory
		return fmt.Errorf("demo: stopped %s (%w): the totals above cover those hours", res.Interrupted, err)
	}
	if errors.Is(err, demo.ErrMismatch) {
		return fmt.Errorf("DEMO FAILED: %w (see the per-region table above)", err)
	}
	if errors.Is(err, demo.ErrDrift) {
		return fmt.Errorf("DEMO FAILED: %w (see the latency drift section above)", err)
	}
	return err
}
