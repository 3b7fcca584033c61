package carbonapi

import (
	"math"
	"testing"

	"github.com/p4ctl/p4ctl/pkg/regions"
)

func inRange(v float64) bool { return !math.IsNaN(v) && v >= 0 && v <= regions.MaxIntensity }

// FuzzParseElectricityMaps feeds any bytes to the three Electricity Maps
// parsers: they must not panic, and what they accept must be sane.
func FuzzParseElectricityMaps(f *testing.F) {
	for _, name := range []string{"em_latest.json", "em_history.json", "em_forecast.json"} {
		f.Add(fixture(f, name))
	}
	f.Add([]byte(`{"zone":"DE","carbonIntensity":null,"datetime":"2025-01-15T10:00:00Z"}`))
	f.Add([]byte(`{"zone":"DE","history":[null,{}]}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if p, err := parseEMLatest(b, "DE", Lifecycle); err == nil {
			if !inRange(p.Value) || p.Time.IsZero() {
				t.Errorf("latest accepted %+v", p)
			}
		}
		hist, err := parseEMHistory(b, "DE", Lifecycle)
		fc, _, err2 := parseEMForecast(b, "DE", Lifecycle)
		for _, s := range [][]Point{hist, fc} {
			for i, p := range s {
				if !inRange(p.Value) || (i > 0 && !p.Time.After(s[i-1].Time)) {
					t.Errorf("series accepted point %d %+v", i, p)
				}
			}
		}
		_, _ = err, err2
	})
}

// FuzzParseWattTime feeds any bytes to the WattTime parsers.
func FuzzParseWattTime(f *testing.F) {
	for _, name := range []string{"wt_forecast.json", "wt_signal_index.json", "wt_login.json"} {
		f.Add(fixture(f, name))
	}
	f.Add([]byte(`{"data":[{"point_time":"2025-01-15T10:00:00Z","value":1e308}],"meta":{"region":"IE","units":"lbs_co2_per_mwh"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if fc, err := parseWTForecast(b, "IE"); err == nil {
			if len(fc.Points) == 0 || fc.GeneratedAt.IsZero() {
				t.Errorf("forecast accepted without points or time: %+v", fc)
			}
			for i, p := range fc.Points {
				if !inRange(p.Value) || (i > 0 && !p.Time.After(fc.Points[i-1].Time)) {
					t.Errorf("forecast accepted point %d %+v", i, p)
				}
			}
			for _, r := range hourlyMeans(fc) {
				if !inRange(r.Value) {
					t.Errorf("hourly mean %+v", r)
				}
			}
		}
		if idx, err := parseWTIndex(b, "CAISO_NORTH"); err == nil && (idx.Percentile < 0 || idx.Percentile > 100) {
			t.Errorf("index accepted %+v", idx)
		}
		if tok, err := parseWTLogin(b); err == nil && tok.Empty() {
			t.Error("login accepted an empty token")
		}
	})
}
