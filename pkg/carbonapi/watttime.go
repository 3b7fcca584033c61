package carbonapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"sort"
	"sync"
	"time"

	"github.com/p4ctl/p4ctl/pkg/regions"
)

// DefaultWattTimeURL is the WattTime API base URL.
const DefaultWattTimeURL = "https://api.watttime.org"

// LbsPerMWhInGPerKWh converts WattTime's MOER unit: 1 lb CO2/MWh =
// 453.592 g / 1000 kWh = 0.453592 gCO2/kWh.
const LbsPerMWhInGPerKWh = 0.453592

// DefaultWattTimeTokenTTL is how long a WattTime login token is used
// before logging in again (WattTime tokens last 30 minutes; a 401 also
// triggers a new login).
const DefaultWattTimeTokenTTL = 29 * time.Minute

// WattTime signal and unit names.
const (
	wtSignal     = "co2_moer"
	wtUnitsMOER  = "lbs_co2_per_mwh"
	wtUnitsIndex = "percentile"
)

// WattTimeConfig configures a WattTime client.
type WattTimeConfig struct {
	// BaseURL defaults to DefaultWattTimeURL.
	BaseURL string
	// Username and Password are sent with HTTP Basic authentication to
	// GET /login, which returns the bearer token of the data requests.
	Username string
	Password Secret
	// TokenTTL is how long a token is reused (default
	// DefaultWattTimeTokenTTL).
	TokenTTL time.Duration
}

// WattTime is a client of the WattTime API v3 (login, signal-index,
// forecast for signal_type=co2_moer). It is safe for concurrent use.
type WattTime struct {
	d    *doer
	user string
	pass Secret
	ttl  time.Duration

	mu      sync.Mutex // serialises logins
	token   Secret
	expires time.Time
}

// NewWattTime returns a client; it fails on a bad base URL or missing
// credentials. It does not log in until the first request.
func NewWattTime(c WattTimeConfig, o Options) (*WattTime, error) {
	if c.BaseURL == "" {
		c.BaseURL = DefaultWattTimeURL
	}
	base, err := parseBase(c.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("watttime: %w", err)
	}
	if c.Username == "" || c.Password.Empty() {
		return nil, errors.New("watttime: username and password required")
	}
	if c.TokenTTL <= 0 {
		c.TokenTTL = DefaultWattTimeTokenTTL
	}
	red := &redactor{}
	red.addBasic(c.Username, c.Password.v())
	return &WattTime{d: newDoer("WattTime", base, o.withDefaults(), red), user: c.Username, pass: c.Password, ttl: c.TokenTTL}, nil
}

// BaseURL is the API base URL in use.
func (c *WattTime) BaseURL() string { return c.d.base }

// Index is a WattTime signal-index value: the percentile (0–100) of the
// region's current MOER within that region's own recent history. It is
// not an intensity and does not compare regions.
type Index struct {
	Region     string    `json:"region"`
	Time       time.Time `json:"time"`
	Percentile float64   `json:"percentile"`
}

// MOERForecast is a WattTime co2_moer forecast converted to gCO2/kWh.
type MOERForecast struct {
	Region string
	// GeneratedAt is when WattTime made the forecast; its first point is
	// WattTime's real-time value.
	GeneratedAt time.Time
	// Period is the spacing of the points (typically 5 minutes).
	Period time.Duration
	// Points are marginal emission rates in gCO2/kWh (converted from
	// lbs/MWh), oldest first.
	Points []Point
}

// login gets a token unless a valid one other than stale is held. stale
// is the token a request was rejected with ("" for none).
func (c *WattTime) login(ctx context.Context, stale Secret) (Secret, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.d.o.Now()
	if !c.token.Empty() && c.token != stale && now.Before(c.expires) {
		return c.token, nil
	}
	c.token = Secret{}
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(c.user+":"+c.pass.v()))
	b, err := c.d.get(ctx, "/login", nil, func(h http.Header) { h.Set("Authorization", basic) })
	if err != nil {
		var he *HTTPError
		if errors.As(err, &he) && (he.Status == http.StatusUnauthorized || he.Status == http.StatusForbidden) {
			return Secret{}, fmt.Errorf("watttime login: %w: %w", ErrAuth, err)
		}
		return Secret{}, fmt.Errorf("watttime login: %w", err)
	}
	tok, err := parseWTLogin(b)
	if err != nil {
		return Secret{}, err
	}
	c.d.red.setSession(tok.v())
	c.token, c.expires = tok, now.Add(c.ttl)
	return tok, nil
}

// get sends an authenticated request, logging in when needed and once
// more after a 401.
func (c *WattTime) get(ctx context.Context, path string, q url.Values) ([]byte, error) {
	tok, err := c.login(ctx, Secret{})
	if err != nil {
		return nil, err
	}
	for try := 0; ; try++ {
		b, err := c.d.get(ctx, path, q, func(h http.Header) { h.Set("Authorization", "Bearer "+tok.v()) })
		var he *HTTPError
		if try == 0 && errors.As(err, &he) && he.Status == http.StatusUnauthorized {
			c.d.o.Logger.Info("watttime token rejected; logging in again", "request", he.Request)
			if tok, err = c.login(ctx, tok); err != nil {
				return nil, err
			}
			continue
		}
		return b, err
	}
}

// SignalIndex is GET /v3/signal-index?region=region&signal_type=co2_moer.
func (c *WattTime) SignalIndex(ctx context.Context, region string) (Index, error) {
	b, err := c.get(ctx, "/v3/signal-index", url.Values{"region": {region}, "signal_type": {wtSignal}})
	if err != nil {
		return Index{}, err
	}
	idx, err := parseWTIndex(b, region)
	return idx, c.d.red.scrub(err)
}

// Forecast is GET /v3/forecast?region=region&signal_type=co2_moer (a
// subscriber endpoint), converted to gCO2/kWh.
func (c *WattTime) Forecast(ctx context.Context, region string) (MOERForecast, error) {
	b, err := c.get(ctx, "/v3/forecast", url.Values{"region": {region}, "signal_type": {wtSignal}})
	if err != nil {
		return MOERForecast{}, err
	}
	f, err := parseWTForecast(b, region)
	return f, c.d.red.scrub(err)
}

type wtLogin struct {
	Token string `json:"token"`
}

type wtResponse struct {
	Data []struct {
		PointTime string   `json:"point_time"`
		Value     *float64 `json:"value"`
	} `json:"data"`
	Meta *struct {
		Region                 string `json:"region"`
		SignalType             string `json:"signal_type"`
		Units                  string `json:"units"`
		GeneratedAt            string `json:"generated_at"`
		DataPointPeriodSeconds int    `json:"data_point_period_seconds"`
	} `json:"meta"`
}

func badWT(what, format string, a ...any) error {
	return fmt.Errorf("watttime %s: %w: %s", what, ErrBadResponse, fmt.Sprintf(format, a...))
}

func parseWTLogin(b []byte) (Secret, error) {
	var l wtLogin
	if err := json.Unmarshal(b, &l); err != nil {
		return Secret{}, badWT("login", "not a JSON object with a token") // never quote: it may hold the token
	}
	if l.Token == "" {
		return Secret{}, badWT("login", "no token")
	}
	return Secret{&l.Token}, nil
}

// parseWT checks the envelope shared by signal-index and forecast.
func parseWT(b []byte, region, what, units string) (*wtResponse, error) {
	var r wtResponse
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, badWT(what, "region %s: %v", region, err)
	}
	if r.Meta == nil {
		return nil, badWT(what, "region %s: no meta", region)
	}
	if r.Meta.Region != region {
		return nil, badWT(what, "asked for region %s, answer is for %q", region, r.Meta.Region)
	}
	if r.Meta.SignalType != "" && r.Meta.SignalType != wtSignal {
		return nil, badWT(what, "region %s: signal_type %q, asked for %s", region, r.Meta.SignalType, wtSignal)
	}
	if r.Meta.Units != units {
		return nil, badWT(what, "region %s: units %q, want %q", region, r.Meta.Units, units)
	}
	if len(r.Data) == 0 {
		return nil, badWT(what, "region %s: no data points", region)
	}
	return &r, nil
}

func parseWTTime(what, region, s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, badWT(what, "region %s: time %q is not RFC 3339", region, s)
	}
	return t.UTC(), nil
}

// parseWTIndex parses a signal-index answer: its first (current) point.
func parseWTIndex(b []byte, region string) (Index, error) {
	r, err := parseWT(b, region, "signal-index", wtUnitsIndex)
	if err != nil {
		return Index{}, err
	}
	p := r.Data[0]
	t, err := parseWTTime("signal-index", region, p.PointTime)
	if err != nil {
		return Index{}, err
	}
	if p.Value == nil {
		return Index{}, badWT("signal-index", "region %s: no value", region)
	}
	if v := *p.Value; math.IsNaN(v) || v < 0 || v > 100 {
		return Index{}, badWT("signal-index", "region %s: percentile %v outside [0, 100]", region, v)
	}
	return Index{Region: region, Time: t, Percentile: *p.Value}, nil
}

// parseWTForecast parses a forecast answer and converts lbs/MWh to g/kWh.
func parseWTForecast(b []byte, region string) (MOERForecast, error) {
	r, err := parseWT(b, region, "forecast", wtUnitsMOER)
	if err != nil {
		return MOERForecast{}, err
	}
	f := MOERForecast{Region: region, Period: time.Duration(r.Meta.DataPointPeriodSeconds) * time.Second}
	for i, p := range r.Data {
		t, err := parseWTTime("forecast", region, p.PointTime)
		if err != nil {
			return MOERForecast{}, err
		}
		if p.Value == nil {
			return MOERForecast{}, badWT("forecast", "region %s: point %d has no value", region, i)
		}
		g := *p.Value * LbsPerMWhInGPerKWh
		if math.IsNaN(g) || math.IsInf(g, 0) || g < 0 || g > regions.MaxIntensity {
			return MOERForecast{}, badWT("forecast", "region %s: MOER %v lbs/MWh = %.1f g/kWh outside [0, %d]", region, *p.Value, g, regions.MaxIntensity)
		}
		if n := len(f.Points); n > 0 && !t.After(f.Points[n-1].Time) {
			return MOERForecast{}, badWT("forecast", "region %s: point %d (%s) is not after the previous one", region, i, p.PointTime)
		}
		f.Points = append(f.Points, Point{Time: t, Value: g, Estimated: true})
	}
	if r.Meta.GeneratedAt != "" {
		if f.GeneratedAt, err = parseWTTime("forecast", region, r.Meta.GeneratedAt); err != nil {
			return MOERForecast{}, err
		}
	} else {
		f.GeneratedAt = f.Points[0].Time // undocumented absence: the first point is "now"
	}
	return f, nil
}

// WattTimeRegion is the catalog zone → WattTime region mapping for one
// zone, with how well the areas match.
type WattTimeRegion struct {
	Zone   string `json:"zone"`   // Electricity Maps zone (pkg/regions catalog)
	Region string `json:"region"` // WattTime region abbreviation
	Match  string `json:"match"`  // "same area", "coarser: …" or "narrower: …"
}

// wattTimeRegions maps the 12 catalog zones to WattTime region
// abbreviations. The names are those WattTime's /v3/my-access and
// /v3/region-from-loc return as published in public region lists; they were
// not checked against a live account (the tests never touch the network).
// Availability of co2_moer forecasts outside CAISO_NORTH depends on the
// WattTime plan. carbon.watttime_regions overrides any entry.
func wattTimeRegions() []WattTimeRegion {
	return []WattTimeRegion{
		{"IN-WE", "IND", "coarser: all of India, not the Western grid"},
		{"SG", "SGP", "same area"},
		{"AU-NSW", "NEM_NSW", "same area"},
		{"IE", "IE", "same area"},
		{"US-MIDA-PJM", "PJM_DC", "narrower: the PJM DC/northern Virginia area, not all of PJM"},
		{"SE-SE3", "SE", "coarser: all of Sweden, not bidding zone SE3"},
		{"KR", "KOR", "same area"},
		{"ZA", "ZAF", "same area"},
		{"DE", "DE", "same area"},
		{"BR-CS", "BRA", "coarser: all of Brazil, not the Central-South subsystem"},
		{"JP-TK", "JP_TK", "same area"},
		{"US-NW-BPAT", "BPA", "same area"},
	}
}

// WattTimeRegions returns the built-in zone → WattTime region mapping,
// sorted by zone. Every catalog zone has an entry; see Match for how
// closely the areas agree.
func WattTimeRegions() []WattTimeRegion {
	m := wattTimeRegions()
	sort.Slice(m, func(i, j int) bool { return m[i].Zone < m[j].Zone })
	return m
}

// WattTimeRegionOf returns the WattTime region of a zone: overrides first,
// then the built-in table.
func WattTimeRegionOf(zone string, overrides map[string]string) (string, bool) {
	if r, ok := overrides[zone]; ok && r != "" {
		return r, true
	}
	for _, m := range wattTimeRegions() {
		if m.Zone == zone {
			return m.Region, true
		}
	}
	return "", false
}
