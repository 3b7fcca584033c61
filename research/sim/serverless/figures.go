package serverless

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/p4ctl/p4ctl/pkg/output"
	"github.com/p4ctl/p4ctl/pkg/stats"
	"github.com/p4ctl/p4ctl/research/sim/verdict"
)

// FiguresResult is every headline claim of PathFinder's evaluation (§5.6)
// judged on our model of its evaluated system, by the verdict package's
// rules.
type FiguresResult struct {
	// Runs are the experiments the figures were computed from (their
	// configurations, distributions, waits and ratios; per-scenario
	// metrics are in Runs[i].Scenarios).
	Runs []*ExperimentResult `json:"runs"`
	// Fitted are the values chosen by looking at results: none.
	Fitted  []string                `json:"fitted"`
	Figures []verdict.Figure        `json:"figures"`
	Count   map[verdict.Verdict]int `json:"count"`
}

// FiguresExperiments are the runs Figures makes by default: the ALU
// benchmark (single calls) with late binding's feedback delay at 0, 5 and
// 50 ms, and the function-chain benchmark.
func FiguresExperiments() []ExperimentConfig {
	alu := DefaultExperiment()
	alu.Name = "figures-alu"
	alu.NotifyDelays = []float64{0, 5, 50}
	alu.CDFLambda = 0
	chain := ChainExperiment()
	chain.Name = "figures-chain"
	chain.CDFLambda = 0
	return []ExperimentConfig{alu, chain}
}

// Figures runs cfgs (default FiguresExperiments) and judges PathFinder's
// headline claims on each: its end-to-end P99 latency against early and
// late binding (the paper's ranges, every cell's 95 % CI inside them),
// the lowest P99 of the four policies, the smallest rise from λ = 10 to
// 20 and a preemption rate that rises with λ.
func Figures(ctx context.Context, cfgs []ExperimentConfig, progress func(done, total int)) (*FiguresResult, error) {
	if len(cfgs) == 0 {
		cfgs = FiguresExperiments()
	}
	res := &FiguresResult{Fitted: []string{}}
	for i, c := range cfgs {
		if progress != nil {
			k := i
			c.Progress = func(done, total int) { progress(k*total+done, len(cfgs)*total) }
		}
		r, err := RunExperiment(ctx, c)
		if err != nil {
			return nil, fmt.Errorf("figures: %w", err)
		}
		for _, s := range r.Scenarios {
			s.latencies, s.responses = nil, nil
		}
		res.Runs = append(res.Runs, r)
		res.Figures = append(res.Figures, judgeRun(r)...)
	}
	res.Count = verdict.Tally(res.Figures)
	return res, nil
}

// benchName names an experiment's benchmark for a figure.
func benchName(c ExperimentConfig) string {
	switch c.Benchmark {
	case "alu":
		return "ALU"
	case "chain":
		return fmt.Sprintf("function chain (%d–%d stages)", c.ChainMin, c.ChainMax)
	}
	return c.Name
}

// judgeRun judges the claims on one experiment.
func judgeRun(r *ExperimentResult) []verdict.Figure {
	c := r.Config
	b := benchName(c)
	exp := "sim serverless figures"
	var out []verdict.Figure
	ranges := map[Policy]PaperClaim{}
	for _, p := range PaperClaims() {
		ranges[p.Baseline] = p
	}
	// The ratio claims, one figure per baseline and feedback delay.
	for _, base := range []Policy{EarlyBinding, LateBinding} {
		p := ranges[base]
		rule := verdict.NumberRange(p.Low, p.High, "×")
		for _, d := range c.NotifyDelays {
			if base != LateBinding && d != c.NotifyDelays[0] {
				continue // early binding does not depend on the feedback delay
			}
			k, n := 0, 0
			lo, hi := math.Inf(1), math.Inf(-1)
			var per []verdict.Figure
			for _, q := range r.Ratios {
				if q.Metric != "p99_latency" || q.Baseline != base || q.NotifyDelayMS != d {
					continue
				}
				n++
				cell := verdict.New(fmt.Sprintf("%s λ = %g", q.Dist, q.Lambda), "§5.6", exp, fmt.Sprintf("%.2f–%.2f×", p.Low, p.High), rule, q.Ratio, ratioStr(q.Ratio))
				if cell.Verdict == verdict.Reproduced {
					k++
				}
				per = append(per, cell)
				lo, hi = math.Min(lo, q.Ratio.Mean), math.Max(hi, q.Ratio.Mean)
			}
			if n == 0 {
				continue
			}
			name := fmt.Sprintf("%s: P99 latency, %s / PathFinder", b, base)
			if base == LateBinding && len(c.NotifyDelays) > 1 {
				name += fmt.Sprintf(" (feedback %s)", FormatMS(d))
			}
			f := verdict.NewCount(name, "§5.6", exp, fmt.Sprintf("%.2f–%.2f× (all cells)", p.Low, p.High), verdict.CountOf(n, n), k, n)
			f.Ours = fmt.Sprintf("%d of %d cells' CIs inside; means %.2f–%.2f×", k, n, lo, hi)
			f.RuleText = fmt.Sprintf("every cell's 95 %% CI inside %.2f–%.2f×", p.Low, p.High)
			f.Cells = per
			out = append(out, f)
		}
	}
	d0 := c.NotifyDelays[0]
	p99 := map[string]map[Policy]stats.Summary{} // "dist λ" → policy → P99
	key := func(d string, l float64) string { return fmt.Sprintf("%s %g", d, l) }
	for _, s := range r.Scenarios {
		if s.NotifyDelayMS != d0 {
			continue
		}
		k := key(s.Dist, s.Lambda)
		if p99[k] == nil {
			p99[k] = map[Policy]stats.Summary{}
		}
		p99[k][s.Policy] = s.Metrics.P99LatencyMS
	}
	// PathFinder's P99 the lowest of the four in every cell.
	lowest, cells := 0, 0
	var not []string
	for _, d := range c.Dists {
		for _, l := range c.Lambdas {
			m := p99[key(d, l)]
			pf, ok := m[PathFinder]
			if !ok {
				continue
			}
			cells++
			best := true
			for p, s := range m {
				if p != PathFinder && s.Mean < pf.Mean {
					best = false
				}
			}
			if best {
				lowest++
			} else if len(not) < 4 {
				not = append(not, key(d, l))
			}
		}
	}
	if cells > 0 {
		why := "PathFinder lowest in every cell"
		if lowest < cells {
			why = "not lowest at " + strings.Join(not, ", ")
			if cells-lowest > len(not) {
				why += ", …"
			}
		}
		f := verdict.NewCount(b+": PathFinder has the lowest P99 latency", "§5.6", exp, "lowest in every trace and λ", verdict.CountOf(cells, cells), lowest, cells)
		f.Why = why
		out = append(out, f)
	}
	// The smallest rise from the lowest λ to the highest, per distribution.
	if len(c.Lambdas) > 1 {
		lo, hi := c.Lambdas[0], c.Lambdas[len(c.Lambdas)-1]
		least, n := 0, 0
		for _, d := range c.Dists {
			a, z := p99[key(d, lo)], p99[key(d, hi)]
			if a == nil || z == nil {
				continue
			}
			n++
			rise := z[PathFinder].Mean - a[PathFinder].Mean
			ok := true
			for p := range z {
				if p != PathFinder && z[p].Mean-a[p].Mean < rise {
					ok = false
				}
			}
			if ok {
				least++
			}
		}
		if n > 0 {
			out = append(out, verdict.NewCount(fmt.Sprintf("%s: PathFinder's P99 rises least from λ = %g to %g", b, lo, hi), "§5.6", exp,
				"every trace", verdict.CountOf(n, n), least, n))
		}
	}
	// The preemption rate rises with λ, per distribution.
	rising, n := 0, 0
	for _, d := range c.Dists {
		prev, ok, seen := -1.0, true, 0
		for _, l := range c.Lambdas {
			for _, s := range r.Scenarios {
				if s.Dist == d && s.Lambda == l && s.Policy == PathFinder && s.NotifyDelayMS == d0 {
					seen++
					if s.Metrics.OvertakeRate.Mean <= prev {
						ok = false
					}
					prev = s.Metrics.OvertakeRate.Mean
				}
			}
		}
		if seen > 1 {
			n++
			if ok {
				rising++
			}
		}
	}
	if n > 0 {
		out = append(out, verdict.NewCount(b+": PathFinder's preemption rate rises with λ", "§5.6", exp, "rises with request density",
			verdict.CountOf(n, n), rising, n))
	}
	return out
}

// WriteText implements output.TextWriter: the figures table, then each
// run's per-cell ratios.
func (r *FiguresResult) WriteText(w io.Writer) error {
	fmt.Fprintln(w, "PathFinder's headline claims (§5.6, as reported, never an input) on our model of its evaluated system")
	for _, run := range r.Runs {
		c := run.Config
		var ds []string
		for _, d := range run.Distributions {
			ds = append(ds, fmt.Sprintf("%s mean %s (×%.3g)", d.Name, FormatMS(d.MeanMS), d.Scale))
		}
		fmt.Fprintf(w, "%s: %d pods × %d core, %d–%d stages per request, λ = %v req/s, ρ = %g at %g req/s, waits min(E[S | class], %s), feedback delays %v ms; %d seeds × %d requests; %s\n",
			benchName(c), c.Pods, c.ContainerConcurrency, c.ChainMin, c.ChainMax, c.Lambdas, c.RhoMax, c.RefLambda, FormatMS(c.MaxWaitMS), c.NotifyDelays, c.Seeds, c.Requests, strings.Join(ds, ", "))
	}
	fmt.Fprintf(w, "latency = arrival → completion (end to end, §4.2, §5.5); ratios = baseline P99 / PathFinder P99, paired per seed\n%s\nvalues chosen by looking at results: none\n%s\n\n",
		verdict.Rules, verdict.TallyLine(r.Count))
	rows := make([][]string, 0, len(r.Figures))
	for _, f := range r.Figures {
		rows = append(rows, []string{f.Figure, f.Section, f.Source, f.Ours, f.RuleText, string(f.Verdict), f.Why})
	}
	if err := output.WriteTable(w, []string{"FIGURE", "§", "PATHFINDER (REPORTED)", "OURS", "RULE", "VERDICT", "WHY"}, rows); err != nil {
		return err
	}
	for _, run := range r.Runs {
		fmt.Fprintf(w, "\n%s, P99 latency ratios per cell (mean ± 95 %% CI across seeds):\n", benchName(run.Config))
		var rows [][]string
		for _, q := range run.Ratios {
			if q.Metric != "p99_latency" || (q.Baseline != LateBinding && q.Baseline != EarlyBinding) {
				continue
			}
			rows = append(rows, []string{q.Dist, lambdaStr(q.Lambda), FormatMS(q.NotifyDelayMS), q.Baseline.String(), ratioStr(q.Ratio)})
		}
		if err := output.WriteTable(w, []string{"DIST", "Λ", "FEEDBACK", "BASELINE", "BASELINE / PATHFINDER"}, rows); err != nil {
			return err
		}
	}
	return nil
}
