package config

import (
	"time"

	"github.com/p4ctl/p4ctl/pkg/latency"
)

// LatencyLearning configures how the controller learns each (site, region) pair's
// latency from the switch's latency_sample digests (docs/CONFIG.md
// "latency", pkg/latency) and when a measured P95 changes what
// sla_feasibility compiles.
type LatencyLearning struct {
	// Source: static (the profiles only; the default), measured (the
	// measured P95 once a pair has min_samples, its profile before) or blend
	// (the larger of the two).
	Source string `json:"source,omitempty"`
	// Window is the span of the sliding window the P95 is computed over
	// (default 30s), in Buckets slices (default 6).
	Window  Duration `json:"window,omitzero"`
	Buckets int      `json:"buckets,omitempty"`
	// Margin: a pair's compiled latency moves across an SLA class boundary
	// only when its P95 is beyond the boundary by more than this (default
	// 5ms).
	Margin Duration `json:"margin,omitzero"`
	// MinSamples in the window before a measured P95 counts (default 20).
	MinSamples int `json:"min_samples,omitempty"`
	// MinDwell: a pair becomes feasible again no sooner than this after its
	// last change (default 30s); becoming infeasible is immediate.
	MinDwell Duration `json:"min_dwell,omitzero"`
	// Evaluate is how often the learner is evaluated (default 100ms).
	Evaluate Duration `json:"evaluate,omitzero"`
	// DigestTimeout and DigestListSize are the switch's batching of
	// digests (DigestEntry max_timeout_ns, max_list_size; default 1ms and
	// 64), AckTimeout its duplicate suppression window (default 1s).
	DigestTimeout  Duration `json:"digest_timeout,omitzero"`
	DigestListSize int      `json:"digest_list_size,omitempty"`
	AckTimeout     Duration `json:"ack_timeout,omitzero"`
}

// Defaults of the latency block.
const (
	DefaultLatencyWindow     = 30 * time.Second
	DefaultLatencyBuckets    = 6
	DefaultLatencyMargin     = 5 * time.Millisecond
	DefaultLatencyMinSamples = 20
	DefaultLatencyMinDwell   = 30 * time.Second
	DefaultLatencyEvaluate   = 100 * time.Millisecond
	DefaultDigestTimeout     = time.Millisecond
	DefaultDigestListSize    = 64
	DefaultAckTimeout        = time.Second
)

// Learning reports whether the controller learns latency (source measured
// or blend).
func (l LatencyLearning) Learning() bool {
	return l.Source == string(latency.Measured) || l.Source == string(latency.Blend)
}

// WithDefaults returns l with every zero field at its default.
func (l LatencyLearning) WithDefaults() LatencyLearning {
	def := func(d *Duration, v time.Duration) {
		if d.Duration == 0 {
			d.Duration = v
		}
	}
	if l.Source == "" {
		l.Source = string(latency.Static)
	}
	def(&l.Window, DefaultLatencyWindow)
	def(&l.Margin, DefaultLatencyMargin)
	def(&l.MinDwell, DefaultLatencyMinDwell)
	def(&l.Evaluate, DefaultLatencyEvaluate)
	def(&l.DigestTimeout, DefaultDigestTimeout)
	def(&l.AckTimeout, DefaultAckTimeout)
	if l.Buckets == 0 {
		l.Buckets = DefaultLatencyBuckets
	}
	if l.MinSamples == 0 {
		l.MinSamples = DefaultLatencyMinSamples
	}
	if l.DigestListSize == 0 {
		l.DigestListSize = DefaultDigestListSize
	}
	return l
}

// LearnerConfig is the pkg/latency configuration of l (defaults applied).
func (l LatencyLearning) LearnerConfig() latency.Config {
	l = l.WithDefaults()
	return latency.Config{Source: latency.Source(l.Source), Margin: l.Margin.Duration, MinSamples: l.MinSamples, MinDwell: l.MinDwell.Duration}
}

func (c *Config) validateLatency(p *problems) {
	l := c.Latency
	switch latency.Source(l.Source) {
	case "", latency.Static, latency.Measured, latency.Blend:
	default:
		p.add("latency.source", "%q: want static, measured or blend", l.Source)
	}
	for _, d := range []struct {
		path string
		v    time.Duration
	}{{"latency.window", l.Window.Duration}, {"latency.margin", l.Margin.Duration}, {"latency.min_dwell", l.MinDwell.Duration},
		{"latency.evaluate", l.Evaluate.Duration}, {"latency.digest_timeout", l.DigestTimeout.Duration}, {"latency.ack_timeout", l.AckTimeout.Duration}} {
		if d.v < 0 {
			p.add(d.path, "%s must be ≥ 0", d.v)
		}
	}
	if l.Buckets < 0 || l.MinSamples < 0 || l.DigestListSize < 0 {
		p.add("latency.buckets", "buckets %d, min_samples %d, digest_list_size %d must be ≥ 0", l.Buckets, l.MinSamples, l.DigestListSize)
	}
	if l.Learning() && len(c.SLAClasses) == 0 {
		p.add("latency.source", "%s needs sla_classes: their budgets are the boundaries a measured P95 must cross", l.Source)
	}
	w := l.WithDefaults()
	if w.Window.Duration/time.Duration(max(w.Buckets, 1)) < time.Millisecond {
		p.add("latency.window", "%s in %d buckets: each bucket must span at least 1ms", w.Window.Duration, w.Buckets)
	}
	if w.Evaluate.Duration > w.Window.Duration {
		p.add("latency.evaluate", "%s is longer than the window %s", w.Evaluate.Duration, w.Window.Duration)
	}
}
