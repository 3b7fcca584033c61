package fleet

import (
	"fmt"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/p4ctl/p4ctl/pkg/figure"
)

// WritePlots renders the run into dir as PNG and SVG: RSS and heap over
// the replayed hours (fleet_memory) and the CDF of the fleet-wide hourly
// update time (fleet_update_cdf). Each plot's title says what it shows;
// its caption is the run's provenance: the fleet, the hours, the machine
// and the date (figure.Caption). It returns the files written.
func WritePlots(r *Result, dir string) ([]string, error) {
	caption := fmt.Sprintf("%d embedded switches (loopback P4Runtime) + %d unreachable, %d replayed hours at unpaced speed; measured on %s, %s",
		r.Switches, r.Unreachable, r.Hours, r.Machine, r.Date.Format("2006-01-02"))
	out := &figure.Plots{Dir: dir, W: 8 * vg.Inch, H: 4.5 * vg.Inch, Caption: caption}

	mem := plot.New()
	trend := "no trend: too few hours after warm-up"
	if r.RSSTrend {
		trend = fmt.Sprintf("trend after warm-up %+.2f MB per 1000 h, R² %.2f", r.RSSSlopeMBPer1000h, r.RSSTrendR2)
	}
	mem.Title.Text = fmt.Sprintf("Controller memory over %d replayed hours\n%s", r.Hours, trend)
	mem.X.Label.Text = "replayed hour"
	mem.Y.Label.Text = "MB"
	rss, heap := make(plotter.XYs, len(r.Samples)), make(plotter.XYs, len(r.Samples))
	for i, s := range r.Samples {
		rss[i] = plotter.XY{X: float64(s.Hour), Y: s.RSSMB}
		heap[i] = plotter.XY{X: float64(s.Hour), Y: s.HeapMB}
	}
	for i, c := range []struct {
		name string
		pts  plotter.XYs
	}{{"RSS", rss}, {"Go heap in use", heap}} {
		l, err := plotter.NewLine(c.pts)
		if err != nil {
			return out.Files, fmt.Errorf("fleet plot: %w", err)
		}
		l.Color = plotutil.Color(i)
		mem.Add(l)
		mem.Legend.Add(c.name, l)
	}
	mem.Y.Min = 0
	if err := out.Save(mem, "fleet_memory"); err != nil {
		return out.Files, err
	}

	cdf := plot.New()
	cdf.Title.Text = fmt.Sprintf("Fleet-wide hourly update: p50 %.1f ms, p99 %.1f ms", r.UpdateP50, r.UpdateP99)
	cdf.X.Label.Text = "submission → every reachable switch holds the plan (ms)"
	cdf.Y.Label.Text = "fraction of hours"
	sorted := slices.Sorted(slices.Values(r.UpdateMs))
	pts := make(plotter.XYs, len(sorted))
	for i, v := range sorted {
		pts[i] = plotter.XY{X: v, Y: float64(i+1) / float64(len(sorted))}
	}
	if len(pts) > 0 {
		l, err := plotter.NewLine(pts)
		if err != nil {
			return out.Files, fmt.Errorf("fleet plot: %w", err)
		}
		cdf.Add(l)
	}
	cdf.Y.Min, cdf.Y.Max = 0, 1
	if err := out.Save(cdf, "fleet_update_cdf"); err != nil {
		return out.Files, err
	}
	return out.Files, nil
}
