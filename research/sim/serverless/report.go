package serverless

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/p4ctl/p4ctl/pkg/output"
	"github.com/p4ctl/p4ctl/pkg/stats"
)

// FormatMS renders a duration given in ms with a unit that fits it.
func FormatMS(ms float64) string {
	switch a := math.Abs(ms); {
	case math.IsNaN(ms):
		return "n/a"
	case a < 1:
		return fmt.Sprintf("%.2f ms", ms)
	case a < 1000:
		return fmt.Sprintf("%.0f ms", ms)
	case a < 100000:
		return fmt.Sprintf("%.2f s", ms/1000)
	default:
		return fmt.Sprintf("%.0f s", ms/1000)
	}
}

func pmMS(s stats.Summary) string {
	return FormatMS(s.Mean) + " ± " + FormatMS(s.CI95)
}

func pm(s stats.Summary, scale float64, prec int) string {
	return strconv.FormatFloat(s.Mean*scale, 'f', prec, 64) + " ± " + strconv.FormatFloat(s.CI95*scale, 'f', prec, 64)
}

func ratioStr(s stats.Summary) string {
	if s.Mean >= 1000 {
		return fmt.Sprintf("%.3g ± %.2g×", s.Mean, s.CI95)
	}
	return pm(s, 1, 2) + "×"
}

func lambdaStr(l float64) string { return strconv.FormatFloat(l, 'g', -1, 64) }

func (r *ExperimentResult) multiDelay() bool { return len(r.Config.NotifyDelays) > 1 }

// WriteText implements output.TextWriter: the configuration, the
// distributions, the per-scenario metrics (mean ± 95 % CI across seeds),
// PathFinder's P99 ratios beside the paper's, and the derived bounds.
func (r *ExperimentResult) WriteText(w io.Writer) error {
	c := r.Config
	if len(r.Scenarios) == 0 { // a plan (sim serverless bound): derived, nothing simulated or seeded
		fmt.Fprintf(w, "Serverless dispatch — experiment %q: derived from the distributions, no simulation; chains of %d–%d stages, bound tolerance δ=%g.\n",
			c.Name, c.ChainMin, c.ChainMax, c.Delta)
	} else {
		fmt.Fprintf(w, "Serverless dispatch simulation — experiment %q: %d seeds × %d requests (first %.0f%% warm-up), chains of %d–%d stages,\n",
			c.Name, c.Seeds, c.Requests, c.Warmup*100, c.ChainMin, c.ChainMax)
		fmt.Fprintf(w, "class-recognition noise σ=%g, bound tolerance δ=%g, timeout %s. Values: mean ± 95%% CI across seeds.\n",
			c.EstimateNoise, c.Delta, FormatMS(c.Timeout))
	}
	if c.Scenario == "knative" || c.ForwardDelay > 0 || c.TimeScale != 0 {
		fmt.Fprintf(w, "Setting %q: pods × containerConcurrency slots below; every bound stage takes %s to reach its pod, a central queue learns a free slot %s after it frees (the per-bind round trip)",
			c.Scenario, FormatMS(c.ForwardDelay), FormatMS(c.NotifyDelays[0]))
		if c.TimeScale != 0 && c.TimeScale != 1 {
			fmt.Fprintf(w, "; execution times × %g", c.TimeScale)
		}
		fmt.Fprintln(w, ".")
	}
	fmt.Fprintln(w)

	fmt.Fprintln(w, "Execution-time distributions (per stage):")
	var rows [][]string
	for _, d := range r.Distributions {
		est := make([]string, len(d.Classes.Estimate))
		for i, e := range d.Classes.Estimate {
			est[i] = FormatMS(e)
		}
		pods := strconv.Itoa(d.Pods)
		if d.Slots > 1 {
			pods += "×" + strconv.Itoa(d.Slots)
		}
		rows = append(rows, []string{d.Name, FormatMS(d.MeanMS), FormatMS(d.P50MS), FormatMS(d.P99MS), pods, strings.Join(est, ", ")})
	}
	if err := output.WriteTable(w, []string{"dist", "mean", "p50", "p99", "pods", "class estimates"}, rows); err != nil {
		return err
	}
	for _, d := range r.Distributions {
		fmt.Fprintf(w, "  %s: %s\n", d.Name, d.Description)
	}

	if len(r.Scenarios) > 0 {
		if err := r.writeScenarios(w); err != nil {
			return err
		}
	}
	if len(r.Ratios) > 0 {
		if err := r.writeRatios(w); err != nil {
			return err
		}
	}
	return r.writeBounds(w)
}

func (r *ExperimentResult) writeScenarios(w io.Writer) error {
	fmt.Fprintln(w, "\nPer scenario (PathFinder §4.2, §5.5: latency = arrival → completion, end to end; response = arrival → start of execution, summed over a chain's stages):")
	hdr := []string{"dist", "λ", "ρ"}
	if r.multiDelay() {
		hdr = append(hdr, "notify")
	}
	hdr = append(hdr, "policy", "p99 latency", "mean latency", "p99 response", "mean response", "overtake %", "queue", "timeout %", "req/s", "busy CoV")
	var rows [][]string
	for _, s := range r.Scenarios {
		m := s.Metrics
		row := []string{s.Dist, lambdaStr(s.Lambda), fmt.Sprintf("%.3f", s.Rho)}
		if r.multiDelay() {
			row = append(row, FormatMS(s.NotifyDelayMS))
		}
		row = append(row, s.Policy.String(), pmMS(m.P99LatencyMS), pmMS(m.MeanLatencyMS), pmMS(m.P99ResponseMS), pmMS(m.MeanResponseMS),
			pm(m.OvertakeRate, 100, 2), pm(m.MeanQueue, 1, 1), pm(m.TimeoutRate, 100, 2), pm(m.ThroughputRPS, 1, 2), pm(m.BusyCoV, 1, 3))
		rows = append(rows, row)
	}
	return output.WriteTable(w, hdr, rows)
}

func (r *ExperimentResult) writeBounds(w io.Writer) error {
	fmt.Fprintln(w, "\nPathFinder wait bounds per class (derived: see WaitBounds) and a switch mapping (set_pool):")
	var rows [][]string
	for _, b := range r.Bounds {
		ws := make([]string, len(b.BoundsMS))
		for i, x := range b.BoundsMS {
			ws[i] = FormatMS(x)
		}
		long := 0
		for _, e := range b.Switch.ExecClassCost {
			if e.IsLong {
				long++
			}
		}
		rows = append(rows, []string{b.Dist, lambdaStr(b.Lambda), fmt.Sprintf("%.3f", b.Rho), strings.Join(ws, ", "),
			fmt.Sprintf("%s bound=%d long_reserve=%d long_max_holds=%d max_holds=%d on_full=%s (%d long classes)",
				b.Switch.Policy, b.Switch.Bound, b.Switch.LongReserve, b.Switch.LongMaxHold, b.Switch.MaxHolds, b.Switch.OnFull, long)})
	}
	if err := output.WriteTable(w, []string{"dist", "λ", "ρ", "wait bound per class", "switch"}, rows); err != nil {
		return err
	}
	return nil
}

func (r *ExperimentResult) writeRatios(w io.Writer) error {
	fmt.Fprintf(w, "\nPathFinder's P99 improvement: baseline P99 / PathFinder P99, both floored at %g ms, paired per seed (× lower;\n", RatioFloorMS)
	fmt.Fprintln(w, "≥: PathFinder's P99 was below the floor in some seed, so the ratio is a lower bound; no wait: both below it in every seed):")
	type key struct {
		dist   string
		lambda float64
		delay  float64
	}
	var order []key
	cells := map[key]map[string]string{}
	for _, q := range r.Ratios {
		k := key{q.Dist, q.Lambda, q.NotifyDelayMS}
		if cells[k] == nil {
			cells[k] = map[string]string{}
			order = append(order, k)
		}
		var v string
		switch {
		case q.NoWait:
			v = "no wait"
		case q.FlooredSeeds > 0:
			v = "≥ " + ratioStr(q.Ratio)
		default:
			v = ratioStr(q.Ratio)
		}
		cells[k][q.Metric+"/"+q.Baseline.String()] = v
	}
	var bases []Policy
	for _, p := range r.Config.Policies {
		if p != PathFinder {
			bases = append(bases, p)
		}
	}
	hdr := []string{"dist", "λ"}
	if r.multiDelay() {
		hdr = append(hdr, "notify")
	}
	for _, m := range []string{"p99 latency", "p99 response"} {
		for _, b := range bases {
			hdr = append(hdr, m+" vs "+b.String())
		}
	}
	var rows [][]string
	for _, k := range order {
		row := []string{k.dist, lambdaStr(k.lambda)}
		if r.multiDelay() {
			row = append(row, FormatMS(k.delay))
		}
		for _, m := range []string{"p99_latency", "p99_response"} {
			for _, b := range bases {
				v := cells[k][m+"/"+b.String()]
				if v == "" {
					v = "-"
				}
				row = append(row, v)
			}
		}
		rows = append(rows, row)
	}
	if err := output.WriteTable(w, hdr, rows); err != nil {
		return err
	}
	for _, p := range r.Paper {
		fmt.Fprintf(w, "  %s: %s\n", p.Source, p.Text)
	}
	if len(r.PaperRanges) > 0 {
		fmt.Fprintln(w, "Inside the paper's range (cells of the table above, mean ratio):")
		for _, g := range r.PaperRanges {
			lo, hi := paperRange(g.Baseline)
			fmt.Fprintf(w, "  %s vs %s: %d of %d cells inside %.2f–%.2f× (ours %.2f–%.2f×)\n",
				strings.ReplaceAll(g.Metric, "_", " "), g.Baseline, g.Inside, g.Cells, lo, hi, g.Min, g.Max)
		}
	}
	return nil
}
