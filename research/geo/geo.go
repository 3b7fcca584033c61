// Package geo derives network latency from geography: great-circle
// distance between two points on the Earth, and a linear model of a
// request's P95 round-trip time over that distance — propagation at the
// speed of light in fibre, times a path-and-protocol stretch, plus an
// access term — fitted by least squares to measured profiles.
//
// It is a leaf: it knows coordinates and milliseconds, not regions or
// sites (research/configgen applies it to the catalog).
package geo

import (
	"errors"
	"fmt"
	"math"
)

// EarthRadiusKm is the Earth's mean radius (IUGG), the sphere the
// great-circle distance is measured on (error ≤ 0.5 % against the
// ellipsoid).
const EarthRadiusKm = 6371.0088

// FibreKmPerMs is how far light travels in a millisecond in single-mode
// fibre: c / 1.4682 (the group index of ITU-T G.652 fibre at 1550 nm),
// about two thirds of its speed in vacuum.
const FibreKmPerMs = 299792.458 / 1.4682 / 1000

// Point is a place in degrees (WGS 84).
type Point struct {
	Lat, Lon float64
}

// DistanceKm is the great-circle (haversine) distance between a and b.
func DistanceKm(a, b Point) float64 {
	rad := math.Pi / 180
	dLat := (b.Lat - a.Lat) * rad
	dLon := (b.Lon - a.Lon) * rad
	h := math.Sin(dLat/2)*math.Sin(dLat/2) + math.Cos(a.Lat*rad)*math.Cos(b.Lat*rad)*math.Sin(dLon/2)*math.Sin(dLon/2)
	return 2 * EarthRadiusKm * math.Asin(math.Min(1, math.Sqrt(h)))
}

// FibreRTTMs is the round trip over distance d at the speed of light in
// fibre along the great circle: the physical lower bound.
func FibreRTTMs(d float64) float64 { return 2 * d / FibreKmPerMs }

// Model is P95(d) = AccessMs + Stretch · FibreRTTMs(d): Stretch is how
// many great-circle fibre round trips a request's P95 costs (route
// inflation × round trips per request: connection set-up, TLS, the
// request), AccessMs what it costs at distance 0 (last mile, the
// function's own time, queueing).
type Model struct {
	AccessMs float64 `json:"access_ms"`
	Stretch  float64 `json:"stretch"`
	// Fit describes how the parameters were obtained and how well they fit.
	Fit string `json:"fit,omitempty"`
	// RMSMs is the root-mean-square residual of the fit, ms.
	RMSMs float64 `json:"rms_ms,omitempty"`
}

// P95 is the model's P95 round trip over distance d (km).
func (m Model) P95(d float64) float64 { return m.AccessMs + m.Stretch*FibreRTTMs(d) }

// Sample is one measured P95 at a distance.
type Sample struct {
	DistanceKm float64
	P95Ms      float64
}

// Fit fits a Model to samples by ordinary least squares on x =
// FibreRTTMs(distance). It needs two samples at different distances and
// refuses a fit whose access term or stretch is not positive.
func Fit(samples []Sample) (Model, error) {
	if len(samples) < 2 {
		return Model{}, errors.New("geo: fit needs at least two samples")
	}
	var sx, sy, sxx, sxy float64
	n := float64(len(samples))
	for _, s := range samples {
		x := FibreRTTMs(s.DistanceKm)
		sx += x
		sy += s.P95Ms
		sxx += x * x
		sxy += x * s.P95Ms
	}
	den := n*sxx - sx*sx
	if den == 0 {
		return Model{}, errors.New("geo: fit needs samples at two distances at least")
	}
	b := (n*sxy - sx*sy) / den
	a := (sy - b*sx) / n
	if !(a > 0 && b > 0) {
		return Model{}, fmt.Errorf("geo: fit gives access %.1f ms and stretch %.2f: not a latency model", a, b)
	}
	m := Model{AccessMs: a, Stretch: b}
	var ss float64
	for _, s := range samples {
		r := s.P95Ms - m.P95(s.DistanceKm)
		ss += r * r
	}
	m.RMSMs = math.Sqrt(ss / n)
	m.Fit = fmt.Sprintf("least squares over %d samples", len(samples))
	return m, nil
}
