package latency

import (
	"fmt"
	"math"
	"sort"
	"sync"
	"time"
)

// Key is a (client site, region) pair: sla_feasibility's site and a
// region's index.
type Key struct {
	Site   uint16 `json:"site"`
	Region uint8  `json:"region"`
}

// Estimator keeps one Window per Key. It is safe for concurrent use: the
// digest reader observes while the planner and the metrics read.
type Estimator struct {
	span    time.Duration
	buckets int

	mu    sync.Mutex
	w     map[Key]*Window
	total map[Key]uint64
}

// NewEstimator returns an estimator whose windows cover span in buckets
// slices.
func NewEstimator(span time.Duration, buckets int) (*Estimator, error) {
	if _, err := NewWindow(span, buckets); err != nil {
		return nil, err
	}
	return &Estimator{span: span, buckets: buckets, w: map[Key]*Window{}, total: map[Key]uint64{}}, nil
}

// Observe records one round trip of k measured at at.
func (e *Estimator) Observe(k Key, rtt time.Duration, at time.Time) error {
	ms := float64(rtt) / float64(time.Millisecond)
	if !(ms > 0) {
		return fmt.Errorf("latency sample site %d region %d: rtt %v must be > 0", k.Site, k.Region, rtt)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	w, ok := e.w[k]
	if !ok {
		var err error
		if w, err = NewWindow(e.span, e.buckets); err != nil {
			return err
		}
		e.w[k] = w
	}
	e.total[k]++
	return w.Add(ms, at)
}

// P95 returns k's P95 in ms over the window ending at now and the samples
// it rests on.
func (e *Estimator) P95(k Key, now time.Time) (ms float64, samples int, ok bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	w, found := e.w[k]
	if !found {
		return 0, 0, false
	}
	return w.Quantile(0.95, now)
}

// Estimate is one pair's learned latency.
type Estimate struct {
	Key
	P95ms   float64 `json:"p95_ms"`
	Samples int     `json:"samples_in_window"`
	Total   uint64  `json:"samples_total"`
}

// Snapshot returns every pair's estimate at now, ordered by site, region.
func (e *Estimator) Snapshot(now time.Time) []Estimate {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Estimate, 0, len(e.w))
	for k, w := range e.w {
		v, n, _ := w.Quantile(0.95, now)
		out = append(out, Estimate{Key: k, P95ms: v, Samples: n, Total: e.total[k]})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Site != out[j].Site {
			return out[i].Site < out[j].Site
		}
		return out[i].Region < out[j].Region
	})
	return out
}

// Source says where the compiled latencies come from.
type Source string

// Sources.
const (
	Static   Source = "static"   // the configured profiles only
	Measured Source = "measured" // the measured P95 once a pair has MinSamples, the profile before
	Blend    Source = "blend"    // the larger of profile and measured P95: feasible only if both say so
)

// Config is the learner's hysteresis.
type Config struct {
	Source Source
	// Margin: a pair's compiled latency moves across an SLA class boundary
	// only when its P95 is beyond the boundary by more than Margin.
	Margin time.Duration
	// MinSamples in the window before a measured P95 counts.
	MinSamples int
	// MinDwell: a pair becomes feasible again for a class no sooner than
	// MinDwell after its last change (becoming infeasible is immediate). A
	// learned pair whose window holds fewer than MinSamples returns to its
	// prior once MinDwell and the window's span have passed since its last
	// change (a pair made infeasible may receive no traffic to measure).
	MinDwell time.Duration
}

// Learner decides the compiled latency of each pair. Safe for concurrent
// use.
type Learner struct {
	cfg     Config
	est     *Estimator
	classes []float64 // SLA class budgets, ms, ascending

	mu    sync.Mutex
	state map[Key]*pair
}

type pair struct {
	ms      float64 // compiled latency
	changed time.Time
	learned bool
}

// NewLearner returns a learner over est for SLA classes (ms).
func NewLearner(cfg Config, est *Estimator, classes []float64) (*Learner, error) {
	switch cfg.Source {
	case Static, Measured, Blend:
	case "":
		cfg.Source = Static
	default:
		return nil, fmt.Errorf("latency source %q: want static, measured or blend", cfg.Source)
	}
	if cfg.Margin < 0 || cfg.MinDwell < 0 || cfg.MinSamples < 0 {
		return nil, fmt.Errorf("latency hysteresis: margin %v, min samples %d, min dwell %v must be ≥ 0", cfg.Margin, cfg.MinSamples, cfg.MinDwell)
	}
	cs := append([]float64(nil), classes...)
	sort.Float64s(cs)
	return &Learner{cfg: cfg, est: est, classes: cs, state: map[Key]*pair{}}, nil
}

// Change is one pair whose compiled latency moved.
type Change struct {
	Key
	FromMS, ToMS float64
	P95ms        float64
	Samples      int
}

// Latency returns the compiled latency of k (ms) given its profile value
// prior: the prior until the pair has learned a value.
func (l *Learner) Latency(k Key, prior float64) float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if p, ok := l.state[k]; ok && p.learned {
		return p.ms
	}
	return prior
}

// Learned reports whether k's compiled latency comes from measurements
// (it has moved at least once).
func (l *Learner) Learned(k Key) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	p, ok := l.state[k]
	return ok && p.learned
}

// Update re-evaluates every pair of priors (profile P95 in ms) at now and
// returns the pairs whose compiled latency moved.
func (l *Learner) Update(priors map[Key]float64, now time.Time) []Change {
	if l.cfg.Source == Static {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Change
	keys := make([]Key, 0, len(priors))
	for k := range priors {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].Site < keys[j].Site || keys[i].Site == keys[j].Site && keys[i].Region < keys[j].Region
	})
	margin := float64(l.cfg.Margin) / float64(time.Millisecond)
	for _, k := range keys {
		prior := priors[k]
		p, ok := l.state[k]
		if !ok {
			p = &pair{ms: prior}
			l.state[k] = p
		}
		if !p.learned {
			p.ms = prior
		}
		m, n, ok := l.est.P95(k, now)
		if !ok || n < l.cfg.MinSamples {
			// Too few samples to say anything. A pair whose learned value
			// made it infeasible may get no traffic, hence no samples, at
			// all: once its window is short of samples and the dwell has
			// passed, it returns to its prior (re-admission), so traffic
			// and samples come back; if it is still slow, the next samples
			// take it out again at once.
			if p.learned && p.ms != prior && now.Sub(p.changed) >= l.cfg.MinDwell && now.Sub(p.changed) >= l.est.span {
				out = append(out, Change{Key: k, FromMS: p.ms, ToMS: prior, P95ms: m, Samples: n})
				p.ms, p.changed, p.learned = prior, now, false
			}
			continue
		}
		if l.cfg.Source == Blend {
			m = math.Max(m, prior)
		}
		if to, moved := l.decide(p.ms, m, margin, now.Sub(p.changed) >= l.cfg.MinDwell || p.changed.IsZero()); moved {
			out = append(out, Change{Key: k, FromMS: p.ms, ToMS: to, P95ms: m, Samples: n})
			p.ms, p.changed, p.learned = to, now, true
		}
	}
	return out
}

// decide says whether a compiled latency cur moves to the measured m: up
// across a class boundary b (cur ≤ b < m) as soon as m > b + margin; down
// across one (m ≤ b < cur) when m < b − margin and the dwell has passed.
// Within one class interval it stays (the compiled table would change
// without changing any class's feasibility).
func (l *Learner) decide(cur, m, margin float64, dwelled bool) (float64, bool) {
	for _, b := range l.classes {
		if cur <= b && b < m && m > b+margin {
			return m, true
		}
	}
	if !dwelled {
		return cur, false
	}
	for _, b := range l.classes {
		if m <= b && b < cur && m < b-margin {
			return m, true
		}
	}
	return cur, false
}
