package serverless

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// BoundInput is what the wait-bound derivation needs: the execution-time
// classes and mean (from the execution-time distribution), the stage
// arrival rate (from the arrival process and chain lengths) and the pool.
type BoundInput struct {
	Classes   Classes
	MeanExec  float64 // E[S], ms
	StageRate float64 // stages per ms: λ · E[chain length] / 1000
	Pods      int
	// Delta is the tolerated probability that a held stage is still unbound
	// at its bound under the nominal (all pods busy) model.
	Delta float64
}

// WaitBounds derives PathFinder's per-class wait bound W_k (ms).
//
// Model: the bound matters when every pod is busy. Pods then free as a
// point process of rate ν = c / E[S] (each busy pod completes one stage per
// E[S] on average). A stage of class k held in the central queue is
// overtaken by every stage of a shorter class that becomes ready meanwhile,
// a Poisson stream of rate λ_k = λ_s · P(class < k). It is dispatched once
// the frees since it became ready exceed the overtakers: within time W,
// frees F ~ Poisson(νW) and overtakers A ~ Poisson(λ_k W). W_k is the
// smallest W with P(F − A ≥ 1) ≥ 1 − δ in the normal approximation:
//
//	(ν − λ_k)·W − z_{1−δ}·√((ν + λ_k)·W) = 1,
//
// a quadratic in √W. Waiting beyond W_k means shorter classes are taking the
// frees faster than the model allows (probability <= δ when the model
// holds): further waiting only extends the overtaking, so the stage binds
// early instead. W_k is capped at E[S]: a power-of-two pick on expected
// remaining work has, at ρ < 1, on average less than one stage of work
// ahead, so holding a stage longer than one mean execution time costs more
// than binding it. If ν <= λ_k (shorter classes alone saturate the frees)
// the cap applies.
func WaitBounds(in BoundInput) ([]float64, error) {
	if in.Pods < 1 || !(in.MeanExec > 0) || !(in.StageRate > 0) || !(in.Delta > 0 && in.Delta < 1) {
		return nil, fmt.Errorf("wait bounds: need pods >= 1, mean > 0, rate > 0, 0 < δ < 1 (have %d, %g, %g, %g)",
			in.Pods, in.MeanExec, in.StageRate, in.Delta)
	}
	nu := float64(in.Pods) / in.MeanExec
	z := distuv.UnitNormal.Quantile(1 - in.Delta)
	out := make([]float64, in.Classes.Len())
	cum := 0.0
	for k := range out {
		lk := in.StageRate * cum
		cum += in.Classes.Prob[k]
		a := nu - lk
		w := in.MeanExec
		if a > 0 {
			b := z * math.Sqrt(nu+lk)
			u := (b + math.Sqrt(b*b+4*a)) / (2 * a)
			w = math.Min(u*u, in.MeanExec)
		}
		out[k] = w
	}
	return out, nil
}

// SwitchConfig is how the PathFinder pool could be expressed in the p4ctl
// pipeline (docs/PIPELINE.md, server_pool.set_pool and exec_class_cost).
type SwitchConfig struct {
	// Policy, Bound, MaxHolds, OnFull, LongReserve and LongMaxHold are the
	// set_pool parameters of the same names (docs/PIPELINE.md).
	Policy      string `json:"policy"`
	Bound       int    `json:"bound"`
	MaxHolds    int    `json:"max_holds"`
	OnFull      string `json:"on_full"`
	LongReserve int    `json:"long_reserve"`
	LongMaxHold int    `json:"long_max_holds"`
	// Utilization is the pool's utilization ρ the holds were derived for.
	Utilization float64 `json:"utilization"`
	// LongWaitBoundMS is the time bound of the shortest long class, which
	// recirculation cannot realise (see SuggestSwitch).
	LongWaitBoundMS float64         `json:"long_wait_bound_ms"`
	ExecClassCost   []ExecClassCost `json:"exec_class_cost"`
}

// ExecClassCost is one exec_class_cost entry.
type ExecClassCost struct {
	Class  int   `json:"exec_class"` // the request header's exec class
	CostUS int64 `json:"cost_us"`    // expected execution time (µs)
	IsLong bool  `json:"is_long"`    // long: held while the pick is within long_reserve of the bound
}

// SuggestSwitch maps the simulated PathFinder onto set_pool parameters for a
// pool of 1-core pods at utilization rho:
//
//   - policy p2c-work (expected-remaining-work power of two), cost_us of
//     each exec class = its distribution-level estimate, is_long for the
//     classes whose estimate exceeds E[S];
//   - bound 2 and long_reserve 1: a short request may queue behind one
//     running request, a long one binds only to an idle pod (out = 0), so
//     short requests overtake deferred long ones;
//   - long_max_holds: a hold re-samples the candidates; the p2c-work pick is
//     busy with probability ≈ ρ² (two pods, each busy with probability ρ),
//     so after h holds a long request is still deferred with probability
//     ≈ ρ^(2(h+1)); h is the smallest with ρ^(2(h+1)) <= δ (cap 255);
//   - max_holds: a short request holds while the pick has >= 2 outstanding,
//     ≈ ρ² per pod in an M/M/1 approximation, ρ⁴ for the better of two;
//   - on_full force: after its holds a request binds to the p2c-work pick,
//     which is PathFinder's action when the bound expires.
//
// A hold is one recirculation (microseconds), so the data plane bounds the
// number of probes, not the wait in time: the seconds-scale W of WaitBounds
// needs a queue outside the switch (a gateway) or is approximated by the
// probe bound.
func SuggestSwitch(c Classes, meanExec, rho, delta float64, bounds []float64) SwitchConfig {
	holds := func(perPass float64) int {
		if perPass <= 0 {
			return 0
		}
		if perPass >= 1 {
			return 255
		}
		h := math.Ceil(math.Log(delta)/math.Log(perPass)) - 1
		return int(math.Max(0, math.Min(255, h)))
	}
	sc := SwitchConfig{Policy: "p2c-work", Bound: 2, OnFull: "force", LongReserve: 1,
		LongMaxHold: holds(rho * rho), MaxHolds: holds(math.Pow(rho, 4)), Utilization: rho,
		LongWaitBoundMS: math.NaN()}
	for k, e := range c.Estimate {
		long := e > meanExec
		sc.ExecClassCost = append(sc.ExecClassCost, ExecClassCost{Class: k, CostUS: int64(math.Round(e * 1000)), IsLong: long})
		if long && math.IsNaN(sc.LongWaitBoundMS) && k < len(bounds) {
			sc.LongWaitBoundMS = bounds[k]
		}
	}
	if math.IsNaN(sc.LongWaitBoundMS) {
		sc.LongWaitBoundMS = 0
	}
	return sc
}
