package carbonapi

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"time"

	"github.com/p4ctl/p4ctl/pkg/regions"
)

// DefaultElectricityMapsURL is the Electricity Maps API base URL.
const DefaultElectricityMapsURL = "https://api.electricitymap.org"

// Electricity Maps emission factor types (query parameter and response
// field emissionFactorType).
const (
	Lifecycle = "lifecycle" // life-cycle emissions (LCA), the API's default
	Direct    = "direct"    // direct (operational) emissions only
)

// ElectricityMapsConfig configures an Electricity Maps client.
type ElectricityMapsConfig struct {
	// BaseURL defaults to DefaultElectricityMapsURL.
	BaseURL string
	// Token is sent in the auth-token header.
	Token Secret
	// EmissionFactor is Lifecycle (default) or Direct; it is requested
	// with the emissionFactorType parameter and checked in every answer.
	EmissionFactor string
}

// ElectricityMaps is a client of the Electricity Maps API v3
// carbon-intensity endpoints. It is safe for concurrent use.
type ElectricityMaps struct {
	d      *doer
	token  Secret
	factor string
}

// NewElectricityMaps returns a client; it fails on a bad base URL, an
// empty token or an unknown emission factor.
func NewElectricityMaps(c ElectricityMapsConfig, o Options) (*ElectricityMaps, error) {
	if c.BaseURL == "" {
		c.BaseURL = DefaultElectricityMapsURL
	}
	base, err := parseBase(c.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("electricity maps: %w", err)
	}
	if c.Token.Empty() {
		return nil, fmt.Errorf("electricity maps: empty token")
	}
	switch c.EmissionFactor {
	case "":
		c.EmissionFactor = Lifecycle
	case Lifecycle, Direct:
	default:
		return nil, fmt.Errorf("electricity maps: emission factor %q: want %s or %s", c.EmissionFactor, Lifecycle, Direct)
	}
	red := &redactor{}
	red.add(c.Token.v())
	return &ElectricityMaps{d: newDoer("Electricity Maps", base, o.withDefaults(), red), token: c.Token, factor: c.EmissionFactor}, nil
}

// EmissionFactor is Lifecycle or Direct.
func (c *ElectricityMaps) EmissionFactor() string { return c.factor }

// BaseURL is the API base URL in use.
func (c *ElectricityMaps) BaseURL() string { return c.d.base }

// Point is one value of a carbon-intensity series in gCO2eq/kWh.
type Point struct {
	// Time is the start of the period the value describes (UTC).
	Time time.Time `json:"time"`
	// Value is the intensity in gCO2eq/kWh.
	Value float64 `json:"gco2_per_kwh"`
	// UpdatedAt is when the provider last computed the value (zero if not
	// given).
	UpdatedAt time.Time `json:"updated_at,omitzero"`
	// Estimated marks a value the provider estimated rather than measured.
	Estimated bool `json:"estimated,omitempty"`
}

// Latest is GET /v3/carbon-intensity/latest?zone=zone: the most recent
// value (usually the current hour, often estimated).
func (c *ElectricityMaps) Latest(ctx context.Context, zone string) (Point, error) {
	b, err := c.get(ctx, "/v3/carbon-intensity/latest", zone)
	if err != nil {
		return Point{}, err
	}
	p, err := parseEMLatest(b, zone, c.factor)
	return p, c.d.red.scrub(err)
}

// History is GET /v3/carbon-intensity/history?zone=zone: the last 24
// hours, oldest first. Hours the API has no value for (null) are left out.
func (c *ElectricityMaps) History(ctx context.Context, zone string) ([]Point, error) {
	b, err := c.get(ctx, "/v3/carbon-intensity/history", zone)
	if err != nil {
		return nil, err
	}
	ps, err := parseEMHistory(b, zone, c.factor)
	return ps, c.d.red.scrub(err)
}

// Forecast is GET /v3/carbon-intensity/forecast?zone=zone: the forecast
// hours, oldest first, and when the forecast was made (zero if not given).
func (c *ElectricityMaps) Forecast(ctx context.Context, zone string) ([]Point, time.Time, error) {
	b, err := c.get(ctx, "/v3/carbon-intensity/forecast", zone)
	if err != nil {
		return nil, time.Time{}, err
	}
	ps, upd, err := parseEMForecast(b, zone, c.factor)
	return ps, upd, c.d.red.scrub(err)
}

func (c *ElectricityMaps) get(ctx context.Context, path, zone string) ([]byte, error) {
	q := url.Values{"zone": {zone}, "emissionFactorType": {c.factor}}
	return c.d.get(ctx, path, q, func(h http.Header) { h.Set("auth-token", c.token.v()) })
}

// emPoint is one carbon-intensity object of the API.
type emPoint struct {
	Zone               string   `json:"zone"`
	CarbonIntensity    *float64 `json:"carbonIntensity"`
	Datetime           string   `json:"datetime"`
	UpdatedAt          string   `json:"updatedAt"`
	CreatedAt          string   `json:"createdAt"`
	EmissionFactorType string   `json:"emissionFactorType"`
	IsEstimated        *bool    `json:"isEstimated"`
	EstimationMethod   *string  `json:"estimationMethod"`
}

type emHistory struct {
	Zone    string    `json:"zone"`
	History []emPoint `json:"history"`
}

type emForecast struct {
	Zone      string    `json:"zone"`
	Forecast  []emPoint `json:"forecast"`
	UpdatedAt string    `json:"updatedAt"`
}

func badEM(zone, endpoint, format string, a ...any) error {
	return fmt.Errorf("electricity maps %s zone %s: %w: %s", endpoint, zone, ErrBadResponse, fmt.Sprintf(format, a...))
}

// parseEMLatest parses a /latest answer for zone.
func parseEMLatest(b []byte, zone, factor string) (Point, error) {
	var p emPoint
	if err := json.Unmarshal(b, &p); err != nil {
		return Point{}, badEM(zone, "latest", "%v", err)
	}
	if p.Zone != zone {
		return Point{}, badEM(zone, "latest", "answer is for zone %q", p.Zone)
	}
	if p.CarbonIntensity == nil {
		return Point{}, badEM(zone, "latest", "no carbonIntensity")
	}
	return p.point(zone, "latest", factor)
}

// parseEMHistory parses a /history answer for zone.
func parseEMHistory(b []byte, zone, factor string) ([]Point, error) {
	var h emHistory
	if err := json.Unmarshal(b, &h); err != nil {
		return nil, badEM(zone, "history", "%v", err)
	}
	if h.Zone != zone {
		return nil, badEM(zone, "history", "answer is for zone %q", h.Zone)
	}
	if h.History == nil {
		return nil, badEM(zone, "history", "no history array")
	}
	return points(h.History, zone, "history", factor)
}

// parseEMForecast parses a /forecast answer for zone.
func parseEMForecast(b []byte, zone, factor string) ([]Point, time.Time, error) {
	var f emForecast
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, time.Time{}, badEM(zone, "forecast", "%v", err)
	}
	if f.Zone != zone {
		return nil, time.Time{}, badEM(zone, "forecast", "answer is for zone %q", f.Zone)
	}
	if f.Forecast == nil {
		return nil, time.Time{}, badEM(zone, "forecast", "no forecast array")
	}
	var upd time.Time
	if f.UpdatedAt != "" {
		t, err := time.Parse(time.RFC3339, f.UpdatedAt)
		if err != nil {
			return nil, time.Time{}, badEM(zone, "forecast", "updatedAt %q is not RFC 3339", f.UpdatedAt)
		}
		upd = t.UTC()
	}
	ps, err := points(f.Forecast, zone, "forecast", factor)
	return ps, upd, err
}

// points converts a series, skipping null values, and checks it is in
// time order without duplicates.
func points(in []emPoint, zone, endpoint, factor string) ([]Point, error) {
	out := make([]Point, 0, len(in))
	for i, p := range in {
		if p.Zone != "" && p.Zone != zone {
			return nil, badEM(zone, endpoint, "item %d is for zone %q", i, p.Zone)
		}
		if p.CarbonIntensity == nil {
			continue // the API has no value for this hour
		}
		pt, err := p.point(zone, endpoint, factor)
		if err != nil {
			return nil, fmt.Errorf("item %d: %w", i, err)
		}
		if n := len(out); n > 0 && !pt.Time.After(out[n-1].Time) {
			return nil, badEM(zone, endpoint, "item %d (%s) is not after the previous one", i, pt.Time.Format(time.RFC3339))
		}
		out = append(out, pt)
	}
	return out, nil
}

func (p emPoint) point(zone, endpoint, factor string) (Point, error) {
	v := *p.CarbonIntensity
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > regions.MaxIntensity {
		return Point{}, badEM(zone, endpoint, "carbonIntensity %v outside [0, %d] gCO2eq/kWh", v, regions.MaxIntensity)
	}
	if p.EmissionFactorType != "" && p.EmissionFactorType != factor {
		return Point{}, badEM(zone, endpoint, "emissionFactorType %q, asked for %q", p.EmissionFactorType, factor)
	}
	t, err := time.Parse(time.RFC3339, p.Datetime)
	if err != nil {
		return Point{}, badEM(zone, endpoint, "datetime %q is not RFC 3339", p.Datetime)
	}
	pt := Point{Time: t.UTC(), Value: v, Estimated: p.IsEstimated != nil && *p.IsEstimated}
	if p.UpdatedAt != "" {
		u, err := time.Parse(time.RFC3339, p.UpdatedAt)
		if err != nil {
			return Point{}, badEM(zone, endpoint, "updatedAt %q is not RFC 3339", p.UpdatedAt)
		}
		pt.UpdatedAt = u.UTC()
	}
	return pt, nil
}
