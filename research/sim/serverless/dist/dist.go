// Package dist holds the execution-time distributions of the serverless
// simulator: an Azure-Functions-like truncated log-normal fitted to published
// percentiles, a bounded Zipf, a bounded power law and the exponential used by
// the queueing-theory tests. Every value is in milliseconds.
//
// A Distribution is immutable and safe for concurrent use; sampling goes
// through a Sampler bound to the caller's *rand.Rand, so a run is
// deterministic for its seed. (The microsecond simulator's arrival and
// service generators are research/sim/dist.)
package dist

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"
)

// Distribution is an execution-time distribution over milliseconds.
type Distribution interface {
	// Name is the short CLI name ("azure", "zipf", "powerlaw", "exp").
	Name() string
	// Describe says what the distribution is, with its parameters and units.
	Describe() string
	// Mean is E[X] in ms.
	Mean() float64
	// Support returns the smallest and largest possible value in ms.
	Support() (lo, hi float64)
	// CDF is P(X <= x).
	CDF(x float64) float64
	// Quantile is the smallest x with CDF(x) >= p.
	Quantile(p float64) float64
	// PartialMean is E[X · 1{a < X <= b}] (not normalised).
	PartialMean(a, b float64) float64
	// NewSampler returns a sampler drawing from r.
	NewSampler(r *rand.Rand) Sampler
}

// Sampler draws execution times (ms).
type Sampler interface {
	Sample() float64
}

// Names lists the distributions New accepts, in the order of the study.
func Names() []string { return []string{"azure", "zipf", "powerlaw"} }

// MaxExpMeanMS is the largest mean of "exp:MEAN" (ms, about 30 years):
// far beyond any function, and small enough that scaled execution times
// and their sums stay finite.
const MaxExpMeanMS = 1e12

// New returns a study distribution by name. "exp:MEAN" (MEAN in ms) gives an
// exponential distribution for queueing-theory checks.
func New(name string) (Distribution, error) {
	switch name {
	case "azure":
		return Azure(), nil
	case "zipf":
		return StudyZipf(), nil
	case "powerlaw":
		return StudyPowerLaw(), nil
	}
	if m, ok := strings.CutPrefix(name, "exp:"); ok {
		mean, err := strconv.ParseFloat(m, 64)
		if err != nil || !(mean > 0) || !(mean <= MaxExpMeanMS) {
			return nil, fmt.Errorf("distribution %q: mean must be a positive number of ms up to %g", name, MaxExpMeanMS)
		}
		return Exponential{MeanMS: mean}, nil
	}
	return nil, fmt.Errorf("unknown distribution %q (want %s or exp:MEAN_MS)", name, strings.Join(Names(), ", "))
}

// ---------------------------------------------------------------- normal ---

func phi(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

func phiInv(p float64) float64 { return distuv.UnitNormal.Quantile(p) }

// ------------------------------------------------------------- log-normal ---

// Percentile is one published point of a CDF: a fraction P of the
// population lies at or below X (ms).
type Percentile struct {
	P float64 `json:"p"`
	X float64 `json:"x_ms"`
}

// AzurePercentiles are the three points of the distribution of per-function
// average execution time that Shahrad et al., "Serverless in the Wild"
// (USENIX ATC '20, §3.5 and Fig. 7, Azure Functions, July 2019) state in
// the text: about 20 % of functions run under 100 ms on average, about 50 %
// under 1 s, and 4 % take more than a minute (96 % under 60 s).
var AzurePercentiles = [...]Percentile{{0.20, 100}, {0.50, 1000}, {0.96, 60000}}

// Azure lower and upper truncation (ms): a 1 ms floor (as for the other
// shapes) and 10 min, the largest function timeout of the Consumption plan.
const (
	AzureMinMS = 1
	AzureMaxMS = 600000
)

// FitLogNormal fits ln X = mu + sigma·z by least squares through the points
// (Φ⁻¹(P), ln X). It needs at least two points with distinct P.
func FitLogNormal(pts []Percentile) (mu, sigma float64, err error) {
	if len(pts) < 2 {
		return 0, 0, fmt.Errorf("fit log-normal: need >= 2 percentiles, have %d", len(pts))
	}
	var sz, sy float64
	zs := make([]float64, len(pts))
	ys := make([]float64, len(pts))
	for i, p := range pts {
		if !(p.P > 0 && p.P < 1) || !(p.X > 0) {
			return 0, 0, fmt.Errorf("fit log-normal: bad percentile %+v", p)
		}
		zs[i], ys[i] = phiInv(p.P), math.Log(p.X)
		sz += zs[i]
		sy += ys[i]
	}
	n := float64(len(pts))
	mz, my := sz/n, sy/n
	var sxx, sxy float64
	for i := range zs {
		sxx += (zs[i] - mz) * (zs[i] - mz)
		sxy += (zs[i] - mz) * (ys[i] - my)
	}
	if sxx == 0 {
		return 0, 0, fmt.Errorf("fit log-normal: percentiles need distinct P")
	}
	sigma = sxy / sxx
	if !(sigma > 0) {
		return 0, 0, fmt.Errorf("fit log-normal: percentiles are not increasing")
	}
	return my - sigma*mz, sigma, nil
}

// LogNormal is a log-normal distribution truncated to [Lo, Hi] ms:
// ln X ~ N(Mu, Sigma²) conditioned on Lo <= X <= Hi.
type LogNormal struct {
	Label     string
	Mu, Sigma float64 // of ln(ms)
	Lo, Hi    float64 // ms
	Source    string  // where the parameters come from
}

// Azure returns the Azure-like distribution: a log-normal fitted (FitLogNormal)
// to AzurePercentiles, truncated to [AzureMinMS, AzureMaxMS]. It is a fitted
// approximation of a published shape, not the trace: the percentiles describe
// per-function averages, and we use them as per-invocation times.
func Azure() LogNormal {
	mu, sigma, err := FitLogNormal(AzurePercentiles[:])
	if err != nil { // constant input: cannot happen
		panic(err)
	}
	return LogNormal{Label: "azure", Mu: mu, Sigma: sigma, Lo: AzureMinMS, Hi: AzureMaxMS,
		Source: "least-squares log-normal fit to Shahrad et al. ATC'20: 20% < 100 ms, 50% < 1 s, 96% < 60 s"}
}

// Name implements Distribution.
func (d LogNormal) Name() string { return d.Label }

// Describe implements Distribution.
func (d LogNormal) Describe() string {
	return fmt.Sprintf("log-normal mu=%.4f sigma=%.4f (ln ms), truncated to [%g ms, %g ms]; %s",
		d.Mu, d.Sigma, d.Lo, d.Hi, d.Source)
}

func (d LogNormal) zs() (za, zb float64) {
	return (math.Log(d.Lo) - d.Mu) / d.Sigma, (math.Log(d.Hi) - d.Mu) / d.Sigma
}

func (d LogNormal) mass() float64 {
	za, zb := d.zs()
	return phi(zb) - phi(za)
}

// Support implements Distribution.
func (d LogNormal) Support() (float64, float64) { return d.Lo, d.Hi }

// Mean implements Distribution.
func (d LogNormal) Mean() float64 { return d.PartialMean(0, math.Inf(1)) }

// CDF implements Distribution.
func (d LogNormal) CDF(x float64) float64 {
	if x < d.Lo {
		return 0
	}
	if x >= d.Hi {
		return 1
	}
	za, _ := d.zs()
	return (phi((math.Log(x)-d.Mu)/d.Sigma) - phi(za)) / d.mass()
}

// Quantile implements Distribution.
func (d LogNormal) Quantile(p float64) float64 {
	p = clamp01(p)
	za, zb := d.zs()
	u := phi(za) + p*(phi(zb)-phi(za))
	return math.Min(d.Hi, math.Max(d.Lo, math.Exp(d.Mu+d.Sigma*phiInv(u))))
}

// PartialMean implements Distribution.
func (d LogNormal) PartialMean(a, b float64) float64 {
	a, b = math.Max(a, d.Lo), math.Min(b, d.Hi)
	if !(b > a) {
		return 0
	}
	s2 := d.Sigma * d.Sigma
	za := (math.Log(a) - d.Mu - s2) / d.Sigma
	zb := (math.Log(b) - d.Mu - s2) / d.Sigma
	return math.Exp(d.Mu+s2/2) * (phi(zb) - phi(za)) / d.mass()
}

// NewSampler implements Distribution. It samples by rejection (the
// truncation keeps > 99 % of the untruncated mass for the study parameters).
func (d LogNormal) NewSampler(r *rand.Rand) Sampler {
	return &logNormalSampler{d: d, r: r, lnLo: math.Log(d.Lo), lnHi: math.Log(d.Hi)}
}

type logNormalSampler struct {
	d          LogNormal
	r          *rand.Rand
	lnLo, lnHi float64
}

func (s *logNormalSampler) Sample() float64 {
	for {
		y := s.d.Mu + s.d.Sigma*s.r.NormFloat64()
		if y >= s.lnLo && y <= s.lnHi {
			return math.Exp(y)
		}
	}
}

// ------------------------------------------------------------------- Zipf ---

// Study parameters of the bounded Zipf (PathFinder's Zipf trace).
const (
	StudyZipfA = 1.294789
	StudyZipfM = 1571585
)

// Zipf is the bounded Zipf distribution on the integers 1..M (ms) with
// P(X = k) ∝ k^-A (scipy's zipfian(a, n)).
type Zipf struct {
	A float64
	M uint64
	h float64 // H(M, A), the normalising constant
}

// NewZipf returns Zipf(a, m); a must exceed 1 (math/rand/v2's sampler needs
// it) and m must be >= 1.
func NewZipf(a float64, m uint64) (Zipf, error) {
	if !(a > 1) || m < 1 {
		return Zipf{}, fmt.Errorf("zipf: need a > 1 and m >= 1, have a=%g m=%d", a, m)
	}
	return Zipf{A: a, M: m, h: harmonic(float64(m), a)}, nil
}

// StudyZipf returns Zipf(StudyZipfA, StudyZipfM).
func StudyZipf() Zipf {
	z, err := NewZipf(StudyZipfA, StudyZipfM)
	if err != nil {
		panic(err) // constant input
	}
	return z
}

// Name implements Distribution.
func (Zipf) Name() string { return "zipf" }

// Describe implements Distribution.
func (z Zipf) Describe() string {
	return fmt.Sprintf("bounded Zipf P(k) ∝ k^-%g on k = 1..%d ms (sampled by rejection-inversion, math/rand/v2)", z.A, z.M)
}

// Support implements Distribution.
func (z Zipf) Support() (float64, float64) { return 1, float64(z.M) }

// Mean implements Distribution.
func (z Zipf) Mean() float64 { return harmonic(float64(z.M), z.A-1) / z.h }

// CDF implements Distribution.
func (z Zipf) CDF(x float64) float64 {
	if x < 1 {
		return 0
	}
	if x >= float64(z.M) {
		return 1
	}
	return harmonic(math.Floor(x), z.A) / z.h
}

// Quantile implements Distribution.
func (z Zipf) Quantile(p float64) float64 {
	p = clamp01(p)
	k := sort.Search(int(z.M), func(i int) bool { return z.CDF(float64(i+1)) >= p })
	return float64(k + 1)
}

// PartialMean implements Distribution.
func (z Zipf) PartialMean(a, b float64) float64 {
	ka := math.Max(0, math.Floor(math.Min(a, float64(z.M))))
	kb := math.Max(0, math.Floor(math.Min(b, float64(z.M))))
	if kb <= ka {
		return 0
	}
	return (harmonic(kb, z.A-1) - harmonic(ka, z.A-1)) / z.h
}

// NewSampler implements Distribution.
func (z Zipf) NewSampler(r *rand.Rand) Sampler {
	return zipfSampler{rand.NewZipf(r, z.A, 1, z.M-1)}
}

type zipfSampler struct{ z *rand.Zipf }

func (s zipfSampler) Sample() float64 { return float64(s.z.Uint64() + 1) }

// harmonic returns the generalised harmonic number Σ_{j=1..k} j^-t for an
// integer k >= 0: exactly up to 1000 terms, then by Euler–Maclaurin (error
// far below 1e-12 relative for the parameters used here).
func harmonic(k, t float64) float64 {
	const n0 = 1000
	var s float64
	lim := math.Min(k, n0-1)
	for j := 1.0; j <= lim; j++ {
		s += math.Pow(j, -t)
	}
	if k < n0 {
		return s
	}
	// Σ_{j=n0..k} f(j) ≈ ∫ f + (f(n0)+f(k))/2 + (f'(k)-f'(n0))/12 - (f'''(k)-f'''(n0))/720
	f := func(x float64) float64 { return math.Pow(x, -t) }
	d1 := func(x float64) float64 { return -t * math.Pow(x, -t-1) }
	d3 := func(x float64) float64 { return -t * (t + 1) * (t + 2) * math.Pow(x, -t-3) }
	var integral float64
	if t == 1 {
		integral = math.Log(k / n0)
	} else {
		integral = (math.Pow(k, 1-t) - math.Pow(n0, 1-t)) / (1 - t)
	}
	return s + integral + (f(n0)+f(k))/2 + (d1(k)-d1(n0))/12 - (d3(k)-d3(n0))/720
}

// -------------------------------------------------------------- power law ---

// Study parameters of the power law (PathFinder's power-law trace, scipy
// powerlaw: pdf a·x^(a-1)/scale^a on [0, scale]). The scale 54.37 is read as
// seconds; see StudyPowerLaw.
const (
	StudyPowerLawA       = 0.416
	StudyPowerLawScaleMS = 54370
	StudyPowerLawMinMS   = 1
)

// PowerLaw is scipy's power-law distribution, CDF (x/Scale)^A on [0, Scale]
// ms, truncated below at Lo ms.
type PowerLaw struct {
	A     float64
	Scale float64 // ms
	Lo    float64 // ms
}

// StudyPowerLaw returns the study's power law with the scale 54.37 read as
// seconds (54,370 ms), truncated to [1 ms, 54,370 ms]. Read as milliseconds
// its mean would be 16 ms, a load of at most 0.64 cores at λ = 20 req/s with
// our chains: no pool of 1-core pods would queue; read as seconds its mean
// (16 s) is of the order of the other two (≈ 8–10 s).
func StudyPowerLaw() PowerLaw {
	return PowerLaw{A: StudyPowerLawA, Scale: StudyPowerLawScaleMS, Lo: StudyPowerLawMinMS}
}

// Name implements Distribution.
func (PowerLaw) Name() string { return "powerlaw" }

// Describe implements Distribution.
func (p PowerLaw) Describe() string {
	return fmt.Sprintf("power law CDF (x/%g ms)^%g (scipy powerlaw, scale 54.37 read as s), truncated to [%g ms, %g ms], sampled by inversion",
		p.Scale, p.A, p.Lo, p.Scale)
}

func (p PowerLaw) f0() float64 { return math.Pow(p.Lo/p.Scale, p.A) }

// Support implements Distribution.
func (p PowerLaw) Support() (float64, float64) { return p.Lo, p.Scale }

// Mean implements Distribution.
func (p PowerLaw) Mean() float64 { return p.PartialMean(0, math.Inf(1)) }

// CDF implements Distribution.
func (p PowerLaw) CDF(x float64) float64 {
	if x < p.Lo {
		return 0
	}
	if x >= p.Scale {
		return 1
	}
	return (math.Pow(x/p.Scale, p.A) - p.f0()) / (1 - p.f0())
}

// Quantile implements Distribution.
func (p PowerLaw) Quantile(q float64) float64 {
	q = clamp01(q)
	return p.Scale * math.Pow(p.f0()+q*(1-p.f0()), 1/p.A)
}

// PartialMean implements Distribution.
func (p PowerLaw) PartialMean(a, b float64) float64 {
	a, b = math.Max(a, p.Lo), math.Min(b, p.Scale)
	if !(b > a) {
		return 0
	}
	num := p.A / (p.A + 1) * (math.Pow(b, p.A+1) - math.Pow(a, p.A+1)) / math.Pow(p.Scale, p.A)
	return num / (1 - p.f0())
}

// NewSampler implements Distribution.
func (p PowerLaw) NewSampler(r *rand.Rand) Sampler {
	return powerLawSampler{p: p, r: r, f0: p.f0(), inv: 1 / p.A}
}

type powerLawSampler struct {
	p       PowerLaw
	r       *rand.Rand
	f0, inv float64
}

func (s powerLawSampler) Sample() float64 {
	u := s.f0 + s.r.Float64()*(1-s.f0)
	return s.p.Scale * math.Pow(u, s.inv)
}

// ------------------------------------------------------------ exponential ---

// Exponential has mean MeanMS ms; it is the service time of the M/M/1 and
// M/M/c checks.
type Exponential struct{ MeanMS float64 }

// Name implements Distribution.
func (e Exponential) Name() string { return fmt.Sprintf("exp:%g", e.MeanMS) }

// Describe implements Distribution.
func (e Exponential) Describe() string { return fmt.Sprintf("exponential, mean %g ms", e.MeanMS) }

// Support implements Distribution.
func (e Exponential) Support() (float64, float64) { return 0, math.Inf(1) }

// Mean implements Distribution.
func (e Exponential) Mean() float64 { return e.MeanMS }

// CDF implements Distribution.
func (e Exponential) CDF(x float64) float64 {
	if x <= 0 {
		return 0
	}
	return -math.Expm1(-x / e.MeanMS)
}

// Quantile implements Distribution.
func (e Exponential) Quantile(p float64) float64 {
	p = clamp01(p)
	if p == 1 {
		return math.Inf(1)
	}
	return -e.MeanMS * math.Log1p(-p)
}

// PartialMean implements Distribution.
func (e Exponential) PartialMean(a, b float64) float64 {
	a = math.Max(a, 0)
	if !(b > a) {
		return 0
	}
	m := e.MeanMS
	g := func(x float64) float64 {
		if math.IsInf(x, 1) {
			return 0
		}
		return (x + m) * math.Exp(-x/m)
	}
	return g(a) - g(b)
}

// NewSampler implements Distribution.
func (e Exponential) NewSampler(r *rand.Rand) Sampler { return expSampler{m: e.MeanMS, r: r} }

type expSampler struct {
	m float64
	r *rand.Rand
}

func (s expSampler) Sample() float64 { return s.m * s.r.ExpFloat64() }

func clamp01(p float64) float64 { return math.Max(0, math.Min(1, p)) }

// ---------------------------------------------------------------- scaled ---

// Scaled is D with every execution time multiplied by Factor (> 0): the
// same shape on another time scale.
type Scaled struct {
	D      Distribution
	Factor float64
}

// NewScaled returns d scaled by factor; factor 1 returns d itself.
func NewScaled(d Distribution, factor float64) (Distribution, error) {
	if !(factor > 0) || math.IsInf(factor, 0) {
		return nil, fmt.Errorf("distribution %s: time scale %g must be positive and finite", d.Name(), factor)
	}
	if factor == 1 {
		return d, nil
	}
	return Scaled{D: d, Factor: factor}, nil
}

// Name is the underlying distribution's.
func (s Scaled) Name() string { return s.D.Name() }

// Describe names the scale.
func (s Scaled) Describe() string { return fmt.Sprintf("%s, times × %g", s.D.Describe(), s.Factor) }

// Mean is E[X].
func (s Scaled) Mean() float64 { return s.D.Mean() * s.Factor }

// Support is the scaled support.
func (s Scaled) Support() (float64, float64) {
	lo, hi := s.D.Support()
	return lo * s.Factor, hi * s.Factor
}

// CDF is P(X <= x).
func (s Scaled) CDF(x float64) float64 { return s.D.CDF(x / s.Factor) }

// Quantile is the scaled quantile.
func (s Scaled) Quantile(p float64) float64 { return s.D.Quantile(p) * s.Factor }

// PartialMean is E[X · 1{a < X <= b}].
func (s Scaled) PartialMean(a, b float64) float64 {
	return s.D.PartialMean(a/s.Factor, b/s.Factor) * s.Factor
}

// NewSampler scales the underlying sampler's draws.
func (s Scaled) NewSampler(r *rand.Rand) Sampler {
	return scaledSampler{s: s.D.NewSampler(r), f: s.Factor}
}

type scaledSampler struct {
	s Sampler
	f float64
}

func (s scaledSampler) Sample() float64 { return s.s.Sample() * s.f }
