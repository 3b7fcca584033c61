package controller

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"time"
)

// Clock is the controller's schedule time: the wall clock in production, or a
// replay that runs a trace faster than real time. Only the schedule uses it;
// grace periods and backoff are wall time (packets drain in wall time).
type Clock interface {
	// Now returns the current schedule time.
	Now() time.Time
	// SleepUntil blocks until Now() ≥ t or ctx is done (then it returns
	// ctx.Err()).
	SleepUntil(ctx context.Context, t time.Time) error
}

// RealClock is the wall clock.
type RealClock struct{}

// Now implements Clock.
func (RealClock) Now() time.Time { return time.Now().UTC() }

// SleepUntil implements Clock.
func (RealClock) SleepUntil(ctx context.Context, t time.Time) error {
	return sleepCtx(ctx, time.Until(t))
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-tm.C:
		return nil
	}
}

// ReplayClock runs schedule time from Start at Speed times the wall clock
// (3600 = one hour per second). A Speed of 0 means unpaced: SleepUntil
// returns at once and moves the clock to its argument, so a replay runs as
// fast as the work it drives (tests and benchmarks).
type ReplayClock struct {
	start time.Time
	speed float64
	wall  func() time.Time

	mu      sync.Mutex
	origin  time.Time // wall time at start (paced)
	virtual time.Time // unpaced: current time
}

// NewReplayClock returns a replay clock reading start now. speed is a
// finite factor ≥ 0 (0 = unpaced); NaN or an infinity is an error (a NaN
// speed would never reach the next hour).
func NewReplayClock(start time.Time, speed float64) (*ReplayClock, error) {
	if speed < 0 || math.IsNaN(speed) || math.IsInf(speed, 0) {
		return nil, fmt.Errorf("replay speed %v: must be finite and ≥ 0 (0 = unpaced)", speed)
	}
	return &ReplayClock{start: start.UTC(), speed: speed, wall: time.Now, origin: time.Now(), virtual: start.UTC()}, nil
}

// Speed returns the replay speed factor (0 = unpaced).
func (c *ReplayClock) Speed() float64 { return c.speed }

// Now implements Clock.
func (c *ReplayClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.speed == 0 {
		return c.virtual
	}
	el := c.wall().Sub(c.origin)
	return c.start.Add(time.Duration(float64(el) * c.speed))
}

// SleepUntil implements Clock.
func (c *ReplayClock) SleepUntil(ctx context.Context, t time.Time) error {
	if c.speed == 0 {
		c.mu.Lock()
		if t.After(c.virtual) {
			c.virtual = t
		}
		c.mu.Unlock()
		return ctx.Err()
	}
	d := t.Sub(c.Now())
	return sleepCtx(ctx, time.Duration(float64(d)/c.speed))
}

// Schedule yields the times at which the controller recomputes its plan.
//
//   - Hourly (real time): once at start for the current hour, then at every
//     hour boundary plus a random delay in [0, Jitter), so a fleet of
//     controllers does not hit a carbon API in the same second.
//   - Replay: Start, Start+1h, … (Hours of them; 0 = without end), no jitter.
type Schedule struct {
	Replay bool
	Start  time.Time // replay: the first hour
	Hours  int       // replay: how many hours (0 = until stopped)
	Jitter time.Duration
	// Rand draws the jitter (nil: a PCG seeded from Seed).
	Rand *rand.Rand
	Seed uint64
}

// Tick is one recompute: wake at At (schedule time) and plan for Hour.
type Tick struct {
	At   time.Time
	Hour time.Time
	N    int // 0-based
}

// Ticks returns an iterator over the schedule's ticks, given the clock's
// current time. It stops after Hours ticks in replay mode.
func (s Schedule) Ticks(now time.Time) func(yield func(Tick) bool) {
	r := s.Rand
	if r == nil {
		r = rand.New(rand.NewPCG(s.Seed, 0x9e3779b97f4a7c15))
	}
	return func(yield func(Tick) bool) {
		if s.Replay {
			h := s.Start.UTC().Truncate(time.Hour)
			for n := 0; s.Hours == 0 || n < s.Hours; n++ {
				if !yield(Tick{At: h, Hour: h, N: n}) {
					return
				}
				h = h.Add(time.Hour)
			}
			return
		}
		h := now.UTC().Truncate(time.Hour)
		if !yield(Tick{At: now.UTC(), Hour: h, N: 0}) {
			return
		}
		for n := 1; ; n++ {
			h = h.Add(time.Hour)
			at := h
			if s.Jitter > 0 {
				at = at.Add(time.Duration(r.Int64N(int64(s.Jitter))))
			}
			if !yield(Tick{At: at, Hour: h, N: n}) {
				return
			}
		}
	}
}
