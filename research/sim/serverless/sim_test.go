package serverless

import (
	"context"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/p4ctl/p4ctl/research/sim/serverless/dist"
)

func mustWorkload(t testing.TB, spec WorkloadSpec) *Workload {
	t.Helper()
	w, err := NewWorkload(spec, NewClasses(spec.Dist))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func mustRun(t testing.TB, w *Workload, cfg RunConfig) RunResult {
	t.Helper()
	r, err := Run(context.Background(), w, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// erlangC is the probability that an arrival waits in M/M/c with offered
// load a = λ/μ.
func erlangC(c int, a float64) float64 {
	term, sum := 1.0, 1.0 // a^k/k! for k = 0
	for k := 1; k < c; k++ {
		term *= a / float64(k)
		sum += term
	}
	last := term * a / float64(c) // a^c/c!
	rho := a / float64(c)
	top := last / (1 - rho)
	return top / (sum + top)
}

// Late binding with exponential service, one stage, no notification delay
// is the M/M/c FCFS queue: the mean wait must match Wq = C(c, a)/(cμ − λ)
// within 2 %.
func TestLateBindingMatchesQueueingTheory(t *testing.T) {
	cases := []struct {
		name     string
		pods     int
		rho      float64
		requests int
	}{
		// Sample sizes give a standard error of about 0.3 % (M/M/1) and
		// 0.65 % (M/M/4) of the mean wait, measured across seeds.
		{"M/M/1 rho=0.5", 1, 0.5, 1500000},
		{"M/M/4 rho=0.6", 4, 0.6, 4000000},
	}
	const meanMS = 100.0
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			lambda := tc.rho * float64(tc.pods) / meanMS * 1000 // req/s
			w := mustWorkload(t, WorkloadSpec{Dist: dist.Exponential{MeanMS: meanMS}, Lambda: lambda,
				Requests: tc.requests, ChainMin: 1, ChainMax: 1, Seed: 42})
			r := mustRun(t, w, RunConfig{Policy: LateBinding, Pods: tc.pods, Warmup: 0.02, Seed: 42})
			mu := 1 / meanMS     // per ms
			lam := lambda / 1000 // per ms
			a := lam / mu        // offered load
			want := erlangC(tc.pods, a) / (float64(tc.pods)*mu - lam)
			t.Logf("mean wait %.3f ms, theory %.3f ms", r.MeanResponse, want)
			if rel := math.Abs(r.MeanResponse-want) / want; rel > 0.02 {
				t.Fatalf("mean wait %.3f ms, theory %.3f ms (%.2f%% off)", r.MeanResponse, want, 100*rel)
			}
			if r.OvertakeRate != 0 {
				t.Errorf("FCFS overtook: %g", r.OvertakeRate)
			}
			if rel := math.Abs(r.Utilization-tc.rho) / tc.rho; rel > 0.01 {
				t.Errorf("utilization %.4f, want %.2f", r.Utilization, tc.rho)
			}
		})
	}
}

func TestErlangCKnownValue(t *testing.T) {
	// M/M/2 with a = 1: C = 1/3.
	if got := erlangC(2, 1); math.Abs(got-1.0/3) > 1e-12 {
		t.Fatalf("erlangC(2, 1) = %g, want 1/3", got)
	}
	if got := erlangC(1, 0.5); math.Abs(got-0.5) > 1e-12 {
		t.Fatalf("erlangC(1, 0.5) = %g, want 0.5", got)
	}
}

func studyWorkload(t testing.TB, name string, lambda float64, n int, seed uint64) (*Workload, int, []float64) {
	t.Helper()
	d, err := dist.New(name)
	if err != nil {
		t.Fatal(err)
	}
	w := mustWorkload(t, WorkloadSpec{Dist: d, Lambda: lambda, Requests: n, ChainMin: 1, ChainMax: 3,
		EstimateNoise: 0.5, Seed: seed})
	pods := int(math.Ceil(20 * 2 * d.Mean() / 1000 / 0.9))
	b, err := WaitBounds(BoundInput{Classes: w.Classes, MeanExec: d.Mean(), StageRate: lambda * 2 / 1000, Pods: pods, Delta: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	return w, pods, b
}

// With every wait bound 0, PathFinder never holds a stage, and its binding
// is exactly EarlyExecTime's (same pods, same order, same results).
func TestPathFinderZeroBoundIsEarlyExecTime(t *testing.T) {
	for _, name := range dist.Names() {
		t.Run(name, func(t *testing.T) {
			w, pods, b := studyWorkload(t, name, 20, 3000, 7)
			zero := make([]float64, len(b))
			pf := mustRun(t, w, RunConfig{Policy: PathFinder, Pods: pods, Bounds: zero, Seed: 7, KeepSamples: true})
			ee := mustRun(t, w, RunConfig{Policy: EarlyExecTime, Pods: pods, Bounds: zero, Seed: 7, KeepSamples: true})
			if !reflect.DeepEqual(pf, ee) {
				t.Fatalf("pathfinder(W=0) %+v\n!= early-exec %+v", pf, ee)
			}
		})
	}
}

// PathFinder never holds a stage beyond its class wait; with waits that
// grow with the class (its expected execution time) shorter stages
// overtake, with one wait for every class binding stays in arrival order.
func TestPathFinderRespectsBound(t *testing.T) {
	for _, name := range dist.Names() {
		w, pods, _ := studyWorkload(t, name, 20, 4000, 3)
		tight := slices.Repeat([]float64{50}, w.Classes.Len())
		exec := slices.Clone(w.Classes.Estimate)
		for label, b := range map[string][]float64{"exec": exec, "50ms": tight} {
			// A third of the study's pool (ρ ≈ 2.7), so stages contend
			// even before heavy-tailed load builds up.
			r := mustRun(t, w, RunConfig{Policy: PathFinder, Pods: pods / 3, Bounds: b, Seed: 3})
			if r.MaxHoldExcess > 1e-6 {
				t.Errorf("%s %s: a stage was held %g ms beyond its bound", name, label, r.MaxHoldExcess)
			}
			if label == "50ms" && r.ForcedRate == 0 {
				t.Errorf("%s: no bound expired at 50 ms under overload", name)
			}
			if label == "exec" && r.OvertakeRate == 0 {
				t.Errorf("%s: no short stage overtook a long one", name)
			}
			if label == "50ms" && r.OvertakeRate != 0 {
				t.Errorf("%s: one wait for every class, yet %.4f of the stages overtook", name, r.OvertakeRate)
			}
		}
	}
}

// Throughput equals the arrival rate when the pool is stable, for every
// policy (light load, light-tailed service, so also early binding drains).
func TestThroughputEqualsArrivalRateWhenStable(t *testing.T) {
	w := mustWorkload(t, WorkloadSpec{Dist: dist.Exponential{MeanMS: 500}, Lambda: 20, Requests: 20000,
		ChainMin: 1, ChainMax: 3, EstimateNoise: 0.5, Seed: 11})
	b := slices.Repeat([]float64{200}, w.Classes.Len())
	for _, p := range []Policy{LateBinding, EarlyBinding, EarlyRandom, EarlyExecTime, PathFinder} {
		r := mustRun(t, w, RunConfig{Policy: p, Pods: 40, Bounds: b, Warmup: 0.1, Seed: 11}) // ρ = 0.5
		if math.Abs(r.Throughput-20)/20 > 0.03 {
			t.Errorf("%s: throughput %.2f req/s, arrivals 20", p, r.Throughput)
		}
		if p != PathFinder && r.OvertakeRate != 0 {
			t.Errorf("%s: overtake rate %g, FCFS queues never overtake", p, r.OvertakeRate)
		}
		if math.Abs(r.Utilization-0.5) > 0.03 {
			t.Errorf("%s: utilization %.3f, offered 0.5", p, r.Utilization)
		}
	}
}

// Orderings that queueing theory makes structural, on one workload: the
// central FCFS queue waits less than round-robin or random early binding;
// two choices on expected work wait less than random; a notification delay
// only adds waiting to late binding.
func TestStructuralOrderings(t *testing.T) {
	w := mustWorkload(t, WorkloadSpec{Dist: dist.Exponential{MeanMS: 1000}, Lambda: 8, Requests: 30000,
		ChainMin: 1, ChainMax: 1, Seed: 5})
	run := func(p Policy, notify float64) float64 {
		return mustRun(t, w, RunConfig{Policy: p, Pods: 10, Warmup: 0.1, Seed: 5, NotifyDelay: notify}).MeanResponse
	}
	late, early, random, exec := run(LateBinding, 0), run(EarlyBinding, 0), run(EarlyRandom, 0), run(EarlyExecTime, 0)
	if !(late < early && late < random && exec < random && early < random) {
		t.Fatalf("mean waits: late %.0f, early %.0f, early-exec %.0f, random %.0f ms", late, early, exec, random)
	}
	if slow := run(LateBinding, 200); !(slow > late) {
		t.Fatalf("late binding with 200 ms notification waits %.0f ms, without %.0f ms", slow, late)
	}
}

func TestRunIsDeterministic(t *testing.T) {
	w, pods, b := studyWorkload(t, "zipf", 17.5, 3000, 9)
	for _, p := range Policies() {
		a := mustRun(t, w, RunConfig{Policy: p, Pods: pods, Bounds: b, Seed: 9, KeepSamples: true})
		c := mustRun(t, w, RunConfig{Policy: p, Pods: pods, Bounds: b, Seed: 9, KeepSamples: true})
		if !reflect.DeepEqual(a, c) {
			t.Fatalf("%s: two runs with one seed differ", p)
		}
	}
	w2, _, _ := studyWorkload(t, "zipf", 17.5, 3000, 10)
	if reflect.DeepEqual(w.Exec, w2.Exec) {
		t.Fatal("different seeds gave the same workload")
	}
}

func TestClasses(t *testing.T) {
	for _, name := range append(dist.Names(), "exp:100") {
		d, _ := dist.New(name)
		c := NewClasses(d)
		var p float64
		if len(c.Upper) != c.Len()-1 || len(c.Prob) != c.Len() {
			t.Fatalf("%s: %d boundaries, %d probabilities for %d classes", name, len(c.Upper), len(c.Prob), c.Len())
		}
		for i := range c.Estimate {
			p += c.Prob[i]
			lo, hi := 0.0, math.Inf(1)
			if i > 0 {
				lo = c.Upper[i-1]
			}
			if i < len(c.Upper) {
				hi = c.Upper[i]
			}
			if !(c.Estimate[i] > lo && c.Estimate[i] <= hi) {
				t.Errorf("%s class %d: estimate %g outside (%g, %g]", name, i, c.Estimate[i], lo, hi)
			}
			if i > 0 && !(c.Estimate[i] > c.Estimate[i-1]) {
				t.Errorf("%s: estimates not increasing at class %d", name, i)
			}
			if got := c.Of(c.Estimate[i]); got != i {
				t.Errorf("%s: Of(estimate of class %d) = %d", name, i, got)
			}
		}
		if math.Abs(p-1) > 1e-9 {
			t.Errorf("%s: class probabilities sum to %g", name, p)
		}
	}
}

func TestWaitBounds(t *testing.T) {
	c := NewClasses(dist.Azure())
	in := BoundInput{Classes: c, MeanExec: 10000, StageRate: 0.04, Pods: 450, Delta: 0.01}
	b, err := WaitBounds(in)
	if err != nil {
		t.Fatal(err)
	}
	nu := float64(in.Pods) / in.MeanExec
	z := 2.3263478740408408 // Φ⁻¹(0.99)
	cum := 0.0
	for k, w := range b {
		lk := in.StageRate * cum
		cum += c.Prob[k]
		if k > 0 && w < b[k-1] {
			t.Errorf("bound of class %d (%g) below class %d's (%g)", k, w, k-1, b[k-1])
		}
		if w > in.MeanExec {
			t.Errorf("bound %g above the cap %g", w, in.MeanExec)
		}
		if w < in.MeanExec { // uncapped: it solves the equation
			if got := (nu-lk)*w - z*math.Sqrt((nu+lk)*w); math.Abs(got-1) > 1e-6 {
				t.Errorf("class %d: (ν−λ)W − z√((ν+λ)W) = %g, want 1", k, got)
			}
		}
	}
	// Saturated shorter classes: the cap applies.
	in.StageRate = 1
	b, _ = WaitBounds(in)
	if b[len(b)-1] != in.MeanExec {
		t.Errorf("saturated: last bound %g, want cap %g", b[len(b)-1], in.MeanExec)
	}
	for _, bad := range []BoundInput{{Classes: c, MeanExec: 1, StageRate: 1, Pods: 0, Delta: 0.1},
		{Classes: c, MeanExec: 1, StageRate: 1, Pods: 1, Delta: 1}} {
		if _, err := WaitBounds(bad); err == nil {
			t.Errorf("WaitBounds(%+v) accepted", bad)
		}
	}
}

func TestSuggestSwitch(t *testing.T) {
	c := NewClasses(dist.Azure())
	sc := SuggestSwitch(c, 10000, 0.9, 0.01, []float64{1, 2, 3, 4, 5, 6, 7})
	// 0.9^(2·22) <= 0.01 < 0.9^(2·21)
	if sc.LongMaxHold != 21 || sc.Policy != "p2c-work" || sc.LongReserve != 1 || sc.Bound != 2 {
		t.Fatalf("switch %+v", sc)
	}
	for _, e := range sc.ExecClassCost {
		if e.IsLong != (c.Estimate[e.Class] > 10000) || e.CostUS != int64(math.Round(c.Estimate[e.Class]*1000)) {
			t.Errorf("entry %+v", e)
		}
	}
	if sc.LongWaitBoundMS != 4 { // first long class of Azure is class 3 (29 s)
		t.Errorf("long wait bound %g, want 4", sc.LongWaitBoundMS)
	}
	if got := SuggestSwitch(c, 10000, 0.2, 0.01, nil).LongMaxHold; got != 1 {
		t.Errorf("ρ=0.2: long_max_holds %d, want 1", got) // 0.04^2 <= 0.01
	}
}

func TestRunRejectsBadConfig(t *testing.T) {
	w := mustWorkload(t, WorkloadSpec{Dist: dist.Exponential{MeanMS: 1}, Lambda: 1, Requests: 10, ChainMin: 1, ChainMax: 1})
	for _, cfg := range []RunConfig{
		{Policy: LateBinding, Pods: 0},
		{Policy: Policy(99), Pods: 1},
		{Policy: PathFinder, Pods: 1, Bounds: []float64{1}},
		{Policy: LateBinding, Pods: 1, Warmup: 1},
		{Policy: LateBinding, Pods: 1, NotifyDelay: -1},
		{Policy: PathFinder, Pods: 1, Bounds: slices.Repeat([]float64{math.NaN()}, w.Classes.Len())},
	} {
		if _, err := Run(context.Background(), w, cfg); err == nil {
			t.Errorf("Run accepted %+v", cfg)
		}
	}
	for _, spec := range []WorkloadSpec{
		{Dist: dist.Exponential{MeanMS: 1}, Lambda: 0, Requests: 1, ChainMin: 1, ChainMax: 1},
		{Dist: dist.Exponential{MeanMS: 1}, Lambda: 1, Requests: 0, ChainMin: 1, ChainMax: 1},
		{Dist: dist.Exponential{MeanMS: 1}, Lambda: 1, Requests: 1, ChainMin: 2, ChainMax: 1},
		{Dist: nil, Lambda: 1, Requests: 1, ChainMin: 1, ChainMax: 1},
	} {
		if _, err := NewWorkload(spec, NewClasses(dist.Exponential{MeanMS: 1})); err == nil {
			t.Errorf("NewWorkload accepted %+v", spec)
		}
	}
}

func TestRunHonoursCancellation(t *testing.T) {
	w := mustWorkload(t, WorkloadSpec{Dist: dist.Exponential{MeanMS: 10}, Lambda: 50, Requests: 200000, ChainMin: 1, ChainMax: 1})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, w, RunConfig{Policy: LateBinding, Pods: 1}); err == nil {
		t.Fatal("cancelled run succeeded")
	}
}

func TestPolicyNames(t *testing.T) {
	for _, p := range []Policy{LateBinding, EarlyBinding, EarlyRandom, EarlyExecTime, PathFinder} {
		q, err := ParsePolicy(p.String())
		if err != nil || q != p {
			t.Errorf("round trip %s: %v %v", p, q, err)
		}
	}
	if _, err := PolicyList("late,nope"); err == nil {
		t.Error("PolicyList accepted an unknown name")
	}
	if got, _ := PolicyList("late, pathfinder,late"); !reflect.DeepEqual(got, []Policy{LateBinding, PathFinder}) {
		t.Errorf("PolicyList = %v", got)
	}
}

// A pod with c slots under late binding is c one-slot pods: M/M/c, whose
// mean wait Erlang C gives; a forward hop adds exactly itself to every
// stage's wait when nobody queues.
func TestSlotsMatchQueueingTheory(t *testing.T) {
	const meanMS, slots, rho = 100.0, 4, 0.6
	lambda := rho * slots / meanMS * 1000
	w := mustWorkload(t, WorkloadSpec{Dist: dist.Exponential{MeanMS: meanMS}, Lambda: lambda,
		Requests: 1000000, ChainMin: 1, ChainMax: 1, Seed: 7})
	one := mustRun(t, w, RunConfig{Policy: LateBinding, Pods: 1, Slots: slots, Warmup: 0.02, Seed: 7})
	many := mustRun(t, w, RunConfig{Policy: LateBinding, Pods: slots, Warmup: 0.02, Seed: 7})
	mu, lam := 1/meanMS, lambda/1000
	want := erlangC(slots, lam/mu) / (slots*mu - lam)
	for name, r := range map[string]RunResult{"1 pod × 4 slots": one, "4 pods": many} {
		if rel := math.Abs(r.MeanResponse-want) / want; rel > 0.03 {
			t.Errorf("%s: mean wait %.3f ms, Erlang C %.3f ms", name, r.MeanResponse, want)
		}
		if rel := math.Abs(r.Utilization-rho) / rho; rel > 0.01 {
			t.Errorf("%s: utilization %.4f, want %g", name, r.Utilization, rho)
		}
	}
	light := mustWorkload(t, WorkloadSpec{Dist: dist.Exponential{MeanMS: 1}, Lambda: 10, Requests: 2000, ChainMin: 2, ChainMax: 2, Seed: 1})
	for _, p := range Policies() {
		cfg := RunConfig{Policy: p, Pods: 64, Slots: 4, ForwardDelay: 5, Bounds: make([]float64, light.Classes.Len()), Seed: 1}
		if r := mustRun(t, light, cfg); math.Abs(r.P50Response-10) > 1e-9 {
			t.Errorf("%s: median wait %.6f ms with a 5 ms hop per stage of 2-stage chains, want 10", p, r.P50Response)
		}
	}
}

// TestLatencyIsEndToEnd: the metrics are named as PathFinder §4.2 and
// §5.5 name them: latency is arrival → completion, response time arrival
// → start of execution, so for single calls the mean latency is the mean
// response time plus the mean execution time.
func TestLatencyIsEndToEnd(t *testing.T) {
	w := mustWorkload(t, WorkloadSpec{Dist: dist.Exponential{MeanMS: 100}, Lambda: 60, Requests: 20000, ChainMin: 1, ChainMax: 1, Seed: 4})
	var exec float64
	first := int(0.1 * float64(len(w.Arrival)))
	for st := w.First[first]; st < w.First[len(w.Arrival)]; st++ {
		exec += w.Exec[st]
	}
	exec /= float64(len(w.Arrival) - first)
	for _, p := range AllPolicies() {
		r := mustRun(t, w, RunConfig{Policy: p, Pods: 8, Bounds: slices.Repeat([]float64{10}, w.Classes.Len()), Warmup: 0.1, Seed: 4})
		if d := r.MeanLatency - r.MeanResponse - exec; math.Abs(d) > 1e-6*exec {
			t.Errorf("%s: mean latency %.3f − response %.3f = %.3f ms, mean execution %.3f ms", p, r.MeanLatency, r.MeanResponse, r.MeanLatency-r.MeanResponse, exec)
		}
		if !(r.P99Latency > r.P99Response) {
			t.Errorf("%s: P99 latency %.3f not above P99 response %.3f", p, r.P99Latency, r.P99Response)
		}
	}
}

// TestPathFinderBindsOnItsTimer: a held stage binds when its wait
// expires, not when a pod frees (PathFinder §3.1): on an idle pool every
// stage's response time is at least its class's wait; the idle-binding
// variant binds at once.
func TestPathFinderBindsOnItsTimer(t *testing.T) {
	w := mustWorkload(t, WorkloadSpec{Dist: dist.Exponential{MeanMS: 1}, Lambda: 1, Requests: 500, ChainMin: 1, ChainMax: 1, Seed: 2})
	b := slices.Repeat([]float64{30}, w.Classes.Len())
	r := mustRun(t, w, RunConfig{Policy: PathFinder, Pods: 64, Bounds: b, Seed: 2})
	if math.Abs(r.P50Response-30) > 1e-9 || r.ForcedRate != 1 {
		t.Errorf("pathfinder on an idle pool: median response %.3f ms, forced %.3f; want 30 ms, all bound by the timer", r.P50Response, r.ForcedRate)
	}
	idle := mustRun(t, w, RunConfig{Policy: PathFinderIdle, Pods: 64, Bounds: b, Seed: 2})
	if idle.P99Response != 0 {
		t.Errorf("pathfinder-idle on an idle pool: P99 response %.3f ms, want 0", idle.P99Response)
	}
}
