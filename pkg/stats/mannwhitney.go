package stats

import (
	"errors"
	"math"
	"sort"
)

// MannWhitneyExactMax is the largest sample size for which MannWhitneyU
// computes the exact null distribution (when there are no ties). Larger
// samples, or any ties, use the normal approximation with tie correction.
const MannWhitneyExactMax = 50

// MannWhitneyResult is the outcome of a two-sided Mann–Whitney U test.
type MannWhitneyResult struct {
	N1, N2 int     `json:"-"`
	U1     float64 `json:"u1"` // pairs (x_i, y_j) with x_i > y_j, ties counting 1/2
	U2     float64 `json:"u2"` // N1·N2 − U1
	Z      float64 `json:"z"`  // normal-approximation z (tie-corrected, continuity-corrected); 0 when Exact
	P      float64 `json:"p"`  // two-sided p-value
	Exact  bool    `json:"exact"`
	Ties   bool    `json:"ties"` // the pooled sample has ties (so the tie-corrected variance was used)
}

// MannWhitneyU tests whether x and y come from the same distribution
// against a two-sided shift alternative.
//
// Ranks are mid-ranks over the pooled sample; U1 = R1 − n1(n1+1)/2. With no
// ties and both samples of at most MannWhitneyExactMax values, P is exact:
// 2·P(U ≤ min(U1, U2)) under the null, from the recurrence
// f(u; m, n) = f(u−n; m−1, n) + f(u; m, n−1) over arrangement counts.
// Otherwise P uses the normal approximation with mean n1n2/2, the
// tie-corrected variance n1n2/12·((n+1) − Σ(t³−t)/(n(n−1))) and a continuity
// correction of 1/2 (as R's wilcox.test(correct=TRUE) and SciPy's default).
// When every value is tied the variance is 0 and P = 1.
func MannWhitneyU(x, y []float64) (MannWhitneyResult, error) {
	n1, n2 := len(x), len(y)
	if n1 == 0 || n2 == 0 {
		return MannWhitneyResult{}, errors.New("mann-whitney: empty sample")
	}
	type obs struct {
		v    float64
		left bool
	}
	all := make([]obs, 0, n1+n2)
	for _, v := range x {
		all = append(all, obs{v, true})
	}
	for _, v := range y {
		all = append(all, obs{v, false})
	}
	for _, o := range all {
		if math.IsNaN(o.v) {
			return MannWhitneyResult{}, errors.New("mann-whitney: NaN in sample")
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v < all[j].v })
	var r1, tieSum float64
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		rank := float64(i+j+1) / 2 // mean of ranks i+1..j
		for k := i; k < j; k++ {
			if all[k].left {
				r1 += rank
			}
		}
		if t := float64(j - i); t > 1 {
			tieSum += t*t*t - t
		}
		i = j
	}
	res := MannWhitneyResult{N1: n1, N2: n2, Ties: tieSum > 0}
	res.U1 = r1 - float64(n1*(n1+1))/2
	res.U2 = float64(n1*n2) - res.U1
	if !res.Ties && n1 <= MannWhitneyExactMax && n2 <= MannWhitneyExactMax {
		res.Exact = true
		cdf := mannWhitneyCDF(n1, n2, int(math.Min(res.U1, res.U2)))
		res.P = math.Min(1, 2*cdf)
		return res, nil
	}
	n := float64(n1 + n2)
	mu := float64(n1*n2) / 2
	variance := float64(n1*n2) / 12 * ((n + 1) - tieSum/(n*(n-1)))
	if variance <= 0 {
		res.P = 1
		return res, nil
	}
	d := math.Max(0, math.Abs(res.U1-mu)-0.5)
	res.Z = math.Copysign(d/math.Sqrt(variance), res.U1-mu)
	res.P = math.Min(1, math.Erfc(d/math.Sqrt(variance)/math.Sqrt2))
	return res, nil
}

// mannWhitneyCDF returns P(U ≤ u) for sample sizes m, n with no ties.
// Only counts of U ≤ u are needed (the recurrence never looks above u), so
// each array is cut at u+1 entries; the total is C(m+n, m).
func mannWhitneyCDF(m, n, u int) float64 {
	if u < 0 {
		return 0
	}
	if u >= m*n {
		return 1
	}
	// prev[j] / cur[j] hold the arrangement counts f(·; i−1, j) / f(·; i, j)
	// for j = 0..n, up to U = u.
	prev := make([][]float64, n+1)
	for j := range prev {
		prev[j] = []float64{1} // f(0; 0, j) = 1
	}
	for i := 1; i <= m; i++ {
		cur := make([][]float64, n+1)
		cur[0] = []float64{1}
		for j := 1; j <= n; j++ {
			f := make([]float64, min(i*j, u)+1)
			copy(f, cur[j-1])           // the overall max is a y: f(u; i, j−1)
			for k, c := range prev[j] { // the overall max is an x: it adds j to U
				if k+j < len(f) {
					f[k+j] += c
				}
			}
			cur[j] = f
		}
		prev = cur
	}
	var below float64
	for _, c := range prev[n] {
		below += c
	}
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
	return math.Min(1, below/math.Exp(lg(m+n)-lg(m)-lg(n)))
}

// PGreater is the one-sided p-value of the test for the alternative that
// the first sample is stochastically greater than the second: half the
// two-sided p when the first sample ranks higher (U1 > U2), else
// 1 − half of it.
func (r MannWhitneyResult) PGreater() float64 {
	if r.U1 > r.U2 {
		return r.P / 2
	}
	return 1 - r.P/2
}
