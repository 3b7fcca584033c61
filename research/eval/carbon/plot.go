package carbon

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/p4ctl/p4ctl/pkg/figure"
	"github.com/p4ctl/p4ctl/pkg/regions"
)

// WritePlots renders the experiment's plots into dir as PNG and SVG: saving
// vs SLA per policy, routing shares of C (stacked bars), the hourly carbon
// heatmap and the CDF of per-run savings of C, per pool. Every plot's
// title says what it shows; its caption names the carbon source, the
// signal and the runs (figure.Caption). It returns the files written.
func WritePlots(r *Result, dir string) ([]string, error) {
	out := &figure.Plots{Dir: dir, Caption: plotCaption(r)}
	for _, pool := range r.Pools {
		p, err := savingPlot(r, pool)
		if err != nil {
			return nil, err
		}
		if err := out.SaveSized(p, fmt.Sprintf("saving_vs_sla_pool%d", pool), 7*vg.Inch, 4.5*vg.Inch); err != nil {
			return nil, err
		}
		if p, err = sharePlot(r, pool); err != nil {
			return nil, err
		}
		if err := out.SaveSized(p, fmt.Sprintf("route_share_C_pool%d", pool), 7*vg.Inch, 4.5*vg.Inch); err != nil {
			return nil, err
		}
		if p, err = cdfPlot(r, pool); err != nil {
			return nil, err
		}
		if err := out.SaveSized(p, fmt.Sprintf("saving_cdf_C_pool%d", pool), 7*vg.Inch, 4.5*vg.Inch); err != nil {
			return nil, err
		}
	}
	if r.table != nil {
		p, bar := heatmap(r)
		if err := out.SaveSized(p, "carbon_heatmap", 9*vg.Inch, 4.5*vg.Inch, figure.Side(bar, 1.1*vg.Inch)); err != nil {
			return nil, err
		}
	}
	return out.Files, nil
}

func classesOf(r *Result) []string {
	var out []string
	for _, s := range r.SLAs {
		out = append(out, fmt.Sprintf("%g", s))
	}
	return append(out, "mixed")
}

// plotCaption is the provenance of the experiment's plots: the carbon
// source whole (file paths included), the signal and the runs.
func plotCaption(r *Result) string {
	return fmt.Sprintf("carbon: %s; signal: %s; site %s, %d runs of %d requests (%d mixed) from seed %d, drawn from the hours of %s",
		r.CarbonSource, r.Signal, r.Site, r.Runs, r.Requests, r.MixedRequests, r.Seed, r.Period)
}

func newPlot(title string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Tick.Marker, p.Y.Tick.Marker = figure.Ticks{}, figure.Ticks{}
	return p
}

// savingPoint is one policy's saving in one class, where it is drawn.
type savingPoint struct {
	X, Y float64
	// Violates is true when some of the class's requests were routed to a
	// region whose P95 exceeds their SLA: drawn hollow, as a saving that
	// the SLA does not allow.
	Violates bool
}

// savingSeries is one policy's points in the saving plot: the SLA classes
// at 0, 1, … of a nominal axis and the mixed workload apart at mixedX, the
// last category (each policy dodged sideways within a category, so
// coinciding policies stay visible).
type savingSeries struct {
	Policy string
	Points []savingPoint
	Mixed  *savingPoint
}

// savingSeriesOf computes what the saving plot draws: per policy but A, its
// points, dodged and marked when they violate the SLA.
func savingSeriesOf(r *Result, pool int) (series []savingSeries, slas []string, mixedX float64) {
	cls := classesOf(r)
	slas, mixedX = cls[:len(cls)-1], float64(len(cls)-1)
	pols := regions.Policies()[1:]
	for k, pol := range pols {
		dx := figure.Dodge(k, len(pols), 1)
		s := savingSeries{Policy: pol.String()}
		for i, c := range slas {
			if row, ok := r.Find(pool, pol.String(), c); ok {
				s.Points = append(s.Points, savingPoint{X: float64(i) + dx, Y: row.SavingPct, Violates: row.ViolationPct > 0})
			}
		}
		if row, ok := r.Find(pool, pol.String(), "mixed"); ok {
			s.Mixed = &savingPoint{X: mixedX + dx, Y: row.SavingPct, Violates: row.ViolationPct > 0}
		}
		series = append(series, s)
	}
	return series, slas, mixedX
}

// filledShapes are the marker shapes a policy may have: filled, so that a
// white centre (hollow) can mark a point that violates the SLA.
var filledShapes = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}}

// savingPlot draws the saving per SLA class as points, one colour and
// shape per policy, on a nominal axis: the classes are categories, not
// points of a scale, so no line joins them (issue 27 item 19). The mixed
// workload is the last category, past a dashed separator. Points that
// violate the SLA are hollow: a saving bought by breaking the SLA (B, D)
// is not one to compare.
func savingPlot(r *Result, pool int) (*plot.Plot, error) {
	p := newPlot(fmt.Sprintf("Carbon saving vs A by SLA class, %d regions", pool))
	p.X.Label.Text = "SLA class (ms); hollow marker: that policy routes some requests beyond their SLA"
	p.Y.Label.Text = "saving vs A (%)"
	series, slas, mixedX := savingSeriesOf(r, pool)
	ymax := 0.0
	marks := func(pts []savingPoint, col color.Color, shape draw.GlyphDrawer, radius vg.Length) error {
		var all, hollow plotter.XYs
		for _, pt := range pts {
			all = append(all, plotter.XY{X: pt.X, Y: pt.Y})
			if pt.Violates {
				hollow = append(hollow, plotter.XY{X: pt.X, Y: pt.Y})
			}
			ymax = math.Max(ymax, pt.Y)
		}
		if len(all) == 0 {
			return nil
		}
		m, err := plotter.NewScatter(all)
		if err != nil {
			return fmt.Errorf("plots: %w", err)
		}
		m.Color, m.Shape, m.Radius = col, shape, radius
		p.Add(m)
		if len(hollow) > 0 {
			h, err := plotter.NewScatter(hollow)
			if err != nil {
				return fmt.Errorf("plots: %w", err)
			}
			h.Color, h.Shape, h.Radius = color.White, shape, radius*0.55
			p.Add(h)
		}
		return nil
	}
	for k, s := range series {
		col := plotutil.Color(k)
		shape := filledShapes[k%len(filledShapes)]
		if err := marks(s.Points, col, shape, vg.Points(3.5)); err != nil {
			return nil, err
		}
		if s.Mixed != nil {
			if err := marks([]savingPoint{*s.Mixed}, col, shape, vg.Points(3.5)); err != nil {
				return nil, err
			}
		}
		thumb := &plotter.Scatter{GlyphStyle: draw.GlyphStyle{Color: col, Shape: shape, Radius: vg.Points(3.5)}}
		p.Legend.Add(s.Policy, thumb)
	}
	sep, err := plotter.NewLine(plotter.XYs{{X: mixedX - 0.5, Y: 0}, {X: mixedX - 0.5, Y: math.Max(ymax, 1) * 1.05}})
	if err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	sep.Color, sep.Dashes = color.Gray{Y: 150}, []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(sep, plotter.NewGrid())
	p.NominalX(append(slices.Clone(slas), "mixed")...)
	p.X.Min, p.X.Max = -0.5, mixedX+0.5
	return p, nil
}

// shareSeries is one region's bars in the routing-share plot.
type shareSeries struct {
	Region regions.Index
	City   string
	Color  color.Color
	Shares plotter.Values // per class, %
}

// shareSeriesOf computes the routing-share plot's stacks: one series per
// region of the pool, in catalog order, each in its catalog colour.
func shareSeriesOf(r *Result, pool int) []shareSeries {
	cls := classesOf(r)
	set, _ := regions.PoolOf(pool)
	var out []shareSeries
	for _, i := range set.Indices() {
		reg, _ := regions.RegionAt(i)
		vals := make(plotter.Values, len(cls))
		for j, c := range cls {
			if row, ok := r.Find(pool, "C", c); ok {
				vals[j] = 100 * row.RouteShare[reg.ID]
			}
		}
		out = append(out, shareSeries{Region: i, City: reg.City, Color: figure.RegionColor(int(i)), Shares: vals})
	}
	return out
}

func sharePlot(r *Result, pool int) (*plot.Plot, error) {
	p := newPlot(fmt.Sprintf("Routing share of policy C per class, %d regions", pool))
	p.X.Label.Text = "SLA class (ms)"
	p.Y.Label.Text = "share of requests (%)"
	p.NominalX(classesOf(r)...)
	var names []string
	var cols []color.Color
	var values []plotter.Values
	for _, s := range shareSeriesOf(r, pool) {
		names, cols, values = append(names, s.City), append(cols, s.Color), append(values, s.Shares)
	}
	if err := figure.StackBars(p, vg.Points(28), names, cols, values); err != nil {
		return nil, err
	}
	return p, nil
}

// cdfCurve is one class's CDF of per-run savings of C.
type cdfCurve struct {
	Class  string
	Sorted []float64 // the runs' savings, ascending
	// Group is the index of the curves it overlaps (overlapGroups), and
	// Nested its place among them: drawn wider the earlier it is.
	Group, Nested int
}

func (c cdfCurve) median() float64 { return c.Sorted[len(c.Sorted)/2] }

// overlapFraction is how close (as a fraction of the x span) two curves'
// medians may lie before they hide each other: ≈ 7 pt on a 5-inch data
// area, two line widths and a dash.
const overlapFraction = 0.02

// overlapGroups sorts curves into groups of curves whose medians lie
// within overlapFraction of the x span of each other (chained), and
// returns the groups of more than one curve, each in class order.
func overlapGroups(curves []cdfCurve) [][]int {
	lo, hi := math.Inf(1), math.Inf(-1)
	order := make([]int, len(curves))
	for i, c := range curves {
		lo, hi = math.Min(lo, c.Sorted[0]), math.Max(hi, c.Sorted[len(c.Sorted)-1])
		order[i] = i
	}
	tol := overlapFraction * math.Max(hi-lo, 1)
	sort.SliceStable(order, func(a, b int) bool { return curves[order[a]].median() < curves[order[b]].median() })
	var groups [][]int
	for k, i := range order {
		if k > 0 && curves[i].median()-curves[order[k-1]].median() < tol {
			groups[len(groups)-1] = append(groups[len(groups)-1], i)
			continue
		}
		groups = append(groups, []int{i})
	}
	var out [][]int
	for _, g := range groups {
		if len(g) > 1 {
			sort.Ints(g)
			out = append(out, g)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a][0] < out[b][0] })
	return out
}

// overlapLabel names the classes of a group of curves and the range they
// span, in two lines: "800, 1000, 3000 ms" and "overlap: 95.7–95.9 %".
func overlapLabel(curves []cdfCurve, g []int) string {
	var slas []string
	mixed := false
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, i := range g {
		c := curves[i]
		if c.Class == "mixed" {
			mixed = true
		} else {
			slas = append(slas, c.Class)
		}
		lo, hi = math.Min(lo, c.Sorted[0]), math.Max(hi, c.Sorted[len(c.Sorted)-1])
	}
	name := ""
	if len(slas) > 0 {
		name = strings.Join(slas, ", ") + " ms"
	}
	if mixed {
		name = strings.TrimPrefix(name+", mixed", ", ")
	}
	return fmt.Sprintf("%s\noverlap: %.1f–%.1f %%", name, lo, hi)
}

// cdfPlot draws the CDF of per-run savings of C per class. Curves that lie
// on each other (the 12-region pool's 800, 1000 and 3000 ms all save
// ≈ 95.8 %: issue 27 item 19) are drawn nested, the first widest, so each
// colour shows, and annotated on the plot with the classes they are.
func cdfPlot(r *Result, pool int) (*plot.Plot, error) {
	p := newPlot(fmt.Sprintf("CDF of per-run saving of C vs A, %d regions", pool))
	p.X.Label.Text = "saving of one run (%)"
	p.Y.Label.Text = "fraction of runs"
	cls := classesOf(r)
	cols := palette.Rainbow(len(cls), 0, 0.8, 0.9, 0.9, 1).Colors()
	var curves []cdfCurve
	var colour []int
	for k, c := range cls {
		row, ok := r.Find(pool, "C", c)
		if !ok || len(row.RunSavingPct) == 0 {
			continue
		}
		v := slices.Clone(row.RunSavingPct)
		sort.Float64s(v)
		curves = append(curves, cdfCurve{Class: c, Sorted: v, Group: -1})
		colour = append(colour, k)
	}
	groups := overlapGroups(curves)
	for gi, g := range groups {
		for j, i := range g {
			curves[i].Group, curves[i].Nested = gi, j
		}
	}
	for i, c := range curves {
		k := colour[i]
		var pts plotter.XYs
		for j, x := range c.Sorted {
			pts = append(pts, plotter.XY{X: x, Y: float64(j) / float64(len(c.Sorted))}, plotter.XY{X: x, Y: float64(j+1) / float64(len(c.Sorted))})
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return nil, fmt.Errorf("plots: %w", err)
		}
		l.Color = cols[k]
		l.Dashes = plotutil.Dashes(k)
		l.Width = vg.Points(1.5)
		if c.Group >= 0 {
			n := len(groups[c.Group])
			l.Width = vg.Points(1.5 + 2*float64(n-1-c.Nested))
			l.Dashes = nil // nested lines show as stripes; dashes would break them
		}
		p.Add(l)
		label := c.Class + " ms"
		if c.Class == "mixed" {
			label = c.Class
		}
		p.Legend.Add(label, l)
	}
	xlo, xhi := math.Inf(1), math.Inf(-1)
	for _, c := range curves {
		xlo, xhi = math.Min(xlo, c.Sorted[0]), math.Max(xhi, c.Sorted[len(c.Sorted)-1])
	}
	for gi, g := range groups {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, i := range g {
			lo, hi = math.Min(lo, curves[i].Sorted[0]), math.Max(hi, curves[i].Sorted[len(curves[i].Sorted)-1])
		}
		// Beside the group, on the side with more room to the next curve
		// (or the axis's end), staggered down from the middle.
		left, right := xlo, xhi
		for i, c := range curves {
			if slices.Contains(g, i) {
				continue
			}
			if c.median() < lo {
				left = math.Max(left, c.Sorted[len(c.Sorted)-1])
			} else if c.median() > hi {
				right = math.Min(right, c.Sorted[0])
			}
		}
		at := plotter.XY{X: hi, Y: 0.5 - 0.15*float64(gi%3)}
		align, off := draw.XLeft, vg.Points(6)
		if lo-left > right-hi {
			at.X, align, off = lo, draw.XRight, -vg.Points(6)
		}
		lb, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{at}, Labels: []string{overlapLabel(curves, g)}})
		if err != nil {
			return nil, fmt.Errorf("plots: %w", err)
		}
		lb.TextStyle[0].XAlign = align
		lb.TextStyle[0].Font.Size = vg.Points(9)
		lb.Offset = vg.Point{X: off}
		p.Add(lb)
	}
	p.Add(plotter.NewGrid())
	return p, nil
}

// grid is the carbon table as a heat-map grid: x = hour, y = region.
type grid struct {
	t   *regions.CarbonTable
	idx []regions.Index
}

func (g grid) Dims() (c, r int)   { return g.t.Hours(), len(g.idx) }
func (g grid) Z(c, r int) float64 { return g.t.Hour(c)[g.idx[r]] }
func (g grid) X(c int) float64    { return float64(c) }
func (g grid) Y(r int) float64    { return float64(r) }

// heatmapColors is the heatmap's colour map: sequential, as carbon
// intensity runs one way (cleaner to dirtier) with no meaningful middle —
// light for clean, dark for dirty (black-body, reversed). A diverging map
// (blue–white–red) made the middle of the range look like a neutral point.
func heatmapColors() palette.ColorMap { return palette.Reverse(moreland.BlackBody()) }

// heatmap draws the hourly carbon intensity per region (x = date, y =
// region) with a colour bar that gives the scale.
func heatmap(r *Result) (*plot.Plot, *plot.Plot) {
	g := grid{t: r.table, idx: r.table.Regions().Indices()}
	p := newPlot(fmt.Sprintf("Hourly carbon intensity (gCO2eq/kWh), %s", r.Period))
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, z := range r.Zones {
		lo, hi = math.Min(lo, z.Min), math.Max(hi, z.Max)
	}
	pal := heatmapColors()
	pal.SetMin(lo)
	pal.SetMax(hi)
	h := plotter.NewHeatMap(g, pal.Palette(64))
	h.Min, h.Max = lo, hi
	p.Add(h)
	names := make([]string, len(g.idx))
	for k, i := range g.idx {
		reg, _ := regions.RegionAt(i)
		names[k] = reg.City
	}
	p.NominalY(names...)
	p.X.Label.Text = "date (UTC)"
	p.X.Tick.Marker = DayTicks{From: r.Period.From}
	p.X.Min, p.X.Max = -0.5, float64(r.table.Hours())-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(len(g.idx))-0.5

	cb := plot.New()
	cb.Add(&plotter.ColorBar{ColorMap: pal, Vertical: true})
	cb.HideX()
	cb.Y.Label.Text = "gCO2eq/kWh"
	cb.Y.Tick.Marker = figure.Ticks{}
	cb.Y.Min, cb.Y.Max = lo, hi
	return p, cb
}

// DayTicks mark an axis of hours since From at midnights (UTC), labelled
// with the date ("Jan 2") every day, or every k-th day so that at most 12
// labels show; hours are minor marks when an axis spans three days or less.
type DayTicks struct{ From time.Time }

// Ticks implements plot.Ticker.
func (d DayTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || hi-lo > 24*366*10 {
		return nil
	}
	start := d.From.Add(time.Duration(math.Floor(lo)) * time.Hour)
	day := time.Date(start.Year(), start.Month(), start.Day(), 0, 0, 0, 0, time.UTC)
	if day.Before(start) {
		day = day.AddDate(0, 0, 1)
	}
	days := int((hi-lo)/24) + 1
	every := max(1, (days+11)/12)
	var ts []plot.Tick
	for k := 0; ; k++ {
		t := day.AddDate(0, 0, k)
		x := t.Sub(d.From).Hours()
		if x > hi {
			break
		}
		tk := plot.Tick{Value: x}
		if k%every == 0 {
			tk.Label = t.Format("Jan 2")
		}
		ts = append(ts, tk)
	}
	if hi-lo <= 72 {
		for x := math.Ceil(lo); x <= hi; x++ {
			if int(x)%24 != 0 {
				ts = append(ts, plot.Tick{Value: x})
			}
		}
	}
	return ts
}
