// Package serverless is a discrete-event simulator of request dispatch to a
// pool of 1-core serverless pods, and the experiments that compare late
// binding, early binding, execution-time-aware early binding and PathFinder's
// bounded wait before binding.
//
// Time is in milliseconds throughout; arrival rates are given in requests
// per second. A request is a chain of sequential stages (function calls);
// each stage is dispatched to a pod on its own, runs to completion (pods do
// not preempt), and the next stage becomes ready when it finishes.
//
// A run is deterministic for its seed. The workload (arrivals, chain
// lengths, execution times, classes) is generated from its own random
// streams and is identical for every policy, so policies are compared on the
// same requests (common random numbers) and the per-seed ratios are paired.
package serverless

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/p4ctl/p4ctl/research/sim/serverless/dist"
)

// ClassLevels returns the CDF levels that split execution times into
// classes: class 0 holds the shortest half of the stages, the last class the
// longest 0.1 %. A class plays the role of the switch's exec_class: the
// dispatcher knows a stage's class, never its execution time.
func ClassLevels() []float64 { return []float64{0.5, 0.75, 0.9, 0.95, 0.99, 0.999} }

// Classes are the execution-time classes of a distribution with their
// distribution-level estimates.
type Classes struct {
	// Upper[i] is the largest execution time (ms) of class i, for every
	// class but the last, which is unbounded.
	Upper []float64 `json:"upper_ms"`
	// Prob[i] is the probability that a stage falls in class i.
	Prob []float64 `json:"prob"`
	// Estimate[i] = E[S | S in class i] (ms), computed from the
	// distribution: the expected cost the dispatcher charges a stage of
	// class i (the switch's exec_class_cost.cost_us).
	Estimate []float64 `json:"estimate_ms"`
}

// NewClasses splits d at ClassLevels. Levels that fall on the same value
// (a discrete distribution) are merged.
func NewClasses(d dist.Distribution) Classes {
	var c Classes
	lo := math.Inf(-1)
	for _, p := range append(ClassLevels(), 1) {
		up := math.Inf(1)
		if p < 1 {
			up = d.Quantile(p)
		}
		if up <= lo && p < 1 {
			continue
		}
		mass := d.CDF(up) - d.CDF(lo)
		if p == 1 {
			mass = 1 - d.CDF(lo)
		}
		if mass <= 0 {
			continue
		}
		pm := d.PartialMean(math.Max(lo, 0), math.Inf(1))
		if p < 1 {
			pm = d.PartialMean(math.Max(lo, 0), up)
		}
		if p < 1 {
			c.Upper = append(c.Upper, up)
		}
		c.Prob = append(c.Prob, mass)
		c.Estimate = append(c.Estimate, pm/mass)
		lo = up
	}
	return c
}

// Of returns the class of an execution time x (ms).
func (c *Classes) Of(x float64) int {
	for i, u := range c.Upper {
		if x <= u {
			return i
		}
	}
	return len(c.Upper)
}

// Len is the number of classes.
func (c *Classes) Len() int { return len(c.Estimate) }

// WorkloadSpec describes the requests of one run.
type WorkloadSpec struct {
	Dist     dist.Distribution
	Lambda   float64 // requests per second (Poisson)
	Requests int
	// Chain lengths are uniform on ChainMin..ChainMax stages.
	ChainMin, ChainMax int
	// EstimateNoise is the σ of the log-normal error with which a stage's
	// class is recognised: the class is that of S·exp(EstimateNoise·Z), Z
	// standard normal. 0 puts every stage in its true class.
	EstimateNoise float64
	Seed          uint64
}

// Validate checks a spec.
func (s WorkloadSpec) Validate() error {
	switch {
	case s.Dist == nil:
		return fmt.Errorf("workload: no distribution")
	case !(s.Lambda > 0) || math.IsInf(s.Lambda, 0):
		return fmt.Errorf("workload: arrival rate %g req/s must be positive", s.Lambda)
	case s.Requests < 1:
		return fmt.Errorf("workload: %d requests, need >= 1", s.Requests)
	case s.ChainMin < 1 || s.ChainMax < s.ChainMin || s.ChainMax > 64:
		return fmt.Errorf("workload: chain length %d-%d, need 1 <= min <= max <= 64", s.ChainMin, s.ChainMax)
	case s.EstimateNoise < 0 || math.IsNaN(s.EstimateNoise):
		return fmt.Errorf("workload: estimate noise %g must be >= 0", s.EstimateNoise)
	}
	return nil
}

// MeanChain is the expected number of stages per request.
func (s WorkloadSpec) MeanChain() float64 { return float64(s.ChainMin+s.ChainMax) / 2 }

// Workload is the generated input of a run, shared read-only by all policies.
type Workload struct {
	Spec    WorkloadSpec
	Classes Classes
	Arrival []float64 // arrival time (ms) of each request, increasing
	First   []int32   // First[r] is r's first stage; First[len(Arrival)] = number of stages
	Exec    []float64 // execution time (ms) of each stage
	Class   []uint8   // class of each stage
	Req     []int32   // request of each stage
}

// Random streams (PCG seed2) of a run; the workload streams are separate so
// that changing λ leaves chains and execution times unchanged.
const (
	streamArrival uint64 = 0x5e7e55_01
	streamChain   uint64 = 0x5e7e55_02
	streamExec    uint64 = 0x5e7e55_03
	streamNoise   uint64 = 0x5e7e55_04
	streamPolicy  uint64 = 0x5e7e55_05
)

// NewWorkload generates the requests of spec with the given classes.
func NewWorkload(spec WorkloadSpec, classes Classes) (*Workload, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if k := classes.Len(); k == 0 || k > 255 || len(classes.Upper) != k-1 || len(classes.Prob) != k {
		return nil, fmt.Errorf("workload: %d classes with %d boundaries, need 1..255 classes and one boundary fewer", k, len(classes.Upper))
	}
	ra := rand.New(rand.NewPCG(spec.Seed, streamArrival))
	rc := rand.New(rand.NewPCG(spec.Seed, streamChain))
	rn := rand.New(rand.NewPCG(spec.Seed, streamNoise))
	sampler := spec.Dist.NewSampler(rand.New(rand.NewPCG(spec.Seed, streamExec)))
	n := spec.Requests
	w := &Workload{Spec: spec, Classes: classes, Arrival: make([]float64, n), First: make([]int32, n+1)}
	estStages := int(float64(n)*spec.MeanChain()) + 16
	w.Exec = make([]float64, 0, estStages)
	w.Class = make([]uint8, 0, estStages)
	w.Req = make([]int32, 0, estStages)
	meanGap := 1000 / spec.Lambda // ms
	t := 0.0
	span := spec.ChainMax - spec.ChainMin + 1
	for r := range n {
		t += meanGap * ra.ExpFloat64()
		w.Arrival[r] = t
		w.First[r] = int32(len(w.Exec))
		k := spec.ChainMin + rc.IntN(span)
		for range k {
			x := sampler.Sample()
			seen := x
			if spec.EstimateNoise > 0 {
				seen = x * math.Exp(spec.EstimateNoise*rn.NormFloat64())
			}
			w.Exec = append(w.Exec, x)
			w.Class = append(w.Class, uint8(classes.Of(seen)))
			w.Req = append(w.Req, int32(r))
		}
	}
	if len(w.Exec) > math.MaxInt32 {
		return nil, fmt.Errorf("workload: %d stages is too many", len(w.Exec))
	}
	w.First[n] = int32(len(w.Exec))
	return w, nil
}

// Stages is the number of stages in the workload.
func (w *Workload) Stages() int { return len(w.Exec) }
