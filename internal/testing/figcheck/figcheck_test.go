package figcheck

import (
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/p4ctl/p4ctl/pkg/figure"
)

func TestAxisKinds(t *testing.T) {
	for _, c := range []struct {
		name string
		set  func(p *plot.Plot)
		want string
	}{
		{"linear", func(p *plot.Plot) {}, Linear},
		{"log", func(p *plot.Plot) { p.X.Scale = plot.LogScale{}; p.X.Min, p.X.Max = 1, 100 }, Log},
		{"log10 values", func(p *plot.Plot) { p.X.Tick.Marker = figure.Log10Ticks{} }, Log10},
		{"nominal", func(p *plot.Plot) { p.NominalX("a", "b") }, Nominal},
		{"constant ticks, not categories", func(p *plot.Plot) {
			p.X.Tick.Marker = plot.ConstantTicks{{Value: 0, Label: "a"}, {Value: 1.5, Label: "b"}}
			p.X.Width = 0
		}, Linear},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := plot.New()
			p.X.Min, p.X.Max = 0, 2
			c.set(p)
			if got := Axis(&p.X).Kind; got != c.want {
				t.Errorf("kind %s, want %s", got, c.want)
			}
		})
	}
	p := plot.New()
	p.NominalX("300", "mixed")
	p.X.Min, p.X.Max = -0.5, 1.5
	p.X.Label.Text = "class"
	if got := Axis(&p.X).String(); got != `nominal -0.5..1.5 "class" ticks [300 | mixed]` {
		t.Errorf("axis %s", got)
	}
}

// Legend, Annotations and Lines read what is drawn: the legend's entries,
// the labels on the data and the polylines but for the grid and glyphs.
func TestDrawnParts(t *testing.T) {
	p := plot.New()
	p.Title.Text = "title on top"
	l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 2}, {X: 2, Y: 1}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := plotter.NewScatter(plotter.XYs{{X: 1, Y: 1}})
	if err != nil {
		t.Fatal(err)
	}
	lb, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: 1, Y: 1}}, Labels: []string{"on the data"}})
	if err != nil {
		t.Fatal(err)
	}
	p.Add(plotter.NewGrid(), l, s, lb)
	p.Legend.Add("the line", l)
	p.Legend.Add("the point", s)
	p.X.Label.Text, p.Y.Label.Text = "x label", "y label"
	if got := Legend(p); !slices.Equal(got, []string{"the line", "the point"}) {
		t.Errorf("legend %q", got)
	}
	if got := Annotations(p); !slices.Equal(got, []string{"on the data"}) {
		t.Errorf("annotations %q", got)
	}
	lines := Lines(p)
	if len(lines) != 1 || len(lines[0]) != 3 {
		t.Fatalf("lines %v, want the one line of 3 points", lines)
	}
	for i, want := range []plotter.XY{{X: 0, Y: 0}, {X: 1, Y: 2}, {X: 2, Y: 1}} {
		if got := lines[0][i]; math.Abs(got.X-want.X) > 1e-6 || math.Abs(got.Y-want.Y) > 1e-6 {
			t.Errorf("point %d at %v, want %v", i, got, want)
		}
	}
	d := Describe(p)
	for _, want := range []string{`title: "title on top"`, "legend: the point", "annotation: on the data", `"y label"`} {
		if !strings.Contains(d, want) {
			t.Errorf("Describe lacks %q:\n%s", want, d)
		}
	}
}

func TestTitleProblem(t *testing.T) {
	for _, c := range []struct {
		title, want string
	}{
		{"Carbon saving vs A by SLA class, 12 regions", ""},
		{"Policy C: saving vs region changes\nall sites; labels: min_gain/min_hold", ""},
		{"evaluated 10%/3h/1h, gCO2eq/kWh, site / class", ""},
		{"one\ntwo\nthree", "3 lines"},
		{"traces from /work/shared/data/carbon", "a file path"},
		{"see (./PROVENANCE.md)", "a file path"},
		{"from shared/data/carbon", "a file path"},
	} {
		got := TitleProblem(c.title)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("TitleProblem(%q) = %q, want %q", c.title, got, c.want)
		}
	}
}

func TestSVGProblem(t *testing.T) {
	const head = `<?xml version="1.0"?>
<svg width="1pt" height="1pt" xmlns="http://www.w3.org/2000/svg">`
	for _, c := range []struct {
		name, svg, want string
	}{
		{"fine", head + "\n<title>Saving — 12 regions</title>\n<desc>Carbon data: x; signal: y</desc></svg>", ""},
		{"no title", head + "</svg>", "no <title>"},
		{"path", head + "<title>Saving — traces in /work/shared/data</title><desc>signal</desc></svg>", "a file path"},
		{"long", head + "<title>a — b — c</title><desc>signal</desc></svg>", "3 lines"},
		{"no provenance", head + "<title>a</title></svg>", "lacks"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := SVGProblem([]byte(c.svg), "signal")
			if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
				t.Errorf("SVGProblem = %q, want %q", got, c.want)
			}
		})
	}
}
