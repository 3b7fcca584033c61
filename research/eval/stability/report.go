package stability

import (
	"fmt"
	"io"
	"strings"

	"github.com/p4ctl/p4ctl/pkg/output"
	"github.com/p4ctl/p4ctl/pkg/regions"
)

// WriteText renders the evaluation as tables (the `-o table` output).
func (r *Result) WriteText(w io.Writer) error {
	ew := output.NewReport(w)
	ew.Printf("Routing stability over a year (p4ctl eval stability)\n")
	ew.Printf("  carbon source: %s\n", r.CarbonSource)
	ew.Printf("  signal: %s\n", r.Signal)
	ew.Printf("  period: %s (%d hours, %.0f days); sites %s; %d regions; classes %s ms at %s\n",
		r.Period, r.Hours, r.Days, strings.Join(r.Sites, ", "), len(r.Pool), strings.Join(r.Classes, "/"), mixString(r.Mix))
	ew.Printf("  hysteresis evaluated: %s; latency model: %s; %d requests per site and hour, seed %d\n",
		r.Hysteresis, r.LatencyModel, r.RequestsPerHour, r.Seed)
	ew.Printf("  Figures labelled PAPER are the paper's (%s); everything else is computed here.\n", r.Paper.Data)

	ew.Printf("\nAcceptance: hysteresis vs hourly C (all sites and classes)\n")
	ew.Table(acceptanceHeader(), r.acceptanceRows())

	ew.Printf("\nPer policy and setting (all sites; saving vs A)\n")
	ew.Table(policyHeader(r), r.policyRows())

	ew.Printf("\nPer SLA class, policy C: changes per day, hourly → hysteresis (cold share %%, sampled violations %%)\n")
	ew.Table(classHeader(), r.classRows(regions.PolicyC.String()))

	ew.Printf("\nSweep of policy C (min_gain × min_hold at horizon %dh, then horizons); * = on the saving-vs-changes Pareto front\n", r.Hysteresis.Horizon)
	ew.Table(sweepHeader(), r.sweepRows())

	ew.Printf("\nNotes\n")
	for _, n := range r.Notes {
		ew.Printf("  - %s\n", n)
	}
	return ew.Err()
}

// WriteMarkdown renders the result as Markdown tables for
// docs/REPRODUCTION.md; label names the carbon source in place of its
// machine-specific description. The document's generated block must equal
// this output (TestReproductionDoc).
func (r *Result) WriteMarkdown(w io.Writer, label string) error {
	ew := output.NewReport(w)
	md := func(h []string, rows [][]string) {
		ew.Printf("| %s |\n|%s\n", strings.Join(h, " | "), strings.Repeat("---|", len(h)))
		for _, row := range rows {
			ew.Printf("| %s |\n", strings.Join(row, " | "))
		}
		ew.Printf("\n")
	}
	ew.Printf("Carbon source: %s; signal: %s. Period %s (%d hours), sites %s, %d regions, classes %s ms at %s; latency model: %s; %d requests per site and hour, seed %d.\n\n",
		label, r.Signal, r.Period, r.Hours, strings.Join(r.Sites, " and "), len(r.Pool), strings.Join(r.Classes, "/"), mixString(r.Mix),
		r.LatencyModel, r.RequestsPerHour, r.Seed)
	a := r.Acceptance
	verdict := "**met**"
	if !a.Met {
		verdict = "**not met**"
	}
	ew.Printf("**Acceptance** (aim: ≥ 50 %% fewer changes than hourly C for ≤ 1 pp less saving): %s — %.1f %% fewer changes for %.2f pp of saving.", verdict, a.ChangeReductionPct, a.SavingLossPP)
	if a.Best != nil {
		ew.Printf(" Best sweep point with ≥ 50 %% fewer changes: %s, %.2f changes/day, saving %.2f %%.", a.Best.Hysteresis, a.Best.ChangesPerDay, a.Best.SavingPct)
	}
	ew.Printf("\n\n")
	md(acceptanceHeader(), r.acceptanceRows())
	ew.Printf("**Per policy and setting** (all sites; saving vs A; PAPER = the paper's C, Mumbai, 12 regions, mixed, January 2025).\n\n")
	md(policyHeader(r), r.policyRows())
	ew.Printf("**Per SLA class, policy C:** changes per day hourly → hysteresis, and the cold share and sampled violations (%%) of each.\n\n")
	md(classHeader(), r.classRows(regions.PolicyC.String()))
	ew.Printf("**Sweep of policy C** (min_gain × min_hold at horizon %d h, then horizons at the evaluated gain and hold); * = on the saving-vs-changes Pareto front.\n\n", r.Hysteresis.Horizon)
	md(sweepHeader(), r.sweepRows())
	return ew.Err()
}

func mixString(mix []float64) string {
	s := make([]string, len(mix))
	for i, m := range mix {
		s[i] = fmt.Sprintf("%g", 100*m)
	}
	return strings.Join(s, "/") + " %"
}

func acceptanceHeader() []string {
	return []string{"setting", "changes/day", "saving %", "fewer changes", "saving lost", "cold share %", "ranking updates/day"}
}

func (r *Result) acceptanceRows() [][]string {
	hourly, _ := r.Find(regions.PolicyC.String(), SettingHourly)
	hyst, _ := r.Find(regions.PolicyC.String(), SettingHysteresis)
	a := r.Acceptance
	return [][]string{
		{"C hourly", f2(hourly.ChangesPerDay), f2(hourly.SavingPct), "—", "—", f2(hourly.ColdSharePct), f2(hourly.RankingUpdatesPerDay)},
		{"C " + r.Hysteresis.String(), f2(hyst.ChangesPerDay), f2(hyst.SavingPct), fmt.Sprintf("%.1f %%", a.ChangeReductionPct), fmt.Sprintf("%.2f pp", a.SavingLossPP), f2(hyst.ColdSharePct), f2(hyst.RankingUpdatesPerDay)},
	}
}

func policyHeader(r *Result) []string {
	h := []string{"policy", "setting", "saving %"}
	for _, s := range r.Sites {
		h = append(h, "saving "+s)
	}
	h = append(h, "changes/day", "cold share %", "viol. % sampled (exact)", "ranking updates/day", "writes/day")
	return h
}

func (r *Result) policyRows() [][]string {
	var rows [][]string
	for _, row := range r.Rows {
		set := row.Setting
		if row.Hysteresis != nil {
			set = row.Hysteresis.String()
		}
		cells := []string{row.Policy, set, f2(row.SavingPct)}
		for _, s := range r.Sites {
			cells = append(cells, f2(row.SiteSavingPct[s]))
		}
		cells = append(cells, f2(row.ChangesPerDay), f2(row.ColdSharePct),
			fmt.Sprintf("%.2f (%.2f)", row.SampledViolationPct, row.ExactViolationPct), f2(row.RankingUpdatesPerDay), fmt.Sprintf("%.0f", row.WritesPerDay))
		rows = append(rows, cells)
	}
	// The paper's figures beside ours: Mumbai, C, 12 regions, mixed.
	cells := []string{"C (PAPER)", "hourly, Jan 2025", "—"}
	for _, s := range r.Sites {
		v := "—"
		if s == "mumbai" && len(r.Pool) == 12 {
			v = fmt.Sprintf("%.1f", r.Paper.MixedSaving12Pct)
		}
		cells = append(cells, v)
	}
	cells = append(cells, "—", "—", fmt.Sprintf("%.0f (P95)", r.Paper.ViolationPct), "—", "—")
	return append(rows, cells)
}

func classHeader() []string {
	return []string{"site", "class (ms)", "changes/day", "cold share %", "viol. % sampled", "saving %", "chosen regions (hourly)"}
}

func (r *Result) classRows(policy string) [][]string {
	var rows [][]string
	for _, s := range r.Sites {
		for _, cl := range r.Classes {
			h, _ := r.FindClass(policy, SettingHourly, s, cl)
			y, ok := r.FindClass(policy, SettingHysteresis, s, cl)
			arrow := func(a, b float64) string {
				if !ok {
					return f2(a)
				}
				return f2(a) + " → " + f2(b)
			}
			rows = append(rows, []string{s, cl, arrow(h.ChangesPerDay, y.ChangesPerDay), arrow(h.ColdSharePct, y.ColdSharePct),
				arrow(h.SampledViolationPct, y.SampledViolationPct), arrow(h.SavingPct, y.SavingPct), shares(h.RouteShare)})
		}
	}
	return rows
}

// shares lists the regions of a route share, largest first, above 1 %.
func shares(m map[string]float64) string {
	type kv struct {
		k string
		v float64
	}
	var xs []kv
	for k, v := range m {
		if v >= 0.01 {
			xs = append(xs, kv{k, v})
		}
	}
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && (xs[j].v > xs[j-1].v || (xs[j].v == xs[j-1].v && xs[j].k < xs[j-1].k)); j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
	out := make([]string, len(xs))
	for i, x := range xs {
		city := x.k
		if reg, ok := regions.LookupRegion(x.k); ok {
			city = reg.City
		}
		out[i] = fmt.Sprintf("%s %.0f%%", city, 100*x.v)
	}
	return strings.Join(out, ", ")
}

func sweepHeader() []string {
	return []string{"min_gain", "min_hold", "horizon", "changes/day", "saving %", "cold share %", "viol. % sampled", "ranking updates/day", "Pareto"}
}

func (r *Result) sweepRows() [][]string {
	var rows [][]string
	for _, p := range r.Sweep {
		mark := ""
		if p.Pareto {
			mark = "*"
		}
		rows = append(rows, []string{p.Hysteresis.MinGain.String(), fmt.Sprintf("%dh", p.Hysteresis.MinHold), fmt.Sprintf("%dh", p.Hysteresis.Horizon),
			f2(p.ChangesPerDay), f2(p.SavingPct), f2(p.ColdSharePct), f2(p.SampledViolationPct), f2(p.RankingUpdatesPerDay), mark})
	}
	return rows
}

func f2(v float64) string { return fmt.Sprintf("%.2f", v) }
