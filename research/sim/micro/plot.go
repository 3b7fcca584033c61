package micro

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/p4ctl/p4ctl/pkg/figure"
	"github.com/p4ctl/p4ctl/pkg/stats"
)

// Plotter is implemented by results that draw themselves.
type Plotter interface {
	// Plots writes PNG and SVG files into dir and returns their paths.
	Plots(dir string) ([]string, error)
}

// save writes p as dir/name.png and dir/name.svg with its provenance as
// caption (figure.Caption; the title says what the plot shows).
func save(p *plot.Plot, dir, name string, w, h vg.Length, caption string) ([]string, error) {
	return figure.Save(p, dir, name, w, h, figure.Caption(caption))
}

// caption is a figure's provenance: the scenario and the seeds, as the
// text output states them (scenarioLine, seedsLine), after note (what the
// x axis moves away from the scenario, or what else the figure ran on)
// when there is one.
func caption(c Config, o Options, note string) string {
	s := "scenario: " + scenarioLine(c) + "; " + seedsLine(o)
	if note != "" {
		s = note + "; " + s
	}
	return s
}

// errPoints pairs points with symmetric y errors for plotter.NewYErrorBars.
type errPoints struct {
	plotter.XYs
	plotter.YErrors
}

func newErrPoints(xs []float64, ss []stats.Summary, scale float64) errPoints {
	e := errPoints{XYs: make(plotter.XYs, len(xs)), YErrors: make(plotter.YErrors, len(xs))}
	for i := range xs {
		e.XYs[i] = plotter.XY{X: xs[i], Y: scale * ss[i].Mean}
		e.YErrors[i].Low, e.YErrors[i].High = scale*ss[i].CI95, scale*ss[i].CI95
	}
	return e
}

// floorPct keeps rates plottable on a log axis (0 → 0.001 %).
func floorPct(x float64) float64 { return math.Max(x, 1e-3) }

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Legend.Top = true
	p.X.Tick.Marker, p.Y.Tick.Marker = figure.Ticks{}, figure.Ticks{}
	p.Add(plotter.NewGrid())
	return p
}

func logX(p *plot.Plot) {
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = figure.LogTicks{}
}

func logY(p *plot.Plot) {
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = figure.LogTicks{}
}

// legendRoom raises the top of the y axis so that a legend of rows entries
// at the top of a plot h tall sits above every value of ys.
func legendRoom(p *plot.Plot, ys map[string][]float64, rows int, h vg.Length) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range ys {
		for _, y := range s {
			lo, hi = math.Min(lo, y), math.Max(hi, y)
		}
	}
	if !(hi >= lo) {
		return
	}
	// The data area is h less the title and the x axis (≈ 70 pt); a
	// legend row takes ≈ 14 pt.
	f := math.Min(0.6, (14*float64(rows)+8)/(float64(h)-70))
	if _, log := p.Y.Scale.(plot.LogScale); log && lo > 0 {
		l, u := math.Log(lo/1.2), math.Log(hi*1.05)
		p.Y.Min, p.Y.Max = math.Exp(l), math.Exp(l+(u-l)/(1-f))
		return
	}
	span := math.Max(hi-lo, math.Abs(hi)*0.1+1e-9)
	p.Y.Min, p.Y.Max = lo, lo+span/(1-f)
}

// lines adds one line with points per named series (x ascending).
func lines(p *plot.Plot, names []string, xs map[string][]float64, ys map[string][]float64) error {
	for i, n := range names {
		pts := make(plotter.XYs, len(xs[n]))
		for j := range pts {
			pts[j] = plotter.XY{X: xs[n][j], Y: ys[n][j]}
		}
		l, s, err := plotter.NewLinePoints(pts)
		if err != nil {
			return fmt.Errorf("plot %s: %w", n, err)
		}
		l.Color = plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i / 7)
		s.Color = plotutil.Color(i)
		s.Shape = plotutil.Shape(i)
		p.Add(l, s)
		p.Legend.Add(n, l, s)
	}
	return nil
}

// Plots draws the violation rate per policy as box plots across seeds.
func (r *E1Result) Plots(dir string) ([]string, error) {
	p, err := r.plot()
	if err != nil {
		return nil, err
	}
	return save(p, dir, "e1_violations", 28*vg.Centimeter, 13*vg.Centimeter, caption(r.Scenario, r.Options, ""))
}

// plot is E1's figure: a box per policy of its violation rate across
// seeds (the scenario it ran in the caption), on a log axis that holds both our
// rates and the study's figures beside them (issue 27 item 19: on a linear
// axis our ≈ 1 % sat squashed under the study's 35 %). The legend explains
// our marks as well as the study's.
func (r *E1Result) plot() (*plot.Plot, error) {
	p := newPlot("E1: SLO violations per policy across seeds", "", "violation rate (%, log scale)")
	logY(p)
	names := make([]string, len(r.Cells))
	lo, hi := 100*studyE1LateRate, 100*studyE1RandomAbove
	floored, outliers := false, false
	seeds := 0
	for i, c := range r.Cells {
		vals := make(plotter.Values, len(c.PerSeed))
		for j, v := range c.PerSeed {
			vals[j] = floorPct(100 * v)
			floored = floored || vals[j] != 100*v
			lo, hi = math.Min(lo, vals[j]), math.Max(hi, vals[j])
		}
		seeds = max(seeds, len(vals))
		b, err := plotter.NewBoxPlot(vg.Points(18), float64(i), vals)
		if err != nil {
			return nil, fmt.Errorf("plot e1: %w", err)
		}
		b.FillColor = plotutil.Color(i)
		outliers = outliers || len(b.Outside) > 0
		p.Add(b)
		names[i] = c.Policy
	}
	if floored {
		p.Y.Label.Text = "violation rate (%, log scale; 0 drawn at 0.001)"
	}
	p.Legend.Add(fmt.Sprintf("ours, %d seeds: box = quartiles, line = median", seeds), boxThumb{})
	p.Legend.Add("ours: whiskers, seeds within 1.5 × IQR", whiskerThumb{})
	if outliers {
		p.Legend.Add("ours: a seed beyond them", &plotter.Scatter{GlyphStyle: plotter.DefaultGlyphStyle})
	}
	if err := e1StudyMarks(p, r.Cells); err != nil {
		return nil, err
	}
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.6, float64(len(r.Cells))-0.4 // room for the marks beside the last box
	p.X.Tick.Label.Rotation = math.Pi / 6
	p.X.Tick.Label.XAlign = draw.XRight
	p.Y.Min, p.Y.Max = lo/1.5, hi*1.5
	return p, nil
}

// boxThumb is the legend's sample of a box plot's box: a grey box with
// its median line.
type boxThumb struct{}

// Thumbnail implements plot.Thumbnailer.
func (boxThumb) Thumbnail(c *draw.Canvas) {
	w := c.Max.X - c.Min.X
	r := vg.Rectangle{Min: vg.Point{X: c.Min.X + w/4, Y: c.Min.Y}, Max: vg.Point{X: c.Max.X - w/4, Y: c.Max.Y}}
	c.SetColor(color.Gray{Y: 200})
	c.Fill(r.Path())
	c.StrokeLines(plotter.DefaultLineStyle, []vg.Point{r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}, r.Min})
	mid := (c.Min.Y + c.Max.Y) / 2
	c.StrokeLine2(plotter.DefaultLineStyle, r.Min.X, mid, r.Max.X, mid)
}

// whiskerThumb is the legend's sample of a box plot's whisker: a dashed
// vertical line with a cap.
type whiskerThumb struct{}

// Thumbnail implements plot.Thumbnailer.
func (whiskerThumb) Thumbnail(c *draw.Canvas) {
	x := (c.Min.X + c.Max.X) / 2
	w := (c.Max.X - c.Min.X) / 4
	sty := draw.LineStyle{Color: color.Black, Width: vg.Points(0.5), Dashes: []vg.Length{vg.Points(4), vg.Points(2)}}
	c.StrokeLine2(sty, x, c.Min.Y, x, c.Max.Y)
	sty.Dashes = nil
	c.StrokeLine2(sty, x-w, c.Max.Y, x+w, c.Max.Y)
}

// studyMarks adds the study's figures (reported) at pts as glyphs of shape
// with one legend entry, and returns the scatter for styling.
func studyMarks(p *plot.Plot, pts plotter.XYs, shape draw.GlyphDrawer, radius vg.Length, label string) (*plotter.Scatter, error) {
	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return nil, fmt.Errorf("study marks: %w", err)
	}
	sc.GlyphStyle.Shape, sc.GlyphStyle.Radius = shape, radius
	p.Add(sc)
	p.Legend.Add(label, sc)
	return sc, nil
}

// e1StudyMarks draws the study's E1 figures (reported) beside the boxes
// they belong to: the lower bound for random, the range for JSW and
// forwarding, the value for late binding.
func e1StudyMarks(p *plot.Plot, cells []Cell) error {
	var lower, value plotter.XYs
	var rng []float64
	for i, c := range cells {
		x := float64(i) + 0.3
		switch c.Study {
		case StudyE1Random:
			lower = append(lower, plotter.XY{X: x, Y: 100 * studyE1RandomAbove})
		case StudyE1Strong:
			rng = append(rng, x)
		case StudyE1Late:
			value = append(value, plotter.XY{X: x, Y: 100 * studyE1LateRate})
		}
	}
	add := func(pts plotter.XYs, shape draw.GlyphDrawer, label string) error {
		if len(pts) == 0 {
			return nil
		}
		if _, err := studyMarks(p, pts, shape, vg.Points(5), label); err != nil {
			return fmt.Errorf("plot e1: %w", err)
		}
		return nil
	}
	if err := add(lower, draw.PyramidGlyph{}, "study (reported): "+StudyE1Random); err != nil {
		return err
	}
	if len(rng) > 0 {
		mid, half := 50*(studyE1StrongLo+studyE1StrongHi), 50*(studyE1StrongHi-studyE1StrongLo)
		e := errPoints{XYs: make(plotter.XYs, len(rng)), YErrors: make(plotter.YErrors, len(rng))}
		for i, x := range rng {
			e.XYs[i] = plotter.XY{X: x, Y: mid}
			e.YErrors[i].Low, e.YErrors[i].High = half, half
		}
		eb, err := plotter.NewYErrorBars(e)
		if err != nil {
			return fmt.Errorf("plot e1: %w", err)
		}
		eb.LineStyle.Width = vg.Points(1.5)
		p.Add(eb)
		thumb, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 0}}) // the legend's sample only
		if err != nil {
			return fmt.Errorf("plot e1: %w", err)
		}
		thumb.LineStyle = eb.LineStyle
		p.Legend.Add("study (reported): "+StudyE1Strong, thumb)
	}
	return add(value, draw.CrossGlyph{}, "study (reported): "+StudyE1Late)
}

// Plots draws Δ per pool size as grouped bars with 95 % CIs.
func (r *E2Result) Plots(dir string) ([]string, error) {
	p := newPlot(fmt.Sprintf("E2: violations removed by ideal movement (%d cores)", r.TotalCores), "cores per host m", "Δ violation rate (percentage points)")
	var ms []int
	byIngress := map[string][]E2Row{}
	var ingresses []string
	for _, x := range r.Rows {
		if len(ms) == 0 || ms[len(ms)-1] != x.CoresPerHost {
			ms = append(ms, x.CoresPerHost)
		}
		if _, ok := byIngress[x.Ingress]; !ok {
			ingresses = append(ingresses, x.Ingress)
		}
		byIngress[x.Ingress] = append(byIngress[x.Ingress], x)
	}
	const slot = 0.25
	for k, in := range ingresses {
		rows := byIngress[in]
		vals := make(plotter.Values, len(rows))
		xs := make([]float64, len(rows))
		ss := make([]stats.Summary, len(rows))
		off := (float64(k) - float64(len(ingresses)-1)/2) * slot
		for i, x := range rows {
			vals[i] = 100 * x.Delta.Mean
			xs[i] = float64(i) + off
			ss[i] = x.Delta
		}
		b, err := plotter.NewBarChart(vals, vg.Points(14))
		if err != nil {
			return nil, fmt.Errorf("plot e2: %w", err)
		}
		b.XMin = off
		b.Color = plotutil.Color(k)
		eb, err := plotter.NewYErrorBars(newErrPoints(xs, ss, 100))
		if err != nil {
			return nil, fmt.Errorf("plot e2: %w", err)
		}
		p.Add(b, eb)
		p.Legend.Add(in, b)
	}
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = fmt.Sprintf("m=%d", m)
	}
	p.NominalX(names...)
	return save(p, dir, "e2_delta", 18*vg.Centimeter, 11*vg.Centimeter,
		caption(r.Scenario, r.Options, fmt.Sprintf("the x axis moves the cores per host, %d cores in all", r.TotalCores)))
}

// Plots draws violation rate against D/S per policy.
func (r *E3Result) Plots(dir string) ([]string, error) {
	// The axis on the first line, its SLO and burst rules on the second,
	// so the title fits the data area.
	rules := strings.Replace(r.e3Title(), ", SLO", "\nSLO", 1)
	p := newPlot("E3: violations against D/S, "+rules, "one-way delay / mean service (D/S)", "violation rate (%, log)")
	logX(p)
	logY(p)
	xs, ys := map[string][]float64{}, map[string][]float64{}
	var names []string
	for _, pt := range r.Points {
		if _, ok := xs[pt.Label]; !ok {
			names = append(names, pt.Label)
		}
		xs[pt.Label] = append(xs[pt.Label], pt.DelayOverService)
		ys[pt.Label] = append(ys[pt.Label], floorPct(100*pt.Cell.Violation.Mean))
	}
	if err := lines(p, names, xs, ys); err != nil {
		return nil, fmt.Errorf("plot e3: %w", err)
	}
	// The study's D/S = 4 figures (reported), beside ours.
	at4 := plotter.XYs{{X: 4, Y: 100 * studyE3Random}, {X: 4, Y: 100 * studyE3Forward}, {X: 4, Y: 100 * studyE3JBSQ}}
	if _, err := studyMarks(p, at4, draw.CrossGlyph{}, vg.Points(6), "study (reported), D/S = 4"); err != nil {
		return nil, fmt.Errorf("plot e3: %w", err)
	}
	p.Legend.Left = true // violations grow with D/S: the top left stays free
	return save(p, dir, "e3_delay", 24*vg.Centimeter, 14*vg.Centimeter,
		caption(r.Scenario, r.Options, "the x axis moves D/S away from the scenario's"))
}

// Plots draws violations per scheme with 95 % CIs.
func (r *T40bResult) Plots(dir string) ([]string, error) {
	return cellBars(r.Cells, fmt.Sprintf("T40b: %d connections, Zipf α = %g", r.Scenario.Connections, r.Scenario.ZipfAlpha), dir, "t40b_violations", t40bName, true,
		caption(r.Scenario, r.Options, ""))
}

// Plots draws violations per policy with 95 % CIs.
func (r *RunSetResult) Plots(dir string) ([]string, error) {
	return cellBars(r.Cells, "SLO violations per policy", dir, "run_violations", func(s string) string { return s }, false,
		caption(r.Scenario, r.Options, ""))
}

// cellBars draws one bar per cell with its 95 % CI; with study, a cell
// whose Study figure is a single rate ("13.26 %", "3.61 % (…)") gets the
// study's value marked beside its bar; caption is its provenance.
func cellBars(cells []Cell, title, dir, name string, label func(string) string, study bool, caption string) ([]string, error) {
	p := newPlot(title, "", "violation rate (%)")
	vals := make(plotter.Values, len(cells))
	xs := make([]float64, len(cells))
	ss := make([]stats.Summary, len(cells))
	names := make([]string, len(cells))
	for i, c := range cells {
		vals[i], xs[i], ss[i], names[i] = 100*c.Violation.Mean, float64(i), c.Violation, label(c.Policy)
	}
	b, err := plotter.NewBarChart(vals, vg.Points(28))
	if err != nil {
		return nil, fmt.Errorf("plot %s: %w", name, err)
	}
	b.Color = plotutil.Color(0)
	pts := newErrPoints(xs, ss, 100)
	for i := range pts.YErrors { // a rate is never below 0: the CI is cut there
		pts.YErrors[i].Low = math.Min(pts.YErrors[i].Low, pts.XYs[i].Y)
	}
	eb, err := plotter.NewYErrorBars(pts)
	if err != nil {
		return nil, fmt.Errorf("plot %s: %w", name, err)
	}
	p.Add(b, eb)
	if study {
		var marks plotter.XYs
		for i, c := range cells {
			var v float64
			if n, err := fmt.Sscanf(c.Study, "%g %%", &v); err == nil && n == 1 {
				marks = append(marks, plotter.XY{X: float64(i), Y: v})
			}
		}
		if len(marks) > 0 {
			if _, err := studyMarks(p, marks, draw.CrossGlyph{}, vg.Points(6), "study (reported)"); err != nil {
				return nil, fmt.Errorf("plot %s: %w", name, err)
			}
		}
	}
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = math.Pi / 6 // long scheme names side by side
	p.X.Tick.Label.XAlign = draw.XRight
	p.Y.Min = 0
	p.X.Min, p.X.Max = -0.5, float64(len(cells))-0.5 // room for the outer bars
	return save(p, dir, name, 18*vg.Centimeter, 13*vg.Centimeter, caption)
}

// Plots draws violation rate against load per dispatcher.
func (r *GatewayResult) Plots(dir string) ([]string, error) {
	c := r.Scenario
	sub := fmt.Sprintf("%s for %d host(s) × %d cores, D = %g µs, SLO %g µs", r.Policy, c.Hosts, c.CoresPerHost, c.Delay, c.SLO)
	if c.Burst.Enabled() {
		sub += fmt.Sprintf(", bursts ×%g", c.Burst.Factor)
	}
	p := newPlot("Gateway saturation: software dispatcher vs switch\n"+sub, "load ρ", "violation rate (%, log)")
	logY(p)
	xs, ys := map[string][]float64{}, map[string][]float64{}
	var names []string
	for _, pt := range r.Points {
		n := gwName(pt.PerMessageNS, pt.Cores)
		if _, ok := xs[n]; !ok {
			names = append(names, n)
		}
		xs[n] = append(xs[n], pt.Load)
		ys[n] = append(ys[n], floorPct(100*pt.Cell.Violation.Mean))
	}
	if err := lines(p, names, xs, ys); err != nil {
		return nil, fmt.Errorf("plot gateway: %w", err)
	}
	// The study's cliff (reported), a dashed vertical line over our curves.
	lo := math.Inf(1)
	for _, s := range ys {
		for _, y := range s {
			lo = math.Min(lo, y)
		}
	}
	if !math.IsInf(lo, 1) {
		cliff, err := plotter.NewLine(plotter.XYs{{X: studyGatewayCliff, Y: lo}, {X: studyGatewayCliff, Y: 100}})
		if err != nil {
			return nil, fmt.Errorf("plot gateway: %w", err)
		}
		cliff.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		cliff.LineStyle.Width = vg.Points(1.5)
		p.Add(cliff)
		p.Legend.Add("study (reported): cliff near ρ ≈ 0.65", cliff)
	}
	const h = 12 * vg.Centimeter
	legendRoom(p, ys, len(names), h)
	return save(p, dir, "gateway_saturation", 20*vg.Centimeter, h, caption(r.Scenario, r.Options, "the x axis moves the load ρ away from the scenario's"))
}

// Plots draws violation rate against TTL per fault and mode.
func (r *TTLResult) Plots(dir string) ([]string, error) {
	p := newPlot("Credit TTL ablation", "TTL (µs, log)", "violation rate (%, log)")
	logX(p)
	logY(p)
	xs, ys := map[string][]float64{}, map[string][]float64{}
	var names []string
	none := map[string]float64{}
	var ttls []float64
	key := func(pt TTLPoint) string {
		if len(r.Tallies) > 1 {
			return pt.Choice + ", " + pt.Fault
		}
		return pt.Fault
	}
	for _, pt := range r.Points {
		if pt.TTL == 0 {
			none[key(pt)] = floorPct(100 * pt.Cell.Violation.Mean)
			continue
		}
		n := fmt.Sprintf("%s, %s TTL", key(pt), pt.Mode)
		if _, ok := xs[n]; !ok {
			names = append(names, n)
		}
		xs[n] = append(xs[n], pt.TTL)
		ys[n] = append(ys[n], floorPct(100*pt.Cell.Violation.Mean))
		ttls = append(ttls, pt.TTL)
	}
	sort.Float64s(ttls)
	for f, v := range none {
		n := f + ", no TTL"
		names = append(names, n)
		xs[n] = []float64{ttls[0], ttls[len(ttls)-1]}
		ys[n] = []float64{v, v}
	}
	sort.SliceStable(names[len(names)-len(none):], func(i, j int) bool {
		return names[len(names)-len(none)+i] < names[len(names)-len(none)+j]
	})
	if err := lines(p, names, xs, ys); err != nil {
		return nil, fmt.Errorf("plot ttl: %w", err)
	}
	const h = 13 * vg.Centimeter
	legendRoom(p, ys, len(names), h)
	return save(p, dir, "ttl_ablation", 20*vg.Centimeter, h, caption(r.Scenario, r.Options, ""))
}

// Plots draws violation rate against the bound, with the target and the
// chosen n.
func (r *TuneResult) Plots(dir string) ([]string, error) {
	p, err := r.plot()
	if err != nil {
		return nil, err
	}
	return save(p, dir, "tune_jbsq", 16*vg.Centimeter, 11*vg.Centimeter,
		caption(r.Scenario, r.Options, "algorithm "+r.Algorithm))
}

// minLabelRatio is how far apart (as a ratio, the x axis being log) two
// labelled bound ticks must be: 20 and 21 side by side read as "2021".
const minLabelRatio = 1.3

// boundTicks marks every simulated bound and labels those at least
// minLabelRatio from every other label, the chosen bound first.
func boundTicks(xs []float64, chosen float64) []plot.Tick {
	var labelled []float64
	farFrom := func(x float64) bool {
		for _, l := range labelled {
			if math.Max(x, l)/math.Min(x, l) < minLabelRatio {
				return false
			}
		}
		return true
	}
	for _, x := range xs {
		if x == chosen {
			labelled = append(labelled, x)
		}
	}
	for _, x := range xs {
		if x != chosen && farFrom(x) {
			labelled = append(labelled, x)
		}
	}
	ticks := make([]plot.Tick, len(xs))
	for i, x := range xs {
		ticks[i] = plot.Tick{Value: x}
		if slices.Contains(labelled, x) {
			ticks[i].Label = fmt.Sprint(x)
		}
	}
	return ticks
}

// plot is Plots' figure.
func (r *TuneResult) plot() (*plot.Plot, error) {
	p := newPlot(fmt.Sprintf("tune jbsq: chosen n = %d (target %.2g %%)", r.Bound, 100*r.Target), "bound n per host (log)", "violation rate (%, log)")
	logX(p)
	logY(p)
	var xs, ys []float64
	for _, pt := range r.Curve {
		if pt.Unstable {
			continue
		}
		xs = append(xs, float64(pt.Bound))
		ys = append(ys, floorPct(100*pt.Cell.Violation.Mean))
	}
	if len(xs) == 0 {
		return nil, fmt.Errorf("plot tune: no stable bound was simulated")
	}
	tgt := 100 * r.Target
	// Log y from below the lowest point to well above the target, so the
	// target line is clear of the title and the legend has room above it.
	lo := tgt
	for _, y := range ys {
		lo = math.Min(lo, y)
	}
	p.Y.Min = lo / 1.5
	p.Y.Max = tgt * math.Pow(tgt/p.Y.Min, 0.4)
	p.X.Min, p.X.Max = xs[0]/1.15, xs[len(xs)-1]*1.15
	if len(xs) <= 12 { // mark the bounds that were simulated, labels apart
		p.X.Tick.Marker = plot.ConstantTicks(boundTicks(xs, float64(r.Bound)))
	}
	series := map[string][]float64{"violations": ys, "target": {tgt, tgt}}
	xser := map[string][]float64{"violations": xs, "target": {xs[0], xs[len(xs)-1]}}
	if err := lines(p, []string{"violations", "target"}, xser, series); err != nil {
		return nil, fmt.Errorf("plot tune: %w", err)
	}
	for _, pt := range r.Curve {
		if pt.Bound == r.Bound && !pt.Unstable {
			s, err := plotter.NewScatter(plotter.XYs{{X: float64(pt.Bound), Y: floorPct(100 * pt.Cell.Violation.Mean)}})
			if err != nil {
				return nil, fmt.Errorf("plot tune: %w", err)
			}
			s.Shape = draw.RingGlyph{}
			s.Radius = vg.Points(7)
			p.Add(s)
			p.Legend.Add(fmt.Sprintf("chosen n = %d", r.Bound), s)
		}
	}
	return p, nil
}

// Plots draws, per pair, the ideal dispatcher's and the switch's violation
// rates side by side with 95 % CIs.
func (r *SwitchGapResult) Plots(dir string) ([]string, error) {
	p := newPlot("Ideal dispatcher vs the switch's one-pass algorithm", "", "violation rate (%)")
	names := make([]string, len(r.Rows))
	for i, x := range r.Rows {
		names[i] = x.Ideal.Policy + "\n" + x.Switch.Policy
	}
	for k, side := range []struct {
		name string
		cell func(SwitchGapRow) Cell
		dx   float64
	}{
		{"ideal (central)", func(x SwitchGapRow) Cell { return x.Ideal }, -0.18},
		{"switch (one pass)", func(x SwitchGapRow) Cell { return x.Switch }, 0.18},
	} {
		vals := make(plotter.Values, len(r.Rows))
		xs := make([]float64, len(r.Rows))
		ss := make([]stats.Summary, len(r.Rows))
		for i, x := range r.Rows {
			c := side.cell(x)
			vals[i], xs[i], ss[i] = 100*c.Violation.Mean, float64(i)+side.dx, c.Violation
		}
		b, err := plotter.NewBarChart(vals, vg.Points(22))
		if err != nil {
			return nil, fmt.Errorf("plot switch_gap: %w", err)
		}
		b.XMin, b.Color = side.dx, plotutil.Color(k)
		eb, err := plotter.NewYErrorBars(newErrPoints(xs, ss, 100))
		if err != nil {
			return nil, fmt.Errorf("plot switch_gap: %w", err)
		}
		p.Add(b, eb)
		p.Legend.Add(side.name, b)
	}
	p.NominalX(names...)
	p.Y.Min = 0 // error bars stay above the axis
	return save(p, dir, "switch_gap", 24*vg.Centimeter, 12*vg.Centimeter,
		caption(r.Scenario, r.Options, "the switch's algorithm: pkg/pipeline's one-pass dispatch"))
}
