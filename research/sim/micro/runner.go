package micro

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/p4ctl/p4ctl/pkg/stats"
)

// Options control how an experiment runs. Zero fields take the experiment's
// defaults.
type Options struct {
	// Seeds is the number of independent seeds per cell; seed i (0-based)
	// is Seed + i.
	Seeds int    `json:"seeds"`
	Seed  uint64 `json:"seed"`
	// Requests measured per run (after a 10 % warm-up).
	Requests int `json:"requests"`
	// Quick shrinks the experiment to a few seconds (fewer seeds, requests
	// and grid points) for tests and smoke runs.
	Quick bool `json:"quick"`
	// Parallel is the number of concurrent runs (default GOMAXPROCS). It
	// never changes results.
	Parallel int `json:"-"`
	// Progress, if set, is called after each run with the runs done and
	// the runs known so far (the total can grow between phases).
	Progress func(done, total int) `json:"-"`
}

func (o Options) withDefaults(seeds, quickSeeds, requests, quickRequests int) Options {
	if o.Seeds == 0 {
		o.Seeds = seeds
		if o.Quick {
			o.Seeds = quickSeeds
		}
	}
	if o.Requests == 0 {
		o.Requests = requests
		if o.Quick {
			o.Requests = quickRequests
		}
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Parallel <= 0 {
		o.Parallel = runtime.GOMAXPROCS(0)
	}
	return o
}

// MaxRequests is the most requests one run may measure (its warm-up adds a
// tenth). A run can hold every one of its requests in flight at once, each
// about RequestBytes, when the hosts or a software gateway saturate (ρ ≥ 1,
// a dispatcher slower than the arrivals), so the limit keeps one run below
// about 2 GB however overloaded its scenario is.
const MaxRequests = 1 << 23

// RequestBytes is the memory one request in flight takes at most (its
// events, queue entries and the heap's headroom): what runMany budgets
// concurrent runs by.
const RequestBytes = 200

// MemoryBudget is the memory the concurrent runs of an experiment may hold
// at worst (every request of each in flight); fewer run at once than
// Options.Parallel asks for when their requests would exceed it, which
// never changes results.
const MemoryBudget = 2 << 30

func (o Options) validate() error {
	if o.Seeds < 1 || o.Seeds > 1000 {
		return fmt.Errorf("seeds %d must be in [1, 1000]", o.Seeds)
	}
	if o.Requests < 1 || o.Requests > MaxRequests {
		return fmt.Errorf("requests %d must be in [1, %d]", o.Requests, MaxRequests)
	}
	return nil
}

// memoryWorkers is how many of cfgs may run at once within MemoryBudget
// (at least one, at most parallel).
func memoryWorkers(cfgs []Config, parallel int) int {
	most := 1
	for _, c := range cfgs {
		most = max(most, c.Requests+c.Warmup)
	}
	return max(1, min(parallel, MemoryBudget/(most*RequestBytes)))
}

// tracker counts runs across an experiment's phases for Progress.
type tracker struct {
	done, total int
	fn          func(done, total int)
}

func (t *tracker) add(n int) {
	t.total += n
	if t.fn != nil {
		t.fn(t.done, t.total)
	}
}

func (t *tracker) tick() {
	t.done++
	if t.fn != nil {
		t.fn(t.done, t.total)
	}
}

// runMany runs cfgs concurrently; results are in the order of cfgs, so the
// outcome does not depend on scheduling.
func runMany(ctx context.Context, cfgs []Config, parallel int, tr *tracker) ([]RunResult, error) {
	tr.add(len(cfgs))
	out := make([]RunResult, len(cfgs))
	if len(cfgs) == 0 {
		return out, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers := max(1, min(memoryWorkers(cfgs, parallel), len(cfgs)))
	jobs := make(chan int)
	done := make(chan error)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				r, err := Run(ctx, cfgs[i])
				out[i] = r
				done <- err
			}
		}()
	}
	go func() {
		defer close(jobs)
		for i := range cfgs {
			select {
			case jobs <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(done) }()
	var errs []error
	for err := range done {
		if err != nil {
			// After the first error the runs in flight end cancelled:
			// that is said once (a Ctrl-C printed a line per run).
			if len(errs) == 0 || !errors.Is(err, context.Canceled) {
				errs = append(errs, err)
			}
			cancel()
			continue
		}
		tr.tick()
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// stamp records in a result's scenario the requests, warm-up and first
// seed the runs actually used.
func stamp(c Config, o Options) Config {
	c.Requests, c.Warmup, c.Seed = o.Requests, o.Requests/10, o.Seed
	return c
}

// seeded returns one copy of cfg per seed.
func seeded(cfg Config, o Options) []Config {
	out := make([]Config, o.Seeds)
	for i := range out {
		c := cfg
		c.Seed = o.Seed + uint64(i)
		c.Requests = o.Requests
		c.Warmup = o.Requests / 10
		out[i] = c
	}
	return out
}

// Cell summarizes one policy in one scenario across seeds (95 % Student-t
// confidence intervals).
type Cell struct {
	Policy    string        `json:"policy"`
	Bound     int           `json:"bound,omitempty"`
	Violation stats.Summary `json:"violation_rate"`
	// RequestViolation is the per-request violation rate; it equals
	// Violation unless the SLO is windowed (Config.SLOWindow).
	RequestViolation stats.Summary `json:"request_violation_rate"`
	P99              stats.Summary `json:"p99_us"`
	MeanLatency      stats.Summary `json:"mean_latency_us"`
	MessagesPerRPC   stats.Summary `json:"messages_per_rpc"`
	HoldRate         stats.Summary `json:"hold_rate"`
	// RecircPerRPC is the switch policies' recirculations per request (0
	// for the others).
	RecircPerRPC stats.Summary `json:"recirc_per_rpc"`
	// PerSeed are the violation rates of the individual seeds.
	PerSeed []float64 `json:"per_seed_violation_rate"`
	// Study is the figure the late-binding study reported for this policy,
	// shown beside ours, never used by the model.
	Study string `json:"study,omitempty"`
}

func summarize(runs []RunResult) Cell {
	c := Cell{}
	if len(runs) == 0 {
		return c
	}
	c.Policy, c.Bound = runs[0].Policy, runs[0].Bound
	pick := func(f func(RunResult) float64) []float64 {
		xs := make([]float64, len(runs))
		for i, r := range runs {
			xs[i] = f(r)
		}
		return xs
	}
	c.PerSeed = pick(func(r RunResult) float64 { return r.ViolationRate })
	c.Violation = stats.Summarize(c.PerSeed)
	c.RequestViolation = stats.Summarize(pick(func(r RunResult) float64 { return r.RequestViolationRate }))
	c.P99 = stats.Summarize(pick(func(r RunResult) float64 { return r.P99 }))
	c.MeanLatency = stats.Summarize(pick(func(r RunResult) float64 { return r.MeanLatency }))
	c.MessagesPerRPC = stats.Summarize(pick(func(r RunResult) float64 { return r.MessagesPerRPC }))
	c.HoldRate = stats.Summarize(pick(func(r RunResult) float64 { return r.HoldRate }))
	c.RecircPerRPC = stats.Summarize(pick(func(r RunResult) float64 { return r.RecircPerRPC }))
	return c
}

// pct renders a rate summary as "mean ± ci %".
func pct(s stats.Summary) string {
	if s.N > 1 {
		return fmt.Sprintf("%.2f ± %.2f %%", 100*s.Mean, 100*s.CI95)
	}
	return fmt.Sprintf("%.2f %%", 100*s.Mean)
}

// num renders a summary as "mean ± ci".
func num(s stats.Summary, prec int) string {
	if s.N > 1 {
		return fmt.Sprintf("%.*f ± %.*f", prec, s.Mean, prec, s.CI95)
	}
	return fmt.Sprintf("%.*f", prec, s.Mean)
}
