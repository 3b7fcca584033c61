package figure

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

func TestSource(t *testing.T) {
	long := "measured hourly traces 2022 from /work/shared/data/carbon (normalized CSV; 12 zones, 2022-01-01T00:00Z/2023-01-01T00:00Z), provenance in /work/shared/data/carbon/PROVENANCE.md"
	cases := []struct{ in, want string }{
		{"synthetic model (seed 1), not measured data; parameters derived from …", "synthetic model (seed 1), not measured data"},
		{"short", "short"},
		// The ';' inside the parentheses does not end the source, and the
		// parenthesis is never left open.
		{long, "measured hourly traces 2022 from /work/shared/data/carbon (normalized CSV; 12\nzones, 2022-01-01T00:00Z/2023-01-01T00:00Z), provenance in …"},
		{strings.Repeat("word ", 60) + "(open paren and more words", ""},
	}
	for _, c := range cases {
		got := Source(c.in)
		lines := strings.Split(got, "\n")
		if len(lines) > 2 {
			t.Errorf("Source(%.40q): %d lines", c.in, len(lines))
		}
		for _, l := range lines {
			if len([]rune(l)) > SourceWidth+2 {
				t.Errorf("Source(%.40q): line of %d characters", c.in, len([]rune(l)))
			}
		}
		if strings.Count(got, "(") != strings.Count(got, ")") {
			t.Errorf("Source(%.40q) = %q: unbalanced parentheses", c.in, got)
		}
		if c.want != "" && got != c.want {
			t.Errorf("Source(%.40q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := Source(cases[3].in); !strings.HasSuffix(got, " …") {
		t.Errorf("cut source %q does not say so", got)
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
