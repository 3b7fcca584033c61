package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestMannWhitneyExactSmallSamples(t *testing.T) {
	cases := []struct {
		name  string
		x, y  []float64
		u1, p float64
	}{
		// Complete separation, 3 vs 3: one arrangement of C(6,3) = 20 per tail.
		{"3v3 separated", []float64{1, 2, 3}, []float64{4, 5, 6}, 0, 2.0 / 20},
		// 5 vs 5: P(U ≤ 2) = 4/252 (U = 0, 1, 2, 2 arrangements); U = 2 is the
		// tabulated two-sided 5 % critical value for n1 = n2 = 5.
		{"5v5 U=2", []float64{1, 2, 3, 4, 7}, []float64{5, 6, 8, 9, 10}, 2, 2 * 4.0 / 252},
		// P(U ≤ 3) = 7/252: just above 5 %, so 3 is not significant.
		{"5v5 U=3", []float64{1, 2, 3, 4, 7.5}, []float64{5, 6, 7, 9, 10}, 3, 2 * 7.0 / 252},
		// 1 vs 2: U1 = 2 is the upper tail; P(U ≤ 0) = 1/3, two-sided 2/3.
		{"1v2", []float64{9}, []float64{1, 2}, 2, 2.0 / 3},
		// Median U of 2v2: P(U ≤ 2) = 4/6 → p capped at 1.
		{"2v2 middle", []float64{1, 4}, []float64{2, 3}, 2, 1},
	}
	for _, c := range cases {
		r, err := MannWhitneyU(c.x, c.y)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Exact || r.Ties || r.U1 != c.u1 || math.Abs(r.P-c.p) > 1e-12 {
			t.Errorf("%s: %+v, want U1 %v p %v exact", c.name, r, c.u1, c.p)
		}
		if r.U1+r.U2 != float64(len(c.x)*len(c.y)) {
			t.Errorf("%s: U1+U2 = %v", c.name, r.U1+r.U2)
		}
	}
}

// TestMannWhitneyExactMatchesEnumeration checks the recurrence against an
// independent method: enumerating every split of the pooled ranks.
func TestMannWhitneyExactMatchesEnumeration(t *testing.T) {
	for _, sz := range [][2]int{{4, 6}, {5, 5}, {3, 8}, {7, 6}} {
		m, n := sz[0], sz[1]
		counts := map[int]int{}
		total := 0
		for mask := 0; mask < 1<<(m+n); mask++ {
			if popcount(mask) != m {
				continue
			}
			u := 0 // pairs (x, y) with x ranked above y
			ys := 0
			for b := 0; b < m+n; b++ {
				if mask&(1<<b) != 0 {
					u += ys
				} else {
					ys++
				}
			}
			counts[u]++
			total++
		}
		cum := 0
		for u := 0; u <= m*n; u++ {
			cum += counts[u]
			if got, want := mannWhitneyCDF(m, n, u), float64(cum)/float64(total); math.Abs(got-want) > 1e-12 {
				t.Fatalf("m=%d n=%d u=%d: cdf %v, enumeration %v", m, n, u, got, want)
			}
		}
	}
}

func popcount(v int) int {
	c := 0
	for ; v != 0; v &= v - 1 {
		c++
	}
	return c
}

func TestMannWhitneyTieCorrection(t *testing.T) {
	x := []float64{1, 2, 2, 3}
	y := []float64{2, 3, 4, 5}
	r, err := MannWhitneyU(x, y)
	if err != nil {
		t.Fatal(err)
	}
	// By hand: pooled 1,2,2,2,3,3,4,5 → mid-ranks 1, 3,3,3, 5.5,5.5, 7, 8.
	// R1 = 1+3+3+5.5 = 12.5, U1 = 12.5 − 10 = 2.5, mean 8.
	// Ties: a triple and a pair, Σ(t³−t) = 24 + 6 = 30.
	// Var = 16/12 · (9 − 30/56) = 11.2857142857…; without the correction it would be 12.
	// z = (|2.5 − 8| − 0.5)/√Var = 1.48835…, p = erfc(z/√2) ≈ 0.1367 (R's wilcox.test, exact=FALSE).
	const variance = 16.0 / 12 * (9 - 30.0/56)
	wantZ := -5 / math.Sqrt(variance)
	wantP := math.Erfc(5 / math.Sqrt(variance) / math.Sqrt2)
	if r.Exact || !r.Ties || r.U1 != 2.5 || math.Abs(r.Z-wantZ) > 1e-12 || math.Abs(r.P-wantP) > 1e-12 {
		t.Fatalf("%+v, want U1 2.5 z %v p %v", r, wantZ, wantP)
	}
	if math.Abs(r.P-0.1367) > 5e-5 {
		t.Errorf("p %v, want 0.1367", r.P)
	}
}

func TestMannWhitneyEdgeCases(t *testing.T) {
	same := []float64{3, 3, 3}
	if r, err := MannWhitneyU(same, same); err != nil || r.P != 1 {
		t.Errorf("all tied: %+v %v", r, err)
	}
	if _, err := MannWhitneyU(nil, same); err == nil {
		t.Error("empty sample accepted")
	}
	if _, err := MannWhitneyU([]float64{math.NaN()}, same); err == nil {
		t.Error("NaN accepted")
	}
	// Large samples use the normal approximation; a clear shift is significant
	// and the direction shows in the sign of z.
	rng := rand.New(rand.NewPCG(1, 1))
	var a, b []float64
	for i := 0; i < 200; i++ {
		a = append(a, rng.NormFloat64())
		b = append(b, rng.NormFloat64()+1)
	}
	r, _ := MannWhitneyU(a, b)
	if r.Exact || r.P > 1e-6 || r.Z >= 0 {
		t.Errorf("shifted normals: %+v", r)
	}
	// Swapping the samples swaps U1 and U2 and keeps p.
	r2, _ := MannWhitneyU(b, a)
	if r2.U1 != r.U2 || math.Abs(r2.P-r.P) > 1e-15 {
		t.Errorf("swap: %+v vs %+v", r2, r)
	}
}

func TestMannWhitneyPGreater(t *testing.T) {
	cases := []struct {
		name string
		x, y []float64
		want float64
	}{
		// 5 vs 5, x entirely above y: one arrangement of C(10,5) = 252.
		{"x above", []float64{6, 7, 8, 9, 10}, []float64{1, 2, 3, 4, 5}, 1.0 / 252},
		// The same samples the other way round: x is not greater.
		{"x below", []float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 1 - 1.0/252},
		// U1 = 23 of 25 (U2 = 2): P(U ≤ 2) = 4/252.
		{"x mostly above", []float64{5, 6, 8, 9, 10}, []float64{1, 2, 3, 4, 7}, 4.0 / 252},
		// Identical samples: no evidence either way.
		{"all tied", []float64{1, 1, 1}, []float64{1, 1, 1}, 0.5},
	}
	for _, c := range cases {
		r, err := MannWhitneyU(c.x, c.y)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.PGreater(); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: PGreater = %v, want %v", c.name, got, c.want)
		}
	}
}
