package controller

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/p4ctl/p4ctl/pkg/compiler"
	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/regions"
	"github.com/p4ctl/p4ctl/pkg/regions/carbonapi"
)

// SafePolicy is what the controller compiles while carbon data is stale or
// missing: policy A, the site's nearest region (latency only). It needs no
// carbon data and never violates an SLA that the nearest region meets
// (docs/CONFIG.md, "Staleness").
const SafePolicy = regions.PolicyA

// DataAger is implemented by carbon sources whose data can go stale — the
// live API clients (Electricity Maps, WattTime) with their caches. DataAge
// is how old, at schedule time t, the newest value the source holds for the
// hour containing t is (0 when it has a value for that hour). The
// controller applies SafePolicy when it exceeds the configured staleness
// bound. Sources without it (traces, the offline model) are aged by their
// period: see CarbonFeed.
type DataAger interface {
	DataAge(t time.Time) time.Duration
}

// ValueAger is implemented by sources whose value for an hour may be older
// than the hour: traces whose gaps the fill policy filled
// (regions.TraceSource.ValueAge). The oldest configured zone's value age
// is added to the plan's data age, so a filled gap longer than the
// staleness bound makes the plan stale like live data that stopped
// arriving.
type ValueAger interface {
	ValueAge(zone string, t time.Time) time.Duration
}

// Refresher is implemented by live sources that fetch on demand
// (carbonapi.Source): the controller refreshes them before every plan.
type Refresher interface {
	Refresh(ctx context.Context) error
}

// StaleTimer is implemented by live sources that can say, from their cache
// alone, when their data will cross the staleness bound if nothing new
// arrives (carbonapi.Source.StaleAt; false: stale already). The daemon
// sets a timer on it, so the safe policy never waits for a refresh.
type StaleTimer interface {
	StaleAt() (time.Time, bool)
}

// Checker is implemented by live sources that know whether their data for
// the current hour is usable (carbonapi.Source.Check): a non-nil error
// means stale, and the safe policy applies.
type Checker interface {
	Check() error
}

// ZoneStatuser is implemented by live sources that report each zone's
// freshness (carbonapi.Source.Status): the oldest zone's age is the plan's
// data age, and every zone's age is exported.
type ZoneStatuser interface {
	Status() []carbonapi.ZoneStatus
}

// SourceFactory opens the carbon source a configuration names. The default
// is (*config.Config).OpenCarbon (offline model and CSV traces); the live
// API clients plug in here.
type SourceFactory func(cfg *config.Config) (regions.CarbonSource, error)

// CarbonFeed reads hourly snapshots from a carbon source and says how old
// they are. For a source without DataAger:
//
//   - MapYears (the offline model, one year long): any hour is mapped to the
//     same month, day and hour of the model's year; age 0.
//   - otherwise an hour inside the source's period has age 0; an hour after
//     it is served the last hour's values ("last known value") with age =
//     the distance to that hour; an hour before it has no data.
//   - a source with ValueAger (filled gaps of traces) adds the age of the
//     values it serves: a filled hour is as old as the last measured one.
//
// When a read fails, the last good snapshot is served and ages.
type CarbonFeed struct {
	Source   regions.CarbonSource
	MapYears bool

	mu   sync.Mutex
	last *compiler.Carbon
}

// Refresh refreshes a live source (a no-op for static ones). Errors are
// per zone and the cache is kept: staleness is decided by Read.
func (f *CarbonFeed) Refresh(ctx context.Context) error {
	if r, ok := f.Source.(Refresher); ok {
		return r.Refresh(ctx)
	}
	return nil
}

// Live reports whether the source fetches on demand (Refresher).
func (f *CarbonFeed) Live() bool {
	_, ok := f.Source.(Refresher)
	return ok
}

// StaleAt returns when a live source's data goes stale if nothing new
// arrives (StaleTimer); false when it is stale already or the source
// cannot say (static sources age by the hour, which the schedule sees).
func (f *CarbonFeed) StaleAt() (time.Time, bool) {
	if st, ok := f.Source.(StaleTimer); ok {
		return st.StaleAt()
	}
	return time.Time{}, false
}

// Zones returns the per-zone freshness of a live source (nil for static
// ones).
func (f *CarbonFeed) Zones() []carbonapi.ZoneStatus {
	if z, ok := f.Source.(ZoneStatuser); ok {
		return z.Status()
	}
	return nil
}

// Reading is one snapshot and its age.
type Reading struct {
	Carbon compiler.Carbon
	// DataHour is the hour the values belong to (the model's year for the
	// offline model).
	DataHour time.Time
	Age      time.Duration
	// Filled is the part of Age that comes from values filling a gap of a
	// trace (ValueAger): how long before DataHour the last measured hour is.
	Filled time.Duration
	// Err is set when no data could be read (then Carbon is the last good
	// snapshot, or zero when there is none).
	Err error
	// Stale is the source's own verdict (Checker) that its data is too old.
	Stale error
}

// Read returns the snapshot for the hour containing t.
func (f *CarbonFeed) Read(cfg *config.Config, t time.Time) Reading {
	hour := t.UTC().Truncate(time.Hour)
	p := f.Source.Period()
	dataHour := hour
	var age, filled time.Duration
	if f.MapYears {
		if h, ok := compiler.HourIn(p, hour); ok {
			dataHour = h
		}
	}
	if !p.Contains(dataHour) && !p.From.IsZero() {
		if !dataHour.Before(p.To) {
			dataHour = p.To.Add(-time.Hour)
			age = hour.Sub(dataHour)
		}
	}
	if a, ok := f.Source.(DataAger); ok {
		age = a.DataAge(t)
	}
	if va, ok := f.Source.(ValueAger); ok {
		var oldest time.Duration
		for _, r := range cfg.Regions {
			oldest = max(oldest, va.ValueAge(cfg.Zone(r), dataHour))
		}
		age += oldest
		filled = oldest
	}
	if zs := f.Zones(); zs != nil {
		age = 0
		for _, z := range zs {
			if !z.HasData {
				age = -1
				break
			}
			age = max(age, z.Age)
		}
	}
	var stale error
	if c, ok := f.Source.(Checker); ok {
		stale = c.Check()
	}
	c, err := compiler.Snapshot(cfg, f.Source, dataHour)
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil {
		r := Reading{Err: err, Age: -1, Stale: stale}
		if f.last != nil {
			r.Carbon, r.DataHour = *f.last, f.last.Hour
			r.Age = max(hour.Sub(f.last.Hour), age)
		}
		return r
	}
	f.last = &c
	return Reading{Carbon: c, DataHour: dataHour, Age: age, Filled: filled, Stale: stale}
}

// Plan is what the controller installs for one hour: the carbon snapshot
// and the policy to compile (the configured one, or SafePolicy while data
// is stale). Compile turns it into a switch state for a given epoch.
type Plan struct {
	// Hour is the schedule hour the plan is for.
	Hour time.Time `json:"hour"`
	// DataHour is the hour of the carbon values used.
	DataHour time.Time `json:"data_hour"`
	// Source describes the carbon source.
	Source string `json:"source"`
	// Configured and Effective are the configured policy and the one
	// compiled (SafePolicy while stale).
	Configured regions.Policy `json:"-"`
	Effective  regions.Policy `json:"-"`
	// Stale is set when SafePolicy applies; Reason says why.
	Stale  bool   `json:"stale,omitempty"`
	Reason string `json:"reason,omitempty"`
	// DataAge is the carbon data's age at Hour (-1: no data).
	DataAge time.Duration `json:"data_age"`
	// Carbon is the snapshot compiled from.
	Carbon compiler.Carbon `json:"-"`

	cfg   *config.Config
	sites []*regions.Site
	opts  regions.Options

	mu       sync.Mutex
	compiled map[uint8]*compiler.State
}

// Compile compiles the plan for epoch. States are memoised per epoch: a
// fleet of switches at the same epoch shares one compile. The result is
// shared: callers must not modify it.
func (p *Plan) Compile(epoch uint8) (*compiler.State, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if st, ok := p.compiled[epoch]; ok {
		return st, nil
	}
	in := compiler.Input{Config: p.cfg, Sites: p.sites, Carbon: p.Carbon, Policy: p.Effective, Options: p.opts, Epoch: epoch}
	st, err := compiler.Compile(in)
	if err != nil {
		return nil, fmt.Errorf("compile %s for %s: %w", p.Effective, p.Hour.Format(time.RFC3339), err)
	}
	if p.compiled == nil {
		p.compiled = map[uint8]*compiler.State{}
	}
	p.compiled[epoch] = st
	return st, nil
}

// Sites returns the plan's sites (configuration order).
func (p *Plan) Sites() []*regions.Site { return p.sites }

// Config returns the configuration the plan was made from.
func (p *Plan) Config() *config.Config { return p.cfg }

// Options returns the policy options.
func (p *Plan) Options() regions.Options { return p.opts }

// Decide returns pkg/regions' decision for a request of site i with the
// given SLA under the plan's effective policy and carbon: what the switch
// must do (C-cap is decided as C: capacities are the data plane's).
func (p *Plan) Decide(site int, slaMs float64) regions.Decision {
	pol := p.Effective
	if pol == regions.PolicyCCap {
		pol = regions.PolicyC
	}
	return regions.Decide(pol, p.sites[site], p.cfg.Pool(), slaMs, &p.Carbon.Intensity, p.opts)
}

// Intensity returns the plan's carbon intensity of region r (gCO2eq/kWh).
func (p *Plan) Intensity(r regions.Index) float64 { return p.Carbon.Intensity[r] }

// BaselineIntensity is the mean, over the configured sites, of the
// intensity of each site's nearest region: the carbon of a request under the
// nearest-region baseline when requests are spread evenly over sites.
func (p *Plan) BaselineIntensity() float64 {
	var sum float64
	for _, s := range p.sites {
		sum += p.Carbon.Intensity[regions.Nearest(s, p.cfg.Pool())]
	}
	return sum / float64(len(p.sites))
}

// Planner turns schedule hours into plans.
type Planner struct {
	cfg    *config.Config
	feed   *CarbonFeed
	policy regions.Policy
	sites  []*regions.Site
	opts   regions.Options
	bound  time.Duration
	log    *slog.Logger
	// latency, when set, replaces the profiles' latencies by the learned
	// ones in every plan (LatencyLearner).
	latency *LatencyLearner
}

// NewPlanner returns a planner for a validated configuration reading
// carbon from feed.
func NewPlanner(cfg *config.Config, feed *CarbonFeed, log *slog.Logger) (*Planner, error) {
	pol, err := cfg.RoutingPolicy()
	if err != nil {
		return nil, err
	}
	sites, err := cfg.RoutingSites()
	if err != nil {
		return nil, err
	}
	bound := cfg.Carbon.StalenessBound.Duration
	if bound == 0 {
		bound = config.DefaultStalenessBound
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Planner{cfg: cfg, feed: feed, policy: pol, sites: sites, opts: cfg.Options(), bound: bound, log: log}, nil
}

// StalenessBound returns how old carbon data may be before SafePolicy
// applies.
func (pl *Planner) StalenessBound() time.Duration { return pl.bound }

// Plan returns the plan for the hour containing t.
func (pl *Planner) Plan(t time.Time) *Plan {
	r := pl.feed.Read(pl.cfg, t)
	sites := pl.sites
	if pl.latency != nil {
		if ls, err := pl.latency.Sites(pl.cfg, pl.sites); err != nil {
			pl.log.Warn("learned latencies unusable: compiling the profiles", "err", err)
		} else {
			sites = ls
		}
	}
	p := &Plan{Hour: t.UTC().Truncate(time.Hour), DataHour: r.DataHour, Source: pl.feed.Source.Describe(),
		Configured: pl.policy, Effective: pl.policy, DataAge: r.Age, Carbon: r.Carbon,
		cfg: pl.cfg, sites: sites, opts: pl.opts}
	switch {
	case r.Stale != nil:
		p.Stale, p.Reason = true, fmt.Sprintf("the carbon source reports stale data: %v", r.Stale)
	case r.Err != nil && r.Age < 0:
		p.Stale, p.Reason = true, fmt.Sprintf("no carbon data: %v", r.Err)
	case r.Age > pl.bound:
		p.Stale, p.Reason = true, fmt.Sprintf("carbon data is %s old (bound %s)", r.Age, pl.bound)
		if r.Filled > 0 {
			p.Reason += fmt.Sprintf("; the values fill a gap in the traces (carbon.fill), last measured %s before", r.Filled)
		}
		if r.Err != nil {
			p.Reason += fmt.Sprintf("; last read failed: %v", r.Err)
		}
	case r.Err != nil:
		pl.log.Warn("carbon read failed; using the last known values", "hour", p.Hour, "data_hour", r.DataHour, "age", r.Age, "err", r.Err)
	}
	if p.Stale && pl.policy != SafePolicy {
		p.Effective = SafePolicy
		if p.Carbon.Source == "" {
			p.Carbon = compiler.Carbon{Hour: p.Hour, Source: "none (no carbon data)"}
		}
		pl.log.Warn("carbon data stale: compiling the safe policy", "hour", p.Hour, "policy", SafePolicy.String(), "configured", pl.policy.String(), "reason", p.Reason)
	}
	return p
}
