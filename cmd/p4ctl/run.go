package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"github.com/spf13/cobra"

	"github.com/p4ctl/p4ctl/pkg/carbonapi"
	"github.com/p4ctl/p4ctl/pkg/cmdutil"
	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/controller"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

// runOptions are the flags of `p4ctl run`.
type runOptions struct {
	configFlag
	cmdutil.Flags
	conn         connFlags
	Replica      int
	ReplicaHost  bool
	Shards       int
	Shard        int
	Replay       string
	Speed        string
	Hours        int
	MetricsAddr  string
	Grace        time.Duration
	Poll         time.Duration
	Refresh      time.Duration
	RefreshLimit time.Duration
	Verify       time.Duration
	VerifyFull   time.Duration
	EnergyWh     float64
	LogFormat    string
	LogLevel     string
	P4Info       string
	DeviceConfig string

	hostname func() (string, error)
	ready    func(metrics net.Addr) // tests

	pipeline *p4v1.ForwardingPipelineConfig // --p4info, --device-config
	targets  []controller.Target
	schedule controller.Schedule
	clock    controller.Clock
}

func newRunCmd(s *streams) *cobra.Command {
	return newRunCmdFor(s, &runOptions{hostname: os.Hostname})
}

func newRunCmdFor(s *streams, o *runOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run --config FILE [--replay START --speed 3600x] [--replica N | --replica-from-hostname]",
		Short: "Run the controller daemon: keep switches in the state of the current hour",
		Long: `run drives every target of the configuration (or --grpc-addr) from one
process, one goroutine per switch: it connects, arbitrates, reconnects with
backoff and resyncs (reads the switch, writes only the difference), and at
every hour recompiles from the carbon source and applies the change
hitlessly (new generation under the inactive epoch, one flip, cleanup after
--grace). When carbon data is older than carbon.staleness_bound it compiles
the safe policy A (nearest region) and says so in logs and metrics.

Clocks: real time (recompute at each hour boundary plus up to
schedule.jitter), or a replay (--replay START --speed 3600x, or the
configuration's schedule.mode: replay) that ends after --hours hours (0 =
never). High availability: run several replicas with distinct election ids
(--replica N adds N to the configured election id; --replica-from-hostname
takes N from a StatefulSet pod name such as p4ctl-2); only the primary
writes, a backup takes over when the primary's stream ends.

Prometheus metrics on --metrics-addr /metrics; /livez answers 200 while the
control loop runs (liveness), /healthz while moreover every target is in, or
on its way to, the desired state (readiness: 503 with the reason while a
switch is disconnected, lacks its pipeline and none can be pushed, or
refuses the plan). With --p4info, a switch found without that pipeline (a
restart with --no-p4, another program) gets it pushed again and is
resynced. Between pushes each switch is verified (--verify-every: the
active epoch and the ranking; --verify-full-every: every table) and drift
— another client's writes — is repaired at once and counted in
p4ctl_drift_repairs_total.`,
		Args: cobra.NoArgs,
		RunE: runE(o, s),
	}
	f := cmd.Flags()
	o.configFlag.add(f)
	o.conn.add(f, "", 0, "election id for every target, before --replica is added (0 = each target's configured id, at least 1)")
	f.IntVar(&o.Replica, "replica", 0, "replica ordinal: added to every target's election id")
	f.BoolVar(&o.ReplicaHost, "replica-from-hostname", false, "take the replica ordinal from the host name's trailing -N (StatefulSet pods); with --shards S, pod N is replica N / S of shard N mod S")
	f.IntVar(&o.Shards, "shards", 1, "split the targets among this many controller groups (by a hash of the target name, docs/SCALING.md); this process drives its shard's targets only")
	f.IntVar(&o.Shard, "shard", 0, "this process's shard, 0..shards−1 (or from the host name with --replica-from-hostname)")
	f.StringVar(&o.Replay, "replay", "", "replay from this hour (RFC 3339) instead of real time")
	f.StringVar(&o.Speed, "speed", "", "replay speed, e.g. 3600x (one hour per second) or max (default: the configuration's, else 3600x)")
	f.Var(newOptionalInt(&o.Hours), "hours", "replay this many hours, then exit (0 = without end; default: the configuration's schedule.replay.hours)")
	f.StringVar(&o.MetricsAddr, "metrics-addr", controller.DefaultMetricsAddr, "listen address of /metrics, /healthz and /livez (\"\" = off)")
	f.DurationVar(&o.Grace, "grace", time.Second, "how long an old generation stays after the flip")
	f.DurationVar(&o.Poll, "poll", 15*time.Second, "how often counters are read back for the metrics (0 = only after each push)")
	f.DurationVar(&o.Refresh, "carbon-refresh", 5*time.Minute, "live carbon sources: refresh this often between hours, in the background (0 = only before each hourly plan; the safe policy applies the moment data crosses carbon.staleness_bound, whether or not a refresh is in flight)")
	f.DurationVar(&o.RefreshLimit, "carbon-refresh-timeout", carbonapi.DefaultRefreshTimeout, "live carbon sources: deadline of one refresh of every zone, retries included (zones not fetched by then keep their cached values)")
	f.DurationVar(&o.Verify, "verify-every", controller.DefaultVerifyInterval, "between pushes, check this often that each switch still holds active_epoch and the carbon_rank entries last written (one small Read) and repair drift at once (0 = never)")
	f.DurationVar(&o.VerifyFull, "verify-full-every", controller.DefaultFullVerifyInterval, "between pushes, read every table back this often, compare with what was written and repair drift (0 = never)")
	f.Float64Var(&o.EnergyWh, "energy-per-request-wh", controller.DefaultEnergyPerRequestWh, "assumed energy per request for the gCO2 estimate (Wh, > 0 and at most 1000)")
	f.StringVar(&o.LogFormat, "log-format", "text", "log format: text or json")
	f.StringVar(&o.LogLevel, "log-level", "info", "log level: debug, info, warn, error")
	f.StringVar(&o.P4Info, "p4info", "", "P4Info to push (with --device-config) to switches found without this pipeline: at start and after every reconnection (e.g. a restart with --no-p4)")
	f.StringVar(&o.DeviceConfig, "device-config", "", "target device config pushed with --p4info (e.g. BMv2 JSON)")
	return cmd
}

// Complete loads the configuration.
func (o *runOptions) Complete(c *cobra.Command, _ []string) error {
	o.logTuned = true // logged by Run, once, with the daemon's logger
	o.Flags = flagsOf(c)
	if err := o.load(c); err != nil {
		return err
	}
	if o.P4Info != "" {
		pc, err := p4rt.LoadPipelineContext(cmdContext(c), o.P4Info, o.DeviceConfig, 0)
		if err != nil {
			return cmdutil.InputError(err)
		}
		// Checked against the program's contract before anything is
		// pushed: a P4Info of another program would replace the switch's
		// pipeline (deleting every entry) and then fail to translate.
		idx, err := p4rt.NewIndex(pc.GetP4Info())
		if err == nil {
			_, err = controller.NewTranslator(idx)
		}
		if err != nil {
			return cmdutil.Usagef("--p4info %s is not a P4Info of the p4ctl program (pkg/pipeline's contract; nothing was pushed): %w", o.P4Info, err)
		}
		o.pipeline = pc
	}
	return nil
}

var ordinalRE = regexp.MustCompile(`-(\d+)$`)

// Validate checks the flags, resolves targets, election ids and the clock.
func (o *runOptions) Validate() error {
	if err := o.RefuseEmpty(append([]string{"speed", "replay", "p4info", "device-config"}, connFlagNames...)...); err != nil {
		return err
	}
	if err := o.conn.validate(false); err != nil {
		return err
	}
	if err := o.conn.refuseDeviceID(o.Flags, o.ConfigPath); err != nil {
		return err
	}
	if o.Replica < 0 {
		return cmdutil.Usagef("--replica must be ≥ 0")
	}
	if o.Shards < 1 {
		if o.Given("shards") || o.Shards < 0 {
			return cmdutil.Usagef("--shards %d: want ≥ 1 (1 = one group drives every target)", o.Shards)
		}
		o.Shards = 1 // options built without the flags (tests)
	}
	if o.ReplicaHost {
		h, err := o.hostname()
		if err != nil {
			return err
		}
		m := ordinalRE.FindStringSubmatch(h)
		if m == nil {
			return cmdutil.Usagef("--replica-from-hostname: host name %q does not end in -N", h)
		}
		n, _ := strconv.Atoi(m[1])
		o.Shard, o.Replica = controller.ShardReplica(n, o.Shards)
	}
	if o.Shards < 1 || o.Shard < 0 || o.Shard >= o.Shards {
		return cmdutil.Usagef("--shard %d of --shards %d: want 0 ≤ shard < shards", o.Shard, o.Shards)
	}
	if o.Grace < 0 {
		return cmdutil.Usagef("--grace %v: must be ≥ 0", o.Grace)
	}
	if o.Poll < 0 {
		return cmdutil.Usagef("--poll %v: must be ≥ 0", o.Poll)
	}
	if err := cmdutil.CheckEnergy("--energy-per-request-wh", o.EnergyWh); err != nil {
		return err
	}
	if o.MetricsAddr != "" {
		if err := cmdutil.CheckHostPort("--metrics-addr", o.MetricsAddr, true); err != nil {
			return err
		}
	}
	if o.Refresh < 0 || o.RefreshLimit <= 0 {
		return cmdutil.Usagef("--carbon-refresh must be ≥ 0, --carbon-refresh-timeout > 0")
	}
	if o.Verify < 0 || o.VerifyFull < 0 {
		return cmdutil.Usagef("--verify-every and --verify-full-every must be ≥ 0 (0 = never)")
	}
	if o.DeviceConfig != "" && o.P4Info == "" {
		return cmdutil.Usagef("--device-config needs --p4info")
	}
	targets, err := o.conn.targets(o.cfg, o.conn.ElectionID)
	if err != nil {
		return err
	}
	if o.Shards > 1 {
		if targets = controller.ShardTargets(targets, o.Shard, o.Shards); len(targets) == 0 {
			return cmdutil.Usagef("shard %d of %d owns none of the configuration's targets", o.Shard, o.Shards)
		}
	}
	for i := range targets {
		targets[i].ElectionID = controller.ReplicaElection(targets[i].ElectionID, o.Replica)
	}
	if o.pipeline != nil {
		for i := range targets {
			targets[i].Pipeline = o.pipeline
		}
	}
	o.targets = targets

	sched := o.cfg.Schedule
	replay := sched.Mode == config.ScheduleReplay || o.Replay != ""
	live := o.cfg.Carbon.Live()
	if replay && live {
		return cmdutil.Usagef("a replay needs a trace or the offline model; carbon.source %s is live (real time only)", o.cfg.Carbon.Source)
	}
	if !replay {
		if o.Speed != "" || o.Hours >= 0 {
			return cmdutil.Usagef("--speed and --hours apply to a replay (--replay START or schedule.mode: replay)")
		}
		o.schedule = controller.Schedule{Jitter: sched.Jitter.Duration, Seed: uint64(time.Now().UnixNano())}
		o.clock = controller.RealClock{}
		return nil
	}
	var start time.Time
	speed, hours := 3600.0, 0
	if r := sched.Replay; r != nil {
		start, speed, hours = r.Start, r.Speed, r.Hours
	}
	if o.Replay != "" {
		t, err := cmdutil.ParseHour(o.Replay)
		if err != nil {
			return cmdutil.Usagef("--replay: %w", err)
		}
		start = t
	}
	if o.Speed != "" {
		v, err := cmdutil.ParseSpeed(o.Speed)
		if err != nil {
			return cmdutil.Usagef("--speed %w", err)
		}
		speed = v
	}
	if o.Hours >= 0 {
		hours = o.Hours
	}
	clk, err := controller.NewReplayClock(start, speed)
	if err != nil {
		return cmdutil.Usagef("%w", err)
	}
	o.clock = clk
	o.schedule = controller.Schedule{Replay: true, Start: start, Hours: hours}
	return nil
}

// cleanupHint is the command that deletes what an interrupted push left on
// target s: apply for the same hour (or p4ctl run again).
func (o *runOptions) cleanupHint(s controller.TargetSummary) string {
	cmd := "p4ctl apply -c " + o.ConfigPath
	if o.conn.GRPCAddr != "" {
		cmd += " --grpc-addr " + o.conn.GRPCAddr
	}
	if ie := s.Interrupted; ie != nil {
		cmd += " --at " + ie.Hour.Format(time.RFC3339)
	}
	return cmd + " (or p4ctl run again: its first push deletes it)"
}

// Run runs the daemon until interrupted (or the replay ends).
func (o *runOptions) Run(ctx context.Context, s *streams) error {
	log, err := cmdutil.NewLogger(s.Err, o.LogFormat, o.LogLevel)
	if err != nil {
		return err
	}
	feed, err := controller.OpenCommandFeed(ctx, o.cfg, carbonapi.Options{Logger: log, RefreshTimeout: o.RefreshLimit})
	if err != nil {
		return err
	}
	var refresh time.Duration
	if _, live := feed.Source.(controller.Refresher); live {
		refresh = o.Refresh
	}
	m := controller.NewMetrics()
	grace := o.Grace
	if grace == 0 {
		grace = -1
	}
	ctl, err := controller.New(controller.Options{Config: o.cfg, Targets: o.targets, Feed: feed, Clock: o.clock, Schedule: o.schedule, RefreshInterval: refresh,
		Driver: controller.DriverOptions{Grace: grace, PollInterval: o.Poll, VerifyInterval: o.Verify, FullVerifyInterval: o.VerifyFull,
			EnergyPerRequestWh: o.EnergyWh, Metrics: m, Log: log}, Log: log, CleanupHint: o.cleanupHint})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	srvDone := make(chan error, 1)
	if o.MetricsAddr != "" {
		routes := map[string]http.Handler{}
		if l := ctl.Latency(); l != nil {
			routes[controller.LatencyPath] = l.Handler()
		}
		srv, err := controller.NewServer(o.MetricsAddr, m, ctl.Health, routes)
		if err != nil {
			return err
		}
		if !cmdutil.IsLoopbackAddr(o.MetricsAddr) {
			log.Warn("metrics are reachable beyond this machine", "addr", srv.Addr().String())
		}
		log.Info("serving /metrics, /healthz and /livez", "addr", srv.Addr().String())
		if o.ready != nil {
			o.ready(srv.Addr())
		}
		go func() { srvDone <- srv.Serve(ctx) }()
	} else {
		close(srvDone)
	}
	mode := "real time"
	if o.schedule.Replay {
		mode = fmt.Sprintf("replay from %s for %d hours", o.schedule.Start.Format(time.RFC3339), o.schedule.Hours)
		if o.schedule.Hours == 0 {
			mode = fmt.Sprintf("replay from %s without end", o.schedule.Start.Format(time.RFC3339))
		}
	}
	for _, p := range o.tuned {
		log.Info("pool bound from tune", "region", p.Region, "bound", p.Bound, "violation_rate", p.Violation, "target", p.Target,
			"little_bound", p.Little, "stability_limit", p.Stable, "servers", p.Servers, "cores_per_server", p.CoresPerServer)
	}
	log.Info("p4ctl run", "targets", len(o.targets), "policy", o.cfg.Policy.Name, "carbon", feed.Source.Describe(), "schedule", mode,
		"staleness_bound", ctl.Planner().StalenessBound().String())
	err = ctl.Run(ctx)
	cancel()
	<-srvDone
	return err
}
