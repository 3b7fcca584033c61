package compiler

import (
	"github.com/p4ctl/p4ctl/internal/testing/cputime"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/pkg/regions"
)

// BenchmarkPlan measures the hourly plan compute for 12 regions × 64 sites
// × 6 SLA classes (the budget: ≤ 1 ms): compile the new state and
// plan the hitless change from the previous hour's. Besides ns/op it reports
// the time as a ratio to a baseline measured in the same run: deep-copying
// the resulting state (the cost of merely materializing that many entries),
// and the process CPU time per plan (GC included), which a busy shared
// machine distorts less than wall time.
func BenchmarkPlan(b *testing.B) {
	cfg := generated(b, 12, 64, 6, "C", 42)
	c0 := snapshot(b, cfg, testHour)
	c1 := snapshot(b, cfg, testHour.Add(time.Hour))
	for _, p := range []regions.Policy{regions.PolicyC, regions.PolicyCPlus, regions.PolicyD} {
		b.Run(p.String(), func(b *testing.B) {
			in := input(b, cfg, p, c0, 1)
			prev := compile(b, in)
			in.Carbon, in.Epoch = c1, 2

			// Baseline in the same run: cloning the state.
			const rounds = 200
			start := time.Now()
			for range rounds {
				_ = prev.Clone()
			}
			base := time.Since(start) / rounds

			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cputime.ProcessTime()
			for b.Loop() {
				next, err := Compile(in)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := PlanGeneration(prev, next); err != nil {
					b.Fatal(err)
				}
			}
			cpuPerOp := (cputime.ProcessTime() - cpu0) / time.Duration(b.N)
			perOp := b.Elapsed() / time.Duration(b.N)
			b.ReportMetric(float64(len(prev.Entries)), "entries")
			b.ReportMetric(float64(perOp)/float64(base), "x-clone")
			b.ReportMetric(float64(perOp)/float64(time.Millisecond), "ms/plan")
			b.ReportMetric(float64(cpuPerOp)/float64(time.Millisecond), "cpu-ms/plan")
		})
	}
}

// BenchmarkCompile is Compile alone (no generation plan) for the same size.
func BenchmarkCompile(b *testing.B) {
	cfg := generated(b, 12, 64, 6, "C", 42)
	in := input(b, cfg, regions.PolicyC, snapshot(b, cfg, testHour), 1)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile(in); err != nil {
			b.Fatal(err)
		}
	}
}
