package scale

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/p4ctl/p4ctl/pkg/figure"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// WritePlots renders the curves into dir as PNG and SVG: compile time,
// sla_feasibility entries (with the v1model table size) and hourly writes
// versus N, one line per R (compile, entries: policy C) or per policy
// (writes: the largest R measured). Each plot's title says what it
// shows; its caption is the run's provenance: the generated
// configurations, hours, carbon source, machine and date (figure.Caption).
// It returns the files written.
func WritePlots(r *Result, dir string) ([]string, error) {
	type curve struct {
		name string
		pts  plotter.XYs
	}
	lines := func(p *plot.Plot, cs []curve) error {
		for i, c := range cs {
			l, s, err := plotter.NewLinePoints(c.pts)
			if err != nil {
				return err
			}
			l.Color, s.Color = plotutil.Color(i), plotutil.Color(i)
			s.Shape = plotutil.Shape(i)
			p.Add(l, s)
			p.Legend.Add(c.name, l, s)
		}
		return nil
	}
	logXY := func(x, y float64) plotter.XY { return plotter.XY{X: math.Log10(x), Y: math.Log10(math.Max(y, 1e-3))} }
	newPlot := func(title, y string) *plot.Plot {
		p := plot.New()
		p.Title.Text = title
		p.X.Label.Text = "sites N (log scale)"
		p.Y.Label.Text = y + " (log scale)"
		p.X.Tick.Marker, p.Y.Tick.Marker = figure.Log10Ticks{}, figure.Log10Ticks{}
		return p
	}
	out := &figure.Plots{Dir: dir, W: 8 * vg.Inch, H: 5 * vg.Inch, Caption: r.caption()}
	regionsSeen, policies := []int{}, []string{}
	for _, pt := range r.Points {
		if !slices.Contains(regionsSeen, pt.Regions) {
			regionsSeen = append(regionsSeen, pt.Regions)
		}
		if !slices.Contains(policies, pt.Policy) {
			policies = append(policies, pt.Policy)
		}
	}
	slices.Sort(regionsSeen)
	byR := func(policy string, y func(Point) float64) []curve {
		var cs []curve
		for _, rr := range regionsSeen {
			c := curve{name: fmt.Sprintf("R = %d", rr)}
			for _, pt := range r.Points {
				if pt.Regions == rr && pt.Policy == policy {
					c.pts = append(c.pts, logXY(float64(pt.Sites), y(pt)))
				}
			}
			if len(c.pts) > 0 {
				cs = append(cs, c)
			}
		}
		return cs
	}
	pc := "C"
	if !slices.Contains(policies, pc) && len(policies) > 0 {
		pc = policies[0]
	}
	p := newPlot("Compile time of one hour's state, policy "+pc, "ms per compile")
	if err := lines(p, byR(pc, func(pt Point) float64 { return pt.CompileMs })); err != nil {
		return nil, err
	}
	if err := out.Save(p, "scale_compile_ms"); err != nil {
		return out.Files, err
	}
	p = newPlot("sla_feasibility entries, policy "+pc+" (dashed: the v1model table, 4096)", "entries")
	if err := lines(p, byR(pc, func(pt Point) float64 { return float64(pt.ByTable[pipeline.TableSLAFeasibility]) })); err != nil {
		return nil, err
	}
	if lim, err := plotter.NewLine(plotter.XYs{logXY(float64(r.minSites()), pipeline.SizeSLAFeasibility), logXY(float64(r.maxSites()), pipeline.SizeSLAFeasibility)}); err == nil {
		lim.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(lim)
	}
	if err := out.Save(p, "scale_feasibility_entries"); err != nil {
		return out.Files, err
	}
	top := regionsSeen[len(regionsSeen)-1]
	p = newPlot(fmt.Sprintf("Writes of one hourly update, R = %d (C: 2R+1 = %d whatever N)", top, 2*top+1), "writes per hour (mean)")
	var cs []curve
	for _, pol := range policies {
		c := curve{name: pol}
		for _, pt := range r.Points {
			if pt.Regions == top && pt.Policy == pol && pt.WritesMean > 0 {
				c.pts = append(c.pts, logXY(float64(pt.Sites), pt.WritesMean))
			}
		}
		if len(c.pts) > 0 {
			cs = append(cs, c)
		}
	}
	if err := lines(p, cs); err != nil {
		return nil, err
	}
	if err := out.Save(p, "scale_writes_per_hour"); err != nil {
		return out.Files, err
	}
	return out.Files, nil
}

// caption is the plots' provenance, as WriteText's header states it.
func (r *Result) caption() string {
	return fmt.Sprintf("generated configurations (%s), %d hours from %s, carbon: %s; measured on %s, %s, %s",
		r.Generate, r.Hours, r.Start.Format("2006-01-02T15Z"), r.Carbon, r.Machine, r.Go, r.Date.Format("2006-01-02"))
}

func (r *Result) minSites() int {
	m := math.MaxInt
	for _, p := range r.Points {
		m = min(m, p.Sites)
	}
	return m
}

func (r *Result) maxSites() int {
	m := 0
	for _, p := range r.Points {
		m = max(m, p.Sites)
	}
	return m
}
