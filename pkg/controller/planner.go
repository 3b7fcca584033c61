package controller

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/p4ctl/p4ctl/pkg/carbonapi"
	"github.com/p4ctl/p4ctl/pkg/compiler"
	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/regions"
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

// Forecaster is implemented by live sources that cache forecasts of the
// hours after the current one (carbonapi.Source.Forecast: WattTime's
// co2_moer forecast, Electricity Maps' when fetched): a hysteresis horizon
// beyond the current hour ranks by their mean.
type Forecaster interface {
	Forecast(zone string) []carbonapi.Reading
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

// locate maps a schedule hour to the hour of the values served for it and
// their age as the period alone says it (see CarbonFeed): the offline
// model's year, the last hour of a trace that has ended, the age of values
// filling a gap (ValueAger, also returned as filled).
func (f *CarbonFeed) locate(cfg *config.Config, hour time.Time) (dataHour time.Time, age, filled time.Duration) {
	p := f.Source.Period()
	dataHour = hour
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
	if va, ok := f.Source.(ValueAger); ok {
		for _, r := range cfg.Regions {
			filled = max(filled, va.ValueAge(cfg.Zone(r), dataHour))
		}
		age += filled
	}
	return dataHour, age, filled
}

// Read returns the snapshot for the hour containing t.
func (f *CarbonFeed) Read(cfg *config.Config, t time.Time) Reading {
	hour := t.UTC().Truncate(time.Hour)
	dataHour, age, filled := f.locate(cfg, hour)
	if a, ok := f.Source.(DataAger); ok {
		age = a.DataAge(t) + filled
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
	// Signal says what the carbon numbers are: "average (lifecycle)",
	// "average (direct)" or "marginal (MOER)".
	Signal string `json:"signal"`
	// Hysteresis describes the configured hysteresis ("" when off).
	Hysteresis string `json:"hysteresis,omitempty"`
	// Ranking is the hysteretic carbon ranking installed, cleanest first
	// (region indices); nil when hysteresis is off or the safe policy
	// applies (then the compiler ranks by this hour's carbon).
	Ranking []regions.Index `json:"ranking,omitempty"`
	// ForecastHours is how many hours the ranking's scores are the mean of
	// (1: the current hour; fewer than the horizon where the forecast or
	// the trace ends).
	ForecastHours int `json:"forecast_hours,omitempty"`

	cfg   *config.Config
	sites []*regions.Site
	opts  regions.Options

	pool regions.RegionSet // the configured regions (cfg.Pool)

	mu       sync.Mutex
	compiled map[compileKey]*compiled
	baseline map[string]float64 // BaselineIntensityFor, by subset
}

// compileKey names one compiled state of a plan: the epoch, the site
// subset (its names joined; "" for every site) and the table sizes it was
// checked against (capacityKey).
type compileKey struct {
	epoch           uint8
	sites, capacity string
}

// compiled is one memoised compile, done once however many switches ask.
type compiled struct {
	once sync.Once
	st   *compiler.State
	err  error
}

// capacityKey identifies a capacity by its sizes alone ("" for nil: the
// program's), so that switches of the same program share a compile.
func capacityKey(c *compiler.Capacity) string {
	if c == nil {
		return ""
	}
	var b strings.Builder
	for _, t := range slices.Sorted(maps.Keys(c.Sizes)) {
		fmt.Fprintf(&b, "%s=%d;", t, c.Sizes[t])
	}
	return b.String()
}

// Compile compiles the plan for epoch, every site, against the program's
// table sizes (CompileFor).
func (p *Plan) Compile(epoch uint8) (*compiler.State, error) { return p.CompileFor(nil, nil, epoch) }

// CompileFor compiles the plan for epoch with the named sites only (a
// target's `sites:`, the sites an edge switch serves; nil: every site, in
// configuration order) against capa, the target's table sizes (nil: the
// v1model program's, compiler.ProgramCapacity); the compiler fits the state
// to them (carbon ties dropped first) or refuses with an
// *compiler.OverflowError naming capa.Target. States are memoised per
// (epoch, subset, sizes), errors too (compiling is pure): switches serving
// the same sites with the same tables share one compile, and different
// keys compile in parallel. capa.Target should not name one switch (it is
// in a memoised error): callers add the switch's name. The result is
// shared: callers must not modify it.
func (p *Plan) CompileFor(sites []string, capa *compiler.Capacity, epoch uint8) (*compiler.State, error) {
	key := compileKey{epoch: epoch, sites: strings.Join(sites, "\x00"), capacity: capacityKey(capa)}
	p.mu.Lock()
	if p.compiled == nil {
		p.compiled = map[compileKey]*compiled{}
	}
	c, ok := p.compiled[key]
	if !ok {
		c = &compiled{}
		p.compiled[key] = c
	}
	p.mu.Unlock()
	c.once.Do(func() { c.st, c.err = p.compile(sites, capa, epoch) })
	return c.st, c.err
}

// compile is CompileFor without the memo.
func (p *Plan) compile(sites []string, capa *compiler.Capacity, epoch uint8) (*compiler.State, error) {
	cfg, profiles, err := p.subset(sites)
	if err != nil {
		return nil, err
	}
	in := compiler.Input{Config: cfg, Sites: profiles, Carbon: p.Carbon, Policy: p.Effective, Options: p.opts, Epoch: epoch,
		Ranking: p.Ranking, Hysteresis: p.Hysteresis, Capacity: capa}
	st, err := compiler.Compile(in)
	if err != nil {
		return nil, fmt.Errorf("compile %s for %s: %w", p.Effective, p.Hour.Format(time.RFC3339), err)
	}
	return st, nil
}

// subset returns the configuration and latency profiles restricted to the
// named sites (all of them for nil), in configuration order.
func (p *Plan) subset(sites []string) (*config.Config, []*regions.Site, error) {
	if len(sites) == 0 {
		return p.cfg, p.sites, nil
	}
	cfg, at, err := p.cfg.WithSites(sites)
	if err != nil {
		return nil, nil, fmt.Errorf("compile: %w", err)
	}
	profiles := make([]*regions.Site, len(at))
	for k, i := range at {
		profiles[k] = p.sites[i]
	}
	return cfg, profiles, nil
}

// Sites returns the plan's sites (configuration order).
func (p *Plan) Sites() []*regions.Site { return p.sites }

// Config returns the configuration the plan was made from.
func (p *Plan) Config() *config.Config { return p.cfg }

// Options returns the policy options.
func (p *Plan) Options() regions.Options { return p.opts }

// Decide returns pkg/regions' decision for a request of site i with the
// given SLA under the plan's effective policy and carbon, and its
// hysteretic ranking when it has one: what the switch must do (C-cap is
// decided as C: capacities are the data plane's).
func (p *Plan) Decide(site int, slaMs float64) regions.Decision {
	pol := p.Effective
	if pol == regions.PolicyCCap {
		pol = regions.PolicyC
	}
	if p.Ranking != nil && regions.Applies(pol) {
		return regions.DecideRanked(pol, p.sites[site], p.pool, slaMs, p.Ranking, p.opts)
	}
	return regions.Decide(pol, p.sites[site], p.pool, slaMs, &p.Carbon.Intensity, p.opts)
}

// Intensity returns the plan's carbon intensity of region r (gCO2eq/kWh).
func (p *Plan) Intensity(r regions.Index) float64 { return p.Carbon.Intensity[r] }

// BaselineIntensity is the mean, over the configured sites, of the
// intensity of each site's nearest region: the carbon of a request under the
// nearest-region baseline when requests are spread evenly over sites.
func (p *Plan) BaselineIntensity() float64 { return p.BaselineIntensityFor(nil) }

// BaselineIntensityFor is BaselineIntensity over the named sites only (a
// target's `sites:`, validated against the configuration; nil, or a name
// that is not configured: every site), memoised per subset: every
// switch's counters are priced with it at every poll. It is computed
// outside the plan's lock (the drivers share it): two first callers may
// both compute it, with the same result.
func (p *Plan) BaselineIntensityFor(sites []string) float64 {
	key := strings.Join(sites, "\x00")
	p.mu.Lock()
	v, ok := p.baseline[key]
	p.mu.Unlock()
	if ok {
		return v
	}
	_, profiles, err := p.subset(sites)
	if err != nil || len(profiles) == 0 {
		profiles = p.sites
	}
	var sum float64
	for _, s := range profiles {
		sum += p.Carbon.Intensity[regions.Nearest(s, p.pool)]
	}
	if len(profiles) > 0 {
		v = sum / float64(len(profiles))
	}
	p.mu.Lock()
	if p.baseline == nil {
		p.baseline = map[string]float64{}
	}
	p.baseline[key] = v
	p.mu.Unlock()
	return v
}

// Planner turns schedule hours into plans. With policy.hysteresis it
// carries the hysteretic ranking from hour to hour (decision 42): each
// plan steps the state of the hour before; a plan for the same hour again
// (a re-plan) steps that state again, with the new values; missed hours
// are caught up from the carbon history; and a planner without a state
// (at start, after a restart, or asked for an earlier hour) replays the
// history from its beginning — the trace's first hour, the offline
// model's 1 January (its one year is the history of every year: the state
// starts afresh each 1 January), a live source's oldest cached hour — so
// replicas and restarts of the same configuration rank alike (for traces
// and the model, exactly as one planner running since that hour).
type Planner struct {
	cfg    *config.Config
	feed   *CarbonFeed
	policy regions.Policy
	sites  []*regions.Site
	opts   regions.Options
	bound  time.Duration
	log    *slog.Logger
	hyst   *regions.Hysteresis
	signal regions.Signal
	// latency, when set, replaces the profiles' latencies by the learned
	// ones in every plan (LatencyLearner).
	latency *LatencyLearner

	mu      sync.Mutex
	before  regions.RankState // the state of the hour before latest's
	latest  regions.RankState // the state of the latest hour planned
	replays int
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
	pl := &Planner{cfg: cfg, feed: feed, policy: pol, sites: sites, opts: cfg.Options(), bound: bound, log: log,
		signal: cfg.CarbonSignal()}
	if h := cfg.RoutingHysteresis(); h != nil && regions.Applies(pol) {
		if err := h.Validate(); err != nil {
			return nil, err
		}
		pl.hyst = h
	}
	return pl, nil
}

// Replays counts how often the planner rebuilt its hysteresis state from
// the carbon history (at the first plan, after a restart, or when asked
// for an earlier hour than the last).
func (pl *Planner) Replays() int {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return pl.replays
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
		Signal: pl.signal.Describe(), cfg: pl.cfg, sites: sites, opts: pl.opts, pool: pl.cfg.Pool()}
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
	if pl.hyst != nil {
		p.Hysteresis = pl.hyst.String()
		if !p.Stale {
			// A stale hour compiles the safe policy and leaves the state
			// as it was: the ranking resumes from it with fresh data.
			p.Ranking, p.ForecastHours = pl.rank(p.Hour, r.DataHour, &r.Carbon.Intensity)
		}
	}
	return p
}

// maxCatchUp is the longest run of missed hours the planner steps through
// from its latest state; a longer one (a daemon stopped for months)
// replays the history from its beginning instead, as a restart does.
const maxCatchUp = 24 * 366

// rank steps the hysteretic ranking to hour (values c of dataHour) and
// returns it with the number of hours its scores average.
func (pl *Planner) rank(hour, dataHour time.Time, c *regions.HourCarbon) ([]regions.Index, int) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pool := pl.cfg.Pool()
	var base regions.RankState
	last := pl.latest.Hour()
	switch {
	case pl.latest.Valid() && hour.Equal(last):
		base = pl.before // a re-plan of the same hour
	case pl.latest.Valid() && hour.After(last) && hour.Sub(last) <= maxCatchUp*time.Hour &&
		(!pl.feed.MapYears || hour.Year() == last.Year()): // the model's history starts each 1 January
		base = pl.replay(pl.latest, last.Add(time.Hour), hour)
	default:
		pl.replays++
		base = pl.replay(regions.RankState{}, pl.historyStart(hour), hour)
	}
	score, n := pl.score(hour, dataHour, c)
	next, err := pl.hyst.Next(base, hour, pool, &score)
	if err != nil { // not reached: base is always of an earlier hour
		pl.log.Error("hysteresis: ranking by this hour's carbon instead", "hour", hour, "err", err)
		return regions.Rank(nil, pool, c), 1
	}
	pl.before, pl.latest = base, next
	return next.Order(), n
}

// historyStart is the first hour the hysteresis state is rebuilt from: the
// offline model's 1 January of hour's year, else the source's first hour
// (a trace's, or a live source's oldest cached one); hour itself when the
// source has nothing before it.
func (pl *Planner) historyStart(hour time.Time) time.Time {
	if pl.feed.MapYears {
		return time.Date(hour.Year(), 1, 1, 0, 0, 0, 0, time.UTC)
	}
	from := pl.feed.Source.Period().From
	if from.IsZero() || !from.Before(hour) {
		return hour
	}
	return from
}

// replay steps st through the hours from..to (exclusive) of the carbon
// history, as the plans of those hours would have: an hour whose data is
// stale (beyond the staleness bound, as the plan judges it from the period
// and filled gaps) or missing leaves the state unchanged.
func (pl *Planner) replay(st regions.RankState, from, to time.Time) regions.RankState {
	pool := pl.cfg.Pool()
	live := pl.feed.Live()
	for h := from; h.Before(to); h = h.Add(time.Hour) {
		dataHour := h
		if !live {
			var age time.Duration
			if dataHour, age, _ = pl.feed.locate(pl.cfg, h); age > pl.bound {
				continue
			}
		}
		c, err := compiler.Snapshot(pl.cfg, pl.feed.Source, dataHour)
		if err != nil {
			continue
		}
		score, _ := pl.score(h, dataHour, &c.Intensity)
		if next, err := pl.hyst.Next(st, h, pool, &score); err == nil {
			st = next
		}
	}
	return st
}

// score is what the ranking compares at hour: the mean over the horizon of
// the values of hour (c, of dataHour) and the hours after it — the trace's
// or model's own next hours (a perfect forecast), else a live source's
// cached forecast — stopping at the first hour neither has. It returns
// the number of hours averaged.
func (pl *Planner) score(hour, dataHour time.Time, c *regions.HourCarbon) (regions.HourCarbon, int) {
	sum := *c
	n := 1
	src := pl.feed.Source
	period := src.Period()
	var fc map[string]map[int64]float64 // zone → unix hour → value
	for k := 1; k < pl.hyst.Horizon; k++ {
		next := dataHour.Add(time.Duration(k) * time.Hour)
		if pl.feed.MapYears {
			if h, ok := compiler.HourIn(period, hour.Add(time.Duration(k)*time.Hour)); ok {
				next = h
			}
		}
		var v regions.HourCarbon
		ok := false
		if period.Contains(next) {
			if snap, err := compiler.Snapshot(pl.cfg, src, next); err == nil {
				v, ok = snap.Intensity, true
			}
		}
		if !ok {
			if f, isF := src.(Forecaster); isF {
				if fc == nil {
					fc = map[string]map[int64]float64{}
					for _, r := range pl.cfg.Regions {
						z := pl.cfg.Zone(r)
						m := map[int64]float64{}
						for _, rd := range f.Forecast(z) {
							m[rd.Hour.Unix()] = rd.Value
						}
						fc[z] = m
					}
				}
				v, ok = *c, true // regions outside the configuration stay +Inf
				for _, r := range pl.cfg.Regions {
					idx, _ := pl.cfg.RegionIndex(r)
					x, has := fc[pl.cfg.Zone(r)][next.Unix()]
					if !has {
						ok = false
						break
					}
					v[idx] = x
				}
			}
		}
		if !ok {
			break
		}
		for i := range sum {
			sum[i] += v[i]
		}
		n++
	}
	for i := range sum {
		sum[i] /= float64(n)
	}
	return sum, n
}
