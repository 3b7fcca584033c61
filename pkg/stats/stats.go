// Package stats holds the small statistics every p4ctl experiment reports:
// means with standard deviations, standard errors and 95 % confidence
// intervals across seeds, empirical quantiles, and the two-sided
// Mann–Whitney U test (exact for small samples, tie-corrected otherwise).
package stats

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// Summary describes a sample.
type Summary struct {
	N      int     `json:"n"`
	Mean   float64 `json:"mean"`
	Std    float64 `json:"std"`     // sample standard deviation (n-1)
	StdErr float64 `json:"std_err"` // Std / sqrt(N)
	CI95   float64 `json:"ci95"`    // half-width of the 95 % Student-t interval
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// Summarize computes a Summary. An empty sample gives the zero Summary; a
// single value has zero spread.
func Summarize(xs []float64) Summary {
	n := len(xs)
	if n == 0 {
		return Summary{}
	}
	s := Summary{N: n, Min: math.Inf(1), Max: math.Inf(-1)}
	var sum float64
	for _, x := range xs {
		sum += x
		s.Min = math.Min(s.Min, x)
		s.Max = math.Max(s.Max, x)
	}
	s.Mean = sum / float64(n)
	if n > 1 {
		var ss float64
		for _, x := range xs {
			d := x - s.Mean
			ss += d * d
		}
		s.Std = math.Sqrt(ss / float64(n-1))
		s.StdErr = s.Std / math.Sqrt(float64(n))
		t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(0.975)
		s.CI95 = t * s.StdErr
	}
	return s
}

// Quantile returns the q-quantile (0 <= q <= 1) of xs by linear
// interpolation between order statistics (type 7, as numpy and R default).
// xs need not be sorted; it is not modified. Empty input gives NaN.
func Quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return QuantileSorted(s, q)
}

// QuantileSorted is Quantile for an already sorted sample.
func QuantileSorted(s []float64, q float64) float64 {
	if len(s) == 0 {
		return math.NaN()
	}
	q = math.Max(0, math.Min(1, q))
	pos := q * float64(len(s)-1)
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	if lo == hi {
		return s[lo]
	}
	return s[lo] + (pos-float64(lo))*(s[hi]-s[lo])
}

// SavingPct is how much lower v is than base, in percent of base (0 when
// base is 0).
func SavingPct(base, v float64) float64 {
	if base == 0 {
		return 0
	}
	return 100 * (base - v) / base
}

// Pct is k of n in percent (0 when n is 0).
func Pct(k, n int) float64 {
	if n == 0 {
		return 0
	}
	return 100 * float64(k) / float64(n)
}
