// Package plots draws the serverless experiment's figures (gonum/plot), each
// as a PNG and an SVG: P99 latency (end to end) and P99 response time (to start) per policy
// against λ (or against the notification delay), with 95 % CI error bars,
// CDFs of response time at one λ, and the PathFinder paper's form: P99
// bars per trace and policy at the highest λ.
package plots

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/p4ctl/p4ctl/pkg/figure"
	"github.com/p4ctl/p4ctl/pkg/stats"
	"github.com/p4ctl/p4ctl/research/sim/serverless"
)

// FloorS is the smallest value drawn on a log axis (seconds): 1 ms. Smaller
// values (e.g. a P99 wait of 0) are drawn at the floor.
const FloorS = 0.001

// Write renders res's figures into dir (created if missing) and returns the
// files written. Each figure's title says what it shows; its caption is
// the run's provenance: the experiment, seeds, requests and the execution
// time distributions drawn from (figure.Caption).
func Write(res *serverless.ExperimentResult, dir string) ([]string, error) {
	cfg := res.Config
	byDelay := len(cfg.Lambdas) == 1 && len(cfg.NotifyDelays) > 1
	out := &figure.Plots{Dir: dir, W: 7 * vg.Inch, H: 4.5 * vg.Inch}
	if !byDelay {
		top := slices.Max(cfg.Lambdas)
		for _, m := range []struct {
			key, title string
			get        func(*serverless.Metrics) stats.Summary
		}{
			{"p99_response", "P99 response time (to start)", func(m *serverless.Metrics) stats.Summary { return m.P99ResponseMS }},
			{"p99_latency", "P99 latency (end to end)", func(m *serverless.Metrics) stats.Summary { return m.P99LatencyMS }},
		} {
			p, err := barsPlot(res, top, m.title, m.get)
			if err != nil {
				return nil, err
			}
			if err := out.Save(p, m.key+"_bars_lambda"+strconv.FormatFloat(top, 'g', -1, 64), figure.Caption(caption(res, cfg.Dists...))); err != nil {
				return nil, err
			}
		}
	}
	for _, d := range cfg.Dists {
		for _, m := range []struct {
			key, title, label string
			get               func(*serverless.Metrics) stats.Summary
		}{
			{"p99_response", "P99 response time (to start)", "P99 response (s, log scale)", func(m *serverless.Metrics) stats.Summary { return m.P99ResponseMS }},
			{"p99_latency", "P99 latency (end to end)", "P99 latency (s, log scale)", func(m *serverless.Metrics) stats.Summary { return m.P99LatencyMS }},
		} {
			p, err := sweepPlot(res, d, byDelay, m.title, m.label, m.get)
			if err != nil {
				return nil, err
			}
			base := m.key + "_" + d
			if byDelay {
				base = m.key + "_vs_notify_" + d
			}
			if err := out.Save(p, base, figure.Caption(caption(res, d))); err != nil {
				return nil, err
			}
		}
		if cfg.CDFLambda > 0 && slices.Contains(cfg.Lambdas, cfg.CDFLambda) {
			p, err := cdfPlot(res, d, cfg.CDFLambda)
			if err != nil {
				return nil, err
			}
			if err := out.Save(p, "cdf_latency_"+d+"_lambda"+strconv.FormatFloat(cfg.CDFLambda, 'g', -1, 64), figure.Caption(caption(res, d))); err != nil {
				return nil, err
			}
		}
	}
	return out.Files, nil
}

// caption is a figure's provenance: the simulated experiment and setting,
// its seeds and requests per run, and the execution time distributions of
// dists as drawn from (their descriptions, sources included).
func caption(res *serverless.ExperimentResult, dists ...string) string {
	cfg := res.Config
	c := "simulated (research/sim/serverless): experiment " + cfg.Name
	if cfg.Scenario != "" {
		c += ", " + cfg.Scenario + " setting"
	}
	if cfg.Benchmark != "" {
		c += ", benchmark " + cfg.Benchmark
	}
	c += fmt.Sprintf("; %d seeds (%d…%d) × %d requests per run, the first %g %% left out as warm-up",
		cfg.Seeds, cfg.BaseSeed, cfg.BaseSeed+uint64(max(cfg.Seeds, 1))-1, cfg.Requests, 100*cfg.Warmup)
	for _, d := range dists {
		for _, di := range res.Distributions {
			if di.Name == d {
				c += fmt.Sprintf("; %s: %s", d, di.Description) // a scale included
			}
		}
	}
	return c
}

// widths makes overlapping curves visible: earlier policies are drawn wider.
func width(i int) vg.Length { return vg.Points(3 - 0.6*float64(i)) }

// errPoints are points with asymmetric y errors, clamped to the log floor.
type errPoints struct {
	plotter.XYs
	lo, hi []float64
}

func (e errPoints) YError(i int) (float64, float64) { return e.lo[i], e.hi[i] }

// sweepSeries is one policy's points in a sweep plot: x (λ, or log10 of
// the notification delay) dodged per policy, y = log10 of the value in
// seconds (floored at FloorS), and its 95 % CI as y errors.
type sweepSeries struct {
	policy serverless.Policy
	pts    errPoints
}

// sweepSeriesOf computes what a sweep plot draws, in cfg.Policies order.
// Policies whose values coincide (late binding and PathFinder often do)
// are dodged sideways by a fraction of the x spacing (of a decade on a log
// axis), so every line and marker shows.
func sweepSeriesOf(res *serverless.ExperimentResult, d string, byDelay bool, get func(*serverless.Metrics) stats.Summary) []sweepSeries {
	cfg := res.Config
	step := 1.0
	if !byDelay {
		step = minGap(cfg.Lambdas)
	}
	var out []sweepSeries
	for i, pol := range cfg.Policies {
		dx := figure.Dodge(i, len(cfg.Policies), step)
		ss := sweepSeries{policy: pol}
		for _, sc := range res.Scenarios {
			if sc.Dist != d || sc.Policy != pol {
				continue
			}
			if !byDelay && sc.NotifyDelayMS != cfg.NotifyDelays[0] {
				continue
			}
			x := sc.Lambda + dx
			if byDelay {
				x = math.Log10(math.Max(sc.NotifyDelayMS, 1)) + dx/3
			}
			s := get(&sc.Metrics)
			y := math.Log10(math.Max(s.Mean/1000, FloorS))
			lo := math.Log10(math.Max((s.Mean-s.CI95)/1000, FloorS))
			hi := math.Log10(math.Max((s.Mean+s.CI95)/1000, FloorS))
			ss.pts.XYs = append(ss.pts.XYs, plotter.XY{X: x, Y: y})
			ss.pts.lo = append(ss.pts.lo, y-lo)
			ss.pts.hi = append(ss.pts.hi, hi-y)
		}
		out = append(out, ss)
	}
	return out
}

func sweepPlot(res *serverless.ExperimentResult, d string, byDelay bool, title, ylabel string,
	get func(*serverless.Metrics) stats.Summary) (*plot.Plot, error) {
	cfg := res.Config
	p := plot.New()
	if byDelay {
		p.Title.Text = fmt.Sprintf("%s, λ = %g req/s: %s vs pod-free notification delay\nmean ± 95%% CI over %d seeds; values < 1 ms drawn at 1 ms", d, cfg.Lambdas[0], title, cfg.Seeds)
		p.X.Label.Text = "notification delay (ms, log scale; 0 drawn at 1)"
		p.X.Tick.Marker = figure.Log10Ticks{} // x holds log10(ms)
	} else {
		p.Title.Text = fmt.Sprintf("%s execution times: %s vs λ\nmean ± 95%% CI over %d seeds; values < 1 ms drawn at 1 ms", d, title, cfg.Seeds)
		p.X.Label.Text = "arrival rate λ (req/s)"
	}
	p.Y.Label.Text = ylabel
	p.Y.Tick.Marker = figure.Log10Ticks{} // y holds log10(seconds)
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for i, ss := range sweepSeriesOf(res, d, byDelay, get) {
		pol, pts := ss.policy, ss.pts
		for k, pt := range pts.XYs {
			ymin, ymax = math.Min(ymin, pt.Y-pts.lo[k]), math.Max(ymax, pt.Y+pts.hi[k])
		}
		if len(pts.XYs) == 0 {
			continue
		}
		line, marks, err := plotter.NewLinePoints(pts.XYs)
		if err != nil {
			return nil, fmt.Errorf("plots: %s %s: %w", d, pol, err)
		}
		line.Color = plotutil.Color(i)
		line.Dashes = plotutil.Dashes(i)
		line.Width = width(i)
		marks.Color = plotutil.Color(i)
		marks.Shape = plotutil.Shape(i)
		eb, err := plotter.NewYErrorBars(pts)
		if err != nil {
			return nil, fmt.Errorf("plots: %s %s: %w", d, pol, err)
		}
		eb.Color = plotutil.Color(i)
		marks.Radius = vg.Points(3.5)
		// A white casing under every line but the first keeps a line that
		// runs on top of an earlier one visible as its own (late binding and
		// PathFinder often coincide).
		if i > 0 {
			casing, err := plotter.NewLine(pts.XYs)
			if err != nil {
				return nil, fmt.Errorf("plots: %s %s: %w", d, pol, err)
			}
			casing.Color, casing.Width = color.White, line.Width+vg.Points(0.8)
			p.Add(casing)
		}
		p.Add(line, marks, eb)
		p.Legend.Add(pol.String(), line, marks)
	}
	p.Add(plotter.NewGrid())
	if ymin <= ymax {
		// The axis holds every error bar: none runs below (or above) it.
		pad := math.Max(0.05*(ymax-ymin), 0.05)
		p.Y.Min, p.Y.Max = ymin-pad, ymax+pad
	}
	return p, nil
}

// barsPlot draws, per trace (distribution), one bar per policy of the
// metric at λ = lambda, with 95 % CI error bars. The axis holds log10 of
// seconds above the 1 ms floor (bars of ms and of minutes both show); its
// ticks are labelled in seconds.
func barsPlot(res *serverless.ExperimentResult, lambda float64, title string, get func(*serverless.Metrics) stats.Summary) (*plot.Plot, error) {
	cfg := res.Config
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s per trace at λ = %g req/s (%s)\nmean ± 95%% CI over %d seeds; bars start at 1 ms", title, lambda, settingOf(cfg), cfg.Seeds)
	p.Y.Label.Text = title + " (s, log scale)"
	floor := math.Log10(FloorS)
	p.Y.Tick.Marker = shiftedTicks{floor}
	p.Add(plotter.NewGrid())
	n := len(cfg.Policies)
	const group = 0.8 // of the distance between traces
	ymax := 1.0
	for i, pol := range cfg.Policies {
		vals := make(plotter.Values, len(cfg.Dists))
		pts := errPoints{}
		x0 := group * (float64(i)/float64(n) - 0.5 + 0.5/float64(n))
		for j, d := range cfg.Dists {
			for _, sc := range res.Scenarios {
				if sc.Dist != d || sc.Policy != pol || sc.Lambda != lambda || sc.NotifyDelayMS != cfg.NotifyDelays[0] {
					continue
				}
				s := get(&sc.Metrics)
				y := math.Log10(math.Max(s.Mean/1000, FloorS)) - floor
				lo := math.Log10(math.Max((s.Mean-s.CI95)/1000, FloorS)) - floor
				hi := math.Log10(math.Max((s.Mean+s.CI95)/1000, FloorS)) - floor
				vals[j] = y
				pts.XYs = append(pts.XYs, plotter.XY{X: float64(j) + x0, Y: y})
				pts.lo, pts.hi = append(pts.lo, y-lo), append(pts.hi, hi-y)
				ymax = math.Max(ymax, hi)
			}
		}
		// Bar widths follow the data: group/n of the distance between traces.
		b, err := plotter.NewBarChart(vals, barWidth(len(cfg.Dists), n, group))
		if err != nil {
			return nil, fmt.Errorf("plots: bars %s: %w", pol, err)
		}
		b.Color = plotutil.Color(i)
		b.LineStyle.Width = vg.Points(0.5)
		b.XMin = x0
		p.Add(b)
		if len(pts.XYs) > 0 {
			eb, err := plotter.NewYErrorBars(pts)
			if err != nil {
				return nil, fmt.Errorf("plots: bars %s: %w", pol, err)
			}
			p.Add(eb)
		}
		p.Legend.Add(pol.String(), b)
	}
	p.NominalX(cfg.Dists...)
	p.X.Min, p.X.Max = -0.5, float64(len(cfg.Dists))-0.5
	p.Y.Min, p.Y.Max = 0, 1.1*ymax
	return p, nil
}

// barWidth is the width of one bar when n bars share group of the distance
// between k traces on a plot about 7 inches wide.
func barWidth(k, n int, group float64) vg.Length {
	unit := 6 * vg.Inch / vg.Length(k)
	return unit * vg.Length(group/float64(n)) * 0.9
}

// shiftedTicks labels an axis holding log10(seconds) − floor as seconds.
type shiftedTicks struct{ floor float64 }

// Ticks implements plot.Ticker.
func (t shiftedTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := figure.Log10Ticks{}.Ticks(lo+t.floor, hi+t.floor)
	for i := range ts {
		ts[i].Value -= t.floor
	}
	return ts
}

// settingOf names the experiment's setting for a title.
func settingOf(cfg serverless.ExperimentConfig) string {
	if cfg.Scenario != "" {
		return cfg.Scenario + " setting"
	}
	return "1-core pods"
}

// minGap is the smallest distance between distinct values of xs (1 for
// fewer than two).
func minGap(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	gap := math.Inf(1)
	for i := 1; i < len(s); i++ {
		if d := s[i] - s[i-1]; d > 0 {
			gap = math.Min(gap, d)
		}
	}
	if math.IsInf(gap, 1) {
		return 1
	}
	return gap
}

func cdfPlot(res *serverless.ExperimentResult, d string, lambda float64) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s, λ = %g req/s: CDF of latency, end to end (seed %d)", d, lambda, res.Config.BaseSeed)
	p.X.Label.Text = "latency (s, log scale)"
	p.Y.Label.Text = "fraction of requests"
	p.X.Tick.Marker = figure.Log10Ticks{} // x holds log10(seconds)
	p.Y.Min, p.Y.Max = 0, 1
	for _, sc := range res.Scenarios {
		if sc.Dist != d || sc.Lambda != lambda || sc.NotifyDelayMS != res.Config.NotifyDelays[0] {
			continue
		}
		rs, _ := sc.Samples()
		if len(rs) == 0 {
			continue
		}
		s := slices.Clone(rs)
		slices.Sort(s)
		const n = 400
		pts := make(plotter.XYs, 0, n+1)
		for k := 0; k <= n; k++ {
			q := float64(k) / n
			pts = append(pts, plotter.XY{X: math.Log10(math.Max(stats.QuantileSorted(s, q)/1000, FloorS)), Y: q})
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return nil, fmt.Errorf("plots: cdf %s %s: %w", d, sc.Policy, err)
		}
		idx := slices.Index(res.Config.Policies, sc.Policy)
		line.Color = plotutil.Color(idx)
		line.Dashes = plotutil.Dashes(idx)
		line.Width = width(idx)
		if idx > 0 { // as in sweepPlot: a line on top of another stays visible
			casing, err := plotter.NewLine(pts)
			if err != nil {
				return nil, fmt.Errorf("plots: cdf %s %s: %w", d, sc.Policy, err)
			}
			casing.Color, casing.Width = color.White, line.Width+vg.Points(0.8)
			p.Add(casing)
		}
		p.Add(line)
		p.Legend.Add(sc.Policy.String(), line)
	}
	p.Add(plotter.NewGrid())
	return p, nil
}
