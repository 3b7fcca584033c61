package geo

import (
	"math"
	"testing"
)

func TestDistance(t *testing.T) {
	cases := []struct {
		name string
		a, b Point
		km   float64 // published great-circle distances, ±0.5 %
	}{
		{"same point", Point{19.08, 72.88}, Point{19.08, 72.88}, 0},
		{"quarter meridian", Point{0, 0}, Point{90, 0}, math.Pi / 2 * EarthRadiusKm},
		{"London–New York", Point{51.51, -0.13}, Point{40.71, -74.01}, 5570},
		{"Mumbai–Singapore", Point{19.08, 72.88}, Point{1.35, 103.82}, 3910},
		{"antipodes stay finite", Point{10, 20}, Point{-10, -160}, math.Pi * EarthRadiusKm},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := DistanceKm(c.a, c.b)
			if math.Abs(got-c.km) > 0.005*c.km+1e-9 {
				t.Errorf("%.1f km, want %.1f", got, c.km)
			}
			if back := DistanceKm(c.b, c.a); math.Abs(back-got) > 1e-9 {
				t.Errorf("not symmetric: %v vs %v", got, back)
			}
		})
	}
	// 1000 km of fibre is about 9.8 ms there and back.
	if rtt := FibreRTTMs(1000); math.Abs(rtt-9.79) > 0.01 {
		t.Errorf("fibre RTT of 1000 km %.3f ms", rtt)
	}
}

func TestFit(t *testing.T) {
	// Exact samples of a known model are recovered exactly.
	want := Model{AccessMs: 150, Stretch: 4}
	var s []Sample
	for _, d := range []float64{0, 1000, 5000, 12000} {
		s = append(s, Sample{d, want.P95(d)})
	}
	got, err := Fit(s)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got.AccessMs-150) > 1e-9 || math.Abs(got.Stretch-4) > 1e-9 || got.RMSMs > 1e-9 {
		t.Errorf("fit %+v", got)
	}
	for name, bad := range map[string][]Sample{
		"one sample":     {{100, 50}},
		"one distance":   {{100, 50}, {100, 60}},
		"shrinking":      {{0, 500}, {10000, 100}},
		"negative start": {{0, -10}, {1000, 100}, {2000, 210}},
	} {
		if _, err := Fit(bad); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
