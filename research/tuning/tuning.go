// Package tuning resolves the `tune:` blocks of a controller configuration:
// for every local pool that asks for it, it runs the µs late-binding
// simulator's JBSQ tuner (research/sim/micro.TuneJBSQ, what `p4ctl tune jbsq`
// prints) with the pool's server count as hosts, and returns a
// configuration whose pool Bound is the tuned n, the value the controller
// pushes in set_pool. It sits between pkg/config (which must not depend on
// the simulator) and the commands that load a configuration
// (docs/ARCHITECTURE.md, decision 26).
package tuning

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/research/sim/dist"
	"github.com/p4ctl/p4ctl/research/sim/micro"
)

// Options control how pools are tuned; none changes a block's meaning.
type Options struct {
	// Quick uses the tuner's quick sizing (2 seeds × 10 000 requests)
	// where a block does not give seeds or requests: for tests.
	Quick bool
	// Parallel is the number of concurrent simulation runs (0 =
	// GOMAXPROCS); it never changes results.
	Parallel int
}

// Pool is what was resolved for one pool: for logs and plan output.
type Pool struct {
	// Region is the pool's region id; Path its YAML path.
	Region string `json:"region"`
	Path   string `json:"path"`
	// Servers and CoresPerServer are the simulated hosts × cores.
	Servers        int `json:"servers"`
	CoresPerServer int `json:"cores_per_server"`
	// Bound is the tuned n per server, now the pool's bound.
	Bound int `json:"bound"`
	// Little and Stable are the Little's-law bound ⌈m(1 + 2D/S)⌉ and the
	// stability limit ⌈mρ(1 + 2D/S)⌉, for comparison.
	Little int `json:"little_bound"`
	Stable int `json:"stability_limit"`
	// Violation is the mean SLO violation rate at Bound across seeds;
	// Target the largest the block accepts.
	Violation float64 `json:"violation_rate"`
	Target    float64 `json:"target"`
	// Headroom is how much more load Bound carries before it saturates.
	Headroom float64 `json:"headroom"`
	// Seeds × Requests is the simulation's size; Elapsed how long it took.
	Seeds    int           `json:"seeds"`
	Requests int           `json:"requests"`
	Elapsed  time.Duration `json:"elapsed_ns"`
}

// String is the one-line summary commands print on stderr.
func (p Pool) String() string {
	return fmt.Sprintf("pool %s: jbsq bound %d from tune (%.2f %% SLO violations ≤ %.2g %% target; Little bound %d, stability limit %d; %d servers × %d cores; %d seeds × %d requests in %s)",
		p.Region, p.Bound, 100*p.Violation, 100*p.Target, p.Little, p.Stable, p.Servers, p.CoresPerServer,
		p.Seeds, p.Requests, p.Elapsed.Round(time.Millisecond))
}

// TuneConfig is the simulator input for a pool's tune block: the block's
// parameters (defaults filled in), hosts = the pool's server count.
func TuneConfig(pool *config.LocalPool, o Options) (micro.TuneConfig, error) {
	if pool == nil || pool.Tune == nil {
		return micro.TuneConfig{}, errors.New("no tune block")
	}
	t := pool.Tune.TuneOrDefault()
	kind, err := dist.ParseServiceKind(t.Service)
	if err != nil {
		return micro.TuneConfig{}, fmt.Errorf("service: %w", err)
	}
	sc := micro.Scenario()
	sc.Hosts, sc.CoresPerHost, sc.Load = len(pool.Servers), t.CoresPerServer, t.Load
	sc.ArrivalCV = t.ArrivalCV
	sc.Service = dist.ServiceSpec{Kind: kind, Mean: us(t.ServiceMean.Duration), Sigma: t.Sigma,
		BimodalP: t.BimodalP, BimodalRatio: t.BimodalRatio}
	sc.Delay, sc.SLO = us(t.Delay.Duration), us(t.SLO.Duration)
	// The switch as the pool configures it: its holds, on-full and TTL.
	holds := pool.MaxHolds
	sc.SwitchMaxHolds = &holds
	sc.SwitchOnFull = pool.OnFull
	if sc.SwitchOnFull == "" {
		sc.SwitchOnFull = "nack" // the pool's default
	}
	sc.CreditTTL, sc.TTLMode = us(pool.CreditTTL.Duration), micro.TTLSilence
	return micro.TuneConfig{Scenario: sc, Target: t.Target, Algorithm: micro.AlgorithmSwitch,
		Options: micro.Options{Seeds: t.Seeds, Seed: t.Seed, Requests: t.Requests, Quick: o.Quick, Parallel: o.Parallel}}, nil
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// Resolve tunes every local pool of cfg that has a tune block and returns
// a copy of cfg in which each such pool's Bound is the tuned n and its Tune
// is nil (cfg itself is not changed), with one Pool per resolved pool in
// configuration order. A configuration without tune blocks is returned as
// is. A target no bound meets is an error naming the pool and the best n
// found; so is a tuned bound the pool's other fields contradict (e.g.
// long_reserve ≥ bound). The result is deterministic for the blocks' seeds.
func Resolve(ctx context.Context, cfg *config.Config, o Options) (*config.Config, []Pool, error) {
	if cfg == nil {
		return nil, nil, errors.New("tune: no configuration")
	}
	out := *cfg
	out.Regions = nil
	var pools []Pool
	for i, r := range cfg.Regions {
		l := r.NextHop.Local
		if l == nil || l.Tune == nil {
			continue
		}
		if out.Regions == nil {
			out.Regions = append([]config.Region(nil), cfg.Regions...)
		}
		path := fmt.Sprintf("regions[%d].next_hop.local.tune", i)
		p, err := resolvePool(ctx, l, o)
		if err != nil {
			return nil, nil, fmt.Errorf("%s (region %s): %w", path, r.ID, err)
		}
		p.Region, p.Path = r.ID, path
		pool := *l
		pool.Bound, pool.Tune = p.Bound, nil
		out.Regions[i].NextHop.Local = &pool
		pools = append(pools, p)
	}
	if out.Regions == nil {
		return cfg, nil, nil
	}
	if err := out.Validate(); err != nil {
		return nil, nil, fmt.Errorf("tuned configuration: %w", err)
	}
	return &out, pools, nil
}

func resolvePool(ctx context.Context, l *config.LocalPool, o Options) (Pool, error) {
	tc, err := TuneConfig(l, o)
	if err != nil {
		return Pool{}, err
	}
	start := time.Now()
	res, err := micro.TuneJBSQ(ctx, tc)
	if err != nil {
		return Pool{}, err
	}
	p := Pool{Servers: res.Scenario.Hosts, CoresPerServer: res.Scenario.CoresPerHost, Bound: res.Bound,
		Little: res.Little, Stable: res.Stable, Target: res.Target, Headroom: res.Headroom,
		Seeds: res.Options.Seeds, Requests: res.Options.Requests, Elapsed: time.Since(start)}
	for _, c := range res.Curve {
		if c.Bound == res.Bound {
			p.Violation = c.Cell.Violation.Mean
		}
	}
	if !res.Met {
		return p, fmt.Errorf("no JBSQ bound meets the %.2g %% violation target: the best is n = %d with %.2f %% (%s); relax target or slo, or lower load",
			100*res.Target, res.Bound, 100*p.Violation, curve(res))
	}
	return p, nil
}

// curve summarises the simulated points as "n=20 9.1 %, n=40 7.3 %, …".
func curve(res *micro.TuneResult) string {
	var s []string
	for _, c := range res.Curve {
		if !c.Unstable {
			s = append(s, fmt.Sprintf("n=%d %.2f %%", c.Bound, 100*c.Cell.Violation.Mean))
		}
	}
	return "curve " + strings.Join(s, ", ")
}
