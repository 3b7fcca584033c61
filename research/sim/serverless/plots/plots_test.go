package plots

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"

	"github.com/p4ctl/p4ctl/internal/testing/figcheck"
	"github.com/p4ctl/p4ctl/pkg/stats"
	"github.com/p4ctl/p4ctl/research/sim/serverless"
)

func TestWriteProducesPNGAndSVG(t *testing.T) {
	cfg := serverless.DefaultExperiment().Quick()
	cfg.Dists = []string{"powerlaw"}
	cfg.Lambdas = []float64{15, 20}
	cfg.Seeds = 2
	cfg.Requests = 1500
	res, err := serverless.RunExperiment(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files, err := Write(res, dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"p99_response_bars_lambda20.png", "p99_response_bars_lambda20.svg", "p99_latency_bars_lambda20.png",
		"p99_latency_bars_lambda20.svg", "p99_response_powerlaw.png", "p99_response_powerlaw.svg", "p99_latency_powerlaw.png",
		"p99_latency_powerlaw.svg", "cdf_latency_powerlaw_lambda20.png", "cdf_latency_powerlaw_lambda20.svg"}
	if len(files) != len(want) {
		t.Fatalf("wrote %v, want %v", files, want)
	}
	for _, f := range want {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Error(err)
		} else if st.Size() < 1000 {
			t.Errorf("%s: only %d bytes", f, st.Size())
		}
	}
	// Issue 27 item 19: short titles; the experiment, the seeds and the
	// distribution drawn from (its source) are the caption, whole in the
	// SVG's <desc>.
	for _, f := range want {
		if filepath.Ext(f) != ".svg" {
			continue
		}
		svg, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if pr := figcheck.SVGProblem(svg, "experiment "+cfg.Name, "2 seeds (", "× 1500 requests", "powerlaw: "+res.Distributions[0].Description); pr != "" {
			t.Errorf("%s: %s", f, pr)
		}
	}
}

// What the P99 sweep plots encode (issue 15 item 22): coinciding policies
// are drawn apart (late binding and PathFinder both sit at the 1 ms floor
// of the waiting time), every error bar lies inside the y axis, and the
// log axis says so.
func TestSweepPlotEncoding(t *testing.T) {
	cfg := serverless.DefaultExperiment().Quick()
	cfg.Dists = []string{"azure"}
	cfg.Lambdas = []float64{15, 20}
	cfg.Seeds = 2
	cfg.Requests = 1500
	res, err := serverless.RunExperiment(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	wait := func(m *serverless.Metrics) stats.Summary { return m.P99LatencyMS }
	series := sweepSeriesOf(res, "azure", false, wait)
	seen := map[plotter.XY]serverless.Policy{}
	for _, s := range series {
		for _, pt := range s.pts.XYs {
			if other, dup := seen[pt]; dup {
				t.Errorf("%s and %s drawn at the same point %v", other, s.policy, pt)
			}
			seen[pt] = s.policy
		}
	}
	p, err := sweepPlot(res, "azure", false, "P99 waiting time", "P99 waiting (s, log scale)", wait)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range series {
		for k, pt := range s.pts.XYs {
			if lo, hi := pt.Y-s.pts.lo[k], pt.Y+s.pts.hi[k]; lo < p.Y.Min || hi > p.Y.Max {
				t.Errorf("%s: error bar %v..%v outside the axis %v..%v", s.policy, lo, hi, p.Y.Min, p.Y.Max)
			}
		}
	}
	if !strings.Contains(p.Y.Label.Text, "log") {
		t.Errorf("y label %q does not say the axis is logarithmic", p.Y.Label.Text)
	}
	for _, tk := range p.Y.Tick.Marker.Ticks(p.Y.Min, p.Y.Max) {
		if tk.Label != "" {
			if v, err := strconv.ParseFloat(tk.Label, 64); err != nil || math.Abs(math.Log10(v)-tk.Value) > 1e-9 {
				t.Errorf("tick %q at %v: not log10 of its label", tk.Label, tk.Value)
			}
		}
	}
}
