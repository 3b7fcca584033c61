package xdpbench

import (
	"fmt"
	"image/color"
	"math"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/p4ctl/p4ctl/pkg/figure"
)

// WritePlot draws the result's requests per second as a dot plot (one row
// per target, one mark per generator core count, each labelled with its
// value) on a log axis — the targets span four decades, so bars from an
// arbitrary floor would mislead — and saves dir/xdpbench.png and .svg,
// the run's provenance (kernel, CPUs, the command) as caption.
func (r *Result) WritePlot(dir string) ([]string, error) {
	p := plot.New()
	mode := "requests only"
	if r.Closed {
		mode = "closed loop"
	}
	p.Title.Text = fmt.Sprintf("Requests/s through each data plane (%s)", mode)
	p.X.Label.Text = "delivered requests per second (log scale)"
	p.X.Tick.Marker = figure.Log10Ticks{}
	names := make([]string, len(r.Runs))
	for i, run := range r.Runs {
		names[len(r.Runs)-1-i] = run.Target
	}
	p.NominalY(names...)
	shapes := []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.SquareGlyph{}, draw.PlusGlyph{}}
	colors := []color.Color{color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
		color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, color.Black}
	lo, hi := math.Inf(1), math.Inf(-1)
	for k, c := range r.cores() {
		var pts plotter.XYs
		var labels []string
		for i, run := range r.Runs {
			v := run.Rate[c]
			if v <= 0 {
				continue
			}
			y := float64(len(r.Runs)-1-i) + 0.15*(float64(k)-0.5)
			pts = append(pts, plotter.XY{X: math.Log10(v), Y: y})
			labels = append(labels, rate(v))
			lo, hi = math.Min(lo, math.Log10(v)), math.Max(hi, math.Log10(v))
		}
		if len(pts) == 0 {
			continue
		}
		s, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, fmt.Errorf("plot %d core(s): %w", c, err)
		}
		s.GlyphStyle.Shape = shapes[k%len(shapes)]
		s.GlyphStyle.Color = colors[k%len(colors)]
		s.GlyphStyle.Radius = vg.Points(3.5)
		l, err := plotter.NewLabels(plotter.XYLabels{XYs: pts, Labels: labels})
		if err != nil {
			return nil, fmt.Errorf("plot labels: %w", err)
		}
		for i := range l.TextStyle {
			l.TextStyle[i].Color = colors[k%len(colors)]
		}
		l.Offset = vg.Point{X: vg.Points(6), Y: -vg.Points(3)}
		p.Add(s, l)
		p.Legend.Add(fmt.Sprintf("%d generator core(s)", c), s)
	}
	if math.IsInf(lo, 0) {
		return nil, fmt.Errorf("plot: no rates to draw")
	}
	p.X.Min, p.X.Max = math.Floor(lo), math.Ceil(hi+0.3)
	p.Add(plotter.NewGrid())
	return figure.Save(p, dir, "xdpbench", 24*vg.Centimeter, 9*vg.Centimeter, figure.Caption(r.caption(mode)))
}

// caption is the plot's provenance: one run, every target on the same
// veths, the machine, and the command that measured it.
func (r *Result) caption(mode string) string {
	kernel := r.Kernel
	if kernel == "" {
		kernel = "unknown"
	}
	return fmt.Sprintf("one run, every target on the same veths, %s; kernel %s, %d CPUs; measured by xdpbench (go run ./internal/xdpbench/cmd/xdpbench -plots DIR, as root)", mode, kernel, r.CPUs)
}

// cores are the generator core counts measured, ascending.
func (r *Result) cores() []int {
	seen := map[int]bool{}
	var cs []int
	for _, run := range r.Runs {
		for c := range run.Rate {
			if !seen[c] {
				seen[c] = true
				cs = append(cs, c)
			}
		}
	}
	sort.Ints(cs)
	return cs
}
