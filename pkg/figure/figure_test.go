package figure

import (
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
)

// Region colours are keyed by catalog index and far apart for the eye:
// every pair at least ΔE*ab 20 (issue 15 item 21: indistinguishable greens).
func TestRegionColors(t *testing.T) {
	for i := range RegionColors {
		if RegionColor(i) != RegionColor(i+RegionColors) {
			t.Errorf("colour %d does not wrap", i)
		}
		for j := range i {
			if d := deltaE(RegionColor(i), RegionColor(j)); d < 20 {
				t.Errorf("regions %d and %d: ΔE %.1f < 20", i, j, d)
			}
		}
	}
}

// deltaE is the CIE76 colour difference of two sRGB colours.
func deltaE(a, b color.Color) float64 {
	la, lb := lab(a), lab(b)
	return math.Sqrt((la[0]-lb[0])*(la[0]-lb[0]) + (la[1]-lb[1])*(la[1]-lb[1]) + (la[2]-lb[2])*(la[2]-lb[2]))
}

func lab(c color.Color) [3]float64 {
	r, g, b, _ := c.RGBA()
	lin := func(v uint32) float64 {
		x := float64(v) / 0xffff
		if x > 0.04045 {
			return math.Pow((x+0.055)/1.055, 2.4)
		}
		return x / 12.92
	}
	R, G, B := lin(r), lin(g), lin(b)
	x := (R*0.4124 + G*0.3576 + B*0.1805) / 0.95047
	y := R*0.2126 + G*0.7152 + B*0.0722
	z := (R*0.0193 + G*0.1192 + B*0.9505) / 1.08883
	f := func(t float64) float64 {
		if t > 0.008856 {
			return math.Cbrt(t)
		}
		return 7.787*t + 16.0/116
	}
	return [3]float64{116*f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))}
}

// A legend is drawn in its own column right of the data area, never on it
// (decision 23; issue 15 item 20).
func TestLegendBesideData(t *testing.T) {
	p := plot.New()
	p.Title.Text = "title"
	l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}})
	if err != nil {
		t.Fatal(err)
	}
	p.Add(l)
	p.Legend.Add("series-a", l)
	p.Legend.Add("series-b", l)
	legend := p.Legend
	p.Legend = plot.NewLegend()
	rec := &recorder.Canvas{}
	c := draw.NewCanvas(rec, 7*vg.Inch, 4*vg.Inch)
	layOut(p, &legend, layout{}, c)
	right := legend.Rectangle(c).Size().X + LegendGap
	data := p.DataCanvas(draw.Crop(c, 0, -right, 0, 0))
	found := 0
	for _, a := range rec.Actions {
		if fs, ok := a.(*recorder.FillString); ok && strings.HasPrefix(fs.String, "series-") {
			found++
			if fs.Point.X < data.Max.X {
				t.Errorf("legend text %q at x=%v, inside the data area (which ends at %v)", fs.String, fs.Point.X, data.Max.X)
			}
		}
	}
	if found != 2 {
		t.Fatalf("%d legend entries drawn, want 2", found)
	}
}

func TestLogTicks(t *testing.T) {
	labels := func(lo, hi float64) []float64 {
		var out []float64
		for _, tk := range (LogTicks{}).Ticks(lo, hi) {
			if tk.Label != "" {
				out = append(out, tk.Value)
			}
		}
		return out
	}
	for _, c := range []struct {
		lo, hi float64
		want   []float64
	}{
		{0.3, 30, []float64{0.5, 1, 2, 5, 10, 20}},
		{0.001, 5000, []float64{0.001, 0.01, 0.1, 1, 10, 100, 1000}},
		{20, 40, []float64{20, 30, 40}}, // fewer than two 1-2-5 labels: label every mark
	} {
		got := labels(c.lo, c.hi)
		if len(got) != len(c.want) {
			t.Errorf("[%g, %g]: labels %v, want %v", c.lo, c.hi, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("[%g, %g]: labels %v, want %v", c.lo, c.hi, got, c.want)
				break
			}
		}
	}
	if len((LogTicks{}).Ticks(0, 1)) != 0 {
		t.Error("ticks on a non-positive range")
	}
}

func TestTicks(t *testing.T) {
	for _, tk := range (Ticks{}).Ticks(-1.3, 55) {
		if strings.Contains(tk.Label, ".") {
			t.Errorf("label %q", tk.Label)
		}
	}
}

func TestIntTicks(t *testing.T) {
	ts := IntTicks{Max: 6}.Ticks(-0.5, 23.5)
	if len(ts) != 24 {
		t.Fatalf("%d ticks, want 24", len(ts))
	}
	var got []string
	for _, tk := range ts {
		if tk.Label != "" {
			got = append(got, tk.Label)
		}
	}
	if strings.Join(got, " ") != "0 4 8 12 16 20" {
		t.Errorf("labels %v", got)
	}
}

func TestSave(t *testing.T) {
	p := plot.New()
	l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}})
	if err != nil {
		t.Fatal(err)
	}
	p.Add(l)
	dir := filepath.Join(t.TempDir(), "new")
	files, err := Save(p, dir, "x", 4*vg.Inch, 3*vg.Inch)
	if err != nil || len(files) != 2 {
		t.Fatalf("%v %v", files, err)
	}
	for _, f := range files {
		if st, err := os.Stat(f); err != nil || st.Size() < 500 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// Issue 27 item 19: provenance goes to a caption under the plot, drawn in
// both files, and into the SVG's <title> and <desc>; the title stays what
// the plot shows.
func TestCaption(t *testing.T) {
	p := plot.New()
	p.Title.Text = "Saving by class\n12 regions"
	l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}})
	if err != nil {
		t.Fatal(err)
	}
	p.Add(l)
	const caption = "Data: measured hourly traces 2022 from /work/shared/data/carbon (normalized CSV; 12 zones, 2022-01-01T00:00Z/2023-01-01T00:00Z), provenance in /work/shared/data/carbon/PROVENANCE.md; signal: average (lifecycle) & <more>"
	dir := t.TempDir()
	out := &Plots{Dir: dir, W: 6 * vg.Inch, H: 4 * vg.Inch, Caption: caption}
	if err := out.Save(p, "x"); err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "x.svg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"<title>Saving by class — 12 regions</title>",
		"<desc>Data: measured hourly traces 2022 from /work/shared/data/carbon (normalized CSV; 12 zones, 2022-01-01T00:00Z/2023-01-01T00:00Z), provenance in /work/shared/data/carbon/PROVENANCE.md; signal: average (lifecycle) &amp; &lt;more&gt;</desc>",
	} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("SVG lacks %s", want)
		}
	}
	if i, j := strings.Index(string(svg), "<svg"), strings.Index(string(svg), "<title>"); j < i {
		t.Errorf("<title> at %d, not inside <svg> at %d", j, i)
	}

	// Drawn under the data area, wrapped to the width, nothing cut.
	rec := &recorder.Canvas{}
	c := draw.NewCanvas(rec, 6*vg.Inch, 4*vg.Inch)
	layOut(p, &p.Legend, layout{caption: caption}, c)
	var words []string
	for _, a := range rec.Actions {
		fs, ok := a.(*recorder.FillString)
		if !ok || fs.Size != CaptionSize {
			continue
		}
		if fs.Point.Y > 40 {
			t.Errorf("caption line %q at y = %v: not under the plot", fs.String, fs.Point.Y)
		}
		if w := captionStyle().Width(fs.String); w > c.Size().X {
			t.Errorf("caption line %q is %v wide, the figure %v", fs.String, w, c.Size().X)
		}
		words = append(words, strings.Fields(fs.String)...)
	}
	if strings.Join(words, " ") != caption {
		t.Errorf("caption drawn as %q", strings.Join(words, " "))
	}
	if len(words) == 0 {
		t.Fatal("no caption drawn")
	}
}

func TestWrapCaption(t *testing.T) {
	for _, c := range []struct {
		in    string
		w     vg.Length
		lines int
	}{
		{"short", 100, 1},
		{"one two three four five six seven eight nine ten", 60, 3},
		{"kept\nbreak", 500, 2},
		{"averyveryverylongwordthatdoesnotfit x", 20, 2},
	} {
		got := WrapCaption(c.in, c.w)
		if n := len(strings.Split(got, "\n")); n != c.lines {
			t.Errorf("WrapCaption(%q, %v) = %q: %d lines, want %d", c.in, c.w, got, n, c.lines)
		}
		if strings.Join(strings.Fields(got), " ") != strings.Join(strings.Fields(c.in), " ") {
			t.Errorf("WrapCaption(%q) lost words: %q", c.in, got)
		}
		for _, l := range strings.Split(got, "\n") {
			if w := captionStyle().Width(l); w > c.w && strings.Contains(l, " ") {
				t.Errorf("WrapCaption(%q, %v): line %q is %v wide", c.in, c.w, l, w)
			}
		}
	}
}

// Issue 27 item 19: an axis cut above 0 says so on its label.
func TestStateCut(t *testing.T) {
	for _, c := range []struct {
		min, max float64
		want     string
	}{
		{0, 10, "saving (%)"},
		{-5, 10, "saving (%)"},
		{41.5, 43.3, "saving (%); axis cut: starts at 41.5, not 0"},
		{-9, -2, "saving (%); axis cut: ends at -2, not 0"},
	} {
		var a plot.Axis
		a.Min, a.Max, a.Label.Text = c.min, c.max, "saving (%)"
		StateCut(&a)
		if a.Label.Text != c.want {
			t.Errorf("[%v, %v]: label %q, want %q", c.min, c.max, a.Label.Text, c.want)
		}
	}
}
