// Package latency learns the round-trip latency from client sites to
// regions from samples the data plane reports (P4Runtime digests of
// (site, region, rtt)), and decides, with hysteresis, the latency the
// controller compiles sla_feasibility from.
//
// Window is a sliding-window quantile sketch (DDSketch, relative-error
// guarantees, O(1) amortised insertion); Estimator keeps one per (site,
// region); Learner turns the estimates and the configured profiles into the
// effective latencies the compiler uses, changing a pair's value only when
// its P95 crosses an SLA class boundary by a margin, with enough samples,
// and — for a region becoming feasible again — after a minimum dwell.
package latency

import (
	"errors"
	"fmt"
	"time"

	"github.com/DataDog/sketches-go/ddsketch"
)

// Window estimates quantiles of the samples of the last Span, in Buckets
// slices of Span/Buckets each: a sample lands in the current slice; slices
// older than Span are cleared as time advances. Not safe for concurrent use.
type Window struct {
	span    time.Duration
	slice   time.Duration
	sk      []*ddsketch.DDSketch
	start   []time.Time // start of each slice's interval (zero = empty)
	cur     int
	scratch *ddsketch.DDSketch
}

// RelativeAccuracy is the sketches' relative error: a P95 of 100 ms is
// reported within ±1 ms.
const RelativeAccuracy = 0.01

// NewWindow returns an empty window over span in buckets slices.
func NewWindow(span time.Duration, buckets int) (*Window, error) {
	if span <= 0 || buckets < 1 || span/time.Duration(buckets) <= 0 {
		return nil, fmt.Errorf("latency window: span %v in %d buckets", span, buckets)
	}
	w := &Window{span: span, slice: span / time.Duration(buckets),
		sk: make([]*ddsketch.DDSketch, buckets), start: make([]time.Time, buckets)}
	for i := range w.sk {
		s, err := ddsketch.LogUnboundedDenseDDSketch(RelativeAccuracy)
		if err != nil {
			return nil, fmt.Errorf("latency window: %w", err)
		}
		w.sk[i] = s
	}
	s, err := ddsketch.LogUnboundedDenseDDSketch(RelativeAccuracy)
	if err != nil {
		return nil, fmt.Errorf("latency window: %w", err)
	}
	w.scratch = s
	return w, nil
}

// advance makes the current slice the one covering at, clearing slices that
// have left the window.
func (w *Window) advance(at time.Time) {
	if w.start[w.cur].IsZero() {
		w.start[w.cur] = at.Truncate(w.slice)
		return
	}
	for at.Sub(w.start[w.cur]) >= w.slice {
		next := (w.cur + 1) % len(w.sk)
		w.sk[next].Clear()
		w.start[next] = w.start[w.cur].Add(w.slice)
		w.cur = next
		if at.Sub(w.start[w.cur]) >= w.span { // a long silence: skip ahead
			for i := range w.sk {
				w.sk[i].Clear()
				w.start[i] = time.Time{}
			}
			w.start[w.cur] = at.Truncate(w.slice)
			return
		}
	}
}

// Add records a sample v (> 0) taken at at. Samples older than the current
// slice are added to it (digests arrive in order; a late one is not lost).
func (w *Window) Add(v float64, at time.Time) error {
	if !(v > 0) {
		return errors.New("latency sample must be > 0")
	}
	w.advance(at)
	return w.sk[w.cur].Add(v)
}

// Quantile returns the q-quantile of the samples in the window ending at
// now and how many there are; ok is false when there are none.
func (w *Window) Quantile(q float64, now time.Time) (v float64, n int, ok bool) {
	w.advance(now)
	w.scratch.Clear()
	for i, s := range w.sk {
		if w.start[i].IsZero() || now.Sub(w.start[i]) >= w.span || s.IsEmpty() {
			continue
		}
		if err := w.scratch.MergeWith(s); err != nil {
			return 0, 0, false
		}
	}
	if w.scratch.IsEmpty() {
		return 0, 0, false
	}
	v, err := w.scratch.GetValueAtQuantile(q)
	if err != nil {
		return 0, 0, false
	}
	return v, int(w.scratch.GetCount()), true
}
