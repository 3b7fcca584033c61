package carbonapi

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/regions"
)

// Retention is how far back a Source keeps hourly values.
const Retention = 48 * time.Hour

// ErrNoData is returned for a past hour the source has no value for.
var ErrNoData = errors.New("no carbon data")

// StaleError says that a zone has no value for the current hour whose age
// is within the staleness bound. errors.Is(err, ErrStale) holds; Unwrap
// gives the zone's last fetch error, if any.
type StaleError struct {
	Zone  string
	Hour  time.Time     // hour of the newest usable value (zero: none)
	Age   time.Duration // its age (now − the data's timestamp); < 0: no value at all
	Bound time.Duration // the staleness bound
	Last  error         // the zone's last fetch error (nil if the last fetch succeeded)
}

// Error says which zone, how old and why.
func (e *StaleError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: zone %s: ", ErrStale, e.Zone)
	if e.Age < 0 {
		b.WriteString("no value fetched yet")
	} else {
		fmt.Fprintf(&b, "newest value (hour %s) is %s old, bound %s", e.Hour.UTC().Format("2006-01-02T15:04Z"), e.Age.Round(time.Second), e.Bound)
	}
	if e.Last != nil {
		fmt.Fprintf(&b, "; last fetch: %v", e.Last)
	}
	return b.String()
}

// Is matches ErrStale.
func (e *StaleError) Is(target error) bool { return target == ErrStale }

// Unwrap returns the last fetch error.
func (e *StaleError) Unwrap() error { return e.Last }

// Reading is one cached hourly value of a zone.
type Reading struct {
	Zone string `json:"zone"`
	// Hour is the UTC hour the value describes (labelled by its start).
	Hour time.Time `json:"hour"`
	// Value is gCO2eq/kWh (WattTime: marginal gCO2/kWh).
	Value float64 `json:"gco2_per_kwh"`
	// DataTime is the data's own timestamp: Electricity Maps `datetime`,
	// WattTime forecast `generated_at`. Age = now − DataTime.
	DataTime time.Time `json:"data_time"`
	// UpdatedAt is Electricity Maps' `updatedAt` (zero if absent).
	UpdatedAt time.Time `json:"updated_at,omitzero"`
	// FetchedAt is when this process received the value.
	FetchedAt time.Time `json:"fetched_at"`
	// Estimated marks a value the provider estimated (Electricity Maps
	// `isEstimated`; every WattTime value).
	Estimated bool `json:"estimated,omitempty"`
	// Forecast marks a value for an hour after the data's timestamp.
	Forecast bool `json:"forecast,omitempty"`
}

// ZoneStatus is a zone's data freshness, for logs and metrics.
type ZoneStatus struct {
	Zone string `json:"zone"`
	// HasData is false when the zone has no value for the current hour
	// at all (never fetched); the fields below Value are then zero.
	HasData bool `json:"has_data"`
	// Hour, Value and DataTime describe the value the current hour uses
	// (that hour's, or the last known one).
	Hour     time.Time `json:"hour,omitzero"`
	Value    float64   `json:"gco2_per_kwh"`
	DataTime time.Time `json:"data_time,omitzero"`
	// Age is now − DataTime.
	Age time.Duration `json:"age"`
	// Stale is true when Age exceeds the bound or there is no value.
	Stale bool `json:"stale"`
	// FetchedAt is the last successful fetch (zero: never).
	FetchedAt time.Time `json:"fetched_at,omitzero"`
	// LastError is the last fetch's error, "" after a success.
	LastError string `json:"last_error,omitempty"`
}

// AgeSeconds is Age in seconds, +Inf without data (a metric's value).
func (z ZoneStatus) AgeSeconds() float64 {
	if !z.HasData {
		return math.Inf(1)
	}
	return z.Age.Seconds()
}

// Config says which API a Source reads and how. FromConfig fills it from
// the controller configuration.
type Config struct {
	// Kind is config.SourceElectricityMapsAPI or config.SourceWattTimeAPI.
	Kind string
	// BaseURL overrides the API's default base URL.
	BaseURL string
	// Token is the Electricity Maps token or the WattTime password.
	Token Secret
	// Username is the WattTime user name (unused for Electricity Maps).
	Username string
	// EmissionFactor is Lifecycle (default) or Direct (Electricity Maps).
	EmissionFactor string
	// Zones are the grid zones to serve (catalog zones, or overrides).
	Zones []string
	// WattTimeRegions overrides the built-in zone → WattTime region map.
	WattTimeRegions map[string]string
	// StalenessBound defaults to config.DefaultStalenessBound.
	StalenessBound time.Duration
	// Forecast makes Refresh also fetch Electricity Maps forecasts (one
	// more request per zone); WattTime values always come from its
	// forecast.
	Forecast bool
}

// provider is one API as a Source uses it.
type provider interface {
	// fetch gets zone's newest values; full also asks for past hours.
	// A partial success returns values and an error.
	fetch(ctx context.Context, zone string, full bool) (batch, error)
	describe() string
}

// batch is what one fetch of one zone returned.
type batch struct {
	ok       bool      // the primary value arrived (latest / forecast)
	full     bool      // past hours were included
	hours    []Reading // hourly values, any order
	forecast []Reading // Electricity Maps forecast hours
}

// Source is a regions.CarbonSource over a live API: Refresh fetches, the
// other methods read the cache. It is safe for concurrent use.
type Source struct {
	p     provider
	zones []string
	bound time.Duration
	o     Options

	mu   sync.Mutex
	data map[string]*zoneState
}

type zoneState struct {
	hours     map[int64]Reading // by hour (Unix seconds)
	forecast  []Reading
	fetchedAt time.Time
	lastErr   error
	full      bool
}

var _ regions.CarbonSource = (*Source)(nil)

// New builds a Source; nothing is fetched until Refresh.
func New(c Config, o Options) (*Source, error) {
	o = o.withDefaults()
	if len(c.Zones) == 0 {
		return nil, errors.New("carbon API source: no zones")
	}
	zones := slices.Sorted(slices.Values(c.Zones))
	zones = slices.Compact(zones)
	if c.StalenessBound <= 0 {
		c.StalenessBound = config.DefaultStalenessBound
	}
	var p provider
	switch c.Kind {
	case config.SourceElectricityMapsAPI:
		cl, err := NewElectricityMaps(ElectricityMapsConfig{BaseURL: c.BaseURL, Token: c.Token, EmissionFactor: c.EmissionFactor}, o)
		if err != nil {
			return nil, err
		}
		p = &emProvider{c: cl, forecast: c.Forecast}
	case config.SourceWattTimeAPI:
		cl, err := NewWattTime(WattTimeConfig{BaseURL: c.BaseURL, Username: c.Username, Password: c.Token}, o)
		if err != nil {
			return nil, err
		}
		wp := &wtProvider{c: cl, regions: map[string]string{}}
		var missing []string
		for _, z := range zones {
			r, ok := WattTimeRegionOf(z, c.WattTimeRegions)
			if !ok {
				missing = append(missing, z)
				continue
			}
			wp.regions[z] = r
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("watttime: no WattTime region for zone(s) %s (set carbon.watttime_regions)", strings.Join(missing, ", "))
		}
		p = wp
	default:
		return nil, fmt.Errorf("carbon API source: kind %q: want %s or %s", c.Kind, config.SourceElectricityMapsAPI, config.SourceWattTimeAPI)
	}
	s := &Source{p: p, zones: zones, bound: c.StalenessBound, o: o, data: map[string]*zoneState{}}
	for _, z := range zones {
		s.data[z] = &zoneState{hours: map[int64]Reading{}}
	}
	return s, nil
}

// FromConfig builds the Source of a controller configuration whose
// carbon.source is electricitymaps-api or watttime-api: the zones of the
// configured regions, the token from carbon.token_env / carbon.token_file,
// and carbon.url, signal, username, watttime_regions and staleness_bound.
func FromConfig(cfg *config.Config, o Options) (*Source, error) {
	cb := cfg.Carbon
	if cb.Source != config.SourceElectricityMapsAPI && cb.Source != config.SourceWattTimeAPI {
		return nil, fmt.Errorf("carbon source %s is not a live API (open it with config.OpenCarbon)", cb.Source)
	}
	file := ""
	if cb.TokenFile != "" {
		file = cfg.Path(cb.TokenFile)
	}
	tok, err := LoadSecret(cb.TokenEnv, file)
	if err != nil {
		return nil, fmt.Errorf("carbon: %w", err)
	}
	factor := Lifecycle
	if cb.Signal == "direct" {
		factor = Direct
	}
	var zones []string
	for _, r := range cfg.Regions {
		zones = append(zones, cfg.Zone(r))
	}
	src, err := New(Config{
		Kind:            cb.Source,
		BaseURL:         cb.URL,
		Token:           tok,
		Username:        cb.Username,
		EmissionFactor:  factor,
		Zones:           zones,
		WattTimeRegions: cb.WattTimeRegions,
		StalenessBound:  cb.StalenessBound.Duration,
		// A hysteresis horizon beyond the current hour ranks by the
		// forecast: fetch Electricity Maps' (WattTime's values are one).
		Forecast: forecastNeeded(cfg),
	}, o)
	if err != nil {
		return nil, fmt.Errorf("carbon: %w", err)
	}
	return src, nil
}

// forecastNeeded reports whether the configuration ranks by a forecast
// (policy.hysteresis.horizon beyond 1 h).
func forecastNeeded(cfg *config.Config) bool {
	h := cfg.RoutingHysteresis()
	return h != nil && h.Horizon > 1
}

// Refresh fetches every zone (Options.Concurrency at a time) within
// Options.RefreshTimeout overall. The first successful fetch of a zone
// also loads its past hours where the API has them. Errors are per zone
// and joined (with ErrRefreshTimeout when the deadline cut the refresh
// short); a failed zone keeps its cache, so an error here does not mean
// the data is stale: ask Check, or StaleAt for when it will be.
func (s *Source) Refresh(ctx context.Context) error {
	parent := ctx
	ctx, cancel := context.WithTimeoutCause(ctx, s.o.RefreshTimeout, ErrRefreshTimeout)
	defer cancel()
	err := s.refresh(ctx)
	if err != nil && parent.Err() == nil && errors.Is(context.Cause(ctx), ErrRefreshTimeout) {
		return fmt.Errorf("%w (%s): %w", ErrRefreshTimeout, s.o.RefreshTimeout, err)
	}
	return err
}

func (s *Source) refresh(ctx context.Context) error {
	sem := make(chan struct{}, s.o.Concurrency)
	errs := make([]error, len(s.zones))
	var wg sync.WaitGroup
	for i, z := range s.zones {
		wg.Go(func() {
			select {
			case sem <- struct{}{}:
				defer func() { <-sem }()
			case <-ctx.Done():
				errs[i] = fmt.Errorf("zone %s: %w", z, ctx.Err())
				s.merge(z, batch{}, ctx.Err())
				return
			}
			s.mu.Lock()
			full := !s.data[z].full
			s.mu.Unlock()
			b, err := s.p.fetch(ctx, z, full)
			s.merge(z, b, err)
			if err != nil {
				errs[i] = fmt.Errorf("zone %s: %w", z, err)
				s.o.Logger.Warn("carbon fetch failed", "zone", z, "error", err.Error())
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (s *Source) merge(zone string, b batch, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.o.Now()
	z := s.data[zone]
	z.lastErr = err
	if b.ok {
		z.fetchedAt = now
	}
	if b.full {
		z.full = true
	}
	for _, r := range b.hours {
		r.Zone, r.FetchedAt = zone, now
		r.Hour = r.Hour.UTC().Truncate(time.Hour)
		k := r.Hour.Unix()
		if old, ok := z.hours[k]; ok && old.DataTime.After(r.DataTime) {
			continue // never replace newer data with older
		}
		z.hours[k] = r
	}
	if b.forecast != nil {
		z.forecast = z.forecast[:0]
		for _, r := range b.forecast {
			r.Zone, r.FetchedAt = zone, now
			z.forecast = append(z.forecast, r)
		}
	}
	cut := now.Add(-Retention).Unix()
	for k := range z.hours {
		if k < cut {
			delete(z.hours, k)
		}
	}
}

// lookup applies the safe policy; s.mu must be held.
func (s *Source) lookup(zone string, t, now time.Time) (Reading, error) {
	z, ok := s.data[zone]
	if !ok {
		return Reading{}, fmt.Errorf("%s: zone %s is not served (zones: %s)", s.p.describe(), zone, strings.Join(s.zones, " "))
	}
	h := t.UTC().Truncate(time.Hour)
	nowH := now.UTC().Truncate(time.Hour)
	if h.After(nowH) {
		return Reading{}, fmt.Errorf("zone %s: %s is a future hour: a live source serves past and current hours (see Source.Forecast)", zone, h.Format(time.RFC3339))
	}
	r, ok := z.hours[h.Unix()]
	if h.Before(nowH) {
		if !ok {
			return Reading{}, fmt.Errorf("zone %s: hour %s: %w", zone, h.Format(time.RFC3339), ErrNoData)
		}
		return r, nil
	}
	if !ok {
		r, ok = z.lastBefore(h)
	}
	if !ok {
		return Reading{}, &StaleError{Zone: zone, Age: -1, Bound: s.bound, Last: z.lastErr}
	}
	if age := now.Sub(r.DataTime); age > s.bound {
		return r, &StaleError{Zone: zone, Hour: r.Hour, Age: age, Bound: s.bound, Last: z.lastErr}
	}
	return r, nil
}

// lastBefore is the newest value of an hour before h.
func (z *zoneState) lastBefore(h time.Time) (Reading, bool) {
	var best Reading
	found := false
	for _, r := range z.hours {
		if r.Hour.Before(h) && (!found || r.Hour.After(best.Hour)) {
			best, found = r, true
		}
	}
	return best, found
}

// Intensity implements regions.CarbonSource: gCO2eq/kWh of zone in the hour
// containing t. Past hours are served as cached (ErrNoData if missing).
// The current hour follows the safe policy: that hour's value, else the
// last known value, while its age ≤ the staleness bound; beyond it a
// *StaleError (errors.Is(err, ErrStale)). Future hours are an error.
func (s *Source) Intensity(zone string, t time.Time) (float64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.lookup(zone, t, s.o.Now())
	if err != nil {
		return 0, err
	}
	return r.Value, nil
}

// Period implements regions.CarbonSource: from the earliest hour every
// zone has a value for (at most the current hour) to the end of the
// current hour. Intensity decides about staleness within it.
func (s *Source) Period() regions.Period {
	s.mu.Lock()
	defer s.mu.Unlock()
	nowH := s.o.Now().UTC().Truncate(time.Hour)
	from := time.Time{}
	for _, z := range s.data {
		earliest := nowH
		for _, r := range z.hours {
			if r.Hour.Before(earliest) {
				earliest = r.Hour
			}
		}
		if earliest.After(from) {
			from = earliest
		}
	}
	return regions.Period{From: from, To: nowH.Add(time.Hour)}
}

// Zones implements regions.CarbonSource.
func (s *Source) Zones() []string { return slices.Clone(s.zones) }

// Describe implements regions.CarbonSource.
func (s *Source) Describe() string {
	return fmt.Sprintf("%s; last known value served for up to %s, then stale (latency-only routing)", s.p.describe(), s.bound)
}

// StalenessBound is the configured bound.
func (s *Source) StalenessBound() time.Duration { return s.bound }

// Check returns nil when every zone has a usable value for the current
// hour, else the joined *StaleError of each zone that has not
// (errors.Is(err, ErrStale)): the daemon then routes latency-only.
func (s *Source) Check() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.o.Now()
	var errs []error
	for _, z := range s.zones {
		if _, err := s.lookup(z, now, now); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// StaleAt returns the first instant at which Check will report stale data
// if no new value arrives — the earliest, over the zones, at which the
// value the current hour (or a later one) uses is older than the bound —
// and true; or false when some zone is stale already. It reads the cache
// only, so a daemon can set a timer on it while a refresh is in flight.
func (s *Source) StaleAt() (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.o.Now()
	var first time.Time
	for _, zone := range s.zones {
		at, ok := s.data[zone].staleAt(now, s.bound)
		if !ok || !at.After(now) {
			return time.Time{}, false
		}
		if first.IsZero() || at.Before(first) {
			first = at
		}
	}
	return first, true
}

// staleAt follows lookup's choice of value hour by hour from now: the value
// of the hour, else the last known one, stale once now − its DataTime
// exceeds bound.
func (z *zoneState) staleAt(now time.Time, bound time.Duration) (time.Time, bool) {
	h := now.UTC().Truncate(time.Hour)
	r, ok := z.hours[h.Unix()]
	if !ok {
		r, ok = z.lastBefore(h)
	}
	if !ok {
		return time.Time{}, false
	}
	for start := now; ; start = h {
		// Stale from the first instant its age exceeds the bound, but not
		// before it comes into use.
		at := r.DataTime.Add(bound + 1)
		if at.Before(start) {
			at = start
		}
		next := h.Add(time.Hour)
		if at.Before(next) {
			return at, true
		}
		nr, ok := z.hours[next.Unix()]
		if !ok {
			return at, true // the last known value stays in use
		}
		r, h = nr, next
	}
}

// Status reports every zone's freshness, sorted by zone.
func (s *Source) Status() []ZoneStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.o.Now()
	out := make([]ZoneStatus, 0, len(s.zones))
	for _, zone := range s.zones {
		z := s.data[zone]
		st := ZoneStatus{Zone: zone, FetchedAt: z.fetchedAt}
		if z.lastErr != nil {
			st.LastError = z.lastErr.Error()
		}
		r, err := s.lookup(zone, now, now)
		var se *StaleError
		switch {
		case err == nil:
			st.HasData = true
		case errors.As(err, &se) && se.Age >= 0:
			st.HasData, st.Stale = true, true
		default:
			st.Stale = true
		}
		if st.HasData {
			st.Hour, st.Value, st.DataTime, st.Age = r.Hour, r.Value, r.DataTime, now.Sub(r.DataTime)
		}
		out = append(out, st)
	}
	return out
}

// Forecast returns the cached values of hours after the current one, oldest
// first: Electricity Maps forecasts (when Config.Forecast) or the rest of
// the latest WattTime forecast. Only a hysteresis horizon beyond 1 h uses
// them (the mean the ranking compares, pkg/controller); the value routed
// on is always the current hour's.
func (s *Source) Forecast(zone string) []Reading {
	s.mu.Lock()
	defer s.mu.Unlock()
	z, ok := s.data[zone]
	if !ok {
		return nil
	}
	nowH := s.o.Now().UTC().Truncate(time.Hour)
	byHour := map[int64]Reading{}
	for _, r := range z.forecast {
		if r.Hour.After(nowH) {
			byHour[r.Hour.Unix()] = r
		}
	}
	for k, r := range z.hours {
		if r.Hour.After(nowH) {
			byHour[k] = r
		}
	}
	keys := slices.Sorted(maps.Keys(byHour))
	out := make([]Reading, len(keys))
	for i, k := range keys {
		out[i] = byHour[k]
	}
	return out
}

// Cached returns the cached hourly values of zone up to the current hour,
// oldest first (for inspection and tests).
func (s *Source) Cached(zone string) []Reading {
	s.mu.Lock()
	defer s.mu.Unlock()
	z, ok := s.data[zone]
	if !ok {
		return nil
	}
	nowH := s.o.Now().UTC().Truncate(time.Hour)
	var out []Reading
	for _, r := range z.hours {
		if !r.Hour.After(nowH) {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Hour.Before(out[j].Hour) })
	return out
}

// emProvider reads Electricity Maps: latest every time, history on a full
// fetch, forecast when asked.
type emProvider struct {
	c        *ElectricityMaps
	forecast bool
}

func (p *emProvider) describe() string {
	return fmt.Sprintf("Electricity Maps API v3 at %s (live, %s emissions, gCO2eq/kWh)", p.c.BaseURL(), p.c.EmissionFactor())
}

func emReading(pt Point) Reading {
	return Reading{Hour: pt.Time.Truncate(time.Hour), Value: pt.Value, DataTime: pt.Time, UpdatedAt: pt.UpdatedAt, Estimated: pt.Estimated}
}

func (p *emProvider) fetch(ctx context.Context, zone string, full bool) (batch, error) {
	var b batch
	latest, err := p.c.Latest(ctx, zone)
	if err != nil {
		return b, err
	}
	b.ok = true
	b.hours = append(b.hours, emReading(latest))
	var errs []error
	if full {
		hist, err := p.c.History(ctx, zone)
		if err != nil {
			errs = append(errs, fmt.Errorf("history (retried next refresh): %w", err))
		} else {
			b.full = true
			for _, pt := range hist {
				b.hours = append(b.hours, emReading(pt))
			}
		}
	}
	if p.forecast {
		fc, _, err := p.c.Forecast(ctx, zone)
		if err != nil {
			errs = append(errs, fmt.Errorf("forecast: %w", err))
		} else {
			b.forecast = make([]Reading, 0, len(fc))
			for _, pt := range fc {
				r := emReading(pt)
				r.Forecast = true
				b.forecast = append(b.forecast, r)
			}
		}
	}
	return b, errors.Join(errs...)
}

// wtProvider reads WattTime's co2_moer forecast: each hour's value is the
// mean of the forecast's points in that hour; the hour of generated_at is
// WattTime's real-time value, later hours are marked Forecast.
type wtProvider struct {
	c       *WattTime
	regions map[string]string // zone → WattTime region
}

func (p *wtProvider) describe() string {
	return fmt.Sprintf("WattTime API v3 at %s (live co2_moer forecast: marginal emissions, lbs/MWh × %g = gCO2/kWh, not comparable with average intensities)", p.c.BaseURL(), LbsPerMWhInGPerKWh)
}

func (p *wtProvider) fetch(ctx context.Context, zone string, _ bool) (batch, error) {
	f, err := p.c.Forecast(ctx, p.regions[zone])
	if err != nil {
		return batch{}, err
	}
	return batch{ok: true, full: true, hours: hourlyMeans(f)}, nil
}

// hourlyMeans averages a forecast's points per UTC hour.
func hourlyMeans(f MOERForecast) []Reading {
	genH := f.GeneratedAt.Truncate(time.Hour)
	var out []Reading
	var sum float64
	var n int
	flush := func() {
		if n > 0 {
			r := &out[len(out)-1]
			r.Value = sum / float64(n)
		}
	}
	for _, pt := range f.Points {
		h := pt.Time.Truncate(time.Hour)
		if len(out) == 0 || !out[len(out)-1].Hour.Equal(h) {
			flush()
			out = append(out, Reading{Hour: h, DataTime: f.GeneratedAt, Estimated: true, Forecast: h.After(genH)})
			sum, n = 0, 0
		}
		sum += pt.Value
		n++
	}
	flush()
	return out
}
