package regions

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"time"
)

// ZoneParams are the parameters of the synthetic carbon model of one zone.
// The model of hour t (UTC) on day d of month m, season s, hour-of-day h is
//
//	x(t) = MonthlyMean[m] · (1 + y_d) · Diurnal[s][h] · (1 + e_t)
//
// clamped to [Min, Max], where y_d is an AR(1) day-to-day deviation
// (std DailySigma, lag-1 correlation DailyPhi) and e_t an AR(1) hour-to-hour
// residual (std HourlySigma, lag-1 correlation HourlyPhi). Diurnal has mean 1
// over the 24 hours of each season, so the monthly means are preserved.
//
// The committed values (synthetic_params.go) are derived from measurements
// by DeriveSyntheticParams; see that function for what each figure is.
type ZoneParams struct {
	Zone        string
	MonthlyMean [12]float64    // gCO2eq/kWh, January..December
	Diurnal     [4][24]float64 // seasons DJF, MAM, JJA, SON × UTC hour; relative, mean 1
	DailySigma  float64        // std of the daily mean relative to its month's mean
	DailyPhi    float64        // lag-1 autocorrelation of that deviation, day to day
	HourlySigma float64        // std of the hourly residual after month, day and diurnal shape
	HourlyPhi   float64        // lag-1 autocorrelation of the hourly residual
	Min, Max    float64        // observed extremes of the year, gCO2eq/kWh
	YearlyEM    float64        // Electricity Maps yearly LCA average of the same year (co2.js), a public cross-check
}

// season maps a month (1..12) to 0 DJF, 1 MAM, 2 JJA, 3 SON.
func season(m time.Month) int { return (int(m) % 12) / 3 }

// DeriveSyntheticParams measures ZoneParams from a full calendar year of
// hourly data (e.g. shared/data/carbon, Electricity Maps 2022 LCA):
//
//   - MonthlyMean[m]: mean of the month's hours.
//   - Diurnal[s][h]: mean over the season's days of value(h)/daily mean,
//     renormalized to mean 1.
//   - DailySigma, DailyPhi: std and lag-1 autocorrelation over the year's days
//     of (daily mean / month mean − 1).
//   - HourlySigma, HourlyPhi: std and lag-1 autocorrelation of
//     value / (daily mean · Diurnal) − 1.
//   - Min, Max: the year's extremes.
//
// yearly supplies YearlyEM per zone (may be nil). Results are rounded as the
// committed table is (4 significant digits), so a re-derivation compares
// exactly.
func DeriveSyntheticParams(src CarbonSource, year int, yearly map[string]float64) ([]ZoneParams, error) {
	p := Period{From: time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC), To: time.Date(year+1, 1, 1, 0, 0, 0, 0, time.UTC)}
	if !p.Within(src.Period()) {
		return nil, fmt.Errorf("derive synthetic params: %s does not cover %d (%s)", src.Describe(), year, src.Period())
	}
	var out []ZoneParams
	for _, zone := range src.Zones() {
		n := p.Hours()
		x := make([]float64, n)
		for h := range x {
			v, err := src.Intensity(zone, p.From.Add(time.Duration(h)*time.Hour))
			if err != nil {
				return nil, fmt.Errorf("derive synthetic params: %w", err)
			}
			x[h] = v
		}
		zp := ZoneParams{Zone: zone, Min: math.Inf(1), Max: math.Inf(-1), YearlyEM: yearly[zone]}
		var msum [12]float64
		var mcnt [12]int
		for h, v := range x {
			m := p.From.Add(time.Duration(h) * time.Hour).Month()
			msum[m-1] += v
			mcnt[m-1]++
			zp.Min, zp.Max = math.Min(zp.Min, v), math.Max(zp.Max, v)
		}
		for m := range msum {
			zp.MonthlyMean[m] = msum[m] / float64(mcnt[m])
		}
		days := n / 24
		dmean := make([]float64, days)
		dev := make([]float64, days)
		var shape [4][24]float64
		var scnt [4]int
		for d := range days {
			var s float64
			for h := range 24 {
				s += x[d*24+h]
			}
			dmean[d] = s / 24
			t := p.From.Add(time.Duration(d*24) * time.Hour)
			dev[d] = dmean[d]/zp.MonthlyMean[t.Month()-1] - 1
			se := season(t.Month())
			scnt[se]++
			for h := range 24 {
				shape[se][h] += x[d*24+h] / dmean[d]
			}
		}
		for se := range shape {
			var s float64
			for h := range 24 {
				shape[se][h] /= float64(scnt[se])
				s += shape[se][h]
			}
			for h := range 24 {
				zp.Diurnal[se][h] = round4(shape[se][h] * 24 / s)
			}
		}
		zp.DailySigma, zp.DailyPhi = stdAndLag1(dev)
		res := make([]float64, days*24)
		for d := range days {
			se := season(p.From.Add(time.Duration(d*24) * time.Hour).Month())
			for h := range 24 {
				res[d*24+h] = x[d*24+h]/(dmean[d]*zp.Diurnal[se][h]) - 1
			}
		}
		zp.HourlySigma, zp.HourlyPhi = stdAndLag1(res)
		for m := range zp.MonthlyMean {
			zp.MonthlyMean[m] = round4(zp.MonthlyMean[m])
		}
		zp.DailySigma, zp.DailyPhi = round4(zp.DailySigma), round4(zp.DailyPhi)
		zp.HourlySigma, zp.HourlyPhi = round4(zp.HourlySigma), round4(zp.HourlyPhi)
		zp.Min, zp.Max = round4(zp.Min), round4(zp.Max)
		out = append(out, zp)
	}
	return out, nil
}

// round4 rounds to 4 significant digits.
func round4(v float64) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	e := math.Pow(10, 3-math.Floor(math.Log10(math.Abs(v))))
	return math.Round(v*e) / e
}

// stdAndLag1 returns the population std and lag-1 autocorrelation of xs.
func stdAndLag1(xs []float64) (std, phi float64) {
	var m float64
	for _, v := range xs {
		m += v
	}
	m /= float64(len(xs))
	var ss, cross float64
	for i, v := range xs {
		ss += (v - m) * (v - m)
		if i > 0 {
			cross += (v - m) * (xs[i-1] - m)
		}
	}
	if ss == 0 {
		return 0, 0
	}
	return math.Sqrt(ss / float64(len(xs))), cross / ss
}

// Synthetic is the offline default CarbonSource: per-zone synthetic hourly
// series from ZoneParams, deterministic for a seed. It is a model, not
// measured data, and says so in Describe.
type Synthetic struct {
	seed   uint64
	period Period
	zones  map[string][]float64 // hourly values from period.From
	basis  string
}

// DefaultSyntheticPeriod is the period the default synthetic model covers:
// the calendar year its parameters were measured on (2022).
func DefaultSyntheticPeriod() Period {
	return Period{From: time.Date(SyntheticParamsYear, 1, 1, 0, 0, 0, 0, time.UTC), To: time.Date(SyntheticParamsYear+1, 1, 1, 0, 0, 0, 0, time.UTC)}
}

// NewSynthetic builds the default synthetic source (committed parameters,
// SyntheticParams) for seed over p. A value depends only on (seed, zone,
// hour): every zone's noise is generated from January 1 of the hour's year,
// so a sub-period sees the same values as the whole year.
//
// Zones without a measured trace (catalog indices ≥ MeasuredRegions) come
// from the proxy model (ProxyParams); their values are independent of the
// measured zones' (a zone's noise depends on its own name), so adding them
// changed no measured zone's series. DescribeZones says which zones are
// proxies.
func NewSynthetic(seed uint64, p Period) (*Synthetic, error) {
	proxy, err := ProxyParams()
	if err != nil {
		return nil, fmt.Errorf("synthetic carbon: %w", err)
	}
	return NewSyntheticFrom(append(SyntheticParams(), proxy...), seed, p, SyntheticBasis)
}

// NewSyntheticFrom builds a synthetic source from explicit parameters;
// basis says where the parameters come from (it appears in Describe).
func NewSyntheticFrom(params []ZoneParams, seed uint64, p Period, basis string) (*Synthetic, error) {
	if p.Hours() == 0 {
		return nil, fmt.Errorf("synthetic carbon: empty period %s", p)
	}
	s := &Synthetic{seed: seed, period: p, zones: map[string][]float64{}, basis: basis}
	for _, zp := range params {
		if _, dup := s.zones[zp.Zone]; dup {
			return nil, fmt.Errorf("synthetic carbon: zone %s twice", zp.Zone)
		}
		s.zones[zp.Zone] = generate(zp, seed, p)
	}
	return s, nil
}

func generate(zp ZoneParams, seed uint64, p Period) []float64 {
	out := make([]float64, 0, p.Hours())
	h := fnv.New64a()
	h.Write([]byte(zp.Zone))
	zoneKey := h.Sum64()
	for y := p.From.Year(); y <= p.To.Add(-time.Hour).Year(); y++ {
		rng := rand.New(rand.NewPCG(seed, zoneKey^uint64(y)))
		start := time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC)
		end := start.AddDate(1, 0, 0)
		dScale := zp.DailySigma * math.Sqrt(1-zp.DailyPhi*zp.DailyPhi)
		hScale := zp.HourlySigma * math.Sqrt(1-zp.HourlyPhi*zp.HourlyPhi)
		yd := zp.DailySigma * rng.NormFloat64()
		et := zp.HourlySigma * rng.NormFloat64()
		for t := start; t.Before(end); t = t.Add(time.Hour) {
			if t.Hour() == 0 && !t.Equal(start) {
				yd = zp.DailyPhi*yd + dScale*rng.NormFloat64()
			}
			if !t.Equal(start) {
				et = zp.HourlyPhi*et + hScale*rng.NormFloat64()
			}
			if t.Before(p.From) || !t.Before(p.To) {
				continue
			}
			v := zp.MonthlyMean[t.Month()-1] * (1 + yd) * zp.Diurnal[season(t.Month())][t.Hour()] * (1 + et)
			out = append(out, math.Min(zp.Max, math.Max(zp.Min, v)))
		}
	}
	return out
}

// Intensity implements CarbonSource.
func (s *Synthetic) Intensity(zone string, t time.Time) (float64, error) {
	v, ok := s.zones[zone]
	if !ok {
		return 0, fmt.Errorf("synthetic carbon: no model for zone %s", zone)
	}
	if !s.period.Contains(t) {
		return 0, fmt.Errorf("synthetic carbon: %s outside %s", t.UTC().Format(time.RFC3339), s.period)
	}
	return v[int(t.Sub(s.period.From)/time.Hour)], nil
}

// Period implements CarbonSource.
func (s *Synthetic) Period() Period { return s.period }

// Zones implements CarbonSource.
func (s *Synthetic) Zones() []string {
	return slices.Sorted(maps.Keys(s.zones))
}

// Seed is the model's seed.
func (s *Synthetic) Seed() uint64 { return s.seed }

// Describe implements CarbonSource.
func (s *Synthetic) Describe() string {
	return fmt.Sprintf("synthetic model (seed %d), not measured data; %s", s.seed, s.basis)
}

// ReadYearlyAverages reads a `zone,year,gco2_per_kwh_lca_yearly` table (the
// shared data's em_yearly_averages.csv: Electricity Maps yearly LCA averages
// republished by co2.js under ODbL) and returns zone → value for year.
func ReadYearlyAverages(path string, year int) (map[string]float64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("yearly averages: %w", err)
	}
	r := csv.NewReader(bytes.NewReader(b))
	recs, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 || len(recs[0]) != 3 || recs[0][0] != "zone" || recs[0][1] != "year" {
		return nil, fmt.Errorf("%s:1: header: want zone,year,gco2_per_kwh_lca_yearly", path)
	}
	out := map[string]float64{}
	for i, rec := range recs[1:] {
		y, err1 := strconv.Atoi(rec[1])
		v, err2 := strconv.ParseFloat(rec[2], 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%s:%d: want zone,year,value", path, i+2)
		}
		if y == year {
			out[rec[0]] = v
		}
	}
	return out, nil
}

// MapsYears reports whether src stands for any year, as the offline
// synthetic model does (it is one typical year): an hour of another year
// is read at the same month, day and hour of the model's year
// (controller.CarbonFeed.MapYears). Traces and live sources are read at
// the hour itself.
func MapsYears(src CarbonSource) bool {
	_, ok := src.(*Synthetic)
	return ok
}

// SyntheticFor builds the synthetic source for evaluating p: over the
// fitted year (DefaultSyntheticPeriod) when p is empty or inside it, else
// over the calendar years covering p, which get the fitted year's monthly
// means, diurnal shapes and noise mapped onto their own dates (mapped is
// then true: not a forecast, and outputs should say so).
func SyntheticFor(seed uint64, p Period) (src *Synthetic, mapped bool, err error) {
	q := DefaultSyntheticPeriod()
	if p.Hours() > 0 && !p.Within(q) {
		mapped = true
		q = Period{From: time.Date(p.From.Year(), 1, 1, 0, 0, 0, 0, time.UTC),
			To: time.Date(p.To.Add(-time.Hour).Year()+1, 1, 1, 0, 0, 0, 0, time.UTC)}
	}
	src, err = NewSynthetic(seed, q)
	return src, mapped, err
}
