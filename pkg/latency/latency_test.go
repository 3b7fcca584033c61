package latency

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// The window's quantiles match exact ones on synthetic streams within the
// sketch's relative accuracy.
func TestWindowQuantilesMatchExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		name string
		draw func() float64
	}{
		{"lognormal", func() float64 { return math.Exp(4 + 0.5*r.NormFloat64()) }},
		{"uniform", func() float64 { return 50 + 100*r.Float64() }},
		{"bimodal", func() float64 {
			if r.Float64() < 0.1 {
				return 300 + r.Float64()
			}
			return 40 + r.Float64()
		}},
	} {
		w, err := NewWindow(time.Minute, 6)
		if err != nil {
			t.Fatal(err)
		}
		var xs []float64
		for i := range 20000 {
			x := c.draw()
			xs = append(xs, x)
			if err := w.Add(x, t0.Add(time.Duration(i)*time.Millisecond)); err != nil {
				t.Fatal(err)
			}
		}
		sort.Float64s(xs)
		now := t0.Add(20 * time.Second)
		for _, q := range []float64{0.5, 0.95, 0.99} {
			got, n, ok := w.Quantile(q, now)
			exact := xs[int(math.Ceil(q*float64(len(xs))))-1]
			if !ok || n != len(xs) || math.Abs(got-exact) > 2*RelativeAccuracy*exact {
				t.Errorf("%s q%.2f: %v (n %d), exact %v", c.name, q, got, n, exact)
			}
		}
	}
}

// Samples leave the window after its span; a long silence empties it.
func TestWindowSlides(t *testing.T) {
	w, _ := NewWindow(10*time.Second, 5)
	for i := range 10 {
		_ = w.Add(100, t0.Add(time.Duration(i)*time.Second))
	}
	for i := range 10 {
		_ = w.Add(10, t0.Add(10*time.Second+time.Duration(i)*time.Second))
	}
	// At 19.5 s the window (five 2 s slices) holds the slices starting at
	// 10..18 s: the ten 10 ms samples, none of the 100 ms ones.
	if v, n, _ := w.Quantile(0.95, t0.Add(19500*time.Millisecond)); n != 10 || math.Abs(v-10) > 2*RelativeAccuracy*10 {
		t.Errorf("after a span: p95 %v of %d samples, want 10 of 10", v, n)
	}
	if _, n, ok := w.Quantile(0.5, t0.Add(time.Hour)); ok || n != 0 {
		t.Errorf("after an hour's silence: %d samples", n)
	}
	if err := w.Add(0, t0); err == nil {
		t.Error("a zero sample accepted")
	}
	if _, err := NewWindow(time.Second, 0); err == nil {
		t.Error("zero buckets accepted")
	}
}

// feed adds n samples of v ms for k at now.
func feed(t *testing.T, e *Estimator, k Key, v float64, n int, now time.Time) {
	t.Helper()
	for range n {
		if err := e.Observe(k, time.Duration(v*float64(time.Millisecond)), now); err != nil {
			t.Fatal(err)
		}
	}
}

// The hysteresis: no change within a class interval; up across a class
// boundary only past the margin (at once); down only past the margin and
// after the dwell; nothing before MinSamples; static never learns; blend
// takes the larger of profile and measurement.
func TestLearnerHysteresis(t *testing.T) {
	k := Key{Site: 1, Region: 3}
	priors := map[Key]float64{k: 80}
	cfg := Config{Source: Measured, Margin: 5 * time.Millisecond, MinSamples: 50, MinDwell: 30 * time.Second}
	type step struct {
		at      time.Duration
		sample  float64
		n       int
		want    float64
		changed bool
	}
	for _, c := range []struct {
		name  string
		cfg   Config
		steps []step
	}{
		{"within a class: no change", cfg, []step{{1 * time.Second, 90, 100, 80, false}}},
		{"too few samples", cfg, []step{{1 * time.Second, 200, 10, 80, false}}},
		{"up past the margin: at once", cfg, []step{{1 * time.Second, 106, 100, 106, true}}},
		{"up inside the margin: no", cfg, []step{{1 * time.Second, 103, 100, 80, false}}},
		{"down needs the dwell", cfg, []step{
			{1 * time.Second, 150, 100, 150, true},
			// 19 s after the change the window's P95 is 60 (2000 of 2100
			// samples), but the dwell (30 s) has not passed.
			{20 * time.Second, 60, 2000, 150, false},
			{40 * time.Second, 60, 100, 60, true},
		}},
		{"static never learns", Config{Source: Static}, []step{{1 * time.Second, 500, 100, 80, false}}},
		{"blend keeps the profile when it is larger", Config{Source: Blend, MinSamples: 1}, []step{{1 * time.Second, 20, 10, 80, false}}},
		{"blend follows a larger measurement", Config{Source: Blend, MinSamples: 1}, []step{{1 * time.Second, 320, 10, 320, true}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, _ := NewEstimator(time.Minute, 6)
			l, err := NewLearner(c.cfg, e, []float64{100, 300, 500})
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range c.steps {
				now := t0.Add(s.at)
				feed(t, e, k, s.sample, s.n, now)
				ch := l.Update(priors, now)
				got := l.Latency(k, 80)
				if math.Abs(got-s.want) > 2*RelativeAccuracy*s.want || (len(ch) == 1) != s.changed {
					t.Errorf("step %d: latency %v (changes %v), want %v changed=%v", i, got, ch, s.want, s.changed)
				}
			}
		})
	}
}

// Recovery after the dwell, and bounded changes under alternating input:
// a P95 that flips across a boundary every 10 s becomes infeasible at once
// each time (safety), but feasible again at most once per dwell, so the
// compiled value changes at most twice per dwell, never once per flip.
func TestLearnerRecoveryAndFlapping(t *testing.T) {
	k := Key{Site: 2, Region: 0}
	priors := map[Key]float64{k: 80}
	e, _ := NewEstimator(10*time.Second, 5)
	l, _ := NewLearner(Config{Source: Measured, Margin: 5 * time.Millisecond, MinSamples: 20, MinDwell: time.Minute}, e, []float64{100})
	now := t0
	ups, downs := 0, 0
	for i := range 60 { // 10 minutes, flipping between 150 and 60 ms
		v := 150.0
		if i%2 == 1 {
			v = 60
		}
		for j := range 10 {
			feed(t, e, k, v, 5, now.Add(time.Duration(j)*time.Second))
		}
		now = now.Add(10 * time.Second)
		for _, c := range l.Update(priors, now) {
			if c.ToMS > c.FromMS {
				ups++
			} else {
				downs++
			}
		}
	}
	// 10 minutes, a 1 minute dwell: at most 10 recoveries, each preceded by
	// one rise, and the first rise happens.
	if ups == 0 || downs > 10 || ups > downs+1 {
		t.Errorf("%d rises, %d recoveries over 10 minutes of 10 s flips, want ≥1 rise, ≤10 recoveries, rises ≤ recoveries+1", ups, downs)
	}
	// Steady low latency: feasible again after the dwell.
	for range 12 {
		for j := range 10 {
			feed(t, e, k, 60, 5, now.Add(time.Duration(j)*time.Second))
		}
		now = now.Add(10 * time.Second)
		l.Update(priors, now)
	}
	if got := l.Latency(k, 80); got > 100 {
		t.Errorf("after two minutes at 60 ms: compiled %v, want ≤ 100 (feasible again)", got)
	}
	if _, err := NewLearner(Config{Source: "psychic"}, e, nil); err == nil {
		t.Error("unknown source accepted")
	}
}

// BenchmarkObserve: one sample into its pair's window (samples/s on one
// core), at growing numbers of pairs and samples already in the windows.
// The cost per sample stays flat as the windows fill (O(1) amortised: a
// DDSketch bucket increment plus, once per slice, clearing the slice that
// left the window); "ratio" is ns/op against the smallest setting in the
// same run.
func BenchmarkObserve(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	rtts := make([]time.Duration, 1024)
	for i := range rtts {
		rtts[i] = time.Duration(math.Exp(4+0.3*r.NormFloat64()) * float64(time.Millisecond))
	}
	var base float64 // ns/op of the first setting (its last, longest run)
	for ci, c := range []struct{ pairs, prefill int }{{1, 0}, {64, 0}, {64, 1_000_000}, {4096, 1_000_000}} {
		b.Run(fmt.Sprintf("pairs=%d/prefill=%d", c.pairs, c.prefill), func(b *testing.B) {
			e, _ := NewEstimator(time.Minute, 6)
			keys := make([]Key, c.pairs)
			for i := range keys {
				keys[i] = Key{Site: uint16(i / 32), Region: uint8(i % 32)}
			}
			at := t0
			for i := range c.prefill {
				_ = e.Observe(keys[i%c.pairs], rtts[i&1023], at)
				at = at.Add(10 * time.Microsecond)
			}
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if err := e.Observe(keys[i%c.pairs], rtts[i&1023], at); err != nil {
					b.Fatal(err)
				}
				at = at.Add(10 * time.Microsecond) // 100 k samples/s of stream time: slices turn over
			}
			el := time.Since(start)
			ns := float64(el.Nanoseconds()) / float64(b.N)
			if ci == 0 {
				base = ns
			}
			b.ReportMetric(float64(b.N)/el.Seconds(), "samples/s")
			b.ReportMetric(ns/base, "ratio")
		})
	}
}

// BenchmarkP95: one pair's P95 over its window (the learner reads every
// pair each evaluation), at growing samples in the window: merging the
// window's slices costs per slice and bucket, not per sample.
func BenchmarkP95(b *testing.B) {
	var base float64 // ns/op of the first setting (its last, longest run)
	for ni, n := range []int{100, 10_000, 1_000_000} {
		b.Run(fmt.Sprintf("samples=%d", n), func(b *testing.B) {
			e, _ := NewEstimator(time.Minute, 6)
			k := Key{Site: 1, Region: 1}
			r := rand.New(rand.NewPCG(5, 6))
			step := 50 * time.Second / time.Duration(n)
			at := t0
			for range n {
				_ = e.Observe(k, time.Duration(math.Exp(4+0.3*r.NormFloat64())*float64(time.Millisecond)), at)
				at = at.Add(step)
			}
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if _, _, ok := e.P95(k, at); !ok {
					b.Fatal("no estimate")
				}
			}
			ns := float64(time.Since(start).Nanoseconds()) / float64(b.N)
			if ni == 0 {
				base = ns
			}
			b.ReportMetric(ns/base, "ratio")
		})
	}
}
