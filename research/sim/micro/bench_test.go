package micro

import (
	"context"
	"github.com/p4ctl/p4ctl/internal/testing/cputime"
	"runtime"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/research/sim/dist"
)

// cpuClock reads the thread's CPU time, or wall time where unavailable.
func cpuClock() time.Duration {
	if d, ok := cputime.Thread(); ok {
		return d
	}
	return time.Duration(time.Now().UnixNano())
}

// rngBaseline is the CPU time of drawing the arrivals and service times of
// n requests — the least any simulator of this workload must do — the
// in-run baseline the benchmark reports against.
func rngBaseline(cfg Config, n int) time.Duration {
	inter, _ := dist.NewInterval(cfg.ArrivalKind, 1/cfg.ArrivalRate(), cfg.ArrivalCV)
	svc, _ := dist.NewService(cfg.Service)
	ra, rs := dist.NewRand(1, 1), dist.NewRand(1, 2)
	start := cpuClock()
	var sink float64
	for i := 0; i < n; i++ {
		sink += inter.Sample(ra) + svc.Sample(rs)
	}
	if sink < 0 {
		panic("negative time")
	}
	return cpuClock() - start
}

// BenchmarkE1 measures simulated requests per CPU-second of one core for
// each E1 policy (goal ≥ 2 M req/s; the run is single-threaded and timed by
// its thread's CPU clock, so other load on the machine does not count), and
// the cost per request as a multiple of merely drawing its arrival and
// service time (x_rng, measured in the same run).
func BenchmarkE1(b *testing.B) {
	benchPolicies(b, "random", "p2c", "jsw", "random+fwd", "random+ideal", "jbsq", "jiq")
}

// BenchmarkSwitch is BenchmarkE1 for the switch's own dispatch (the loop
// of pipeline.Pool.Dispatch): bounded (the Little bound), unbounded and random.
func BenchmarkSwitch(b *testing.B) {
	benchPolicies(b, "switch", "switch:inf", "switch/random")
}

// benchPolicies runs the default scenario under each policy, reporting
// simulated requests per CPU-second and the cost relative to the RNG.
func benchPolicies(b *testing.B, policies ...string) {
	for _, p := range policies {
		b.Run(p, func(b *testing.B) {
			runtime.LockOSThread() // the thread CPU clock must follow the run
			defer runtime.UnlockOSThread()
			cfg := Scenario()
			cfg.Policy = MustPolicy(p)
			cfg.Requests, cfg.Warmup = 100000, 10000
			per := cfg.Requests + cfg.Warmup
			b.ReportAllocs()
			b.ResetTimer()
			start := cpuClock()
			for i := 0; i < b.N; i++ {
				cfg.Seed = uint64(i + 1)
				if _, err := Run(context.Background(), cfg); err != nil {
					b.Fatal(err)
				}
			}
			cpu := cpuClock() - start
			b.StopTimer()
			base := rngBaseline(cfg, b.N*per)
			reqs := float64(b.N * per)
			b.ReportMetric(reqs/cpu.Seconds(), "req/cpu-s")
			b.ReportMetric(float64(cpu.Nanoseconds())/reqs, "cpu-ns/req")
			b.ReportMetric(float64(cpu)/float64(base), "x_rng")
		})
	}
}

// TestSteadyStateAllocationFree: after warm-up the event loop allocates
// nothing — ten times the requests cost (almost) no more allocations; what
// remains is setup and the few doublings of queues that reach new maxima.
func TestSteadyStateAllocationFree(t *testing.T) {
	study, _ := LookupScenario(ScenarioStudy)
	for i, p := range []string{"random", "jsw", "random+fwd", "random+ideal", "jbsq", "jiq", "random+fwd", "jbsq", "passive"} {
		cfg := Scenario()
		if i >= 6 { // the study scenario: per-core queues, bursts, forwarding hops
			cfg = study.Config
			if p == "passive" { // as T40b runs it: a connection pinned to a host
				cfg.Connections, cfg.Granularity = 1024, study.Config.Sweep.T40bGranularity
			}
		}
		cfg.Policy = MustPolicy(p)
		allocs := func(n int) float64 {
			cfg.Requests, cfg.Warmup = n, 2000
			return testing.AllocsPerRun(1, func() {
				if _, err := Run(context.Background(), cfg); err != nil {
					t.Fatal(err)
				}
			})
		}
		small, large := allocs(20000), allocs(200000)
		if large-small > 40 {
			t.Errorf("%s (granularity %q): %v allocations for 20k requests, %v for 200k", p, cfg.Granularity, small, large)
		}
	}
}
