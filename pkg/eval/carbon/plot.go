package carbon

import (
	"fmt"
	"image/color"
	"math"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/p4ctl/p4ctl/internal/figure"
	"github.com/p4ctl/p4ctl/pkg/regions"
)

// WritePlots renders the experiment's plots into dir as PNG and SVG: saving
// vs SLA per policy, routing shares of C (stacked bars), the hourly carbon
// heatmap and the CDF of per-run savings of C, per pool. Every plot names
// its carbon source. It returns the files written.
func WritePlots(r *Result, dir string) ([]string, error) {
	src := figure.Source(r.CarbonSource)
	var files []string
	save := func(p *plot.Plot, name string, w, h vg.Length) error {
		fs, err := figure.Save(p, dir, name, w, h)
		files = append(files, fs...)
		return err
	}
	for _, pool := range r.Pools {
		p, err := savingPlot(r, pool, src)
		if err != nil {
			return nil, err
		}
		if err := save(p, fmt.Sprintf("saving_vs_sla_pool%d", pool), 7*vg.Inch, 4.5*vg.Inch); err != nil {
			return nil, err
		}
		if p, err = sharePlot(r, pool, src); err != nil {
			return nil, err
		}
		if err := save(p, fmt.Sprintf("route_share_C_pool%d", pool), 7*vg.Inch, 4.5*vg.Inch); err != nil {
			return nil, err
		}
		if p, err = cdfPlot(r, pool, src); err != nil {
			return nil, err
		}
		if err := save(p, fmt.Sprintf("saving_cdf_C_pool%d", pool), 7*vg.Inch, 4.5*vg.Inch); err != nil {
			return nil, err
		}
	}
	if r.table != nil {
		p := heatmap(r, src)
		if err := save(p, "carbon_heatmap", 9*vg.Inch, 4.5*vg.Inch); err != nil {
			return nil, err
		}
	}
	return files, nil
}

func classesOf(r *Result) []string {
	var out []string
	for _, s := range r.SLAs {
		out = append(out, fmt.Sprintf("%g", s))
	}
	return append(out, "mixed")
}

func newPlot(title, src string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title + "\n" + src
	p.Legend.Top = true
	p.Legend.XOffs = -vg.Points(8) // keep the thumbnails inside the canvas
	p.X.Tick.Marker, p.Y.Tick.Marker = figure.Ticks{}, figure.Ticks{}
	return p
}

// savingPlot draws the saving per SLA class as one line per policy; the
// mixed workload is not a point on the SLA axis, so it stands apart, past a
// dashed separator, as markers only.
func savingPlot(r *Result, pool int, src string) (*plot.Plot, error) {
	p := newPlot(fmt.Sprintf("Carbon saving vs A by SLA class, %d regions", pool), src)
	p.X.Label.Text = "SLA class (ms)"
	p.Y.Label.Text = "saving vs A (%)"
	cls := classesOf(r)
	slas, mixedX := cls[:len(cls)-1], float64(len(cls)-1)+0.5
	var ticks []plot.Tick
	for i, c := range slas {
		ticks = append(ticks, plot.Tick{Value: float64(i), Label: c})
	}
	p.X.Tick.Marker = plot.ConstantTicks(append(ticks, plot.Tick{Value: mixedX, Label: "mixed"}))
	ymax := 0.0
	for k, pol := range regions.Policies()[1:] {
		var pts plotter.XYs
		for i, c := range slas {
			if row, ok := r.Find(pool, pol.String(), c); ok {
				pts = append(pts, plotter.XY{X: float64(i), Y: row.SavingPct})
				ymax = math.Max(ymax, row.SavingPct)
			}
		}
		l, s, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, fmt.Errorf("plots: %w", err)
		}
		col := plotutil.Color(k)
		l.Color, s.Color = col, col
		l.Dashes = plotutil.Dashes(k)
		s.Shape = plotutil.Shape(k)
		p.Add(l, s)
		p.Legend.Add(pol.String(), l, s)
		if row, ok := r.Find(pool, pol.String(), "mixed"); ok {
			m, err := plotter.NewScatter(plotter.XYs{{X: mixedX, Y: row.SavingPct}})
			if err != nil {
				return nil, fmt.Errorf("plots: %w", err)
			}
			m.Color, m.Shape, m.Radius = col, s.Shape, vg.Points(4)
			p.Add(m)
			ymax = math.Max(ymax, row.SavingPct)
		}
	}
	sep, err := plotter.NewLine(plotter.XYs{{X: mixedX - 0.75, Y: 0}, {X: mixedX - 0.75, Y: math.Max(ymax, 1) * 1.05}})
	if err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	sep.Color, sep.Dashes = color.Gray{Y: 150}, []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(sep, plotter.NewGrid())
	p.X.Min, p.X.Max = -0.3, mixedX+1.6 // room for the legend on the right
	return p, nil
}

func sharePlot(r *Result, pool int, src string) (*plot.Plot, error) {
	p := newPlot(fmt.Sprintf("Routing share of policy C per class, %d regions", pool), src)
	p.X.Label.Text = "SLA class (ms)"
	p.Y.Label.Text = "share of requests (%)"
	cls := classesOf(r)
	p.NominalX(cls...)
	set, _ := regions.PoolOf(pool)
	var names []string
	var values []plotter.Values
	for _, i := range set.Indices() {
		reg, _ := regions.RegionAt(i)
		vals := make(plotter.Values, len(cls))
		for j, c := range cls {
			if row, ok := r.Find(pool, "C", c); ok {
				vals[j] = 100 * row.RouteShare[reg.ID]
			}
		}
		names, values = append(names, reg.City), append(values, vals)
	}
	if err := figure.StackBars(p, vg.Points(28), names, values); err != nil {
		return nil, err
	}
	p.X.Min, p.X.Max = -0.6, float64(len(cls)-1)+1.6 // room for the legend on the right
	return p, nil
}

func cdfPlot(r *Result, pool int, src string) (*plot.Plot, error) {
	p := newPlot(fmt.Sprintf("CDF of per-run saving of C vs A, %d regions", pool), src)
	p.X.Label.Text = "saving of one run (%)"
	p.Y.Label.Text = "fraction of runs"
	cls := classesOf(r)
	cols := palette.Rainbow(len(cls), 0, 0.8, 0.9, 0.9, 1).Colors()
	for k, c := range cls {
		row, ok := r.Find(pool, "C", c)
		if !ok || len(row.RunSavingPct) == 0 {
			continue
		}
		v := append([]float64(nil), row.RunSavingPct...)
		sort.Float64s(v)
		var pts plotter.XYs
		for i, x := range v {
			pts = append(pts, plotter.XY{X: x, Y: float64(i) / float64(len(v))}, plotter.XY{X: x, Y: float64(i+1) / float64(len(v))})
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return nil, fmt.Errorf("plots: %w", err)
		}
		l.Color = cols[k]
		l.Dashes = plotutil.Dashes(k)
		l.Width = vg.Points(1.5)
		p.Add(l)
		label := c + " ms"
		if c == "mixed" {
			label = c
		}
		p.Legend.Add(label, l)
	}
	// The legend goes into room added right of the data, where no curve runs.
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range cls {
		if row, ok := r.Find(pool, "C", c); ok {
			for _, x := range row.RunSavingPct {
				lo, hi = math.Min(lo, x), math.Max(hi, x)
			}
		}
	}
	if lo <= hi {
		span := math.Max(hi-lo, 1)
		p.X.Min, p.X.Max = lo-0.03*span, hi+0.3*span
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

func heatmap(r *Result, src string) *plot.Plot {
	g := grid{t: r.table, idx: r.table.Regions().Indices()}
	p := newPlot(fmt.Sprintf("Hourly carbon intensity (gCO2eq/kWh), %s", r.Period), src)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, z := range r.Zones {
		lo, hi = math.Min(lo, z.Min), math.Max(hi, z.Max)
	}
	pal := moreland.SmoothBlueRed()
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
	p.X.Label.Text = fmt.Sprintf("hour since %s (blue %.0f … red %.0f)", r.Period.From.Format("2006-01-02 15:04Z"), lo, hi)
	p.X.Min, p.X.Max = -0.5, float64(r.table.Hours())-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(len(g.idx))-0.5
	return p
}
