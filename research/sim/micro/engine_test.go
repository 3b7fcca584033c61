package micro

import (
	"context"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/research/sim/dist"
)

func run(t *testing.T, cfg Config) RunResult {
	t.Helper()
	r, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// erlangCWait is the mean waiting time in queue of M/M/c (Erlang C).
func erlangCWait(c int, lambda, mu float64) float64 {
	a := lambda / mu
	term, sum := 1.0, 1.0 // a^k/k!
	for k := 1; k < c; k++ {
		term *= a / float64(k)
		sum += term
	}
	last := term * a / float64(c) * float64(c) / (float64(c) - a)
	pw := last / (sum + last)
	return pw / (float64(c)*mu - lambda)
}

func TestErlangCHelper(t *testing.T) {
	// M/M/1: Wq = ρ/(μ−λ).
	if w := erlangCWait(1, 0.5, 1); math.Abs(w-1) > 1e-12 {
		t.Fatalf("M/M/1 Wq %v, want 1", w)
	}
	// M/M/2 with a = 1: P(wait) = 1/3, Wq = (1/3)/(2−1) = 1/3.
	if w := erlangCWait(2, 1, 1); math.Abs(w-1.0/3) > 1e-12 {
		t.Fatalf("M/M/2 Wq %v, want 1/3", w)
	}
}

// TestQueueingTheory checks the engine against M/M/1 and M/M/c mean waiting
// times: one host, random ingress, no network delay, Poisson arrivals and
// exponential service, averaged over several seeds.
func TestQueueingTheory(t *testing.T) {
	cases := []struct {
		name  string
		cores int
		load  float64
	}{
		{"M/M/1 rho=0.5", 1, 0.5},
		{"M/M/4 rho=0.7", 4, 0.7},
		{"M/M/8 rho=0.8", 8, 0.8},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Hosts, cfg.CoresPerHost, cfg.Load = 1, c.cores, c.load
			cfg.Delay = 0
			cfg.Policy = MustPolicy("random")
			cfg.Requests, cfg.Warmup = 400000, 20000
			var sum float64
			const seeds = 4
			for seed := uint64(1); seed <= seeds; seed++ {
				cfg.Seed = seed
				sum += run(t, cfg).MeanWait
			}
			got := sum / seeds
			mu := 1 / cfg.Service.Mean
			want := erlangCWait(c.cores, cfg.ArrivalRate(), mu)
			if rel := math.Abs(got-want) / want; rel > 0.02 {
				t.Fatalf("mean wait %.4f µs, Erlang C %.4f µs (off by %.2f %%)", got, want, 100*rel)
			}
			t.Logf("mean wait %.4f µs, Erlang C %.4f µs", got, want)
		})
	}
}

func quickCfg(policy string) Config {
	cfg := DefaultConfig()
	cfg.Requests, cfg.Warmup = 30000, 3000
	cfg.Policy = MustPolicy(policy)
	return cfg
}

func TestSeedsReproduce(t *testing.T) {
	for _, p := range []string{"random", "p2c+fwd", "jsw+ideal", "jbsq/p2c", "jiq"} {
		cfg := quickCfg(p)
		cfg.ArrivalCV = 2
		cfg.Stall = Stall{Interval: 500, Duration: 20}
		cfg.Burst = Burst{Factor: 1.1, OnFraction: 0.5, MeanOn: 50}
		a, b := run(t, cfg), run(t, cfg)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%s: same seed, different results:\n%+v\n%+v", p, a, b)
		}
		cfg.Seed = 2
		if c := run(t, cfg); c.MeanLatency == a.MeanLatency {
			t.Fatalf("%s: seeds 1 and 2 gave the same mean latency %v", p, c.MeanLatency)
		}
	}
}

// TestUnboundedJBSQIsItsIngress: with n → ∞ the dispatcher never holds, so
// JBSQ wrapping random draws exactly the hosts random draws.
func TestUnboundedJBSQIsItsIngress(t *testing.T) {
	a := run(t, quickCfg("random"))
	b := run(t, quickCfg("jbsq:inf/random"))
	if b.Holds != 0 {
		t.Fatalf("unbounded JBSQ held %d requests", b.Holds)
	}
	if a.Violations != b.Violations || a.MeanLatency != b.MeanLatency || a.P99 != b.P99 {
		t.Fatalf("random %+v\njbsq:inf/random %+v", a, b)
	}
	// A huge bound is never reached either.
	c := run(t, quickCfg("jbsq:65535/random"))
	if c.MeanLatency != a.MeanLatency || c.Holds != 0 {
		t.Fatalf("jbsq:65535/random mean %v holds %d, random mean %v", c.MeanLatency, c.Holds, a.MeanLatency)
	}
}

func TestIdealMovementNeverWorse(t *testing.T) {
	for _, m := range []int{1, 4} {
		for _, in := range []string{"random", "p2c", "jsw"} {
			cfg := quickCfg(in)
			cfg.Hosts, cfg.CoresPerHost = 32/m, m
			none := run(t, cfg)
			cfg.Policy = MustPolicy(in + "+ideal")
			ideal := run(t, cfg)
			if ideal.ViolationRate > none.ViolationRate || ideal.MeanWait > none.MeanWait {
				t.Errorf("m=%d %s: ideal movement %.4f/%.2fµs worse than none %.4f/%.2fµs",
					m, in, ideal.ViolationRate, ideal.MeanWait, none.ViolationRate, none.MeanWait)
			}
		}
	}
}

func TestPoolingHelpsRandom(t *testing.T) {
	prev := math.Inf(1)
	for _, m := range []int{1, 2, 4, 8} {
		cfg := quickCfg("random")
		cfg.Hosts, cfg.CoresPerHost = 64/m, m
		r := run(t, cfg)
		if r.MeanWait > prev {
			t.Errorf("m=%d: mean wait %.3f µs above m=%d's smaller pools (%.3f)", m, r.MeanWait, m/2, prev)
		}
		prev = r.MeanWait
	}
}

func TestLargerBoundHoldsLess(t *testing.T) {
	prev := int64(math.MaxInt64)
	for _, n := range []string{"8", "12", "16", "24", "48", "inf"} {
		r := run(t, quickCfg("jbsq:"+n))
		if r.Holds > prev {
			t.Errorf("jbsq:%s holds %d, more than a smaller bound (%d)", n, r.Holds, prev)
		}
		prev = r.Holds
	}
	if prev != 0 {
		t.Errorf("unbounded JBSQ held %d", prev)
	}
}

func TestGatewayCost(t *testing.T) {
	sw := run(t, quickCfg("jbsq"))
	cfg := quickCfg("jbsq")
	cfg.Gateway = Gateway{Cores: 1, PerMessage: 0}
	if free := run(t, cfg); !reflect.DeepEqual(free, sw) {
		t.Fatal("a zero-cost gateway differs from the switch")
	}
	// 128 cores × 0.85 / 5 µs = 21.8 req/µs, 2 messages each: one core at
	// 0.2 µs per message saturates; sixteen do not.
	cfg.Gateway = Gateway{Cores: 1, PerMessage: 0.2}
	slow := run(t, cfg)
	cfg.Gateway = Gateway{Cores: 16, PerMessage: 0.2}
	fast := run(t, cfg)
	if slow.ViolationRate < 0.5 || slow.GatewayUtilization < 0.99 {
		t.Errorf("saturated gateway: violations %.3f utilization %.3f", slow.ViolationRate, slow.GatewayUtilization)
	}
	if fast.ViolationRate > 2*sw.ViolationRate+0.01 || fast.GatewayUtilization > 0.8 {
		t.Errorf("16-core gateway: violations %.4f (switch %.4f) utilization %.3f", fast.ViolationRate, sw.ViolationRate, fast.GatewayUtilization)
	}
}

func TestCreditTTLRecoversLostNotifications(t *testing.T) {
	cfg := quickCfg("jbsq")
	cfg.NotifyLoss = 0.01
	leak := run(t, cfg)
	cfg.CreditTTL, cfg.TTLMode = 100, TTLCredit
	ttl := run(t, cfg)
	if leak.LostNotifications == 0 || ttl.StaleResets == 0 {
		t.Fatalf("no losses (%d) or no expired credits (%d)", leak.LostNotifications, ttl.StaleResets)
	}
	if !(leak.ViolationRate > 0.2 && ttl.ViolationRate < 0.05) {
		t.Fatalf("without TTL %.4f, with per-credit TTL %.4f: leaked credits should hurt", leak.ViolationRate, ttl.ViolationRate)
	}
	// Heavy loss: without a TTL every host's credits leak and the dispatcher
	// starves; the switch's silence TTL resets fully leaked hosts.
	cfg = quickCfg("jbsq")
	cfg.NotifyLoss = 0.3
	dead := run(t, cfg)
	cfg.CreditTTL, cfg.TTLMode = 50, TTLSilence
	alive := run(t, cfg)
	if dead.Incomplete == 0 || alive.Incomplete != 0 || alive.StaleResets == 0 {
		t.Fatalf("no TTL: %d incomplete; silence TTL: %d incomplete, %d resets", dead.Incomplete, alive.Incomplete, alive.StaleResets)
	}
}

func TestFaultsAndBurstsHurt(t *testing.T) {
	base := run(t, quickCfg("random"))
	cfg := quickCfg("random")
	cfg.Stall = Stall{Interval: 200, Duration: 30}
	stalled := run(t, cfg)
	if stalled.Stalls == 0 || stalled.ViolationRate <= base.ViolationRate {
		t.Errorf("stalls %d: violations %.4f vs %.4f", stalled.Stalls, stalled.ViolationRate, base.ViolationRate)
	}
	cfg = quickCfg("random")
	cfg.Burst = Burst{Factor: 1.15, OnFraction: 0.5, MeanOn: 200}
	bursty := run(t, cfg)
	if bursty.MeanWait <= base.MeanWait {
		t.Errorf("bursts: mean wait %.3f vs %.3f", bursty.MeanWait, base.MeanWait)
	}
}

func TestForwardingCostsTwoDelays(t *testing.T) {
	cfg := quickCfg("random+fwd")
	cfg.Hosts, cfg.CoresPerHost = 32, 1
	r := run(t, cfg)
	if r.Forwarded == 0 || r.ControlMessages < r.Forwarded {
		t.Fatalf("forwarded %d, messages %d", r.Forwarded, r.ControlMessages)
	}
	// A forwarded request never completes faster than 4D + S; with a tiny
	// SLO below 4D every forwarded request violates.
	cfg.SLO = 4 * cfg.Delay
	cfg.Service = dist.ServiceSpec{Kind: dist.ServiceFixed, Mean: 1}
	r = run(t, cfg)
	if r.Violations < int(r.Forwarded)*cfg.Requests/(cfg.Requests+cfg.Warmup)/2 {
		t.Fatalf("violations %d with %d forwards", r.Violations, r.Forwarded)
	}
}

func TestJSWPrefersLessLoadedHosts(t *testing.T) {
	cfg := quickCfg("jsw")
	cfg.Hosts, cfg.CoresPerHost = 32, 1
	jsw := run(t, cfg)
	cfg.Policy = MustPolicy("random")
	rnd := run(t, cfg)
	if jsw.MeanWait >= rnd.MeanWait/2 {
		t.Fatalf("jsw mean wait %.2f, random %.2f", jsw.MeanWait, rnd.MeanWait)
	}
}

func TestMigrationBalancesConnections(t *testing.T) {
	cfg := quickCfg("hash")
	cfg.Connections, cfg.ZipfAlpha = 128, 0.5
	hash := run(t, cfg)
	cfg.Policy = MustPolicy("migrate")
	mig := run(t, cfg)
	if mig.Migrations == 0 || mig.ViolationRate >= hash.ViolationRate {
		t.Fatalf("hash %.4f, migrate %.4f after %d migrations", hash.ViolationRate, mig.ViolationRate, mig.Migrations)
	}
}

func TestContextCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, quickCfg("random")); err == nil {
		t.Fatal("cancelled run returned no error")
	}
}

func TestHistogramQuantiles(t *testing.T) {
	h := newHistogram()
	for i := 1; i <= 100000; i++ {
		h.add(float64(i) / 100) // 0.01 … 1000 µs
	}
	for _, c := range []struct{ q, want float64 }{{0.5, 500}, {0.99, 990}, {0.001, 1}} {
		if got := h.quantile(c.q); math.Abs(got-c.want) > 0.001*c.want+1.0/16 {
			t.Errorf("q%.3f = %v, want ≈ %v", c.q, got, c.want)
		}
	}
	for _, v := range []float64{0, 0.05, 127.9, 128, 129, 5000, 1e9} {
		i := histIndex(v)
		if lo, hi := histLower(i), histLower(i+1); v < lo || v >= hi {
			t.Errorf("%v in bucket %d [%v, %v)", v, i, lo, hi)
		}
	}
}

// Issue 27: Ctrl-C during a batch printed every run in flight's "context
// canceled", one line each, after the error; the batch says it once.
func TestRunManyCancelledOnce(t *testing.T) {
	cfgs := make([]Config, 8)
	for i := range cfgs {
		cfgs[i] = quickCfg("random")
		cfgs[i].Requests, cfgs[i].Seed = 4_000_000, uint64(i+1)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := runMany(ctx, cfgs, 4, &tracker{})
	if err == nil || strings.Contains(err.Error(), "\n") || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled batch: %q, want one line saying it was cancelled", err)
	}
}
