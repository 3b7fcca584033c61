// Package controller is p4ctl's controller runtime: it keeps a fleet of
// switches in the state compiled (pkg/compiler) from the configuration and
// the carbon intensity of the current hour, and changes it every hour
// without a moment of inconsistency.
//
//   - One Driver per switch, each in its own goroutine: connect, P4Runtime
//     arbitration (take over when the primary goes), reconnect with backoff,
//     resync on every (re)connection — check its pipeline, read what the
//     switch holds and write only the difference, retry-safe (never
//     failing on ALREADY_EXISTS) — and verify the switch between pushes,
//     repairing drift at once.
//   - The hourly update is hitless (../shared/DESIGN.md §2, planned by
//     compiler.PlanUpdate and executed by the Driver):
//     install the new carbon_rank generation under the inactive epoch, flip
//     active_epoch in one write, delete the old generation after a grace
//     period. A controller stopped between any two writes leaves a switch
//     that routes every request as the old or the new plan does; restarted,
//     it reconciles to exactly the desired state.
//   - Schedule time comes from a Clock: real time (recompute at each hour
//     boundary with jitter) or a replay (a trace or the offline model, at a
//     speed factor).
//   - Carbon data too old for the staleness bound makes the Planner compile
//     SafePolicy (A, latency only), logged and exported as a metric — for a
//     live source the moment the cached data crosses the bound on the
//     clock, while refreshes (each with a deadline) run in the background.
//   - Metrics (Prometheus), /healthz and /livez: Metrics, NewServer.
//
// The package talks to switches only through pkg/p4rt; it knows names, not
// P4Info ids (Translator maps them).
package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/p4ctl/p4ctl/pkg/config"
)

// Options configure a Controller.
type Options struct {
	// Config is a validated configuration.
	Config *config.Config
	// Targets are the switches to drive.
	Targets []Target
	// Feed is the carbon source.
	Feed *CarbonFeed
	// Clock and Schedule drive Run (default: real time, hourly).
	Clock    Clock
	Schedule Schedule
	// RefreshInterval, when > 0, refreshes a live carbon source between
	// hourly ticks, in the background, and re-plans when a refresh changes
	// the data's freshness. Staleness itself does not wait for a refresh:
	// the safe policy applies the moment the cached data crosses the
	// staleness bound on the Clock. Real-time schedules only.
	RefreshInterval time.Duration
	// Driver options shared by every target.
	Driver DriverOptions
	Log    *slog.Logger
	// AfterTick, when set, is called in replay mode after every tick's plan
	// is on every reachable switch (fleet measurements, research/fleet).
	AfterTick func(TickReport)
	// CleanupHint, when set, returns the command that makes an interrupted
	// target whole again (its leftover generation deleted), for the log
	// lines Run writes when its context ends; the default says that the
	// next push does it.
	CleanupHint func(TargetSummary) string
}

// TickReport is one replayed hour, fleet-wide.
type TickReport struct {
	Hour time.Time
	// Took is from the plan's submission to every reachable switch
	// holding it (planning excluded).
	Took time.Duration
	// Unreachable names the targets not waited for.
	Unreachable []string
}

// Controller drives N switches from one plan per hour.
type Controller struct {
	opts    Options
	planner *Planner
	drivers []*Driver
	log     *slog.Logger
	ref     *refresher      // live carbon source refreshes in the background
	latency *LatencyLearner // nil: static latency profiles

	mu      sync.Mutex
	current *Plan
	running bool
	runErr  error
}

// New returns a controller; it does not connect.
func New(opts Options) (*Controller, error) {
	if opts.Config == nil || opts.Feed == nil {
		return nil, errors.New("controller: Config and Feed are required")
	}
	if len(opts.Targets) == 0 {
		return nil, errors.New("controller: no targets (configuration `targets:` or --grpc-addr)")
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.Clock == nil {
		opts.Clock = RealClock{}
	}
	if opts.Driver.Log == nil {
		opts.Driver.Log = log
	}
	pl, err := NewPlanner(opts.Config, opts.Feed, log)
	if err != nil {
		return nil, err
	}
	ll, err := NewLatencyLearner(opts.Config, pl.sites, log)
	if err != nil {
		return nil, err
	}
	if ll != nil {
		pl.latency = ll
		dc := ll.DigestConfig()
		opts.Driver.Digests, opts.Driver.OnLatency = &dc, ll.Observe
		opts.Driver.Metrics.registerLatency(ll)
	}
	c := &Controller{opts: opts, planner: pl, log: log, latency: ll, ref: &refresher{feed: opts.Feed, metrics: opts.Driver.Metrics, log: log}}
	seen := map[string]bool{}
	for _, t := range opts.Targets {
		if seen[t.Name] {
			return nil, fmt.Errorf("controller: duplicate target name %q", t.Name)
		}
		seen[t.Name] = true
		c.drivers = append(c.drivers, NewDriver(t, opts.Driver))
	}
	return c, nil
}

// Drivers returns the per-switch drivers.
func (c *Controller) Drivers() []*Driver { return c.drivers }

// Latency returns the latency loop, or nil when latency is not learned
// (configuration latency.source static).
func (c *Controller) Latency() *LatencyLearner { return c.latency }

// Planner returns the planner.
func (c *Controller) Planner() *Planner { return c.planner }

// Current returns the plan submitted last (nil before the first).
func (c *Controller) Current() *Plan {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.current
}

// Connect connects every driver concurrently (Step needs it; Run connects
// by itself).
func (c *Controller) Connect(ctx context.Context) error {
	errs := make([]error, len(c.drivers))
	var wg sync.WaitGroup
	for i, d := range c.drivers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = d.Connect(ctx)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Close closes every driver's client.
func (c *Controller) Close() error {
	var errs []error
	for _, d := range c.drivers {
		errs = append(errs, d.Close())
	}
	return errors.Join(errs...)
}

// Step plans the hour containing t and pushes it to every switch
// concurrently, returning when all pushes have finished (cleanup included).
// It is the synchronous form of one Run tick, for the demo and tests.
func (c *Controller) Step(ctx context.Context, t time.Time) (*Plan, []Report, error) {
	c.refresh(ctx)
	p := c.planner.Plan(t)
	c.setCurrent(p)
	reps := make([]Report, len(c.drivers))
	errs := make([]error, len(c.drivers))
	var wg sync.WaitGroup
	for i, d := range c.drivers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reps[i], errs[i] = d.Sync(ctx, p)
		}()
	}
	wg.Wait()
	return p, reps, errors.Join(errs...)
}

func (c *Controller) setCurrent(p *Plan) {
	c.mu.Lock()
	c.current = p
	c.mu.Unlock()
	c.opts.Driver.Metrics.ObservePlan(p)
}

// Health reports the controller and its targets: Live while Run is
// running, OK while moreover every target is in, or on its way to, the
// desired state (TargetHealth.OK). /livez serves Live (a switch the
// controller cannot fix is not a reason to restart it), /healthz OK.
func (c *Controller) Health() Health {
	c.mu.Lock()
	h := Health{Live: c.running}
	if !c.running {
		h.Reason = "controller not running"
		if c.runErr != nil {
			h.Reason = c.runErr.Error()
		}
	}
	c.mu.Unlock()
	var bad []string
	for _, d := range c.drivers {
		th := d.Health()
		h.Targets = append(h.Targets, th)
		if !th.OK {
			bad = append(bad, fmt.Sprintf("target %s: %s", th.Name, th.Reason))
		}
	}
	h.OK = h.Live && len(bad) == 0
	if h.Live && len(bad) > 0 {
		h.Reason = strings.Join(bad, "; ")
	}
	return h
}

// Run drives every switch until ctx is done or, in replay mode with a
// finite number of hours, until the last hour has been pushed by every
// primary driver. Each driver runs in its own goroutine; the schedule loop
// plans each tick and submits the plan to all of them.
func (c *Controller) Run(ctx context.Context) error {
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c.mu.Lock()
	c.running = true
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.running = false
		c.mu.Unlock()
	}()
	// Runs after the drivers have stopped (deferred before wg.Wait).
	defer func() {
		if parent.Err() != nil {
			c.logInterrupted()
		}
	}()
	var wg sync.WaitGroup
	for _, d := range c.drivers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := d.Run(ctx); err != nil && ctx.Err() == nil {
				c.setErr(err)
				cancel() // a switch refused us for good: stop (exit code 1)
			}
		}()
	}
	defer wg.Wait()
	defer c.ref.wait()
	defer cancel()
	if c.latency != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.RunLatency(ctx, func(context.Context, []LatencyChange) { c.relatency() })
		}()
	}
	sched := c.opts.Schedule
	seqs := make([]uint64, len(c.drivers))
	for tick := range sched.Ticks(c.opts.Clock.Now()) {
		if err := c.waitTick(ctx, tick); err != nil {
			return c.err()
		}
		if err := c.refreshFor(ctx, tick); err != nil {
			return c.err()
		}
		p := c.planner.Plan(tick.Hour)
		c.setCurrent(p)
		args := []any{"hour", p.Hour.Format(time.RFC3339), "policy", p.Effective.String(), "stale", p.Stale,
			"data_age", p.DataAge, "source", p.Source, "signal", p.Signal}
		if p.Hysteresis != "" {
			args = append(args, "hysteresis", p.Hysteresis, "ranking", fmt.Sprint(p.Ranking))
		}
		c.log.Info("plan", args...)
		submitted := time.Now()
		for i, d := range c.drivers {
			seqs[i] = d.Submit(p)
		}
		if sched.Replay {
			// A replay pushes every hour: wait for the switches before the
			// next tick (a slow push makes the replay run late rather than
			// skip hours); an unreachable switch is not waited for — it
			// gets the latest plan when it is back, and its lag is
			// exported. In real time the latest plan wins instead.
			if err := c.waitApplied(ctx, seqs); err != nil {
				return c.err()
			}
			if c.opts.AfterTick != nil {
				rep := TickReport{Hour: p.Hour, Took: time.Since(submitted)}
				for _, d := range c.drivers {
					if d.Unreachable() {
						rep.Unreachable = append(rep.Unreachable, d.Name())
					}
				}
				c.opts.AfterTick(rep)
			}
		}
	}
	if sched.Replay {
		if err := c.waitApplied(ctx, seqs); err != nil {
			return c.err()
		}
		if err := c.err(); err != nil {
			return err
		}
		sums := c.logSummary()
		if err := nothingPushed(sums); err != nil {
			c.log.Error("replay finished, but not every target was reached", "hours", sched.Hours, "err", err)
			return err
		}
		c.log.Info("replay finished", "hours", sched.Hours)
		return nil
	}
	<-ctx.Done()
	return c.err()
}

// Summary returns what the run did to each target, in target order.
func (c *Controller) Summary(ctx context.Context) []TargetSummary {
	out := make([]TargetSummary, len(c.drivers))
	for i, d := range c.drivers {
		out[i] = d.Summary(ctx)
	}
	return out
}

// summaryTimeout bounds the reachability checks of the summary Run logs
// when it ends (its own context may be done by then).
const summaryTimeout = 2 * time.Second

// logSummary logs one "target summary" line per target and returns them.
func (c *Controller) logSummary() []TargetSummary {
	ctx, cancel := context.WithTimeout(context.Background(), summaryTimeout)
	defer cancel()
	sums := c.Summary(ctx)
	for _, s := range sums {
		args := []any{"target", s.Name, "pushed_hours", s.PushedHours, "failures", s.Failures, "reached", s.Reached}
		if !s.Hour.IsZero() {
			args = append(args, "holds_hour", s.Hour.Format(time.RFC3339), "active_epoch", s.Epoch)
		}
		if s.Backup {
			args = append(args, "backup", true)
		}
		if s.LastError != "" {
			args = append(args, "last_error", s.LastError)
		}
		lv := slog.LevelInfo
		if s.PushedHours == 0 && !s.Backup {
			lv = slog.LevelWarn
		}
		c.log.Log(context.Background(), lv, "target summary", args...)
	}
	return sums
}

// logInterrupted logs, once Run's context has ended, the state each switch
// is left in: the epoch it routes by, the hour it holds, a generation left
// installed by a push cut short, and what cleans it up.
func (c *Controller) logInterrupted() {
	ctx, cancel := context.WithTimeout(context.Background(), summaryTimeout)
	defer cancel()
	for _, s := range c.Summary(ctx) {
		args := []any{"target", s.Name, "reached", s.Reached, "pushed_hours", s.PushedHours, "failures", s.Failures}
		ie := s.Interrupted
		switch {
		case ie != nil:
			args = append(args, "active_epoch", ie.ActiveEpoch, "flipped", ie.Flipped, "interrupted_phase", ie.Phase,
				"leftover_epoch", ie.Leftover, "leftover_entries", ie.LeftoverEntries, "state", ie.State())
		case !s.Hour.IsZero():
			args = append(args, "active_epoch", s.Epoch, "holds_hour", s.Hour.Format(time.RFC3339), "state", "whole: one generation, nothing left over")
		default:
			args = append(args, "state", "nothing pushed by this run")
		}
		if ie != nil && ie.LeftoverEntries > 0 {
			hint := "the next push deletes them (p4ctl run again, or p4ctl apply for the same hour)"
			if c.opts.CleanupHint != nil {
				hint = c.opts.CleanupHint(s)
			}
			args = append(args, "cleanup", hint)
		}
		c.log.Warn("interrupted: switch state", args...)
	}
}

// NothingPushedError is Run's error when a replay ends with targets that
// no push reached (a closed port, a server that never answers, TLS
// refused): `p4ctl run` exits 1 rather than report a finished replay.
type NothingPushedError struct {
	// Targets are the summaries of the targets that got nothing.
	Targets []TargetSummary
}

// Error names the targets and the last error of each.
func (e *NothingPushedError) Error() string {
	parts := make([]string, len(e.Targets))
	for i, s := range e.Targets {
		parts[i] = "target " + s.Name
		if s.LastError != "" {
			parts[i] += " (" + s.LastError + ")"
		} else if !s.Reached {
			parts[i] += " (never reached)"
		}
	}
	return "nothing was pushed to " + strings.Join(parts, ", ")
}

// nothingPushed returns a *NothingPushedError naming the targets, backups
// of a live primary excepted, that no push reached; nil when every one got
// at least one hour.
func nothingPushed(sums []TargetSummary) error {
	var bad []TargetSummary
	for _, s := range sums {
		if s.PushedHours == 0 && !s.Backup {
			bad = append(bad, s)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return &NothingPushedError{Targets: bad}
}

func (c *Controller) err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.runErr
}

// waitTick sleeps until the tick. Meanwhile, in real time, it refreshes a
// live carbon source every RefreshInterval in the background and re-plans
// when the data's freshness changes: when a refresh ends, and at the
// instant the cached data crosses the staleness bound on the clock, whether
// or not a refresh is in flight.
func (c *Controller) waitTick(ctx context.Context, tick Tick) error {
	clk := c.opts.Clock
	iv := c.opts.RefreshInterval
	background := iv > 0 && !c.opts.Schedule.Replay && c.opts.Feed.Live()
	for {
		now := clk.Now()
		if !now.Before(tick.At) {
			return nil
		}
		wake := tick.At
		var done <-chan struct{}
		if background {
			var last time.Time
			if done, last = c.ref.inFlight(); done == nil {
				due := last.Add(iv)
				if !due.After(now) {
					done, _ = c.ref.start(ctx, now)
					due = now.Add(iv)
				}
				wake = earlier(wake, due)
			}
		}
		if at, ok := c.staleWake(); ok {
			wake = earlier(wake, at)
		}
		if err := sleepOr(ctx, clk, wake, done); err != nil {
			return err
		}
		if !clk.Now().Before(tick.At) {
			return nil // the tick plans
		}
		c.replan()
	}
}

func earlier(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// refreshFor refreshes a live carbon source for the tick's hour before it
// is planned. In real time the refresh runs in the background and is
// awaited (its deadline bounds the wait: carbonapi.Options.RefreshTimeout)
// while the staleness bound is still watched on the clock; a refresh
// already in flight that started before the hour is awaited, then a new
// one is made. A replay refreshes in line (its clock may be unpaced).
func (c *Controller) refreshFor(ctx context.Context, tick Tick) error {
	if !c.opts.Feed.Live() {
		return nil
	}
	if c.opts.Schedule.Replay {
		c.refresh(ctx)
		return ctx.Err()
	}
	for {
		done, started := c.ref.start(ctx, c.opts.Clock.Now())
		if err := c.awaitRefresh(ctx, done); err != nil {
			return err
		}
		if !started.Before(tick.Hour) {
			return nil
		}
	}
}

// refresh refreshes a live carbon source in line and exports its zones'
// freshness (Step, replays).
func (c *Controller) refresh(ctx context.Context) {
	if err := c.opts.Feed.Refresh(ctx); err != nil && ctx.Err() == nil {
		c.log.Warn("carbon refresh failed for some zones (cached values are kept)", "err", err)
	}
	c.opts.Driver.Metrics.ObserveZones(c.opts.Feed.Zones())
}

func (c *Controller) setErr(err error) {
	c.mu.Lock()
	c.runErr = err
	c.mu.Unlock()
}

func (c *Controller) waitApplied(ctx context.Context, seqs []uint64) error {
	for i, d := range c.drivers {
		if err := d.WaitApplied(ctx, seqs[i]); err != nil {
			return err
		}
	}
	return nil
}
