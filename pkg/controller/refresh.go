package controller

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// refresher runs a live carbon source's Refresh in the background, one at a
// time, so that the schedule loop keeps judging staleness on the clock
// while an API is slow or hangs (the source's own deadline ends a refresh:
// carbonapi.Options.RefreshTimeout).
type refresher struct {
	feed    *CarbonFeed
	metrics *Metrics
	log     *slog.Logger
	wg      sync.WaitGroup

	mu      sync.Mutex
	done    chan struct{} // closed when the refresh in flight ends; nil when none is
	started time.Time     // schedule time the last refresh started
}

// start begins a refresh at schedule time now unless one is in flight, and
// returns the channel closed when the refresh in flight ends and the
// schedule time it started.
func (r *refresher) start(ctx context.Context, now time.Time) (<-chan struct{}, time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done != nil {
		return r.done, r.started
	}
	done := make(chan struct{})
	r.done, r.started = done, now
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		if err := r.feed.Refresh(ctx); err != nil && ctx.Err() == nil {
			r.log.Warn("carbon refresh failed for some zones (cached values are kept)", "err", err)
		}
		r.metrics.ObserveZones(r.feed.Zones())
		r.mu.Lock()
		r.done = nil
		r.mu.Unlock()
		close(done)
	}()
	return done, now
}

// inFlight returns the channel of the refresh in flight (nil when none is)
// and the schedule time the last refresh started.
func (r *refresher) inFlight() (<-chan struct{}, time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done, r.started
}

// wait waits for a refresh in flight to end (its context cancelled, when
// the controller stops).
func (r *refresher) wait() { r.wg.Wait() }

// sleepOr sleeps on clk until t, or until done (if not nil) is closed, or
// ctx is done; only the last is an error.
func sleepOr(ctx context.Context, clk Clock, t time.Time, done <-chan struct{}) error {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if done != nil {
		go func() {
			select {
			case <-done:
				cancel()
			case <-sctx.Done():
			}
		}()
	}
	_ = clk.SleepUntil(sctx, t)
	return ctx.Err()
}

// awaitRefresh waits until done is closed, re-planning meanwhile the moment
// the current plan's carbon data crosses the staleness bound on the clock.
func (c *Controller) awaitRefresh(ctx context.Context, done <-chan struct{}) error {
	for {
		at, ok := c.staleWake()
		if !ok {
			select {
			case <-done:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if err := sleepOr(ctx, c.opts.Clock, at, done); err != nil {
			return err
		}
		select {
		case <-done:
			return nil
		default:
		}
		c.replan()
	}
}

// staleWake returns when the current plan's carbon data crosses the
// staleness bound, if it is fresh now and the source can say (live
// sources: carbonapi.Source.StaleAt).
func (c *Controller) staleWake() (time.Time, bool) {
	cur := c.Current()
	if cur == nil || cur.Stale {
		return time.Time{}, false
	}
	return c.opts.Feed.StaleAt()
}

// replan plans the current schedule time again and submits the plan when
// the data's freshness changed (to or from the safe policy) since the
// current plan; it also exports the zones' freshness.
func (c *Controller) replan() {
	c.opts.Driver.Metrics.ObserveZones(c.opts.Feed.Zones())
	cur := c.Current()
	if cur == nil {
		return
	}
	p := c.planner.Plan(c.opts.Clock.Now())
	if p.Stale == cur.Stale && p.Effective == cur.Effective && slices.Equal(p.Ranking, cur.Ranking) {
		return
	}
	// The hysteretic ranking is submitted when it changed too: the
	// planner's state is then what the switches hold.
	c.log.Warn("carbon data freshness or hysteretic ranking changed: re-planning now", "stale", p.Stale, "policy", p.Effective.String(), "reason", p.Reason)
	c.setCurrent(p)
	for _, d := range c.drivers {
		d.Submit(p)
	}
}
