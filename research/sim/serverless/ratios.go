package serverless

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/p4ctl/p4ctl/pkg/output"
)

// RatioPoint is one setting of the ratio sweep.
type RatioPoint struct {
	// HopMS is the activator ↔ pod hop (ms): notify and forward delay.
	HopMS float64 `json:"hop_ms"`
	// TimeScale multiplies the execution times.
	TimeScale float64 `json:"time_scale"`
	// Pods and their slots per distribution, as sized.
	Pods  []int `json:"pods"`
	Slots []int `json:"container_concurrency"`
	// Ranges of PathFinder's P99 ratios over the distributions and λ.
	Ranges []RatioRange `json:"ranges"`
}

// RatioRange is the spread of one ratio (metric vs baseline) across the
// distributions and arrival rates of a point, and how many of those cells
// fall inside the paper's range for that baseline.
type RatioRange struct {
	Metric   string  `json:"metric"`
	Baseline Policy  `json:"baseline"`
	Min      float64 `json:"min"`
	Max      float64 `json:"max"`
	Inside   int     `json:"inside_paper_range"`
	Cells    int     `json:"cells"`
}

// RatioSweepResult is the sweep of Knative settings: where PathFinder's
// P99 ratios fall against the paper's.
type RatioSweepResult struct {
	Config ExperimentConfig `json:"config"`
	Points []RatioPoint     `json:"points"`
	Paper  []PaperClaim     `json:"paper"`
}

// RatioSweep runs base (typically KnativeExperiment, its λ grid and
// distributions) once per (hop, time scale) and summarises PathFinder's
// P99 latency and response ratios against late and early binding: which
// settings give the paper's ranges and which do not. A hop of h ms is both
// the notify and the forward delay (a round trip of 2h per bind).
func RatioSweep(ctx context.Context, base ExperimentConfig, hopsMS, scales []float64) (*RatioSweepResult, error) {
	if len(hopsMS) == 0 || len(scales) == 0 {
		return nil, fmt.Errorf("ratio sweep: need at least one hop and one time scale")
	}
	base.CDFLambda = 0
	res := &RatioSweepResult{Config: base, Paper: PaperClaims()}
	progress := base.Progress
	total := len(hopsMS) * len(scales)
	for i, h := range hopsMS {
		for j, sc := range scales {
			c := base
			c.NotifyDelays, c.ForwardDelay, c.TimeScale = []float64{h}, h, sc
			if progress != nil {
				k := i*len(scales) + j
				c.Progress = func(done, n int) { progress(k*n+done, total*n) }
			}
			r, err := RunExperiment(ctx, c)
			if err != nil {
				return nil, fmt.Errorf("ratio sweep: hop %g ms, scale %g: %w", h, sc, err)
			}
			pt := RatioPoint{HopMS: h, TimeScale: sc}
			for _, d := range r.Distributions {
				pt.Pods = append(pt.Pods, d.Pods)
				pt.Slots = append(pt.Slots, d.Slots)
			}
			pt.Ranges = PaperRanges(r.Ratios)
			res.Points = append(res.Points, pt)
		}
	}
	return res, nil
}

// PaperRanges summarises ratios against the paper's ranges: for each
// metric (P99 latency, P99 response) and baseline the paper reports (late,
// early binding), the spread of our ratios across the cells (distribution
// × λ × notify delay) and how many fall inside the paper's range.
func PaperRanges(ratios []Ratio) []RatioRange {
	var out []RatioRange
	for _, m := range []string{"p99_latency", "p99_response"} {
		for _, b := range []Policy{LateBinding, EarlyBinding} {
			rg := RatioRange{Metric: m, Baseline: b, Min: math.Inf(1), Max: math.Inf(-1)}
			lo, hi := paperRange(b)
			for _, q := range ratios {
				if q.Metric != m || q.Baseline != b {
					continue
				}
				v := q.Ratio.Mean
				rg.Min, rg.Max = math.Min(rg.Min, v), math.Max(rg.Max, v)
				rg.Cells++
				if v >= lo && v <= hi {
					rg.Inside++
				}
			}
			if rg.Cells > 0 {
				out = append(out, rg)
			}
		}
	}
	return out
}

func paperRange(b Policy) (lo, hi float64) {
	for _, c := range PaperClaims() {
		if c.Baseline == b {
			return c.Low, c.High
		}
	}
	return math.NaN(), math.NaN()
}

// WriteText implements output.TextWriter.
func (r *RatioSweepResult) WriteText(w io.Writer) error {
	c := r.Config
	fmt.Fprintf(w, "PathFinder's P99 ratios across Knative settings — %d seeds × %d requests per cell, λ = %v req/s, %v\n",
		c.Seeds, c.Requests, c.Lambdas, c.Dists)
	fmt.Fprintln(w, "hop = activator ↔ pod one way (notify and forward delay); ratio = baseline P99 / PathFinder P99 (mean across seeds);")
	fmt.Fprintln(w, "IN = cells (distribution × λ) inside the paper's range for that baseline")
	hdr := []string{"HOP", "TIME SCALE", "PODS × SLOTS"}
	for _, m := range []string{"latency", "response"} {
		for _, b := range []string{"late", "early"} {
			hdr = append(hdr, "P99 "+m+" vs "+b, "IN")
		}
	}
	var rows [][]string
	for _, p := range r.Points {
		pool := ""
		for i := range p.Pods {
			if i > 0 {
				pool += ", "
			}
			pool += fmt.Sprintf("%d×%d", p.Pods[i], p.Slots[i])
		}
		row := []string{FormatMS(p.HopMS), strconv.FormatFloat(p.TimeScale, 'g', -1, 64), pool}
		for _, rg := range p.Ranges {
			row = append(row, fmt.Sprintf("%.2f–%.2f×", rg.Min, rg.Max), fmt.Sprintf("%d/%d", rg.Inside, rg.Cells))
		}
		rows = append(rows, row)
	}
	if err := output.WriteTable(w, hdr, rows); err != nil {
		return err
	}
	for _, p := range r.Paper {
		fmt.Fprintf(w, "  %s: %s\n", p.Source, p.Text)
	}
	return nil
}
