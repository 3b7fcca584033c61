package stability

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"sort"

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
// class) hourly and with hysteresis. Every title names the carbon source
// and the signal. It returns the files written.
func WritePlots(r *Result, dir string) ([]string, error) {
	src := figure.Source(r.CarbonSource) + "\nsignal: " + r.Signal
	out := &figure.Plots{Dir: dir, W: 9 * vg.Inch, H: 5 * vg.Inch}
	p, err := paretoPlot(r, "", src)
	if err != nil {
		return nil, err
	}
	if err := out.Save(p, "stability_pareto"); err != nil {
		return nil, err
	}
	for _, s := range r.Sites {
		if p, err = paretoPlot(r, s, src); err != nil {
			return nil, err
		}
		if err := out.Save(p, "stability_pareto_"+s); err != nil {
			return nil, err
		}
	}
	if p, err = changesPlot(r, src); err != nil {
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

func newPlot(title, src string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title + "\n" + src
	p.X.Tick.Marker, p.Y.Tick.Marker = figure.Ticks{}, figure.Ticks{}
	return p
}

// paretoPlot draws saving against changes per day for policy C's sweep:
// min_gain × min_hold points (one colour per min_gain, labelled
// gain/hold), the horizon sweep, hourly C and the evaluated hysteresis,
// and the front. For the Mumbai site the paper's saving of C is given
// beside ours (labelled; a line when it falls in the plotted range).
func paretoPlot(r *Result, site, src string) (*plot.Plot, error) {
	where := "all sites"
	if site != "" {
		where = "site " + site
	}
	p := newPlot(fmt.Sprintf("Policy C: saving vs region changes\n%s, %d regions, %.0f days; labels: min_gain/min_hold", where, len(r.Pool), r.Days), src)
	p.X.Label.Text = "changes of the chosen region per day (all SLA classes)"
	p.Y.Label.Text = "carbon saving vs A (%)"
	hourly, chosen, grid, horizons := paretoOf(r, site)

	var front plotter.XYs
	for _, pt := range append(append([]paretoPoint{hourly}, grid...), horizons...) {
		if pt.Front {
			front = append(front, plotter.XY{X: pt.X, Y: pt.Y})
		}
	}
	sort.Slice(front, func(i, j int) bool { return front[i].X < front[j].X })
	if len(front) > 1 {
		l, err := plotter.NewLine(front)
		if err != nil {
			return nil, fmt.Errorf("plots: %w", err)
		}
		l.Color, l.Dashes, l.Width = color.Gray{Y: 120}, []vg.Length{vg.Points(4), vg.Points(2)}, vg.Points(1)
		p.Add(l)
		p.Legend.Add("Pareto front (labelled)", l)
	}
	ymin, ymax := math.Inf(1), math.Inf(-1)
	xmax := 0.0
	see := func(pts ...paretoPoint) {
		for _, pt := range pts {
			ymin, ymax, xmax = math.Min(ymin, pt.Y), math.Max(ymax, pt.Y), math.Max(xmax, pt.X)
		}
	}
	see(hourly, chosen)
	see(grid...)
	see(horizons...)

	// The grid, one colour per min_gain.
	var gainsSeen []string
	byGain := map[string]plotter.XYs{}
	var labels plotter.XYLabels
	for _, pt := range grid {
		g := pt.Label[:indexByte(pt.Label, '/')]
		if !slices.Contains(gainsSeen, g) {
			gainsSeen = append(gainsSeen, g)
		}
		byGain[g] = append(byGain[g], plotter.XY{X: pt.X, Y: pt.Y})
		if pt.Front { // labels on the front only: the rest would overlap
			labels.XYs = append(labels.XYs, plotter.XY{X: pt.X, Y: pt.Y})
			labels.Labels = append(labels.Labels, pt.Label)
		}
	}
	for k, g := range gainsSeen {
		s, err := plotter.NewScatter(byGain[g])
		if err != nil {
			return nil, fmt.Errorf("plots: %w", err)
		}
		s.Color, s.Shape, s.Radius = plotutil.Color(k), draw.CircleGlyph{}, vg.Points(3)
		p.Add(s)
		p.Legend.Add("min_gain "+g, s)
	}
	if len(horizons) > 0 {
		var xy plotter.XYs
		for _, pt := range horizons {
			xy = append(xy, plotter.XY{X: pt.X, Y: pt.Y})
			if pt.Front {
				labels.XYs = append(labels.XYs, plotter.XY{X: pt.X, Y: pt.Y})
				labels.Labels = append(labels.Labels, pt.Label)
			}
		}
		s, err := plotter.NewScatter(xy)
		if err != nil {
			return nil, fmt.Errorf("plots: %w", err)
		}
		s.Color, s.Shape, s.Radius = color.Black, draw.PyramidGlyph{}, vg.Points(3.5)
		p.Add(s)
		p.Legend.Add(fmt.Sprintf("horizons at %s/%dh", r.Hysteresis.MinGain, r.Hysteresis.MinHold), s)
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
	for _, m := range []struct {
		pt    paretoPoint
		shape draw.GlyphDrawer
		col   color.Color
		name  string
	}{
		{hourly, draw.CrossGlyph{}, color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, "hourly C"},
		{chosen, draw.BoxGlyph{}, color.Black, fmt.Sprintf("evaluated %s/%dh/%dh", r.Hysteresis.MinGain, r.Hysteresis.MinHold, r.Hysteresis.Horizon)},
	} {
		s, err := plotter.NewScatter(plotter.XYs{{X: m.pt.X, Y: m.pt.Y}})
		if err != nil {
			return nil, fmt.Errorf("plots: %w", err)
		}
		s.Color, s.Shape, s.Radius = m.col, m.shape, vg.Points(5)
		p.Add(s)
		p.Legend.Add(m.name, s)
	}
	pad := math.Max(0.1, 0.08*(ymax-ymin))
	p.Y.Min, p.Y.Max = ymin-pad, ymax+pad
	if site == "mumbai" && len(r.Pool) == 12 {
		v := r.Paper.MixedSaving12Pct
		name := fmt.Sprintf("PAPER %.1f %%", v)
		if v >= p.Y.Min && v <= p.Y.Max {
			l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: v}, {X: xmax * 1.05, Y: v}})
			if err != nil {
				return nil, fmt.Errorf("plots: %w", err)
			}
			l.Color, l.Dashes = color.Black, []vg.Length{vg.Points(1), vg.Points(2)}
			p.Add(l)
			p.Legend.Add(name, l)
		} else {
			p.Legend.Add(name + " (off axis)")
		}
	}
	p.X.Min, p.X.Max = 0, math.Max(xmax*1.15, 0.1) // a rate: from 0 (decision 23)
	p.Add(plotter.NewGrid())
	return p, nil
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
func changesPlot(r *Result, src string) (*plot.Plot, error) {
	p := newPlot("Policy C: changes of the chosen region per day\nper site and SLA class", src)
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
