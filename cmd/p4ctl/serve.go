package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"

	"github.com/p4ctl/p4ctl/pkg/cmdutil"
	"github.com/p4ctl/p4ctl/pkg/fnserver"
	"github.com/p4ctl/p4ctl/pkg/wire"
)

// serveOptions are the flags of `p4ctl serve`.
type serveOptions struct {
	Addr         string
	ServerID     int
	ExecClasses  []string
	DefaultExec  string
	Mode         string
	Workers      int
	MaxQueue     int
	Delays       []string
	Timing       bool
	LogFile      string
	MetricsAddr  string
	Seed         uint64
	DrainTimeout time.Duration

	cfg   fnserver.Config
	ready func(addr string) // tests: called once the socket is bound
}

// defaultExecClasses mirror the costs of examples/mumbai.yaml's exec classes
// (1 ms, 10 ms, 100 ms) as exponential execution times.
var defaultExecClasses = []string{"0=exp:1ms", "1=exp:10ms", "2=exp:100ms"}

func newServeCmd(s *streams) *cobra.Command {
	o := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run a function server for a region host",
		Long: `Run a function server: it receives p4ctl requests on UDP port 9800, "executes"
each for a time drawn from its exec class's distribution (sleeping, or
busy-waiting with --mode busy), and replies to the client from port 9800 with
its server id, so the switch releases the slot it bound. Every request is
logged as a JSON line (--log) and counted in Prometheus metrics
(--metrics-addr). On SIGINT/SIGTERM it stops reading, answers the requests
in flight (up to --drain-timeout) and exits. With --timing every reply's
payload starts with what the server measured (queue, execution and delay
times), which p4ctl loadgen records to separate the emulated latency from
what the network and hosts add.

Distributions: fixed:D, exp:MEAN, uniform:MIN,MAX, lognormal:MEAN,CV,
gamma:MEAN,CV, pareto:MIN,SHAPE.`,
		Example: `  p4ctl serve --server-id 3
  p4ctl serve --server-id 3 --exec-class 0=fixed:500us --exec-class 1=lognormal:20ms,1.5 --log -
  p4ctl serve --server-id 65535 --delay 1=19.6ms   # a remote region's gateway, 19.6 ms toward site 1`,
		Args: cobra.NoArgs,
		RunE: runE(o, s),
	}
	f := cmd.Flags()
	f.StringVar(&o.Addr, "addr", fnserver.DefaultAddr, "UDP listen address; replies leave from it (the switch expects port 9800)")
	f.IntVar(&o.ServerID, "server-id", 0, "this server's id in the switch's server_endpoint table (0..1023), or 65535 for a remote region's gateway (required)")
	f.StringArrayVar(&o.ExecClasses, "exec-class", nil, "CLASS=DIST execution time of an exec class (repeatable; default "+fmt.Sprint(defaultExecClasses)+")")
	f.StringVar(&o.DefaultExec, "default-exec", "exp:1ms", "execution time of exec classes not given with --exec-class")
	f.StringVar(&o.Mode, "mode", string(fnserver.Sleep), "sleep (concurrent) or busy (spin a core per executing request)")
	f.IntVar(&o.Workers, "concurrency", 0, "requests executed at once, the server's capacity (0 = unbounded); more requests wait")
	cmdutil.DeprecatedAlias(f, "workers", "concurrency")
	f.IntVar(&o.MaxQueue, "max-queue", fnserver.DefaultMaxQueue, "requests waiting for a worker before new ones are dropped")
	f.StringArrayVar(&o.Delays, "delay", nil, "SITE=DURATION added before replying to requests of site id SITE (repeatable; emulates WAN latency where tc netem is unavailable)")
	f.BoolVar(&o.Timing, "timing", false, "start every reply's payload with what the server measured (queue, execution, delay; 20 bytes, see pkg/fnserver.Timing) for the load generator's SLA accounting")
	f.StringVar(&o.LogFile, "log", "", "write one JSON line per request to this file ('-' = stdout)")
	f.StringVar(&o.MetricsAddr, "metrics-addr", "", "serve Prometheus metrics on this address at /metrics (e.g. 127.0.0.1:9100)")
	f.Uint64Var(&o.Seed, "seed", 1, "seed of the execution-time draws")
	f.DurationVar(&o.DrainTimeout, "drain-timeout", fnserver.DefaultDrainTimeout, "on shutdown, how long to wait for requests in flight")
	return cmd
}

// Complete parses distributions and delays.
func (o *serveOptions) Complete(c *cobra.Command, _ []string) error {
	if !c.Flags().Changed("server-id") {
		return cmdutil.Usagef("--server-id is required (0..1023, or %d for a remote region's gateway)", wire.NoServer)
	}
	o.cfg = fnserver.Config{Addr: o.Addr, Mode: fnserver.Mode(o.Mode), Workers: o.Workers, MaxQueue: o.MaxQueue,
		Seed: o.Seed, DrainTimeout: o.DrainTimeout, Timing: o.Timing, Classes: map[uint8]fnserver.Dist{}}
	classes := o.ExecClasses
	if !c.Flags().Changed("exec-class") {
		classes = defaultExecClasses
	}
	for _, spec := range classes {
		class, d, err := fnserver.ParseClassDist(spec)
		if err != nil {
			return cmdutil.Usagef("--exec-class: %v", err)
		}
		if _, dup := o.cfg.Classes[class]; dup {
			return cmdutil.Usagef("--exec-class: class %d given twice", class)
		}
		o.cfg.Classes[class] = d
	}
	d, err := fnserver.ParseDist(o.DefaultExec)
	if err != nil {
		return cmdutil.Usagef("--default-exec: %v", err)
	}
	o.cfg.Default = d
	for _, spec := range o.Delays {
		sd, err := fnserver.ParseSiteDelay(spec)
		if err != nil {
			return cmdutil.Usagef("--delay: %v", err)
		}
		if slices.ContainsFunc(o.cfg.Delays, func(x fnserver.SiteDelay) bool { return x.Site == sd.Site }) {
			return cmdutil.Usagef("--delay: site %d given twice", sd.Site)
		}
		o.cfg.Delays = append(o.cfg.Delays, sd)
	}
	return nil
}

// Validate checks flag values (usage errors exit 2).
func (o *serveOptions) Validate() error {
	switch {
	case o.ServerID < 0 || o.ServerID > 1023 && o.ServerID != wire.NoServer:
		return cmdutil.Usagef("--server-id %d: want 0..1023, or %d for a remote region's gateway", o.ServerID, wire.NoServer)
	case o.Mode != string(fnserver.Sleep) && o.Mode != string(fnserver.Busy):
		return cmdutil.Usagef("--mode %q: want sleep or busy", o.Mode)
	case o.Workers < 0 || o.Workers > 1<<16:
		return cmdutil.Usagef("--concurrency %d: want 0..65536", o.Workers)
	case o.MaxQueue < 1 || o.MaxQueue > 1<<20:
		return cmdutil.Usagef("--max-queue %d: want 1..1048576", o.MaxQueue)
	case o.DrainTimeout <= 0 || o.DrainTimeout > 10*time.Minute:
		return cmdutil.Usagef("--drain-timeout %v: want > 0 and <= 10m", o.DrainTimeout)
	}
	if err := cmdutil.CheckHostPort("--addr", o.Addr, true); err != nil {
		return err
	}
	if err := cmdutil.CheckOutputFile("--log", o.LogFile); err != nil {
		return err
	}
	if o.MetricsAddr != "" {
		if err := cmdutil.CheckHostPort("--metrics-addr", o.MetricsAddr, true); err != nil {
			return err
		}
	}
	o.cfg.ServerID = uint16(o.ServerID)
	return nil
}

// Run serves until ctx ends.
func (o *serveOptions) Run(ctx context.Context, s *streams) error {
	switch o.LogFile {
	case "":
	case "-":
		o.cfg.Log = s.Out
	default:
		f, err := os.OpenFile(o.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("open --log: %w", err)
		}
		defer f.Close()
		o.cfg.Log = f
	}
	var metricsSrv *http.Server
	if o.MetricsAddr != "" {
		reg := prometheus.NewRegistry()
		m, err := fnserver.NewMetrics(reg, o.cfg.ServerID)
		if err != nil {
			return err
		}
		o.cfg.Metrics = m
		lis, err := net.Listen("tcp", o.MetricsAddr)
		if err != nil {
			return fmt.Errorf("metrics listener: %w", err)
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		metricsSrv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = metricsSrv.Serve(lis) }()
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_ = metricsSrv.Shutdown(sctx)
		}()
		fmt.Fprintf(s.Err, "p4ctl serve: metrics on http://%s/metrics\n", lis.Addr())
	}
	srv, err := fnserver.New(o.cfg)
	if err != nil {
		return err
	}
	role := fmt.Sprintf("server %d", o.cfg.ServerID)
	if o.cfg.ServerID == wire.NoServer {
		role = "remote-region gateway"
	}
	fmt.Fprintf(s.Err, "p4ctl serve: %s on udp %s, %s mode\n", role, srv.Addr(), o.cfg.Mode)
	if o.ready != nil {
		o.ready(srv.Addr().String())
	}
	err = srv.Serve(ctx)
	st := srv.Stats()
	fmt.Fprintf(s.Err, "p4ctl serve: stopped: %d received, %d replied, %d malformed, %d dropped\n", st.Received, st.Replied, st.Malformed, st.Dropped)
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}
