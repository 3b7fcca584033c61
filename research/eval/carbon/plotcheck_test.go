package carbon

import (
	"bytes"
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/p4ctl/p4ctl/internal/testing/figcheck"
)

// plotGolden compares a plot's description with testdata/name; -update
// (this package's flag: internal/testing/golden would register it twice)
// rewrites the file.
func plotGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// luminance is the relative luminance (Rec. 709) of c, 0..1.
func luminance(c color.Color) float64 {
	r, g, b, _ := c.RGBA()
	return (0.2126*float64(r) + 0.7152*float64(g) + 0.0722*float64(b)) / 0xffff
}

// Issue 27 item 19: the carbon heatmap used a diverging colour map (blue –
// white – red) for a one-directional quantity. Golden check of the colour
// map's kind: sequential, i.e. luminance monotonic from the cleanest to
// the dirtiest value (here: darker as dirtier), never light in the middle.
func TestHeatmapColormapSequential(t *testing.T) {
	cm := heatmapColors()
	cm.SetMin(0)
	cm.SetMax(1000)
	prev := 2.0
	for v := 0.0; v <= 1000; v += 50 {
		c, err := cm.At(v)
		if err != nil {
			t.Fatal(err)
		}
		l := luminance(c)
		if l > prev+1e-9 {
			t.Fatalf("luminance rises again at %v gCO2eq/kWh (%.3f after %.3f): not a sequential map", v, l, prev)
		}
		prev = l
	}
	lo, _ := cm.At(0)
	hi, _ := cm.At(1000)
	if luminance(lo)-luminance(hi) < 0.5 {
		t.Errorf("the map spans luminance %.2f..%.2f only", luminance(hi), luminance(lo))
	}
}

// Issue 27 item 19: the SLA classes were categories joined by lines as if
// the axis were linear. Golden check: the x axis is nominal (the five
// classes, then mixed), no line joins two categories (the dashed separator
// before mixed stands within one gap), and the policies are points.
func TestSavingPlotCategorical(t *testing.T) {
	r := smallResult(t)
	for _, pool := range r.Pools {
		p, err := savingPlot(r, pool)
		if err != nil {
			t.Fatal(err)
		}
		x := figcheck.Axis(&p.X)
		if x.Kind != figcheck.Nominal || !slices.Equal(x.Ticks, []string{"300", "500", "800", "1000", "3000", "mixed"}) {
			t.Errorf("pool %d: x axis %s, want nominal: the classes, then mixed", pool, x)
		}
		for _, l := range figcheck.Lines(p) {
			lo, hi := l[0].X, l[0].X
			for _, pt := range l {
				lo, hi = min(lo, pt.X), max(hi, pt.X)
			}
			if hi-lo >= 0.5 {
				t.Errorf("pool %d: a line joins categories %.1f to %.1f: %v", pool, lo, hi, l)
			}
		}
		if pool == 5 {
			plotGolden(t, "saving_vs_sla_pool5.golden", []byte(figcheck.Describe(p)))
		}
	}
}

// cdfResult is a result whose policy C has, per class, runs saving around
// the given percentage (±0.1).
func cdfResult(pool int, around map[string]float64) *Result {
	r := &Result{Pools: []int{pool}, SLAs: []float64{300, 500, 800, 1000, 3000}}
	for _, c := range classesOf(r) {
		v, ok := around[c]
		if !ok {
			continue
		}
		r.Rows = append(r.Rows, Row{Pool: pool, Policy: "C", Class: c, RunSavingPct: []float64{v - 0.1, v, v + 0.05, v + 0.1}})
	}
	return r
}

// Issue 27 item 19: in saving_cdf_C_pool12 the curves of 800, 1000 and
// 3000 ms (all ≈ 95.8 %) hid under each other. Curves closer than the
// eye can tell apart are annotated on the plot with the classes they are
// (and drawn nested, wider first, so each colour shows); curves apart
// carry no annotation.
func TestCDFOverlapAnnotated(t *testing.T) {
	for _, c := range []struct {
		name   string
		around map[string]float64
		want   []string
	}{
		{"pool 12 on the 2022 traces", map[string]float64{"300": 0, "500": 23.8, "800": 95.8, "1000": 95.8, "3000": 95.78, "mixed": 55},
			[]string{"800, 1000, 3000 ms"}},
		{"apart", map[string]float64{"300": 0, "500": 20, "800": 40, "1000": 60, "3000": 80, "mixed": 50}, nil},
		{"pool 5 on the 2022 traces", map[string]float64{"300": 0, "500": 23.8, "800": 25.5, "1000": 42, "3000": 43.9, "mixed": 25},
			[]string{"800 ms, mixed"}},
		{"a class and mixed", map[string]float64{"300": 0, "500": 23.8, "800": 60, "1000": 80, "3000": 95, "mixed": 24},
			[]string{"500 ms, mixed"}},
		{"two pairs", map[string]float64{"300": 0, "500": 0.2, "800": 60, "1000": 95.8, "3000": 95.9, "mixed": 30},
			[]string{"300, 500 ms", "1000, 3000 ms"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := cdfPlot(cdfResult(12, c.around), 12)
			if err != nil {
				t.Fatal(err)
			}
			// Each annotation is two lines: the classes, then "overlap: …".
			got := figcheck.Annotations(p)
			if len(got) != 2*len(c.want) {
				t.Fatalf("annotations %q, want the classes %q, each with its range", got, c.want)
			}
			for i, w := range c.want {
				if got[2*i] != w || !strings.HasPrefix(got[2*i+1], "overlap: ") {
					t.Errorf("annotation %q, want %q and its range", got[2*i:2*i+2], w)
				}
			}
			if len(figcheck.Legend(p)) != len(c.around) {
				t.Errorf("legend %q: not one entry per class", figcheck.Legend(p))
			}
		})
	}
	p, err := cdfPlot(cdfResult(12, map[string]float64{"300": 0, "500": 23.8, "800": 95.8, "1000": 95.8, "3000": 95.78, "mixed": 55}), 12)
	if err != nil {
		t.Fatal(err)
	}
	plotGolden(t, "saving_cdf_C_pool12.golden", []byte(figcheck.Describe(p)))
}

// tracesSource is how a run on the shared traces names its carbon source.
const tracesSource = "measured hourly traces 2022 from /work/shared/data/carbon (normalized CSV; 12 zones, 2022-01-01T00:00Z/2023-01-01T00:00Z), provenance in /work/shared/data/carbon/PROVENANCE.md"

// Issue 27 item 19: the titles ran to four lines and more, with file
// paths (the carbon source). Every plot's title is at most two lines and
// names no file; the carbon source and the signal are its caption, whole
// in the SVG's <desc>.
func TestPlotTitlesShort(t *testing.T) {
	r := smallResult(t)
	r.CarbonSource = tracesSource
	files, err := WritePlots(r, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	figcheck.CheckSVGs(t, files, func(string) []string { return []string{tracesSource, "signal: " + r.Signal} })
}
