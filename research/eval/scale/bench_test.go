package scale

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/pkg/compiler"
	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
	"github.com/p4ctl/p4ctl/pkg/regions"
	"github.com/p4ctl/p4ctl/research/configgen"
)

var (
	benchSrcOnce sync.Once
	benchSrc     *regions.Synthetic
)

func source(b *testing.B) *regions.Synthetic {
	benchSrcOnce.Do(func() {
		s, err := regions.NewSynthetic(1, regions.DefaultSyntheticPeriod())
		if err != nil {
			b.Fatal(err)
		}
		benchSrc = s
	})
	return benchSrc
}

var benchHour = time.Date(2022, 1, 10, 12, 0, 0, 0, time.UTC)

// inputFor is the compile input of a generated configuration (N sites, R
// regions) under policy, without table limits.
func inputFor(b *testing.B, n, r int, policy string) compiler.Input {
	b.Helper()
	cfg, _, err := configgen.Generate(configgen.Options{Sites: n, Regions: r})
	if err != nil {
		b.Fatal(err)
	}
	return inputOf(b, cfg, policy, benchHour, 1)
}

func inputOf(b *testing.B, cfg *config.Config, policy string, at time.Time, epoch uint8) compiler.Input {
	b.Helper()
	c, err := compiler.Snapshot(cfg, source(b), at)
	if err != nil {
		b.Fatal(err)
	}
	in, err := compiler.NewInput(cfg, c, epoch)
	if err != nil {
		b.Fatal(err)
	}
	if in.Policy, err = regions.ParsePolicy(policy); err != nil {
		b.Fatal(err)
	}
	un := compiler.Unbounded()
	in.Capacity = &un
	return in
}

// perCompile times k compiles of in (the in-run baseline's clock).
func perCompile(b *testing.B, in compiler.Input, k int) time.Duration {
	t0 := time.Now()
	for range k {
		if _, err := compiler.Compile(in); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(t0) / time.Duration(k)
}

// BenchmarkScaleCompile is the compile time and allocations of one hour's
// state versus the number of sites N and regions R (policy C, generated
// configurations, no table limits). Besides ns/op and allocs/op it reports
// ms/compile, the entries compiled, ns per entry, and x-N10: the time as a
// ratio to compiling the N = 10 configuration of the same R, measured in
// the same run — linear growth in N reads as x-N10 ≈ N/10.
func BenchmarkScaleCompile(b *testing.B) {
	for _, r := range DefaultRegions() {
		small := inputFor(b, 10, r, "C")
		for _, n := range DefaultSites() {
			b.Run(fmt.Sprintf("R=%d/N=%d", r, n), func(b *testing.B) {
				in := inputFor(b, n, r, "C")
				st, err := compiler.Compile(in)
				if err != nil {
					b.Fatal(err)
				}
				base := perCompile(b, small, 200)
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					if _, err := compiler.Compile(in); err != nil {
						b.Fatal(err)
					}
				}
				per := b.Elapsed() / time.Duration(b.N)
				b.ReportMetric(float64(per)/float64(time.Millisecond), "ms/compile")
				b.ReportMetric(float64(len(st.Entries)), "entries")
				b.ReportMetric(float64(per)/float64(len(st.Entries)), "ns/entry")
				b.ReportMetric(float64(per)/float64(base), "x-N10")
			})
		}
	}
}

// BenchmarkScaleWrites reports, per policy, the entries and the writes of
// the hitless hourly update (compiler.PlanUpdate from one hour to the
// next, three updates) versus N at R = 32, and x-2R+1: the writes as a
// ratio to 2R+1, the bound of a shared ranking. C (and A, B, C+) stay at
// ≤ 1 whatever N; D ranks per site and grows as 2·R·N. ns/op is the time
// to compile and plan the updates.
func BenchmarkScaleWrites(b *testing.B) {
	const r, hours = 32, 4
	for _, pol := range DefaultPolicies() {
		for _, n := range DefaultSites() {
			b.Run(fmt.Sprintf("%s/R=%d/N=%d", pol, r, n), func(b *testing.B) {
				cfg, _, err := configgen.Generate(configgen.Options{Sites: n, Regions: r})
				if err != nil {
					b.Fatal(err)
				}
				var p Point
				for b.Loop() {
					if p, err = MeasurePoint(context.Background(), cfg, source(b), pol, benchHour, hours); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(p.Entries), "entries")
				b.ReportMetric(float64(p.ByTable[pipeline.TableSLAFeasibility]), "feasibility")
				b.ReportMetric(p.WritesMean, "writes/h")
				b.ReportMetric(p.WritesMean/float64(2*r+1), "x-2R+1")
			})
		}
	}
}
