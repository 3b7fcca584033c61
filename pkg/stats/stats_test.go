package stats

import (
	"math"
	"testing"
)

func TestSummarize(t *testing.T) {
	s := Summarize([]float64{2, 4, 4, 4, 5, 5, 7, 9})
	if s.N != 8 || s.Mean != 5 || s.Min != 2 || s.Max != 9 {
		t.Fatalf("summary %+v", s)
	}
	// Sample std of this classic set is sqrt(32/7).
	if math.Abs(s.Std-math.Sqrt(32.0/7)) > 1e-12 {
		t.Errorf("std %v", s.Std)
	}
	// t(0.975, 7) = 2.3646.
	if want := 2.364624 * s.StdErr; math.Abs(s.CI95-want) > 1e-5 {
		t.Errorf("ci95 %v want %v", s.CI95, want)
	}
	if z := Summarize(nil); z.N != 0 || z.Mean != 0 {
		t.Errorf("empty: %+v", z)
	}
	if one := Summarize([]float64{3}); one.Std != 0 || one.CI95 != 0 || one.Mean != 3 {
		t.Errorf("single: %+v", one)
	}
}

func TestQuantile(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3}
	for q, want := range map[float64]float64{0: 1, 1: 5, 0.5: 3, 0.25: 2, 0.9: 4.6} {
		if got := Quantile(xs, q); math.Abs(got-want) > 1e-12 {
			t.Errorf("Quantile(%v) = %v want %v", q, got, want)
		}
	}
	if xs[0] != 5 {
		t.Error("input modified")
	}
	if !math.IsNaN(Quantile(nil, 0.5)) {
		t.Error("empty not NaN")
	}
}

func TestSavingPctAndPct(t *testing.T) {
	cases := []struct {
		name      string
		got, want float64
	}{
		{"half saved", SavingPct(200, 100), 50},
		{"worse than base", SavingPct(100, 150), -50},
		{"zero base", SavingPct(0, 5), 0},
		{"one in four", Pct(1, 4), 25},
		{"none of none", Pct(3, 0), 0},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
}
