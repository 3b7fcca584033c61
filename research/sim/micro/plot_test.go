package micro

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot"

	"github.com/p4ctl/p4ctl/internal/testing/figcheck"
)

// E1's figure names the scenario it ran (issue 15 item 22): in its
// caption since issue 27 item 19 (a three-line title), whole in the SVG's
// <desc>, under a one-line title.
func TestE1PlotAxisAndScenario(t *testing.T) {
	r, err := E1(context.Background(), Scenario(), nil, tiny())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := r.Plots(dir); err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "e1_violations.svg"))
	if err != nil {
		t.Fatal(err)
	}
	title, desc, err := figcheck.SVGMeta(svg)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(title, " — ") {
		t.Errorf("title %q: more than one line", title)
	}
	sc := r.Scenario
	for _, want := range []string{fmt.Sprintf("%d hosts × %d cores", sc.Hosts, sc.CoresPerHost), fmt.Sprintf("ρ=%.2f", sc.Load),
		fmt.Sprintf("SLO %g µs", sc.SLO), fmt.Sprintf("%d seeds", r.Options.Seeds)} {
		if !strings.Contains(desc, want) {
			t.Errorf("caption %q lacks %q", desc, want)
		}
	}
}

// Issue 27 item 19: e1_violations squashed our rates (≈ 0.5–1 %) under the
// study's 35 % marker on a linear axis, and its legend explained only the
// study's marks. Golden check: a log axis holding every seed's rate and
// every study figure, our values over at least a third of its height, and
// legend entries for our boxes and whiskers beside the study's (labelled
// as reported).
func TestE1PlotLogAndLegend(t *testing.T) {
	r, err := E1(context.Background(), Scenario(), nil, tiny())
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.plot()
	if err != nil {
		t.Fatal(err)
	}
	y := figcheck.Axis(&p.Y)
	if y.Kind != figcheck.Log {
		t.Fatalf("y axis %s, want log", y)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range r.Cells {
		for _, v := range c.PerSeed {
			lo, hi = math.Min(lo, floorPct(100*v)), math.Max(hi, floorPct(100*v))
		}
	}
	if y.Min > lo || y.Max < hi || y.Max < 100*studyE1RandomAbove {
		t.Errorf("y axis %s does not hold our rates %.3g..%.3g %% and the study's 35 %%", y, lo, hi)
	}
	// Our spread (or, when the seeds agree, the decade around it) is not
	// squashed: the axis spans at most three decades over our lowest rate.
	if math.Log10(y.Max/y.Min) > 3.5 {
		t.Errorf("y axis %s spans %.1f decades", y, math.Log10(y.Max/y.Min))
	}
	legend := figcheck.Legend(p)
	var ours, study []string
	for _, l := range legend {
		switch {
		case strings.HasPrefix(l, "ours"):
			ours = append(ours, l)
		case strings.HasPrefix(l, "study (reported)"):
			study = append(study, l)
		}
	}
	if len(ours) < 2 || len(study) != 3 {
		t.Errorf("legend %q: want entries for our boxes and whiskers, and the study's three figures", legend)
	}
	studyGolden(t, "e1_violations.golden", []byte(figcheck.Describe(p)))
}

// Issue 27 item 19: tune_jbsq's x ticks labelled 20 and 21 side by side,
// read as "2021". Golden check of the axis: log scale, every simulated
// bound marked, labelled ticks at least minLabelRatio apart, the chosen
// bound labelled.
func TestTuneTicksApart(t *testing.T) {
	xs := []float64{16, 20, 21, 23, 40, 80}
	ticks := boundTicks(xs, 21)
	var labelled []float64
	for i, tk := range ticks {
		if tk.Value != xs[i] {
			t.Fatalf("tick %d at %v, want %v", i, tk.Value, xs[i])
		}
		if tk.Label != "" {
			labelled = append(labelled, tk.Value)
		}
	}
	if !slices.Contains(labelled, 21) {
		t.Errorf("the chosen bound 21 is not labelled: %v", labelled)
	}
	for i := range labelled {
		for j := range i {
			a, b := labelled[i], labelled[j]
			if math.Max(a, b)/math.Min(a, b) < minLabelRatio {
				t.Errorf("labels %v and %v overlap on the log axis", a, b)
			}
		}
	}
	r := &TuneResult{Target: 0.05, Bound: 21}
	for _, n := range xs {
		r.Curve = append(r.Curve, TunePoint{Bound: int(n)})
		r.Curve[len(r.Curve)-1].Cell.Violation.Mean = 0.2 / n
	}
	p, err := r.plot()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.X.Scale.(plot.LogScale); !ok {
		t.Errorf("x scale %T, want log", p.X.Scale)
	}
	got := p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max)
	for i := 1; i < len(got); i++ {
		if got[i].Label != "" && got[i-1].Label != "" && got[i].Value/got[i-1].Value < minLabelRatio {
			t.Errorf("the plot labels %s and %s side by side", got[i-1].Label, got[i].Label)
		}
	}
}
