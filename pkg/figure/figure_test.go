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

// Source wraps a data source into title lines and never cuts it: the
// provenance a title names is there whole (issue 15 item 22: titles cut at
// "provenance in …").
func TestSource(t *testing.T) {
	long := "measured hourly traces 2022 from /work/shared/data/carbon (normalized CSV; 12 zones, 2022-01-01T00:00Z/2023-01-01T00:00Z), provenance in /work/shared/data/carbon/PROVENANCE.md"
	cases := []struct{ in, want string }{
		{"synthetic model (seed 1), not measured data; parameters derived from …", "synthetic model (seed 1), not measured data"},
		{"short", "short"},
		// The ';' inside the parentheses does not end the source.
		{long, "measured hourly traces 2022 from /work/shared/data/carbon (normalized CSV; 12\nzones, 2022-01-01T00:00Z/2023-01-01T00:00Z), provenance in\n/work/shared/data/carbon/PROVENANCE.md"},
		{strings.Repeat("word ", 60) + "(open paren and more words", ""},
	}
	for _, c := range cases {
		got := Source(c.in)
		for _, l := range strings.Split(got, "\n") {
			if len([]rune(l)) > SourceWidth {
				t.Errorf("Source(%.40q): line of %d characters", c.in, len([]rune(l)))
			}
		}
		if strings.Contains(got, "…") && !strings.Contains(c.in, "…") {
			t.Errorf("Source(%.40q) = %q: cut", c.in, got)
		}
		if c.want != "" && got != c.want {
			t.Errorf("Source(%.40q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := Source(cases[3].in); strings.Join(strings.Fields(got), " ") != strings.TrimSpace(cases[3].in) {
		t.Errorf("words lost: %q", got)
	}
}

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
