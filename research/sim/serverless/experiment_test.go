package serverless

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"github.com/p4ctl/p4ctl/internal/testing/cputime"
	"github.com/p4ctl/p4ctl/pkg/stats"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/research/sim/serverless/dist"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

func tinyExperiment() ExperimentConfig {
	c := DefaultExperiment().Quick()
	c.Dists = []string{"azure", "exp:2000"}
	c.Lambdas = []float64{10, 20}
	c.Seeds = 2
	c.Requests = 1500
	c.CDFLambda = 20
	return c
}

// Seeds reproduce exactly, whatever the number of workers; another base
// seed gives other numbers.
func TestExperimentReproducible(t *testing.T) {
	c := tinyExperiment()
	c.Workers = 1
	a, err := RunExperiment(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	c.Workers = 3
	b, err := RunExperiment(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ja, jb) {
		t.Fatal("results depend on the number of workers")
	}
	for i := range a.Scenarios {
		la, ra := a.Scenarios[i].Samples()
		lb, rb := b.Scenarios[i].Samples()
		if !reflect.DeepEqual(la, lb) || !reflect.DeepEqual(ra, rb) {
			t.Fatalf("scenario %d: samples differ", i)
		}
	}
	c.BaseSeed = 100
	d, err := RunExperiment(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if jd, err := json.Marshal(d); err != nil || bytes.Equal(ja, jd) {
		t.Fatal("another seed gave identical results")
	}
}

// The quick default experiment: every cell present, structural properties
// hold, and it is valid JSON.
func TestQuickExperimentStructure(t *testing.T) {
	c := DefaultExperiment().Quick()
	start := time.Now()
	res, err := RunExperiment(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("quick experiment: %v", time.Since(start))
	if want := len(c.Dists) * len(c.Lambdas) * len(c.Policies); len(res.Scenarios) != want {
		t.Fatalf("%d scenarios, want %d", len(res.Scenarios), want)
	}
	if want := len(c.Dists) * len(c.Lambdas) * (len(c.Policies) - 1) * 2; len(res.Ratios) != want {
		t.Fatalf("%d ratios, want %d", len(res.Ratios), want)
	}
	for _, s := range res.Scenarios {
		m := s.Metrics
		if m.P99ResponseMS.N != c.Seeds || !(m.P99ResponseMS.Mean > 0) {
			t.Errorf("%s λ=%g %s: P99 response %+v", s.Dist, s.Lambda, s.Policy, m.P99ResponseMS)
		}
		if s.Policy == PathFinder && m.MaxHoldExcessMS > 1e-6 {
			t.Errorf("%s λ=%g: PathFinder held a stage %g ms beyond its bound", s.Dist, s.Lambda, m.MaxHoldExcessMS)
		}
		if s.Policy != PathFinder && m.OvertakeRate.Max != 0 {
			t.Errorf("%s λ=%g %s: FCFS policy overtook", s.Dist, s.Lambda, s.Policy)
		}
		if !(m.ThroughputRPS.Mean > 0 && m.ThroughputRPS.Mean <= 1.1*s.Lambda) {
			t.Errorf("%s λ=%g %s: throughput %.2f req/s", s.Dist, s.Lambda, s.Policy, m.ThroughputRPS.Mean)
		}
	}
	if _, err := json.Marshal(res); err != nil {
		t.Fatalf("json: %v", err)
	}
}

// The text rendering of a tiny experiment is stable (go test -update
// rewrites testdata/tiny.golden).
func TestExperimentTextGolden(t *testing.T) {
	res, err := RunExperiment(context.Background(), tinyExperiment())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := res.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "tiny.golden")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("text output differs from %s (go test -update to accept):\n%s", golden, buf.String())
	}
}

// sized is the pre-issue-25 default: pools sized for ρ = 0.9 at 20 req/s
// from the distributions' literal units, chains of 1–3 stages, derived
// waits; the tests of pool sizing and limits use it.
func sized() ExperimentConfig {
	c := DefaultExperiment()
	c.Pods, c.ContainerConcurrency, c.ScaleToLoad, c.MaxWaitMS, c.WaitRule = 0, 0, false, 0, WaitDerived
	c.ChainMin, c.ChainMax = 1, 3
	return c
}

func TestPlanOnly(t *testing.T) {
	c := sized()
	c.Dists = []string{"zipf"}
	c.Lambdas = []float64{20}
	res, err := PlanOnly(c)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Bounds) != 1 || len(res.Scenarios) != 0 || res.Distributions[0].Pods != 375 {
		t.Fatalf("plan: %+v", res)
	}
	b := res.Bounds[0]
	if b.Rho < 0.89 || b.Rho > 0.9 || b.Switch.LongMaxHold != 21 {
		t.Fatalf("bound info %+v", b)
	}
	var buf bytes.Buffer
	if err := res.WriteText(&buf); err != nil || !bytes.Contains(buf.Bytes(), []byte("long_max_holds=21")) {
		t.Fatalf("text: %v\n%s", err, buf.String())
	}
}

func TestExperimentValidate(t *testing.T) {
	mod := []func(*ExperimentConfig){
		func(c *ExperimentConfig) { c.Dists = nil },
		func(c *ExperimentConfig) { c.Dists = []string{"nope"} },
		func(c *ExperimentConfig) { c.Lambdas = []float64{-1} },
		func(c *ExperimentConfig) { c.NotifyDelays = []float64{-5} },
		func(c *ExperimentConfig) { c.Seeds = 0 },
		func(c *ExperimentConfig) { c.Pods, c.RhoMax = 0, 1.5 },
		func(c *ExperimentConfig) { c.Delta = 0 },
		func(c *ExperimentConfig) { c.ChainMin = 0 },
		func(c *ExperimentConfig) { c.Warmup = 1 },
		func(c *ExperimentConfig) { c.Requests = 0 },
		// Sizes that would exhaust memory.
		func(c *ExperimentConfig) { c.Dists = []string{"exp:1e10"} },                           // 444 M pods sized
		func(c *ExperimentConfig) { c.Pods, c.ContainerConcurrency = 100000000, 1 },            // too many pods
		func(c *ExperimentConfig) { c.Pods, c.ContainerConcurrency = 2000, 1000 },              // too many slots
		func(c *ExperimentConfig) { c.Pods, c.ContainerConcurrency, c.TimeScale = 16, 0, 1e5 }, // slots sized per pod
		func(c *ExperimentConfig) { c.TimeScale = 1e9 },
		func(c *ExperimentConfig) { c.TimeScale = math.NaN() },
		func(c *ExperimentConfig) { c.Requests = MaxRunStages/3 + 1 },
		func(c *ExperimentConfig) { c.Seeds = MaxSeeds + 1 },
		func(c *ExperimentConfig) { c.Lambdas = make([]float64, 1000); c.Seeds = 1000 }, // 10^7 runs
	}
	for i, m := range mod {
		c := sized()
		m(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("case %d: Validate accepted %+v", i, c)
		}
	}
	if err := DefaultExperiment().Validate(); err != nil {
		t.Fatal(err)
	}
	if err := NotifyExperiment().Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestPoolSize: the pool as given, or sized for RhoMax, within the limits;
// and the runs an experiment holds at once fit MemoryBudget.
func TestPoolSize(t *testing.T) {
	c := sized()
	d := dist.Exponential{MeanMS: 1000}
	if p, s, err := PoolSize(c, d); err != nil || p != 45 || s != 1 { // 20 req/s × 2 stages × 1 s / 0.9
		t.Fatalf("sized: %d × %d, %v", p, s, err)
	}
	c.Pods = 16
	if p, s, err := PoolSize(c, d); err != nil || p != 16 || s != 3 {
		t.Fatalf("slots sized: %d × %d, %v", p, s, err)
	}
	c.Pods = 0
	if _, _, err := PoolSize(c, dist.Exponential{MeanMS: 1e10}); err == nil || !strings.Contains(err.Error(), "2^20") {
		t.Fatalf("444 M pods: %v", err)
	}
	big := c
	big.Requests, big.ChainMax = MaxRunStages/64, 64
	if w := memoryWorkers(big, []setup{{pods: 16, slots: 1}}); w != 1 {
		t.Errorf("%d stages a run: %d workers, want 1", MaxRunStages, w)
	}
	if w := memoryWorkers(c, []setup{{pods: 500, slots: 1}}); w < 64 {
		t.Errorf("default runs: %d workers, want many", w)
	}
}

func TestExperimentCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := RunExperiment(ctx, tinyExperiment()); err == nil {
		t.Fatal("cancelled experiment succeeded")
	}
}

// BenchmarkSimulate reports simulated requests per second (one goroutine,
// wall clock) for each policy on the same Azure workload at λ = 20 req/s,
// each policy's cost relative to late binding measured in the same run, and
// requests per CPU-second of the process (the per-core rate, robust to a
// machine shared with other jobs).
func BenchmarkSimulate(b *testing.B) {
	d := dist.Azure()
	const n = 20000
	w := mustWorkload(b, WorkloadSpec{Dist: d, Lambda: 20, Requests: n, ChainMin: 1, ChainMax: 3, EstimateNoise: 0.5, Seed: 1})
	pods := 457
	bounds, err := WaitBounds(BoundInput{Classes: w.Classes, MeanExec: d.Mean(), StageRate: 0.04, Pods: pods, Delta: 0.01})
	if err != nil {
		b.Fatal(err)
	}
	pols := Policies()
	elapsed := make([]time.Duration, len(pols))
	cpu0 := cputime.ProcessTime()
	b.ResetTimer()
	for range b.N {
		for i, p := range pols {
			start := time.Now()
			if _, err := Run(context.Background(), w, RunConfig{Policy: p, Pods: pods, Bounds: bounds, Warmup: 0.1, Seed: 1}); err != nil {
				b.Fatal(err)
			}
			elapsed[i] += time.Since(start)
		}
	}
	b.StopTimer()
	if cpu := cputime.ProcessTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(n*b.N*len(pols))/cpu.Seconds(), "req/cpu-s")
	}
	for i, p := range pols {
		b.ReportMetric(float64(n*b.N)/elapsed[i].Seconds(), p.String()+"-req/s")
		if i > 0 {
			b.ReportMetric(elapsed[i].Seconds()/elapsed[0].Seconds(), p.String()+"/late-cost")
		}
	}
}

// BenchmarkWorkload is the cost of generating the requests (sampling), the
// part every policy shares.
func BenchmarkWorkload(b *testing.B) {
	d := dist.Azure()
	c := NewClasses(d)
	const n = 20000
	for range b.N {
		if _, err := NewWorkload(WorkloadSpec{Dist: d, Lambda: 20, Requests: n, ChainMin: 1, ChainMax: 3, EstimateNoise: 0.5, Seed: 1}, c); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "req/s")
}

func TestKnativeExperimentAndRatios(t *testing.T) {
	cfg := KnativeExperiment().Quick()
	cfg.Dists, cfg.Lambdas, cfg.Seeds, cfg.Requests = []string{"azure"}, []float64{20}, 2, 1500
	res, err := RunExperiment(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	d := res.Distributions[0]
	if d.Pods != KnativePods || d.Slots < 2 {
		t.Fatalf("pool %d × %d", d.Pods, d.Slots)
	}
	if rho := res.Scenarios[0].Rho; rho > 0.9 || rho < 0.8 {
		t.Errorf("ρ = %.3f at 20 req/s, want just below 0.9", rho)
	}
	sw, err := RatioSweep(context.Background(), cfg, []float64{0, 250}, []float64{1, 0.1})
	if err != nil {
		t.Fatal(err)
	}
	if len(sw.Points) != 4 || len(sw.Points[0].Ranges) != 4 {
		t.Fatalf("sweep %+v", sw.Points)
	}
	for _, p := range sw.Points {
		for _, r := range p.Ranges {
			if r.Cells != 1 || r.Min > r.Max || r.Inside > r.Cells {
				t.Errorf("%+v", r)
			}
		}
	}
	if p := sw.Points[1]; p.TimeScale != 0.1 || p.Slots[0] >= sw.Points[0].Slots[0] {
		t.Errorf("time scale %g kept %d slots (scale 1: %d)", p.TimeScale, p.Slots[0], sw.Points[0].Slots[0])
	}
	var buf bytes.Buffer
	if err := sw.WriteText(&buf); err != nil || !strings.Contains(buf.String(), "PathFinder paper (reported") {
		t.Fatalf("%v\n%s", err, buf.String())
	}
}

// TestPaperRanges: ratios are counted against the paper's range of their
// baseline, ends included; baselines the paper does not report (Early+Exec)
// and metrics without cells are left out.
func TestPaperRanges(t *testing.T) {
	r := func(b Policy, m string, v float64) Ratio {
		return Ratio{Baseline: b, Metric: m, Ratio: stats.Summary{N: 3, Mean: v}}
	}
	got := PaperRanges([]Ratio{
		r(LateBinding, "p99_latency", 2.10), r(LateBinding, "p99_latency", 4.11), r(LateBinding, "p99_latency", 3),
		r(EarlyBinding, "p99_latency", 1.48), r(EarlyBinding, "p99_latency", 2.75),
		r(EarlyExecTime, "p99_latency", 2), r(LateBinding, "p99_response", 1),
	})
	want := []RatioRange{
		{Metric: "p99_latency", Baseline: LateBinding, Min: 2.10, Max: 4.11, Inside: 2, Cells: 3},
		{Metric: "p99_latency", Baseline: EarlyBinding, Min: 1.48, Max: 2.75, Inside: 1, Cells: 2},
		{Metric: "p99_response", Baseline: LateBinding, Min: 1, Max: 1, Inside: 0, Cells: 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}
