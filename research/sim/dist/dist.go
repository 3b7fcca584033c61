// Package dist holds the random-variate generators the simulators draw from:
// renewal inter-arrival times with a chosen coefficient of variation
// (exponential, balanced-means hyper-exponential H2, gamma), service-time
// distributions (fixed, exponential, bimodal, lognormal) and a Zipf sampler
// over a finite population (Walker/Vose alias method).
//
// Every sampler draws from a caller-owned *rand.Rand, so a simulation that
// gives each purpose its own stream (arrivals, service, policy, faults) stays
// deterministic for a seed and keeps common random numbers across policies.
// Sampling never allocates.
//
// These are the microsecond simulator's (research/sim/micro) generators. The
// serverless simulator's execution-time distributions, which also need a
// CDF, quantiles and partial means in milliseconds, are in
// research/sim/serverless/dist. They stay apart because they serve different
// interfaces: allocation-free samplers here, analytic distributions there
// (their Zipf is a bounded distribution of execution times; ours is a
// popularity ranking).
package dist

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// NewRand returns a PCG-backed generator for (seed, stream). Different streams
// of the same seed are independent sequences.
func NewRand(seed, stream uint64) *rand.Rand {
	// Mix the stream so that nearby (seed, stream) pairs do not overlap.
	return rand.New(rand.NewPCG(seed, stream*0x9E3779B97F4A7C15+0x632BE59BD9B4E019))
}

// ArrivalKind names how a renewal process with CV ≠ 1 is generated.
type ArrivalKind string

// Arrival kinds. With CV = 1 both give the exponential (Poisson arrivals); CV
// = 0 gives deterministic spacing.
const (
	// ArrivalH2 is the balanced-means two-phase hyper-exponential for CV > 1
	// (each phase carries half the mean); CV < 1 falls back to gamma.
	ArrivalH2 ArrivalKind = "h2"
	// ArrivalGamma is the gamma distribution with shape 1/CV².
	ArrivalGamma ArrivalKind = "gamma"
)

// Interval draws renewal intervals with a given mean and coefficient of
// variation.
type Interval struct {
	mean float64
	cv   float64
	kind ArrivalKind
	// H2 parameters.
	p, m1, m2 float64
	// Gamma parameters.
	shape, scale float64
}

// NewInterval validates and prepares an interval distribution.
func NewInterval(kind ArrivalKind, mean, cv float64) (Interval, error) {
	if !(mean > 0) || math.IsInf(mean, 0) {
		return Interval{}, fmt.Errorf("dist: interval mean %v must be positive and finite", mean)
	}
	if !(cv >= 0) || cv > 20 {
		return Interval{}, fmt.Errorf("dist: coefficient of variation %v must be in [0, 20]", cv)
	}
	switch kind {
	case "", ArrivalH2, ArrivalGamma:
	default:
		return Interval{}, fmt.Errorf("dist: unknown arrival kind %q (want h2 or gamma)", kind)
	}
	if kind == "" {
		kind = ArrivalH2
	}
	d := Interval{mean: mean, cv: cv, kind: kind}
	if kind == ArrivalH2 && cv > 1 {
		c2 := cv * cv
		d.p = 0.5 * (1 + math.Sqrt((c2-1)/(c2+1)))
		d.m1 = mean / (2 * d.p)
		d.m2 = mean / (2 * (1 - d.p))
	}
	if cv > 0 && cv != 1 {
		d.shape = 1 / (cv * cv)
		d.scale = mean / d.shape
	}
	return d, nil
}

// Sample draws one interval.
func (d *Interval) Sample(r *rand.Rand) float64 {
	switch {
	case d.cv == 1:
		return r.ExpFloat64() * d.mean
	case d.cv == 0:
		return d.mean
	case d.kind == ArrivalH2 && d.cv > 1:
		if r.Float64() < d.p {
			return r.ExpFloat64() * d.m1
		}
		return r.ExpFloat64() * d.m2
	default:
		return Gamma(r, d.shape) * d.scale
	}
}

// Gamma draws a gamma variate with the given shape and unit scale
// (Marsaglia and Tsang 2000; shape < 1 by the U^(1/shape) boost).
func Gamma(r *rand.Rand, shape float64) float64 {
	if shape < 1 {
		u := r.Float64()
		for u == 0 {
			u = r.Float64()
		}
		return Gamma(r, shape+1) * math.Pow(u, 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := r.Float64()
		if u < 1-0.0331*x*x*x*x {
			return d * v
		}
		if u > 0 && math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// ServiceKind names a service-time distribution.
type ServiceKind string

// Service-time distributions.
const (
	ServiceFixed       ServiceKind = "fixed"     // every request takes the mean
	ServiceExponential ServiceKind = "exp"       // exponential (CV 1)
	ServiceBimodal     ServiceKind = "bimodal"   // short with prob 1−p, Ratio× longer with prob p
	ServiceLognormal   ServiceKind = "lognormal" // exp(μ + σZ), μ chosen to give the mean
)

const serviceKindsString = "fixed, exp, bimodal, lognormal"

// ServiceSpec describes a service-time distribution. Zero Bimodal/Lognormal
// parameters take the documented defaults.
type ServiceSpec struct {
	Kind ServiceKind `json:"kind"`
	Mean float64     `json:"mean_us"`
	// BimodalP is the probability of a long request (default 0.1).
	BimodalP float64 `json:"bimodal_p,omitempty"`
	// BimodalRatio is long/short service time (default 10).
	BimodalRatio float64 `json:"bimodal_ratio,omitempty"`
	// Sigma is the lognormal shape σ (default 1, i.e. CV ≈ 1.31).
	Sigma float64 `json:"sigma,omitempty"`
}

// ParseServiceKind maps a CLI name to a ServiceKind.
func ParseServiceKind(s string) (ServiceKind, error) {
	switch k := ServiceKind(strings.ToLower(s)); k {
	case ServiceFixed, ServiceExponential, ServiceBimodal, ServiceLognormal:
		return k, nil
	case "exponential":
		return ServiceExponential, nil
	}
	return "", fmt.Errorf("unknown service distribution %q (want %s)", s, serviceKindsString)
}

// Service draws service times.
type Service struct {
	spec        ServiceSpec
	short, long float64 // bimodal
	mu          float64 // lognormal
}

// NewService validates spec and prepares the sampler.
func NewService(spec ServiceSpec) (Service, error) {
	if !(spec.Mean > 0) || math.IsInf(spec.Mean, 0) {
		return Service{}, fmt.Errorf("dist: service mean %v must be positive and finite", spec.Mean)
	}
	s := Service{spec: spec}
	switch spec.Kind {
	case ServiceFixed, ServiceExponential:
	case ServiceBimodal:
		if s.spec.BimodalP == 0 {
			s.spec.BimodalP = 0.1
		}
		if s.spec.BimodalRatio == 0 {
			s.spec.BimodalRatio = 10
		}
		p, ratio := s.spec.BimodalP, s.spec.BimodalRatio
		if !(p > 0 && p < 1) || !(ratio >= 1) {
			return Service{}, fmt.Errorf("dist: bimodal needs 0 < p < 1 and ratio ≥ 1 (got p=%v ratio=%v)", p, ratio)
		}
		s.short = spec.Mean / (1 - p + p*ratio)
		s.long = s.short * ratio
	case ServiceLognormal:
		if s.spec.Sigma == 0 {
			s.spec.Sigma = 1
		}
		if !(s.spec.Sigma > 0 && s.spec.Sigma <= 4) {
			return Service{}, fmt.Errorf("dist: lognormal sigma %v must be in (0, 4]", s.spec.Sigma)
		}
		s.mu = math.Log(spec.Mean) - s.spec.Sigma*s.spec.Sigma/2
	default:
		return Service{}, fmt.Errorf("dist: unknown service distribution %q (want %s)", spec.Kind, serviceKindsString)
	}
	return s, nil
}

// SCV is the squared coefficient of variation, E[S²]/E[S]² − 1.
func (s Service) SCV() float64 {
	switch s.spec.Kind {
	case ServiceFixed:
		return 0
	case ServiceExponential:
		return 1
	case ServiceBimodal:
		p := s.spec.BimodalP
		m2 := (1-p)*s.short*s.short + p*s.long*s.long
		return m2/(s.spec.Mean*s.spec.Mean) - 1
	case ServiceLognormal:
		return math.Exp(s.spec.Sigma*s.spec.Sigma) - 1
	}
	return math.NaN()
}

// Sample draws one service time.
func (s *Service) Sample(r *rand.Rand) float64 {
	switch s.spec.Kind {
	case ServiceExponential:
		return r.ExpFloat64() * s.spec.Mean
	case ServiceBimodal:
		if r.Float64() < s.spec.BimodalP {
			return s.long
		}
		return s.short
	case ServiceLognormal:
		return math.Exp(s.mu + s.spec.Sigma*r.NormFloat64())
	default:
		return s.spec.Mean
	}
}

// Zipf samples ranks 0..n-1 with probability ∝ 1/(rank+1)^alpha, in O(1) per
// draw (alias method). Rank 0 is the most popular.
type Zipf struct {
	prob  []float64
	alias []int32
	pmf   []float64
}

// NewZipf builds the alias table for n items and exponent alpha ≥ 0.
func NewZipf(n int, alpha float64) (*Zipf, error) {
	if n < 1 || n > 1<<24 {
		return nil, fmt.Errorf("dist: zipf population %d must be in [1, 2^24]", n)
	}
	if !(alpha >= 0) || alpha > 10 {
		return nil, fmt.Errorf("dist: zipf exponent %v must be in [0, 10]", alpha)
	}
	w := make([]float64, n)
	var sum float64
	for i := range w {
		w[i] = math.Pow(float64(i+1), -alpha)
		sum += w[i]
	}
	z := &Zipf{prob: make([]float64, n), alias: make([]int32, n), pmf: make([]float64, n)}
	scaled := make([]float64, n)
	var small, large []int32
	for i := range w {
		z.pmf[i] = w[i] / sum
		scaled[i] = z.pmf[i] * float64(n)
		if scaled[i] < 1 {
			small = append(small, int32(i))
		} else {
			large = append(large, int32(i))
		}
	}
	for len(small) > 0 && len(large) > 0 {
		s := small[len(small)-1]
		small = small[:len(small)-1]
		l := large[len(large)-1]
		z.prob[s] = scaled[s]
		z.alias[s] = l
		scaled[l] = scaled[l] + scaled[s] - 1
		if scaled[l] < 1 {
			large = large[:len(large)-1]
			small = append(small, l)
		}
	}
	for _, i := range large {
		z.prob[i] = 1
		z.alias[i] = i
	}
	for _, i := range small { // numerical leftovers
		z.prob[i] = 1
		z.alias[i] = i
	}
	return z, nil
}

// N is the population size.
func (z *Zipf) N() int { return len(z.prob) }

// PMF is the probability of rank i.
func (z *Zipf) PMF(i int) float64 { return z.pmf[i] }

// Sample draws a rank.
func (z *Zipf) Sample(r *rand.Rand) int {
	i := r.IntN(len(z.prob))
	if r.Float64() < z.prob[i] {
		return i
	}
	return int(z.alias[i])
}
