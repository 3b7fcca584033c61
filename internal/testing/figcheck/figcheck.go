// Package figcheck describes a gonum plot for golden checks of a figure's
// form — each axis's kind, range, label and tick labels, the legend's
// entries, the text drawn on the data and the lines joining data points —
// read from the plot object, drawn on a recording canvas, never from
// pixels (issue 27 item 19). Only tests import it.
package figcheck

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"

	"github.com/p4ctl/p4ctl/pkg/figure"
)

// Axis kinds.
const (
	Linear  = "linear"
	Log     = "log"     // plot.LogScale
	Log10   = "log10"   // log10 of the values on a linear axis, labelled as log (figure.Log10Ticks)
	Nominal = "nominal" // categories at 0, 1, … named by the ticks, no axis line (plot.NominalX)
)

// AxisSpec is what an axis shows.
type AxisSpec struct {
	Kind     string
	Min, Max float64
	Label    string
	// Ticks are the labels of the labelled ticks, in order.
	Ticks []string
}

// Axis describes a.
func Axis(a *plot.Axis) AxisSpec {
	s := AxisSpec{Kind: Linear, Min: a.Min, Max: a.Max, Label: a.Label.Text}
	ticks := a.Tick.Marker.Ticks(a.Min, a.Max)
	for _, t := range ticks {
		if t.Label != "" {
			s.Ticks = append(s.Ticks, t.Label)
		}
	}
	switch m := a.Tick.Marker.(type) {
	case figure.Log10Ticks:
		s.Kind = Log10
	case plot.ConstantTicks:
		if a.Width == 0 && nominal(m) {
			s.Kind = Nominal
		}
	}
	if _, ok := a.Scale.(plot.LogScale); ok {
		s.Kind = Log
	}
	return s
}

// nominal tells whether ts are plot.NominalX's: labelled ticks at 0, 1, ….
func nominal(ts plot.ConstantTicks) bool {
	for i, t := range ts {
		if t.Value != float64(i) || t.Label == "" {
			return false
		}
	}
	return len(ts) > 0
}

// String is the axis in one line.
func (s AxisSpec) String() string {
	return fmt.Sprintf("%s %s..%s %q ticks [%s]", s.Kind, num(s.Min), num(s.Max), s.Label, strings.Join(s.Ticks, " | "))
}

func num(v float64) string { return fmt.Sprintf("%.4g", v) }

// Size is the canvas Describe, Annotations and Lines draw on: the size the
// plot is laid out at matters only to where texts and lines fall, not to
// which are drawn.
const Size = 7 * vg.Inch

// Legend is the legend's entries, top down.
func Legend(p *plot.Plot) []string {
	rec := &recorder.Canvas{}
	c := draw.NewCanvas(rec, Size, Size)
	l := p.Legend
	l.Top, l.Left = true, true
	l.Draw(c)
	var out []string
	for _, a := range rec.Actions {
		if fs, ok := a.(*recorder.FillString); ok {
			out = append(out, fs.String)
		}
	}
	return out
}

// draw draws p without its legend on a recorder, returning the actions and
// the data area.
func drawn(p *plot.Plot) ([]recorder.Action, draw.Canvas) {
	q := *p
	q.Legend = plot.NewLegend()
	rec := &recorder.Canvas{}
	c := draw.NewCanvas(rec, Size, Size*4/7)
	q.Draw(c)
	return rec.Actions, q.DataCanvas(c)
}

// Annotations are the texts drawn on the data area (plotter.Labels and the
// like), in drawing order; tick and axis labels, the title and the legend
// are not among them.
func Annotations(p *plot.Plot) []string {
	actions, da := drawn(p)
	var out []string
	rotated := []bool{false}
	for _, a := range actions {
		switch a := a.(type) {
		case *recorder.Push:
			rotated = append(rotated, rotated[len(rotated)-1])
		case *recorder.Pop:
			rotated = rotated[:len(rotated)-1]
		case *recorder.Rotate:
			rotated[len(rotated)-1] = rotated[len(rotated)-1] || a.Angle != 0
		case *recorder.FillString:
			if !rotated[len(rotated)-1] && da.Contains(a.Point) {
				out = append(out, a.String)
			}
		}
	}
	return out
}

// Lines are the polylines stroked on the data area, in data coordinates,
// but for the grid and the axes: a line of at least two points
// (plotter.Line and the like; glyphs' outlines are closed paths and are
// left out).
func Lines(p *plot.Plot) []plotter.XYs {
	actions, da := drawn(p)
	x, y := inverse(p, da)
	grid := plotter.DefaultGridLineStyle.Color
	colours := []color.Color{color.Black}
	var out []plotter.XYs
	for _, a := range actions {
		switch a := a.(type) {
		case *recorder.Push:
			colours = append(colours, colours[len(colours)-1])
		case *recorder.Pop:
			colours = colours[:len(colours)-1]
		case *recorder.SetColor:
			colours[len(colours)-1] = a.Color
		case *recorder.Stroke:
			if sameColour(colours[len(colours)-1], grid) {
				continue
			}
			var pts plotter.XYs
			closed, inside := false, true
			for _, c := range a.Path {
				switch c.Type {
				case vg.MoveComp, vg.LineComp:
					pts = append(pts, plotter.XY{X: x(c.Pos.X), Y: y(c.Pos.Y)})
					inside = inside && within(da, c.Pos)
				case vg.CloseComp:
					closed = true
				default: // arcs and curves: glyphs
					closed = true
				}
			}
			if !closed && inside && len(pts) >= 2 {
				out = append(out, pts)
			}
		}
	}
	return out
}

// within is da.Contains with half a point of slack: lines drawn on the
// edge of the data area are in it.
func within(da draw.Canvas, pt vg.Point) bool {
	const e = 0.5
	return pt.X >= da.Min.X-e && pt.X <= da.Max.X+e && pt.Y >= da.Min.Y-e && pt.Y <= da.Max.Y+e
}

func sameColour(a, b color.Color) bool {
	if a == nil || b == nil {
		return a == b
	}
	r1, g1, b1, a1 := a.RGBA()
	r2, g2, b2, a2 := b.RGBA()
	return r1 == r2 && g1 == g2 && b1 == b2 && a1 == a2
}

// inverse maps canvas coordinates of the data area da back to data values.
func inverse(p *plot.Plot, da draw.Canvas) (x, y func(vg.Length) float64) {
	tx, ty := p.Transforms(&da)
	inv := func(a *plot.Axis, t func(float64) vg.Length) func(vg.Length) float64 {
		lo, hi := t(a.Min), t(a.Max)
		_, log := a.Scale.(plot.LogScale)
		return func(v vg.Length) float64 {
			f := float64(v-lo) / float64(hi-lo)
			if log {
				return math.Exp(math.Log(a.Min) + f*(math.Log(a.Max)-math.Log(a.Min)))
			}
			return a.Min + f*(a.Max-a.Min)
		}
	}
	return inv(&p.X, tx), inv(&p.Y, ty)
}

// Describe is p's form in lines of text, for a golden file: the title,
// each axis (Axis), the legend's entries (Legend) and the texts on the data
// area (Annotations).
func Describe(p *plot.Plot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "title: %q\n", p.Title.Text)
	fmt.Fprintf(&b, "x: %s\n", Axis(&p.X))
	fmt.Fprintf(&b, "y: %s\n", Axis(&p.Y))
	for _, l := range Legend(p) {
		fmt.Fprintf(&b, "legend: %s\n", l)
	}
	for _, a := range Annotations(p) {
		fmt.Fprintf(&b, "annotation: %s\n", a)
	}
	return b.String()
}

// MaxTitleLines is how many lines a title may have: what the plot shows,
// and a line of what it ran on; provenance goes to the caption
// (figure.Caption).
const MaxTitleLines = 2

// path matches a file path: one starting with /, ./, ../ or ~/, or three or
// more names joined by slashes ("shared/data/carbon"; not "10%/3h/1h").
var path = regexp.MustCompile(`(^|[\s(])(\.{0,2}/|~/)\S|[A-Za-z_][\w.-]*/[A-Za-z_][\w.-]*/[A-Za-z_][\w.-]*`)

// TitleProblem says what is wrong with a title, or "" when nothing is: more
// than MaxTitleLines lines, or a file path (issue 27 item 19).
func TitleProblem(title string) string {
	if n := strings.Count(title, "\n") + 1; n > MaxTitleLines {
		return fmt.Sprintf("%d lines (at most %d)", n, MaxTitleLines)
	}
	if m := path.FindString(title); m != "" {
		return fmt.Sprintf("a file path (%q)", strings.TrimSpace(m))
	}
	return ""
}

// SVGMeta reads the <title> and <desc> that figure.Save writes as the first
// children of an SVG's root; title's lines are joined by " — ".
func SVGMeta(svg []byte) (title, desc string, err error) {
	var doc struct {
		XMLName xml.Name `xml:"svg"`
		Title   string   `xml:"title"`
		Desc    string   `xml:"desc"`
	}
	if err := xml.NewDecoder(bytes.NewReader(svg)).Decode(&doc); err != nil {
		return "", "", fmt.Errorf("figcheck: %w", err)
	}
	return doc.Title, doc.Desc, nil
}

// SVGProblem says what is wrong with a figure's SVG as saved by
// figure.Save with a caption, or "" when nothing is: no title, a title
// with a TitleProblem, or a <desc> (the caption) that lacks one of want.
func SVGProblem(svg []byte, want ...string) string {
	title, desc, err := SVGMeta(svg)
	switch {
	case err != nil:
		return err.Error()
	case title == "":
		return "no <title>"
	}
	if pr := TitleProblem(strings.ReplaceAll(title, " — ", "\n")); pr != "" {
		return fmt.Sprintf("title %q: %s", title, pr)
	}
	for _, w := range want {
		if !strings.Contains(desc, w) {
			return fmt.Sprintf("<desc> %q lacks %q", desc, w)
		}
	}
	return ""
}

// CheckSVGs reads every .svg among files and reports, as an error of t
// naming the file, each SVGProblem against the strings want returns for
// that file's base name (nil want: the title alone is checked).
func CheckSVGs(t testing.TB, files []string, want func(name string) []string) {
	t.Helper()
	n := 0
	for _, f := range files {
		if filepath.Ext(f) != ".svg" {
			continue
		}
		n++
		svg, err := os.ReadFile(f)
		if err != nil {
			t.Errorf("figcheck: %v", err)
			continue
		}
		var w []string
		if want != nil {
			w = want(filepath.Base(f))
		}
		if pr := SVGProblem(svg, w...); pr != "" {
			t.Errorf("%s: %s", filepath.Base(f), pr)
		}
	}
	if n == 0 {
		t.Errorf("figcheck: no .svg among %v", files)
	}
}
