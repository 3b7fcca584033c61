package stability

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/p4ctl/p4ctl/internal/testing/figcheck"
	"github.com/p4ctl/p4ctl/internal/testing/golden"
	"github.com/p4ctl/p4ctl/pkg/regions"
)

// Issue 27 item 19: stability_pareto cut its y axis (to 43.7–44.25 %)
// without saying so, and listed legend entries with no visible point (the
// paper's figure off the axis; min_gain settings whose points all lay
// under others). Golden check, per plot: a y axis above 0 says on its
// label where it starts; every legend entry but the front's names a
// series with a point on the axes that no later filled mark covers; the
// paper's figure off the axis is an annotation on the data, labelled as
// the paper's.
func TestParetoPlotAxisAndLegend(t *testing.T) {
	c := exampleConfig(t, synthetic(t), weeks(2))
	c.SweepGains = []regions.Gain{{Value: 0, Relative: true}, {Value: 10, Relative: true}, {Value: 20, Relative: true}}
	c.SweepHolds, c.SweepHorizons = []int{0, 3, 12}, []int{1, 3}
	res := run(t, c)
	for _, site := range append([]string{""}, res.Sites...) {
		t.Run("site="+site, func(t *testing.T) {
			p, err := paretoPlot(res, site)
			if err != nil {
				t.Fatal(err)
			}
			y := figcheck.Axis(&p.Y)
			if y.Min > 0 && !strings.Contains(y.Label, fmt.Sprintf("axis cut: starts at %s, not 0", strconv.FormatFloat(y.Min, 'g', 4, 64))) {
				t.Errorf("y axis %s starts above 0 and its label does not say so", y)
			}
			series, _ := paretoMarks(res, site, p.X.Min, p.X.Max, p.Y.Min, p.Y.Max)
			visible := visibleSeries(series, p.X.Min, p.X.Max, p.Y.Min, p.Y.Max)
			for _, l := range figcheck.Legend(p) {
				if l != frontName && !strings.HasPrefix(l, "PAPER") && !slices.Contains(visible, l) {
					t.Errorf("legend entry %q has no visible point (visible: %q)", l, visible)
				}
				if strings.Contains(l, "off axis") {
					t.Errorf("legend entry %q: nothing drawn for it", l)
				}
			}
			notes := figcheck.Annotations(p)
			if site == "mumbai" {
				v := res.Paper.MixedSaving12Pct
				off := v < p.Y.Min || v > p.Y.Max
				want := fmt.Sprintf("PAPER %.1f %%", v)
				if off && !slices.ContainsFunc(notes, func(n string) bool { return strings.HasPrefix(n, want) }) {
					t.Errorf("the paper's %.1f %% is off the axis and not annotated: %q", v, notes)
				}
			}
			golden.Check(t, "stability_pareto"+strings.TrimSuffix("_"+site, "_")+".golden", []byte(figcheck.Describe(p)))
		})
	}
}

// visibleSeries are the names of the series with a point on the axes
// x0..x1 × y0..y1 that no filled mark drawn after it covers, on a data area
// of about 6 × 3.5 inches (the 9 × 5 inch figure less its legend, title and
// axes): covered when the later mark is at least as large and reaches past
// the point's centre by half its radius.
func visibleSeries(series []paretoSeries, x0, x1, y0, y1 float64) []string {
	const w, h = 6 * 72, 3.5 * 72 // points
	type mark struct {
		x, y, r float64
		filled  bool
	}
	var marks [][]mark
	for _, s := range series {
		var ms []mark
		for j, pt := range s.Points {
			ms = append(ms, mark{(pt.X - x0) / (x1 - x0) * w, (pt.Y - y0) / (y1 - y0) * h, float64(s.nestedRadius(j)), s.Filled() && s.Nest[j] == 0})
		}
		marks = append(marks, ms)
	}
	var out []string
	for i, s := range series {
		for j, pt := range s.Points {
			if pt.X < x0 || pt.X > x1 || pt.Y < y0 || pt.Y > y1 {
				continue
			}
			m, covered := marks[i][j], false
			for _, later := range marks[i+1:] {
				for _, o := range later {
					if o.filled && o.r >= m.r && math.Hypot(o.x-m.x, o.y-m.y) <= o.r-m.r/2 {
						covered = true
					}
				}
			}
			if !covered {
				out = append(out, s.Name)
				break
			}
		}
	}
	return out
}

// Issue 27 item 19: the titles ran to six lines, with file paths (the
// carbon source). Every plot's title is at most two lines and names no
// file; the carbon source and the signal are its caption, whole in the
// SVG's <desc>.
func TestPlotTitlesShort(t *testing.T) {
	c := exampleConfig(t, synthetic(t), weeks(1))
	c.SweepGains, c.SweepHolds, c.SweepHorizons = []regions.Gain{{Value: 0, Relative: true}}, []int{0, 3}, []int{1}
	res := run(t, c)
	const src = "measured hourly traces 2022 from /work/shared/data/carbon (normalized CSV; 12 zones, 2022-01-01T00:00Z/2023-01-01T00:00Z), provenance in /work/shared/data/carbon/PROVENANCE.md"
	res.CarbonSource = src
	files, err := WritePlots(res, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	figcheck.CheckSVGs(t, files, func(name string) []string {
		want := []string{src, "signal: " + res.Signal}
		if strings.HasPrefix(name, "stability_pareto") {
			want = append(want, paretoKey) // how to read the marks, once in the caption
		}
		return want
	})
}
