package stability

import (
	"cmp"
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
	"github.com/p4ctl/p4ctl/pkg/regions"
)

// WritePlots renders the evaluation's plots into dir as PNG and SVG
// (pkg/figure): the saving-vs-changes Pareto plot of policy C's sweep
// over all sites and per site, and the changes per day of each (site, SLA
// class) hourly and with hysteresis. Every plot's title says what it
// shows; its caption names the carbon source, the signal and the runs
// (figure.Caption). It returns the files written.
func WritePlots(r *Result, dir string) ([]string, error) {
	out := &figure.Plots{Dir: dir, W: 9 * vg.Inch, H: 5 * vg.Inch, Caption: plotCaption(r)}
	// The Pareto plots' caption starts with how to read their marks.
	pareto := figure.Caption(paretoKey + ".\n" + out.Caption)
	p, err := paretoPlot(r, "")
	if err != nil {
		return nil, err
	}
	if err := out.Save(p, "stability_pareto", pareto); err != nil {
		return nil, err
	}
	for _, s := range r.Sites {
		if p, err = paretoPlot(r, s); err != nil {
			return nil, err
		}
		if err := out.Save(p, "stability_pareto_"+s, pareto); err != nil {
			return nil, err
		}
	}
	if p, err = changesPlot(r); err != nil {
		return nil, err
	}
	if err := out.Save(p, "stability_changes_by_class"); err != nil {
		return nil, err
	}
	return out.Files, nil
}

// paretoPoint is one point of the Pareto plot.
type paretoPoint struct {
	X, Y  float64 // changes per day, saving %
	Label string
	Front bool
}

// paretoOf computes the Pareto plot's points for site ("" = all sites):
// hourly C, the evaluated hysteresis, the min_gain × min_hold sweep and the
// horizon sweep, and the front over all of them.
func paretoOf(r *Result, site string) (hourly, chosen paretoPoint, grid, horizons []paretoPoint) {
	pick := func(save, chg float64, sites map[string]float64, sitesChg map[string]float64) (float64, float64) {
		if site == "" {
			return chg, save
		}
		return sitesChg[site], sites[site]
	}
	if h, ok := r.Find(regions.PolicyC.String(), SettingHourly); ok {
		hourly.X, hourly.Y = pick(h.SavingPct, h.ChangesPerDay, h.SiteSavingPct, h.SiteChangesPerDay)
		hourly.Label = "hourly C"
	}
	if h, ok := r.Find(regions.PolicyC.String(), SettingHysteresis); ok {
		chosen.X, chosen.Y = pick(h.SavingPct, h.ChangesPerDay, h.SiteSavingPct, h.SiteChangesPerDay)
		chosen.Label = r.Hysteresis.String()
	}
	for _, p := range r.Sweep {
		x, y := pick(p.SavingPct, p.ChangesPerDay, p.SiteSavingPct, p.SiteChangesPerDay)
		pt := paretoPoint{X: x, Y: y, Label: fmt.Sprintf("%s/%dh", p.Hysteresis.MinGain, p.Hysteresis.MinHold)}
		if p.Horizon {
			pt.Label = fmt.Sprintf("horizon %dh", p.Hysteresis.Horizon)
			horizons = append(horizons, pt)
		} else {
			grid = append(grid, pt)
		}
	}
	// The front over every point (site values for a site's plot).
	all := append([]*paretoPoint{&hourly}, ptrs(grid)...)
	all = append(all, ptrs(horizons)...)
	for _, a := range all {
		a.Front = true
		for _, b := range all {
			if b != a && b.Y >= a.Y && b.X <= a.X && (b.Y > a.Y || b.X < a.X) {
				a.Front = false
				break
			}
		}
	}
	return hourly, chosen, grid, horizons
}

func ptrs(ps []paretoPoint) []*paretoPoint {
	out := make([]*paretoPoint, len(ps))
	for i := range ps {
		out[i] = &ps[i]
	}
	return out
}

// plotCaption is the provenance of the evaluation's plots: the carbon
// source whole (file paths included), the signal and the runs.
func plotCaption(r *Result) string {
	return fmt.Sprintf("carbon: %s; signal: %s; sites %s, %d regions, %d requests per site and hour from seed %d, latency model %s, %s (%.0f days)",
		r.CarbonSource, r.Signal, strings.Join(r.Sites, ", "), len(r.Pool), r.RequestsPerHour, r.Seed, r.LatencyModel, r.Period, r.Days)
}

// paretoKey is how to read the Pareto plots' marks, the start of their
// caption.
const paretoKey = "Labels: min_gain/min_hold; outlines lie on other marks"

func newPlot(title string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Tick.Marker, p.Y.Tick.Marker = figure.Ticks{}, figure.Ticks{}
	return p
}

// frontName is the legend entry of the Pareto front's line.
const frontName = "Pareto front (labelled)"

// paretoSeries is the marks of one legend entry of the Pareto plot.
type paretoSeries struct {
	Name   string
	Color  color.Color
	Shape  draw.GlyphDrawer // CircleGlyph, BoxGlyph, PyramidGlyph (filled) or CrossGlyph
	Radius vg.Length
	Points plotter.XYs
	// Nest is, per point, how many marks drawn before it lie on it (0: none):
	// such a point is drawn as an outline around them (nestedRadius), so
	// that no mark hides another and every legend entry shows (issue 27
	// item 19).
	Nest []int
	// Under is, per point, the largest radius of the marks it lies on.
	Under []vg.Length
}

// Filled reports whether s's marks are filled shapes, which hide what is
// under them.
func (s paretoSeries) Filled() bool {
	_, cross := s.Shape.(draw.CrossGlyph)
	return !cross
}

// nestedRadius is the radius of point i of s: its own, or, for a point on
// earlier marks, that of an outline nestGap outside the largest of them.
func (s paretoSeries) nestedRadius(i int) vg.Length {
	if s.Nest[i] == 0 {
		return s.Radius
	}
	return max(s.Radius, s.Under[i]) + nestGap
}

// nestGap is the room between nested outlines.
const nestGap = vg.Length(2) // points

// coincideX and coincideY are how close (as fractions of the axes' spans)
// two marks lie on each other: ≈ 5 points on the data area of a 9 × 5
// inch figure, less than a mark's diameter.
const coincideX, coincideY = 0.012, 0.02

// paretoMarks computes the Pareto plot's marks for site ("" = all sites)
// on axes x0..x1 × y0..y1, in drawing order: the evaluated hysteresis,
// hourly C, the horizon sweep, then the min_gain × min_hold grid, one
// series per min_gain. A point that lies on marks drawn before it is
// nested around them as an outline. It also returns the labels of the
// points on the front.
func paretoMarks(r *Result, site string, x0, x1, y0, y1 float64) ([]paretoSeries, plotter.XYLabels) {
	hourly, chosen, grid, horizons := paretoOf(r, site)
	xy := func(pt paretoPoint) plotter.XY { return plotter.XY{X: pt.X, Y: pt.Y} }
	series := []paretoSeries{
		{Name: fmt.Sprintf("evaluated %s/%dh/%dh", r.Hysteresis.MinGain, r.Hysteresis.MinHold, r.Hysteresis.Horizon),
			Color: color.Black, Shape: draw.BoxGlyph{}, Radius: vg.Points(4.5), Points: plotter.XYs{xy(chosen)}},
		{Name: "hourly C", Color: color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, Shape: draw.CrossGlyph{}, Radius: vg.Points(5), Points: plotter.XYs{xy(hourly)}},
	}
	var labels plotter.XYLabels
	if len(horizons) > 0 {
		s := paretoSeries{Name: fmt.Sprintf("horizons at %s/%dh", r.Hysteresis.MinGain, r.Hysteresis.MinHold),
			Color: color.Black, Shape: draw.PyramidGlyph{}, Radius: vg.Points(3.5)}
		for _, pt := range horizons {
			s.Points = append(s.Points, xy(pt))
			if pt.Front {
				labels.XYs, labels.Labels = append(labels.XYs, xy(pt)), append(labels.Labels, pt.Label)
			}
		}
		series = append(series, s)
	}
	var gains []string
	byGain := map[string]plotter.XYs{}
	for _, pt := range grid {
		g := pt.Label[:indexByte(pt.Label, '/')]
		if !slices.Contains(gains, g) {
			gains = append(gains, g)
		}
		byGain[g] = append(byGain[g], xy(pt))
		if pt.Front { // labels on the front only: the rest would overlap
			labels.XYs, labels.Labels = append(labels.XYs, xy(pt)), append(labels.Labels, pt.Label)
		}
	}
	for k, g := range gains {
		series = append(series, paretoSeries{Name: "min_gain " + g, Color: plotutil.Color(k), Shape: draw.CircleGlyph{}, Radius: vg.Points(3), Points: byGain[g]})
	}
	// Nest every point that lies on filled marks drawn before it.
	tx, ty := coincideX*(x1-x0), coincideY*(y1-y0)
	type drawn struct {
		at plotter.XY
		r  vg.Length
	}
	var below []drawn
	for i := range series {
		s := &series[i]
		s.Nest, s.Under = make([]int, len(s.Points)), make([]vg.Length, len(s.Points))
		for j, pt := range s.Points {
			for _, d := range below {
				if math.Abs(d.at.X-pt.X) < tx && math.Abs(d.at.Y-pt.Y) < ty {
					s.Nest[j]++
					s.Under[j] = max(s.Under[j], d.r)
				}
			}
		}
		for j, pt := range s.Points {
			if s.Filled() || s.Nest[j] > 0 {
				below = append(below, drawn{pt, s.nestedRadius(j)})
			}
		}
	}
	return series, labels
}

// outlineGlyph draws a filled shape's outline, 1.2 points wide (gonum's
// own outlines are 0.5 points: too faint for a colour to show).
type outlineGlyph struct{ filled draw.GlyphDrawer }

// DrawGlyph implements draw.GlyphDrawer.
func (o outlineGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(1.2)})
	r := sty.Radius
	var p vg.Path
	switch o.filled.(type) {
	case draw.BoxGlyph:
		p.Move(vg.Point{X: pt.X - r, Y: pt.Y - r})
		p.Line(vg.Point{X: pt.X + r, Y: pt.Y - r})
		p.Line(vg.Point{X: pt.X + r, Y: pt.Y + r})
		p.Line(vg.Point{X: pt.X - r, Y: pt.Y + r})
	case draw.PyramidGlyph:
		p.Move(vg.Point{X: pt.X, Y: pt.Y + r})
		p.Line(vg.Point{X: pt.X - r*0.866, Y: pt.Y - r/2})
		p.Line(vg.Point{X: pt.X + r*0.866, Y: pt.Y - r/2})
	default:
		p.Move(vg.Point{X: pt.X + r, Y: pt.Y})
		p.Arc(pt, r, 0, 2*math.Pi)
	}
	p.Close()
	c.Stroke(p)
}

// paretoPlot draws saving against changes per day for policy C's sweep:
// min_gain × min_hold points (one colour per min_gain, labelled
// gain/hold), the horizon sweep, hourly C and the evaluated hysteresis,
// and the front (paretoMarks). The y axis is cut to the points and says
// so on its label. For the Mumbai site the paper's saving of C is given
// beside ours, labelled: a line when it falls in the plotted range, else a
// note on the data saying it lies below (or above) the axis — not a legend
// entry with nothing drawn.
func paretoPlot(r *Result, site string) (*plot.Plot, error) {
	where := "all sites"
	if site != "" {
		where = "site " + site
	}
	p := newPlot(fmt.Sprintf("Policy C: saving vs region changes\n%s, %d regions, %.0f days", where, len(r.Pool), r.Days))
	p.X.Label.Text = "changes of the chosen region per day (all SLA classes)"
	p.Y.Label.Text = "carbon saving vs A (%)"
	hourly, chosen, grid, horizons := paretoOf(r, site)

	var front plotter.XYs
	ymin, ymax := math.Inf(1), math.Inf(-1)
	xmax := 0.0
	for _, pt := range append(append([]paretoPoint{hourly, chosen}, grid...), horizons...) {
		ymin, ymax, xmax = math.Min(ymin, pt.Y), math.Max(ymax, pt.Y), math.Max(xmax, pt.X)
		if pt.Front && pt != chosen {
			front = append(front, plotter.XY{X: pt.X, Y: pt.Y})
		}
	}
	pad := math.Max(0.1, 0.08*(ymax-ymin))
	p.X.Min, p.X.Max = 0, math.Max(xmax*1.15, 0.1) // a rate: from 0 (decision 23)
	p.Y.Min, p.Y.Max = ymin-pad, ymax+pad
	if p.Y.Min > 0 { // a round start, stated on the label (figure.StateCut)
		p.Y.Min = math.Floor(p.Y.Min*10) / 10
	}

	sort.Slice(front, func(i, j int) bool { return front[i].X < front[j].X })
	if len(front) > 1 {
		l, err := plotter.NewLine(front)
		if err != nil {
			return nil, fmt.Errorf("plots: %w", err)
		}
		l.Color, l.Dashes, l.Width = color.Gray{Y: 120}, []vg.Length{vg.Points(4), vg.Points(2)}, vg.Points(1)
		p.Add(l)
		p.Legend.Add(frontName, l)
	}
	series, labels := paretoMarks(r, site, p.X.Min, p.X.Max, p.Y.Min, p.Y.Max)
	for _, s := range series {
		for j, pt := range s.Points {
			sc, err := plotter.NewScatter(plotter.XYs{pt})
			if err != nil {
				return nil, fmt.Errorf("plots: %w", err)
			}
			sc.Color, sc.Shape, sc.Radius = s.Color, s.Shape, s.nestedRadius(j)
			if s.Nest[j] > 0 && s.Filled() {
				sc.Shape = outlineGlyph{s.Shape}
			}
			p.Add(sc)
		}
	}
	// The legend: the front, the grid by min_gain, the horizons, hourly C,
	// the evaluated setting.
	legend := append(append([]paretoSeries(nil), series[2:]...), series[1], series[0])
	slices.SortStableFunc(legend, func(a, b paretoSeries) int {
		return cmp.Compare(legendRank(a.Name), legendRank(b.Name))
	})
	for _, s := range legend {
		p.Legend.Add(s.Name, &plotter.Scatter{GlyphStyle: draw.GlyphStyle{Color: s.Color, Shape: s.Shape, Radius: s.Radius}})
	}
	lbl, err := plotter.NewLabels(labels)
	if err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	for i := range lbl.TextStyle {
		lbl.TextStyle[i].Font.Size = vg.Points(6)
		lbl.TextStyle[i].Color = color.Gray{Y: 90}
	}
	lbl.Offset = vg.Point{X: vg.Points(4), Y: vg.Points(2)}
	p.Add(lbl)
	if site == "mumbai" && len(r.Pool) == 12 {
		if err := paperMark(p, r.Paper.MixedSaving12Pct, xmax); err != nil {
			return nil, err
		}
	}
	figure.StateCut(&p.Y)
	p.Add(plotter.NewGrid())
	return p, nil
}

// legendRank orders the Pareto plot's legend: the grid by min_gain, the
// horizons, hourly C, the evaluated setting.
func legendRank(name string) int {
	switch {
	case strings.HasPrefix(name, "min_gain"):
		return 0
	case strings.HasPrefix(name, "horizons"):
		return 1
	case name == "hourly C":
		return 2
	}
	return 3
}

// paperMark gives the paper's 12-region saving of C (v %) beside ours: a
// dotted line with a legend entry when it falls on the y axis, else a note
// at the axis's edge on the data saying where it lies.
func paperMark(p *plot.Plot, v, xmax float64) error {
	name := fmt.Sprintf("PAPER %.1f %% (12 regions, mixed)", v)
	if v >= p.Y.Min && v <= p.Y.Max {
		l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: v}, {X: xmax * 1.05, Y: v}})
		if err != nil {
			return fmt.Errorf("plots: %w", err)
		}
		l.Color, l.Dashes = color.Black, []vg.Length{vg.Points(1), vg.Points(2)}
		p.Add(l)
		p.Legend.Add(name, l)
		return nil
	}
	at := plotter.XY{X: p.X.Min + 0.02*(p.X.Max-p.X.Min), Y: p.Y.Min + 0.04*(p.Y.Max-p.Y.Min)}
	where := "below"
	if v > p.Y.Max {
		at.Y, where = p.Y.Max-0.08*(p.Y.Max-p.Y.Min), "above"
	}
	lb, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{at}, Labels: []string{name + ": " + where + " this axis"}})
	if err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	lb.TextStyle[0].Font.Size = vg.Points(9)
	p.Add(lb)
	return nil
}

func indexByte(s string, b byte) int {
	for i := range len(s) {
		if s[i] == b {
			return i
		}
	}
	return len(s)
}

// changesPlot draws policy C's changes per day per (site, SLA class),
// hourly beside the evaluated hysteresis.
func changesPlot(r *Result) (*plot.Plot, error) {
	p := newPlot("Policy C: changes of the chosen region per day\nper site and SLA class")
	p.Y.Label.Text = "changes per day"
	p.X.Label.Text = "site / SLA class (ms)"
	var names []string
	vals := [2]plotter.Values{}
	for _, s := range r.Sites {
		for _, cl := range r.Classes {
			names = append(names, s+"\n"+cl)
			for i, set := range []string{SettingHourly, SettingHysteresis} {
				row, _ := r.FindClass(regions.PolicyC.String(), set, s, cl)
				vals[i] = append(vals[i], row.ChangesPerDay)
			}
		}
	}
	w := vg.Points(9)
	top := 0.0
	for _, v := range vals {
		for _, x := range v {
			top = math.Max(top, x)
		}
	}
	for i, name := range []string{"hourly", fmt.Sprintf("hysteresis %s/%dh/%dh ", r.Hysteresis.MinGain, r.Hysteresis.MinHold, r.Hysteresis.Horizon)} {
		b, err := plotter.NewBarChart(vals[i], w)
		if err != nil {
			return nil, fmt.Errorf("plots: %w", err)
		}
		b.Color = plotutil.Color(i)
		b.LineStyle.Width = 0
		b.Offset = w * vg.Length(2*i-1) / 2
		p.Add(b)
		p.Legend.Add(name, b)
	}
	p.NominalX(names...)
	p.X.Tick.Label.Font.Size = vg.Points(7)
	p.Y.Min, p.Y.Max = 0, math.Max(top*1.08, 0.1) // a rate: from 0 (decision 23)
	p.Add(plotter.NewGrid())
	return p, nil
}
