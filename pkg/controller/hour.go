package controller

import (
	"context"
	"fmt"
	"time"

	"github.com/p4ctl/p4ctl/pkg/carbonapi"
	"github.com/p4ctl/p4ctl/pkg/cmdutil"
	"github.com/p4ctl/p4ctl/pkg/compiler"
	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/regions"
)

// HourOptions select the hour a one-shot command (plan, diff, apply)
// compiles for: --at or --hour. cmd/p4ctl binds the flags to the fields.
type HourOptions struct {
	// At is --at: a time in the hour (RFC 3339 or 2022-01-10T12).
	At string
	// Hour is --hour: N ≥ 0 hours after the replay start (or the carbon
	// data's first hour), -1 when not given.
	Hour int

	at time.Time
}

// Validate checks the flags and parses --at (usage errors, exit 2).
func (h *HourOptions) Validate() error {
	if h.At != "" && h.Hour >= 0 {
		return cmdutil.Usagef("give --at or --hour, not both")
	}
	if h.Hour < -1 {
		return cmdutil.Usagef("--hour must be ≥ 0")
	}
	if h.At != "" {
		t, err := cmdutil.ParseHour(h.At)
		if err != nil {
			return cmdutil.Usagef("--at: %w", err)
		}
		h.at = t
	}
	return nil
}

// Resolve returns the time to compile for: --at; --hour N after the
// replay start (or the source's first hour); the replay start in replay
// mode; else now. --hour is bounded by the carbon source: N must be below
// the number of hours its data covers (the offline model's year, whose
// dates are mapped, or a trace's period), and for a trace the hour must
// lie inside the data; otherwise it is a usage error (exit 2).
func (h *HourOptions) Resolve(cfg *config.Config, src regions.CarbonSource, now time.Time) (time.Time, error) {
	if h.At != "" {
		return h.at, nil
	}
	var base time.Time
	if r := cfg.Schedule.Replay; r != nil {
		base = r.Start
	}
	switch {
	case h.Hour >= 0:
		p := src.Period()
		if base.IsZero() {
			base = p.From
		}
		if n := p.Hours(); n > 0 && h.Hour >= n {
			return time.Time{}, cmdutil.Usagef("--hour %d: want 0..%d (the carbon data covers %d hours, %s)", h.Hour, n-1, n, p)
		}
		t := base.Add(time.Duration(h.Hour) * time.Hour)
		mapped := regions.MapsYears(src)
		if !mapped && p.Hours() > 0 && !p.Contains(t) {
			return time.Time{}, cmdutil.Usagef("--hour %d is %s, outside the carbon data (%s)", h.Hour, t.Format(time.RFC3339), p)
		}
		return t, nil
	case cfg.Schedule.Mode == config.ScheduleReplay && !base.IsZero():
		return base, nil
	}
	return now, nil
}

// OpenCommandFeed opens the configuration's carbon feed for a command
// (OpenCarbonFeed); a static source that cannot be read is an input error
// (exit 2).
func OpenCommandFeed(ctx context.Context, cfg *config.Config, o carbonapi.Options) (*CarbonFeed, error) {
	feed, err := OpenCarbonFeed(ctx, cfg, o)
	if err != nil && !cfg.Carbon.Live() {
		return nil, cmdutil.InputError(err)
	}
	return feed, err
}

// PlanHour opens the carbon source (refreshing a live one) and plans the
// hour h selects: what diff and apply compile.
func PlanHour(ctx context.Context, cfg *config.Config, h *HourOptions, now time.Time) (*Plan, error) {
	feed, err := OpenCommandFeed(ctx, cfg, carbonapi.Options{})
	if err != nil {
		return nil, err
	}
	_ = feed.Refresh(ctx) // errors are per zone; the planner decides whether the data is usable
	at, err := h.Resolve(cfg, feed.Source, now)
	if err != nil {
		return nil, err
	}
	pl, err := NewPlanner(cfg, feed, nil)
	if err != nil {
		return nil, err
	}
	return pl.Plan(at), nil
}

// CompileHour compiles the state of the hour h selects, as p4ctl plan
// prints it, with policy (nil: the configured one) and epoch: with the
// configured hysteresis the way the daemon plans (Planner: the ranking
// replayed from the carbon history up to the hour, the safe policy on
// stale data), else compiler.PlanAt.
func CompileHour(ctx context.Context, cfg *config.Config, h *HourOptions, now time.Time, epoch uint8, policy *regions.Policy) (*compiler.State, error) {
	feed, err := OpenCommandFeed(ctx, cfg, carbonapi.Options{})
	if err != nil {
		return nil, err
	}
	_ = feed.Refresh(ctx) // live sources: fetch now (errors are per zone; PlanAt reports missing data)
	at, err := h.Resolve(cfg, feed.Source, now)
	if err != nil {
		return nil, err
	}
	var st *compiler.State
	if cfg.RoutingHysteresis() != nil {
		st, err = hysteretic(cfg, feed, at, epoch, policy)
	} else {
		st, err = compiler.PlanAt(cfg, feed.Source, at, feed.MapYears, epoch, policy)
	}
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	return st, nil
}

// hysteretic plans the hour with the configured hysteresis the way the
// daemon does. A policy that does not rank by carbon (A, D) is planned
// without hysteresis.
func hysteretic(cfg *config.Config, feed *CarbonFeed, at time.Time, epoch uint8, policy *regions.Policy) (*compiler.State, error) {
	if !feed.Source.Period().Contains(at) && !feed.Live() {
		if _, ok := compiler.HourIn(feed.Source.Period(), at); !ok || !feed.MapYears {
			return nil, fmt.Errorf("%s is outside the carbon data (%s, %s)", at.Format(time.RFC3339), feed.Source.Period(), feed.Source.Describe())
		}
	}
	if policy != nil {
		c := *cfg
		c.Policy.Name = policy.String()
		if !regions.Applies(*policy) {
			c.Policy.Hysteresis = nil
		}
		cfg = &c
	}
	pl, err := NewPlanner(cfg, feed, nil)
	if err != nil {
		return nil, err
	}
	p := pl.Plan(at)
	st, err := p.Compile(epoch)
	if err != nil {
		return nil, err
	}
	if !p.DataHour.Equal(p.Hour) {
		st.Meta.Requested = p.Hour
	}
	return st, nil
}
