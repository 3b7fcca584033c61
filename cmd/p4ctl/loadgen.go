package main

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/p4ctl/p4ctl/pkg/cmdutil"
	"github.com/p4ctl/p4ctl/pkg/loadgen"
	"github.com/p4ctl/p4ctl/pkg/output"
	"github.com/p4ctl/p4ctl/pkg/wire"
)

// loadgenOptions are the flags of `p4ctl loadgen`.
type loadgenOptions struct {
	Target     string
	Local      string
	Rate       float64
	Duration   time.Duration
	CV         float64
	SLAMix     string
	ExecMix    string
	SLAScale   float64
	Timeout    time.Duration
	Seed       uint64
	FirstID    uint32
	Payload    int
	CSVFile    string
	JSONFile   string
	NoProgress bool
	format     output.Format

	cfg loadgen.Config
}

func newLoadgenCmd(s *streams) *cobra.Command {
	o := &loadgenOptions{}
	cmd := &cobra.Command{
		Use:   "loadgen",
		Short: "Generate open-loop request load and report routing, RTT and SLA results",
		Long: `Send p4ctl requests over UDP to the service address at open-loop Poisson (--cv 1)
or gamma-renewal (any other --cv; 0 = evenly spaced) arrival times, with SLA
classes and exec classes drawn from mixes, for --duration. Every reply carries
the switch's decisions (site, region, server, flags), which are recorded with
the round-trip time and whether the SLA was met (within SLA × --sla-scale).
Prints RTT percentiles, SLA accounting per class and routing shares; --csv and
--json write every request. Replies from p4ctl serve --timing also carry what
the server measured (queue, drawn and spent execution, delay), recorded with
each request (server_*_ms), so a testbed can tell the emulated latency from
its own overhead (mininet/README.md).

Requests leave with region id 255 (wire.NoRegion), which every p4ctl switch
overwrites: answers still carrying it reached a server directly and are
reported as unrouted, apart from the routing shares. loadgen exits 1 when
nothing answered at all. --csv and --json paths are checked before the run.

Rates above 50000 req/s, runs over 1 h and more than 2 million requests per run
are refused.`,
		Example: `  p4ctl loadgen --target 10.0.0.100 --rate 200 --duration 2m
  p4ctl loadgen --target 10.0.0.100 --rate 50 --cv 2.5 --sla-mix 300:50,3000:50 --exec-mix 0:90,2:10
  p4ctl loadgen --target 10.0.0.100 --sla-scale 0.1 --json run.json -o json`,
		Args: cobra.NoArgs,
		RunE: runE(o, s),
	}
	f := cmd.Flags()
	f.StringVar(&o.Target, "target", "", "service address host[:port] requests are sent to (port defaults to 9800; required)")
	f.StringVar(&o.Local, "local", "", "local UDP address host:port to send from (port 0 = any; default: any address and port)")
	f.Float64Var(&o.Rate, "rate", 100, "mean request rate (req/s, at most 50000)")
	f.DurationVar(&o.Duration, "duration", 10*time.Second, "how long to send (at most 1h)")
	f.Float64Var(&o.CV, "cv", 1, "coefficient of variation of inter-arrival times: 1 = Poisson, 0 = evenly spaced, other = gamma renewal")
	f.StringVar(&o.SLAMix, "sla-mix", loadgen.DefaultSLAMix().String(), "SLA classes (ms) and their weights")
	f.StringVar(&o.ExecMix, "exec-mix", loadgen.DefaultExecMix().String(), "exec classes and their weights")
	f.Float64Var(&o.SLAScale, "sla-scale", 1, "judge SLAs against SLA × this (e.g. 0.1 when latencies are emulated at 1/10)")
	f.DurationVar(&o.Timeout, "timeout", loadgen.DefaultTimeout, "how long a request may wait for its reply")
	f.Uint64Var(&o.Seed, "seed", 1, "seed of arrivals and mixes")
	f.Uint32Var(&o.FirstID, "first-id", 1, "first request id (give concurrent generators disjoint ranges)")
	f.IntVar(&o.Payload, "payload", 0, "extra payload bytes after the header (0..1400)")
	f.StringVar(&o.CSVFile, "csv", "", "write every request to this CSV file")
	f.StringVar(&o.JSONFile, "json", "", "write the summary and every request to this JSON file")
	f.BoolVar(&o.NoProgress, "no-progress", false, "no progress bar even on a terminal")
	output.AddFlag(f, &o.format)
	return cmd
}

// Complete resolves the target and parses the mixes.
func (o *loadgenOptions) Complete(*cobra.Command, []string) error {
	if o.Target == "" {
		return cmdutil.Usagef("--target is required (the service address, e.g. 10.0.0.100)")
	}
	target := o.Target
	if _, _, err := net.SplitHostPort(target); err != nil {
		target = net.JoinHostPort(target, strconv.Itoa(wire.UDPPort))
	}
	ua, err := net.ResolveUDPAddr("udp4", target)
	if err != nil {
		return cmdutil.Usagef("--target %q: %v", o.Target, err)
	}
	sla, err := loadgen.ParseMix[uint16](o.SLAMix, 16)
	if err != nil {
		return cmdutil.Usagef("--sla-mix: %v", err)
	}
	exec, err := loadgen.ParseMix[uint8](o.ExecMix, 8)
	if err != nil {
		return cmdutil.Usagef("--exec-mix: %v", err)
	}
	o.cfg = loadgen.Config{Target: ua.AddrPort(), Local: o.Local, Rate: o.Rate, Duration: o.Duration, CV: o.CV,
		SLAMix: sla, ExecMix: exec, SLAScale: o.SLAScale, Timeout: o.Timeout, Seed: o.Seed, FirstID: o.FirstID, Payload: o.Payload}
	if a := o.cfg.Target.Addr(); a.Is4In6() {
		o.cfg.Target = netip.AddrPortFrom(a.Unmap(), o.cfg.Target.Port())
	}
	return nil
}

// Validate refuses absurd settings (usage errors exit 2).
func (o *loadgenOptions) Validate() error {
	if o.Local != "" {
		if err := cmdutil.CheckHostPort("--local", o.Local, true); err != nil {
			return err
		}
	}
	if err := o.cfg.Validate(); err != nil {
		return cmdutil.Usagef("%v", err)
	}
	if err := cmdutil.CheckOutputFile("--csv", o.CSVFile); err != nil {
		return err
	}
	return cmdutil.CheckOutputFile("--json", o.JSONFile)
}

// Run generates the load and prints the summary.
func (o *loadgenOptions) Run(ctx context.Context, s *streams) error {
	clearBar := func() {}
	if !o.NoProgress {
		if bar := cmdutil.NewProgressBar(s.Err, "loadgen"); bar != nil {
			bar.ChangeMax(int(o.cfg.Duration / time.Millisecond))
			o.cfg.Progress = func(p loadgen.Progress) {
				bar.Describe(fmt.Sprintf("loadgen: %d sent, %d answered", p.Sent, p.Done))
				_ = bar.Set(int(min(p.Elapsed, p.Duration) / time.Millisecond))
			}
			// The bar is cleared before anything else is printed, so the
			// report starts on a clean line.
			clearBar = sync.OnceFunc(func() {
				_ = bar.Finish()
				_ = bar.Clear()
			})
			defer clearBar()
		}
	}
	res, err := loadgen.Run(ctx, o.cfg)
	clearBar()
	if err != nil && res == nil {
		return err
	}
	if o.CSVFile != "" {
		if werr := cmdutil.WriteFile(o.CSVFile, func(f *os.File) error { return loadgen.WriteCSV(f, res.Records) }); werr != nil {
			return werr
		}
	}
	if o.JSONFile != "" {
		if werr := cmdutil.WriteFile(o.JSONFile, func(f *os.File) error { return res.WriteJSON(f) }); werr != nil {
			return werr
		}
	}
	sum := res.Summary()
	if perr := output.Print(s.Out, o.format, sum); perr != nil {
		return perr
	}
	if err != nil {
		return err
	}
	if sum.Sent > 0 && sum.Replied+sum.Nacked == 0 {
		return fmt.Errorf("no answer from %s to any of %d requests: is a p4ctl switch (or p4ctl serve) there, and does its reply reach %s?", o.cfg.Target, sum.Sent, sum.Local)
	}
	if sum.Unrouted > 0 && o.format != output.Table {
		fmt.Fprintf(s.Err, "warning: %d of %d answers carry no region: no p4ctl switch stamped their header\n", sum.Unrouted, sum.Replied+sum.Nacked)
	}
	return nil
}
