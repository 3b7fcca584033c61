// Package soak runs p4ctl's controller daemon against embedded switches for
// many replayed hours under faults, and checks what must survive them.
//
// The rig, all in one process on loopback: Switches embedded switches
// (pkg/dataplane behind the real P4Runtime server on a loopback TCP port,
// as `p4ctl switch` runs), a controller.Controller in a replay clock as
// `p4ctl run --replay START --speed S --p4info …` runs it (one driver per
// switch, a live Electricity Maps source with the staleness bound, drift
// verification), a loopback Electricity Maps endpoint serving the
// synthetic carbon model at the replayed hour, and a concurrent traffic
// stream into every switch answered by its servers (pkg/demo). A chaos loop
// meanwhile
//
//   - kills the controller (its context is cancelled mid-whatever; its
//     connections close) and starts a new one, with an empty carbon cache,
//     at the replayed hour it has reached;
//   - kills a switch (its server stops at once; the tables, registers and
//     counters are gone) and starts a new one at the same address, with the
//     p4ctl program loaded or without a pipeline (`--no-p4`), which the
//     controller must push again;
//   - takes the carbon API down for a few replayed hours (beyond the
//     staleness bound: the safe policy A, and back);
//
// while, throughout, the carbon API drops a share of its responses and a
// share of the controller's P4Runtime calls are delayed. Every request of
// the traffic stream that a switch routes is checked with
// internal/testing/routecheck against the plans the switch may hold (followed
// through controller.DriverOptions.OnSync); at the end, with the faults
// stopped, every switch must converge to the controller's current plan
// (an empty diff), and goroutines and heap must be where they were once
// the rig was up.
package soak

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc"

	"github.com/p4ctl/p4ctl/pkg/carbonapi"
	"github.com/p4ctl/p4ctl/pkg/compiler"
	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/controller"
	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/demo"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
	"github.com/p4ctl/p4ctl/pkg/regions"
)

// Options configure a soak. Zero fields take the defaults shown.
type Options struct {
	// Config is the controller configuration (sites, regions, policy);
	// its carbon block is replaced by the soak's live API. Required.
	Config *config.Config
	// Duration is the wall time of the faults (default 10 s).
	Duration time.Duration
	// Hours are the hours replayed over Duration (default one per 2 s);
	// the report counts those actually pushed (a controller that was down
	// catches up, but the last hours may be left when the faults end).
	Hours int
	// Start is the first replayed hour (default 2022-01-10T00:00Z).
	Start time.Time
	// Switches is the number of embedded switches (default 3).
	Switches int
	// XDP of them run the p4ctl program in the XDP data path
	// (pkg/dataplane/xdp, frames through BPF_PROG_RUN; needs root): a
	// switch kill unloads the program, a restart loads it afresh.
	XDP int
	// Seed seeds the faults (default 1).
	Seed uint64
	// ChaosEvery is the mean wall time between kills and outages (default
	// Duration/40 within [100 ms, 2 s]).
	ChaosEvery time.Duration
	// CarbonDrop is the share of carbon API responses dropped (default
	// 0.2; negative: none).
	CarbonDrop float64
	// RPCDelayShare of the controller's P4Runtime calls are delayed by up
	// to RPCDelay before and after (defaults 0.3 and 20 ms).
	RPCDelayShare float64
	RPCDelay      time.Duration
	// Rate is the traffic's requests per second into each switch (default
	// 2000).
	Rate int
	// StalenessBound is the carbon data's staleness bound (default 3 h).
	StalenessBound time.Duration
	// Converge bounds the wait, after the faults, for every switch to hold
	// the current plan (default 60 s).
	Converge time.Duration
	// Log receives the controller's and the soak's log (default: none).
	Log *slog.Logger
	// Progress, when set, is called about ten times during the faults.
	Progress func(Sample)
}

// Sample is the rig's state at one moment.
type Sample struct {
	Elapsed    time.Duration `json:"elapsed_ns"`
	Hour       time.Time     `json:"replayed_hour"`
	Goroutines int           `json:"goroutines"`
	HeapInuse  uint64        `json:"heap_inuse_bytes"`
	RSS        uint64        `json:"rss_bytes"` // 0 where /proc is missing
	Requests   int64         `json:"requests"`
	Misroutes  int64         `json:"misroutes"`
}

// Diff is one switch's difference from the controller's plan at the end.
type Diff struct {
	Target  string `json:"target"`
	Insert  int    `json:"insert"`
	Modify  int    `json:"modify"`
	Delete  int    `json:"delete"`
	First   string `json:"first,omitempty"`
	ReadErr string `json:"read_error,omitempty"`
}

// Clean reports whether the switch held exactly the plan.
func (d Diff) Clean() bool { return d.ReadErr == "" && d.Insert+d.Modify+d.Delete == 0 }

// Report is what a soak did and found.
type Report struct {
	Duration    time.Duration `json:"duration_ns"`
	Switches    int           `json:"switches"`
	XDPSwitches int           `json:"xdp_switches"`
	// XDPKills and XDPRouted are the kills (program unloads) of the XDP
	// switches and the requests they routed.
	XDPKills      int       `json:"xdp_kills"`
	XDPRouted     int64     `json:"xdp_routed"`
	HoursReplayed int       `json:"hours_replayed"`
	FirstHour     time.Time `json:"first_hour"`
	LastHour      time.Time `json:"last_hour_pushed"`

	ControllerKills    int `json:"controller_kills"`
	ControllerRestarts int `json:"controller_restarts"`
	ControllerExits    int `json:"controller_exits"` // Run returned by itself
	ControllerHangs    int `json:"controller_hangs"` // Run did not return within 30 s of a kill
	SwitchKills        int `json:"switch_kills"`
	// SwitchRestarts* count restarts with the p4ctl program loaded and
	// without a pipeline (the controller pushes it).
	SwitchRestartsWithPipeline    int `json:"switch_restarts_with_pipeline"`
	SwitchRestartsWithoutPipeline int `json:"switch_restarts_without_pipeline"`
	CarbonOutages                 int `json:"carbon_outages"`

	CarbonRequests int64 `json:"carbon_requests"`
	CarbonDropped  int64 `json:"carbon_dropped"`
	RPCCalls       int64 `json:"p4runtime_calls"`  // unary calls and streams opened
	RPCDelayed     int64 `json:"p4runtime_delays"` // delays added (before a call, or after a unary one's answer)

	Pushes       int64 `json:"pushes"`
	PushFailures int64 `json:"push_failures"`
	StalePushes  int64 `json:"stale_pushes"` // pushes of the safe policy

	Requests    int64    `json:"requests"`
	Routed      int64    `json:"routed"`
	Unrouted    int64    `json:"unrouted"`    // dropped: a switch without pipeline or tables yet, or mid-restart
	Overlapping int64    `json:"overlapping"` // routed while more than one plan was allowed
	Misroutes   int64    `json:"misroutes"`
	Examples    []string `json:"misroute_examples,omitempty"`

	Diffs []Diff `json:"final_diffs"`

	// Goroutines and memory: before anything started, once the rig was
	// up (Baseline), at the end with the rig up again after the faults
	// (End: its steady state, the least of five samples), and after
	// everything stopped.
	GoroutinesBefore   int      `json:"goroutines_before"`
	Baseline           Sample   `json:"baseline"`
	End                Sample   `json:"end"`
	GoroutinesStopped  int      `json:"goroutines_stopped"`
	Leftover           string   `json:"leftover_goroutines,omitempty"` // their stacks, when some are left
	Samples            []Sample `json:"samples"`
	ConvergedAfter     time.Duration
	ConvergeTimedOut   bool
	StrayControllerErr string `json:"stray_controller_error,omitempty"`
}

// Problems lists what the soak must not end with: misroutes, a switch not
// holding the plan, goroutines or heap that grew.
func (r *Report) Problems() []string {
	var out []string
	if r.ControllerHangs > 0 {
		out = append(out, fmt.Sprintf("the controller did not stop within 30 s of %d kills", r.ControllerHangs))
	}
	if r.Misroutes > 0 {
		out = append(out, fmt.Sprintf("%d misrouted requests (e.g. %s)", r.Misroutes, strings.Join(r.Examples, "; ")))
	}
	for _, d := range r.Diffs {
		if !d.Clean() {
			out = append(out, fmt.Sprintf("switch %s differs from the plan at the end: %d inserts, %d modifies, %d deletes %s%s",
				d.Target, d.Insert, d.Modify, d.Delete, d.First, d.ReadErr))
		}
	}
	if len(r.Diffs) != r.Switches {
		out = append(out, fmt.Sprintf("%d of %d switches were compared at the end", len(r.Diffs), r.Switches))
	}
	if g := r.Baseline.Goroutines; r.End.Goroutines > g+max(16, g/5) {
		out = append(out, fmt.Sprintf("goroutines grew from %d to %d over the soak", g, r.End.Goroutines))
	}
	if r.GoroutinesStopped > r.GoroutinesBefore+2 {
		out = append(out, fmt.Sprintf("%d goroutines left after everything stopped (%d before the soak)", r.GoroutinesStopped, r.GoroutinesBefore))
	}
	if h := r.Baseline.HeapInuse; r.End.HeapInuse > h+h/2+16<<20 {
		out = append(out, fmt.Sprintf("heap in use grew from %d MiB to %d MiB over the soak", h>>20, r.End.HeapInuse>>20))
	}
	// Growth over the run: the end against the first half's samples.
	if n := len(r.Samples); n >= 4 {
		var heap uint64
		var gor int
		for _, s := range r.Samples[:n/2] {
			heap, gor = max(heap, s.HeapInuse), max(gor, s.Goroutines)
		}
		if r.End.HeapInuse > heap+heap/4+4<<20 {
			out = append(out, fmt.Sprintf("heap in use grew during the soak: at most %.1f MiB in its first half, %.1f MiB at the end",
				float64(heap)/(1<<20), float64(r.End.HeapInuse)/(1<<20)))
		}
		if r.End.Goroutines > gor+8 {
			out = append(out, fmt.Sprintf("goroutines grew during the soak: at most %d in its first half, %d at the end", gor, r.End.Goroutines))
		}
	}
	if r.Routed == 0 {
		out = append(out, "no request was routed: the soak proves nothing")
	}
	return out
}

// Summary is a one-paragraph account of the report.
func (r *Report) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "soak: %s of faults, %d replayed hours (%s .. %s pushed) on %d switches (%d of them XDP)\n",
		r.Duration.Round(time.Millisecond), r.HoursReplayed, r.FirstHour.Format("2006-01-02T15"), r.LastHour.Format("2006-01-02T15"), r.Switches, r.XDPSwitches)
	fmt.Fprintf(&b, "  controller: %d kills, %d restarts, %d exits of its own%s\n", r.ControllerKills, r.ControllerRestarts, r.ControllerExits,
		map[bool]string{true: " (" + r.StrayControllerErr + ")", false: ""}[r.StrayControllerErr != ""])
	fmt.Fprintf(&b, "  switches: %d kills, %d restarts with the program, %d without a pipeline; XDP: %d kills (program unloaded and reloaded), %d requests routed\n",
		r.SwitchKills, r.SwitchRestartsWithPipeline, r.SwitchRestartsWithoutPipeline, r.XDPKills, r.XDPRouted)
	fmt.Fprintf(&b, "  carbon API: %d requests, %d dropped, %d outages; P4Runtime: %d calls (streams opened included), %d delays\n",
		r.CarbonRequests, r.CarbonDropped, r.CarbonOutages, r.RPCCalls, r.RPCDelayed)
	fmt.Fprintf(&b, "  pushes: %d (%d failed, %d of the safe policy)\n", r.Pushes, r.PushFailures, r.StalePushes)
	fmt.Fprintf(&b, "  traffic: %d requests, %d routed (%d while plans changed), %d unrouted, %d misrouted\n",
		r.Requests, r.Routed, r.Overlapping, r.Unrouted, r.Misroutes)
	clean := 0
	for _, d := range r.Diffs {
		if d.Clean() {
			clean++
		}
	}
	fmt.Fprintf(&b, "  final diffs: %d of %d switches clean (converged %s after the faults%s)\n", clean, len(r.Diffs),
		r.ConvergedAfter.Round(time.Millisecond), map[bool]string{true: ", timed out", false: ""}[r.ConvergeTimedOut])
	fmt.Fprintf(&b, "  goroutines: %d before, %d up → %d at the end, %d after stopping; heap in use %.1f → %.1f MiB; RSS %.1f → %.1f MiB",
		r.GoroutinesBefore, r.Baseline.Goroutines, r.End.Goroutines, r.GoroutinesStopped,
		float64(r.Baseline.HeapInuse)/(1<<20), float64(r.End.HeapInuse)/(1<<20), float64(r.Baseline.RSS)/(1<<20), float64(r.End.RSS)/(1<<20))
	if len(r.Samples) > 0 {
		lo, hi := r.Samples[0], r.Samples[0]
		for _, s := range r.Samples {
			lo.Goroutines, hi.Goroutines = min(lo.Goroutines, s.Goroutines), max(hi.Goroutines, s.Goroutines)
			lo.HeapInuse, hi.HeapInuse = min(lo.HeapInuse, s.HeapInuse), max(hi.HeapInuse, s.HeapInuse)
			lo.RSS, hi.RSS = min(lo.RSS, s.RSS), max(hi.RSS, s.RSS)
		}
		fmt.Fprintf(&b, "\n  during the faults (%d samples): goroutines %d..%d, heap in use %.1f..%.1f MiB, RSS %.1f..%.1f MiB",
			len(r.Samples), lo.Goroutines, hi.Goroutines, float64(lo.HeapInuse)/(1<<20), float64(hi.HeapInuse)/(1<<20),
			float64(lo.RSS)/(1<<20), float64(hi.RSS)/(1<<20))
	}
	return b.String()
}

// slas are SLA budgets around every latency boundary of the example
// sites, plus the paper's classes (as pkg/controller's tests use).
var slas = []uint16{30, 40, 100, 195, 196, 250, 280, 300, 366, 367, 500, 599, 600, 620, 634, 719, 720, 780, 800,
	820, 880, 900, 950, 979, 1000, 1050, 1100, 1150, 1300, 1490, 1491, 1500, 3000, 65535}

func (o *Options) defaults() error {
	if o.Config == nil {
		return errors.New("soak: Options.Config is required")
	}
	if o.Duration <= 0 {
		o.Duration = 10 * time.Second
	}
	if o.Hours <= 0 {
		o.Hours = max(1, int(o.Duration/(2*time.Second)))
	}
	if o.Start.IsZero() {
		o.Start = time.Date(2022, 1, 10, 0, 0, 0, 0, time.UTC)
	}
	if o.XDP < 0 || o.XDP > max(o.Switches, 3) {
		return fmt.Errorf("soak: %d XDP switches of %d", o.XDP, o.Switches)
	}
	if o.Switches <= 0 {
		o.Switches = 3
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.ChaosEvery <= 0 {
		o.ChaosEvery = min(2*time.Second, max(100*time.Millisecond, o.Duration/40))
	}
	if o.CarbonDrop == 0 {
		o.CarbonDrop = 0.2
	}
	if o.RPCDelayShare == 0 {
		o.RPCDelayShare = 0.3
	}
	if o.RPCDelay == 0 {
		o.RPCDelay = 20 * time.Millisecond
	}
	if o.Rate <= 0 {
		o.Rate = 2000
	}
	if o.StalenessBound <= 0 {
		o.StalenessBound = 3 * time.Hour
	}
	if o.Converge <= 0 {
		o.Converge = 60 * time.Second
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return nil
}

// rig is a running soak.
type rig struct {
	o      Options
	cfg    *config.Config
	speed  float64
	clock  *controller.ReplayClock // the soak's replayed time
	rnd    *lockedRand
	api    *carbonAPI
	delay  *rpcDelay
	tr     *demo.Traffic
	slots  []*slot
	byName map[string]*slot
	pipe   *p4v1.ForwardingPipelineConfig

	pushes, pushFails, stalePushes atomic.Int64
	hangs                          atomic.Int64 // kills after which Run did not return
	lastHour                       atomic.Int64 // Unix seconds of the latest hour pushed

	requests, routed, unrouted, overlapping, misroutes atomic.Int64
	xdpRouted                                          atomic.Int64
	exMu                                               sync.Mutex
	examples                                           []string

	ctlMu  sync.Mutex
	ctl    *controller.Controller
	cancel context.CancelFunc
	done   chan error
	http   *http.Transport
}

// Run runs a soak and returns its report; the error is for a rig that
// could not run (a report's Problems are the soak's findings).
func Run(ctx context.Context, o Options) (*Report, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	rep := &Report{Switches: o.Switches, XDPSwitches: o.XDP, FirstHour: o.Start, GoroutinesBefore: runtime.NumGoroutine()}
	cfg := *o.Config
	cfg.Carbon = config.Carbon{Source: config.SourceElectricityMapsAPI, StalenessBound: config.Duration{Duration: o.StalenessBound}}
	model, err := o.Config.OpenCarbon()
	if err != nil {
		return nil, fmt.Errorf("soak: the carbon model behind the fake API: %w", err)
	}
	speed := float64(time.Duration(o.Hours)*time.Hour) / float64(o.Duration)
	clk, err := controller.NewReplayClock(o.Start, speed)
	if err != nil {
		return nil, err
	}
	tr, err := demo.NewTraffic(&cfg)
	if err != nil {
		return nil, fmt.Errorf("soak: %w", err)
	}
	r := &rig{o: o, cfg: &cfg, speed: speed, clock: clk, rnd: newRand(o.Seed), tr: tr, byName: map[string]*slot{},
		pipe: &p4v1.ForwardingPipelineConfig{P4Info: dataplane.DefaultP4Info()}}
	r.api = newCarbonAPI(model, clk.Now, r.rnd, max(0, o.CarbonDrop))
	defer r.api.Close()
	r.delay = &rpcDelay{rnd: r.rnd}
	r.delay.set(max(0, o.RPCDelayShare), o.RPCDelay)
	r.lastHour.Store(o.Start.Add(-time.Hour).Unix())
	for i := range o.Switches {
		s := &slot{name: fmt.Sprintf("soak-%d", i), inflight: map[*controller.Plan]int{}, xdp: i < o.XDP}
		if err := s.start(tr, false); err != nil {
			r.stopAll()
			return nil, err
		}
		r.slots = append(r.slots, s)
		r.byName[s.name] = s
	}

	// Up: the controller, the first hour on every switch, traffic.
	stopTraffic := r.startTraffic()
	r.startController()
	if err := r.waitPushed(ctx, o.Start, 30*time.Second); err != nil {
		stopTraffic()
		r.stopAll()
		return nil, err
	}
	time.Sleep(100 * time.Millisecond) // traffic through the first plan
	rep.Baseline = r.sample(0)

	// Faults.
	t0 := time.Now()
	r.chaos(ctx, rep, t0)
	rep.Duration = time.Since(t0)

	// Faults off: every switch up, the controller running; converge.
	r.api.outage(time.Time{})
	r.api.setDrop(0)
	r.delay.set(0, 0)
	for _, s := range r.slots {
		if s.cur.Load() == nil {
			if err := s.start(tr, false); err != nil {
				stopTraffic()
				r.stopAll()
				return nil, err
			}
			rep.SwitchRestartsWithPipeline++
		}
	}
	if r.controllerDone() {
		r.restartController(rep)
	}
	tc := time.Now()
	rep.Diffs, rep.ConvergeTimedOut = r.converge(ctx)
	rep.ConvergedAfter = time.Since(tc)
	stopTraffic()
	rep.End = r.steady(time.Since(t0))

	r.stopAll()
	r.http.CloseIdleConnections()
	r.api.Close()
	rep.GoroutinesStopped = waitGoroutines(rep.GoroutinesBefore, 5*time.Second)
	if rep.GoroutinesStopped > rep.GoroutinesBefore {
		var sb strings.Builder
		_ = pprof.Lookup("goroutine").WriteTo(&sb, 1)
		rep.Leftover = sb.String()
	}

	rep.LastHour = time.Unix(r.lastHour.Load(), 0).UTC()
	rep.HoursReplayed = int(rep.LastHour.Sub(rep.FirstHour)/time.Hour) + 1
	rep.ControllerHangs = int(r.hangs.Load())
	for _, s := range r.slots {
		rep.SwitchKills += s.kills
		if s.xdp {
			rep.XDPKills += s.kills
		}
	}
	rep.XDPRouted = r.xdpRouted.Load()
	rep.CarbonRequests, rep.CarbonDropped = r.api.requests.Load(), r.api.dropped.Load()
	rep.RPCCalls, rep.RPCDelayed = r.delay.calls.Load(), r.delay.delayed.Load()
	rep.Pushes, rep.PushFailures, rep.StalePushes = r.pushes.Load(), r.pushFails.Load(), r.stalePushes.Load()
	rep.Requests, rep.Routed, rep.Unrouted = r.requests.Load(), r.routed.Load(), r.unrouted.Load()
	rep.Overlapping, rep.Misroutes = r.overlapping.Load(), r.misroutes.Load()
	r.exMu.Lock()
	rep.Examples = r.examples
	r.exMu.Unlock()
	return rep, nil
}

// chaos kills and restarts the controller and the switches and takes the
// carbon API down, one action every ChaosEvery on average, until Duration
// has passed and each kind happened once. The first four actions are one of
// each kind (a controller that stopped by itself and is restarted is not
// one of them, so a loaded machine still sees every kind).
func (r *rig) chaos(ctx context.Context, rep *Report, t0 time.Time) {
	kinds := []string{"switch", "controller", "switch-no-p4", "outage"}
	nextSample := t0.Add(r.o.Duration / 10)
	for injected := 0; ; {
		wait := r.rnd.Between(r.o.ChaosEvery/2, r.o.ChaosEvery*3/2)
		if injected >= len(kinds) && time.Since(t0)+wait >= r.o.Duration {
			sleepCtx(ctx, r.o.Duration-time.Since(t0))
			return
		}
		if sleepCtx(ctx, wait) != nil {
			return
		}
		if now := time.Now(); now.After(nextSample) {
			s := r.sample(now.Sub(t0))
			rep.Samples = append(rep.Samples, s)
			if r.o.Progress != nil {
				r.o.Progress(s)
			}
			for !nextSample.After(now) {
				nextSample = nextSample.Add(r.o.Duration / 10)
			}
		}
		if r.controllerDone() { // it stopped by itself: count it, start another
			r.restartController(rep)
			continue
		}
		kind := kinds[r.rnd.IntN(len(kinds))]
		if injected < len(kinds) {
			kind = kinds[injected]
		}
		injected++
		down := r.rnd.Between(0, r.o.ChaosEvery)
		switch kind {
		case "controller":
			r.killController()
			rep.ControllerKills++
			sleepCtx(ctx, down)
			r.restartController(rep)
		case "switch", "switch-no-p4":
			s := r.slots[r.rnd.IntN(len(r.slots))]
			s.kill()
			sleepCtx(ctx, down)
			noP4 := kind == "switch-no-p4"
			if err := s.start(r.tr, noP4); err != nil {
				r.o.Log.Error("soak: restart switch", "switch", s.name, "err", err)
				continue
			}
			if noP4 {
				rep.SwitchRestartsWithoutPipeline++
			} else {
				rep.SwitchRestartsWithPipeline++
			}
		case "outage":
			// Half of the outages outlast the staleness bound: the safe
			// policy, then back.
			hours := time.Duration(1+r.rnd.IntN(2*int(r.o.StalenessBound/time.Hour)+1)) * time.Hour
			r.api.outage(r.clock.Now().Add(hours))
			rep.CarbonOutages++
		}
	}
}

// startController starts a controller as `p4ctl run --replay NOW --speed S
// --p4info …` would, at the replayed hour the soak has reached.
func (r *rig) startController() {
	now := r.clock.Now()
	clk, _ := controller.NewReplayClock(now, r.speed) // speed > 0 was checked by NewReplayClock at start
	r.ctlMu.Lock()
	defer r.ctlMu.Unlock()
	if r.http == nil {
		r.http = &http.Transport{}
	}
	src, err := carbonapi.New(carbonapi.Config{Kind: config.SourceElectricityMapsAPI, BaseURL: r.api.URL(), Token: carbonapi.NewSecret(token),
		Zones: zones(r.cfg), StalenessBound: r.o.StalenessBound},
		carbonapi.Options{HTTPClient: &http.Client{Transport: r.http}, Now: r.clock.Now, Timeout: time.Second,
			Retry: carbonapi.Retry{Attempts: 3, Base: 5 * time.Millisecond, Max: 20 * time.Millisecond}, RefreshTimeout: 2 * time.Second, Logger: r.o.Log})
	done := make(chan error, 1)
	if err != nil {
		done <- err
		r.ctl, r.done = nil, done
		return
	}
	var targets []controller.Target
	for _, s := range r.slots {
		targets = append(targets, controller.Target{Name: s.name, Addr: s.addr, DeviceID: deviceID, ElectionID: p4rt.Election(1),
			Pipeline: r.pipe, ClientOptions: []p4rt.Option{p4rt.WithDialOptions(grpc.WithUnaryInterceptor(r.delay.interceptor()),
				grpc.WithStreamInterceptor(r.delay.streamInterceptor()))}})
	}
	ctl, err := controller.New(controller.Options{Config: r.cfg, Targets: targets, Feed: &controller.CarbonFeed{Source: src},
		Clock: clk, Schedule: controller.Schedule{Replay: true, Start: now.Truncate(time.Hour)},
		Driver: controller.DriverOptions{Grace: 20 * time.Millisecond, Backoff: p4rt.Backoff{Initial: 20 * time.Millisecond, Max: 300 * time.Millisecond, Multiplier: 2},
			VerifyInterval: 100 * time.Millisecond, FullVerifyInterval: time.Second, Metrics: controller.NewMetrics(), Log: r.o.Log,
			OnSync: r.onSync},
		Log: r.o.Log})
	if err != nil {
		done <- err
		r.ctl, r.done = nil, done
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- ctl.Run(ctx) }()
	r.ctl, r.cancel, r.done = ctl, cancel, done
}

// onSync follows every push: the switch's checker, and the counts.
func (r *rig) onSync(e controller.SyncEvent) {
	if s := r.byName[e.Target]; s != nil {
		s.onSync(e)
	}
	if !e.Done {
		return
	}
	if e.Err != nil {
		r.pushFails.Add(1)
		return
	}
	r.pushes.Add(1)
	if e.Plan.Stale {
		r.stalePushes.Add(1)
	}
	for h := e.Plan.Hour.Unix(); ; {
		old := r.lastHour.Load()
		if h <= old || r.lastHour.CompareAndSwap(old, h) {
			break
		}
	}
}

// killController cancels the controller's context and waits for Run to
// return (its connections close on the way out).
func (r *rig) killController() {
	r.ctlMu.Lock()
	cancel, done := r.cancel, r.done
	r.ctlMu.Unlock()
	if cancel != nil {
		cancel()
	}
	if done != nil {
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			r.hangs.Add(1)
			r.o.Log.Error("soak: the controller did not stop within 30 s of its kill")
		}
	}
	r.ctlMu.Lock()
	r.ctl, r.cancel, r.done = nil, nil, nil
	r.ctlMu.Unlock()
}

// controllerDone reports whether the controller's Run returned by itself.
func (r *rig) controllerDone() bool {
	r.ctlMu.Lock()
	defer r.ctlMu.Unlock()
	if r.done == nil {
		return true
	}
	select {
	case err := <-r.done:
		r.done = make(chan error, 1)
		r.done <- err
		return true
	default:
		return false
	}
}

// restartController starts a new controller, counting the previous one's
// exit when it stopped by itself.
func (r *rig) restartController(rep *Report) {
	r.ctlMu.Lock()
	done := r.done
	r.ctlMu.Unlock()
	if done != nil {
		select {
		case err := <-done:
			rep.ControllerExits++
			if err != nil {
				rep.StrayControllerErr = err.Error()
			}
		default:
		}
		r.killController()
	}
	r.startController()
	rep.ControllerRestarts++
}

// waitPushed waits until every switch holds hour h.
func (r *rig) waitPushed(ctx context.Context, h time.Time, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for time.Unix(r.lastHour.Load(), 0).Before(h) || r.pushes.Load() < int64(len(r.slots)) {
		if sleepCtx(ctx, 10*time.Millisecond) != nil {
			return fmt.Errorf("soak: hour %s not pushed to every switch within %s", h.Format(time.RFC3339), limit)
		}
	}
	return nil
}

// converge waits until every switch holds the running controller's current
// plan exactly, and returns each switch's diff (the last ones read when
// it timed out).
func (r *rig) converge(ctx context.Context) ([]Diff, bool) {
	ctx, cancel := context.WithTimeout(ctx, r.o.Converge)
	defer cancel()
	var diffs []Diff
	for {
		r.ctlMu.Lock()
		ctl := r.ctl
		r.ctlMu.Unlock()
		diffs = diffs[:0]
		clean := ctl != nil && ctl.Current() != nil
		if clean {
			p := ctl.Current()
			for _, d := range ctl.Drivers() {
				df := Diff{Target: d.Name()}
				ch, _, err := d.Drift(ctx, p)
				if err != nil {
					df.ReadErr = err.Error()
				} else {
					df.Insert, df.Modify, df.Delete = len(ch.Insert), len(ch.Modify), len(ch.Delete)
					for _, l := range [][]string{names(ch.Insert), names(ch.Modify), names(ch.Delete)} {
						if len(l) > 0 && df.First == "" {
							df.First = "(first: " + l[0] + ")"
						}
					}
				}
				clean = clean && df.Clean()
				diffs = append(diffs, df)
			}
		}
		if clean {
			return diffs, false
		}
		if sleepCtx(ctx, 50*time.Millisecond) != nil {
			return diffs, true
		}
	}
}

// stopAll stops the controller and every switch.
func (r *rig) stopAll() {
	r.killController()
	for _, s := range r.slots {
		if s.kill() {
			s.kills-- // not a fault
		}
	}
}

// zones are the configuration's carbon zones.
func zones(cfg *config.Config) []string {
	var out []string
	for _, r := range cfg.Regions {
		out = append(out, cfg.Zone(r))
	}
	return out
}

// names renders entries for a report.
func names(es []compiler.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.String()
	}
	return out
}

func regionIndex(r uint8) regions.Index { return regions.Index(r) }

// startTraffic sends requests into every switch until the returned
// function is called, checking each routed one against the plans the
// switch may hold.
func (r *rig) startTraffic() (stop func()) {
	var stopped atomic.Bool
	var wg sync.WaitGroup
	for i, s := range r.slots {
		wg.Go(func() { r.traffic(i, s, &stopped) })
	}
	return func() {
		stopped.Store(true)
		wg.Wait()
	}
}

func (r *rig) traffic(i int, s *slot, stopped *atomic.Bool) {
	const batch = 20
	every := time.Duration(batch) * time.Second / time.Duration(r.o.Rate)
	sites := len(r.cfg.Sites)
	next := time.Now()
	for id := uint32(i) << 28; !stopped.Load(); {
		l := s.cur.Load()
		for range batch {
			id++
			if l == nil {
				break
			}
			site := int(id) % sites
			sla := slas[int(id/2)%len(slas)]
			m := l.ck.Mark()
			o, err := demo.Send(l.sw, r.tr.Request(site, id, sla, 0))
			r.requests.Add(1)
			if err != nil {
				r.unrouted.Add(1)
				continue
			}
			r.routed.Add(1)
			if s.xdp {
				r.xdpRouted.Add(1)
			}
			v := l.ck.Check(m, site, sla, regionIndex(o.Header.Region))
			if v.Plans > 1 {
				r.overlapping.Add(1)
			}
			if !v.OK {
				n := r.misroutes.Add(1)
				if n <= 10 {
					ex := fmt.Sprintf("%s site %d sla %d → region %d, allowed plans decide %v (at replayed %s)",
						s.name, site, sla, o.Header.Region, v.Want, r.clock.Now().Format("2006-01-02T15:04"))
					if v.Err != nil {
						ex += ": " + v.Err.Error()
					}
					r.exMu.Lock()
					r.examples = append(r.examples, ex)
					r.exMu.Unlock()
				}
			}
		}
		next = next.Add(every)
		if d := time.Until(next); d > 0 {
			time.Sleep(d) // pacing of the traffic stream
		} else if d < -time.Second {
			next = time.Now() // fell behind (a busy machine): do not burst
		}
	}
}

// sample measures the rig after a garbage collection.
func (r *rig) sample(elapsed time.Duration) Sample {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return Sample{Elapsed: elapsed, Hour: r.clock.Now().Truncate(time.Hour), Goroutines: runtime.NumGoroutine(),
		HeapInuse: ms.HeapInuse, RSS: rss(), Requests: r.requests.Load(), Misroutes: r.misroutes.Load()}
}

// steady is the rig's steady state: the least of five samples 100 ms
// apart, since a push, a carbon refresh (a goroutine per zone) or a
// reconnection in flight adds goroutines and garbage for a moment.
func (r *rig) steady(elapsed time.Duration) Sample {
	s := r.sample(elapsed)
	for range 4 {
		time.Sleep(100 * time.Millisecond) // spacing of the samples
		n := r.sample(elapsed)
		s.Goroutines, s.HeapInuse, s.RSS = min(s.Goroutines, n.Goroutines), min(s.HeapInuse, n.HeapInuse), min(s.RSS, n.RSS)
	}
	return s
}

// rss is the process's resident set size (0 where /proc is missing).
func rss() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * uint64(os.Getpagesize())
}

// waitGoroutines waits up to limit for the goroutine count to fall to n
// and returns the count.
func waitGoroutines(n int, limit time.Duration) int {
	deadline := time.Now().Add(limit)
	for runtime.NumGoroutine() > n && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond) // exiting goroutines need a moment
	}
	return runtime.NumGoroutine()
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
