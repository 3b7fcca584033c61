package carbon

import (
	"fmt"
	"io"

	"github.com/p4ctl/p4ctl/pkg/output"
	"github.com/p4ctl/p4ctl/pkg/regions"
)

// WriteText renders the experiment as tables (the `-o table` output).
func (r *Result) WriteText(w io.Writer) error {
	ew := output.NewReport(w)
	ew.Printf("Carbon-aware SLA routing (p4ctl eval carbon)\n")
	ew.Printf("  carbon source: %s\n", r.CarbonSource)
	ew.Printf("  signal: %s\n", r.Signal)
	ew.Printf("  period: %s (%d hours); site %s; seed %d; %d runs × %d requests per SLA class, %d per mixed run\n",
		r.Period, r.Hours, r.Site, r.Seed, r.Runs, r.Requests, r.MixedRequests)
	ew.Printf("  policies: α=%.2g, w=%.2g, cold-missing=%s, keep-alive %gs, C-cap share %.2g; latency model %s\n",
		r.Options.Alpha, r.Options.W, r.Options.ColdMissing, r.Options.KeepAliveSec, r.Options.CapShare, r.LatencyModel)
	ew.Printf("  Figures labelled PAPER are the paper's (%s); everything else is computed here.\n", r.Paper.Data)

	for _, pool := range r.Pools {
		ew.Printf("\nTable 3 analogue — %d-region pool: carbon intensity of the chosen region (gCO2eq/kWh)\n", pool)
		h := []string{"sla", "policy", "mean±std", "exact", "saving%", "exact-saving%", "viol%"}
		if r.LatencyModel == LatencySampled {
			h = append(h, "sampled-viol%")
		}
		h = append(h, "fallback%", "p(vs A)")
		var rows [][]string
		for _, row := range r.Rows {
			if row.Pool != pool {
				continue
			}
			cells := []string{row.Class, row.Policy, fmt.Sprintf("%.1f±%.1f", row.Mean, row.Std), optF(row.ExactMean, "%.1f"),
				fmt.Sprintf("%.1f", row.SavingPct), optF(row.ExactSavingPct, "%.1f"), fmt.Sprintf("%.2f", row.ViolationPct)}
			if r.LatencyModel == LatencySampled {
				cells = append(cells, optF(row.SampledViolationPct, "%.2f"))
			}
			p := "—"
			if row.PValueVsA != nil {
				p = fmt.Sprintf("%.2g", *row.PValueVsA)
			}
			cells = append(cells, fmt.Sprintf("%.1f", row.FallbackPct), p)
			rows = append(rows, cells)
		}
		ew.Table(h, rows)
	}

	for _, pool := range r.Pools {
		for _, pol := range []string{"C", "C+"} {
			ew.Printf("\nTable 4 analogue — routing share of policy %s per region and class, %d-region pool (%%)\n", pol, pool)
			set, _ := regions.PoolOf(pool)
			h := []string{"class"}
			for _, i := range set.Indices() {
				reg, _ := regions.RegionAt(i)
				h = append(h, reg.City)
			}
			var rows [][]string
			for _, row := range r.Rows {
				if row.Pool != pool || row.Policy != pol {
					continue
				}
				cells := []string{row.Class}
				for _, i := range set.Indices() {
					reg, _ := regions.RegionAt(i)
					cells = append(cells, fmt.Sprintf("%.1f", 100*row.RouteShare[reg.ID]))
				}
				rows = append(rows, cells)
			}
			ew.Table(h, rows)
		}
	}

	ew.Printf("\nScaling 5 → 12 regions: saving of C vs A (%%)\n")
	var rows [][]string
	for _, s := range r.Scaling {
		p5, p12 := "", ""
		if s.Class == "mixed" {
			p5, p12 = fmt.Sprintf("%.1f", r.Paper.MixedSaving5Pct), fmt.Sprintf("%.1f", r.Paper.MixedSaving12Pct)
		}
		rows = append(rows, []string{s.Class, fmt.Sprintf("%.1f", s.Saving5Pct), fmt.Sprintf("%.1f", s.Saving12Pct), p5, p12})
	}
	ew.Table([]string{"class", "5 regions", "12 regions", "PAPER 5", "PAPER 12"}, rows)

	ew.Printf("\nHeadline figures beside the paper's\n")
	ew.Table([]string{"figure", "PAPER", "ours 5 regions", "ours 12 regions"}, r.headline())

	ew.Printf("\nThe paper's tables reweighted (PAPER ARITHMETIC: its own figures recomputed, nothing measured)\n")
	rows = nil
	for _, p := range r.PaperArithmetic {
		rows = append(rows, []string{p.Figure, p.Reported, p.Arithmetic, fmt.Sprintf("%.1f", p.Value)})
	}
	ew.Table([]string{"figure", "PAPER (reported)", "recomputed from", "PAPER ARITHMETIC"}, rows)
	ew.Printf("\nCarbon intensity per region over the period (gCO2eq/kWh)\n")
	rows = nil
	for _, z := range r.Zones {
		rows = append(rows, []string{z.Region, z.City, z.Zone, fmt.Sprintf("%.1f", z.Mean), fmt.Sprintf("%.1f", z.Min), fmt.Sprintf("%.1f", z.Max), orDash(z.Paper)})
	}
	ew.Table([]string{"region", "city", "zone", "mean", "min", "max", "PAPER Jan-2025"}, rows)

	ew.Printf("\nDecision time of policy C: P50 %.0f ns, P99 %.0f ns over %d decisions (clock overhead P50 %.0f ns; PAPER P99 %.3f ms)\n",
		r.DecisionTime.P50ns, r.DecisionTime.P99ns, r.DecisionTime.Samples, r.DecisionTime.ClockNs, r.Paper.DecisionP99ms)
	ew.Printf("\nNotes\n")
	for _, n := range r.Notes {
		ew.Printf("  - %s\n", n)
	}
	return ew.Err()
}

// Headline returns the paper's headline figures beside ours as rows
// (figure, paper, ours 5 regions, ours 12 regions).
func (r *Result) headline() [][]string {
	get := func(pool int, pol, class string, f func(Row) string) string {
		if row, ok := r.Find(pool, pol, class); ok {
			return f(row)
		}
		return "—"
	}
	mean := func(row Row) string { return fmt.Sprintf("%.1f", row.Mean) }
	sav := func(row Row) string { return fmt.Sprintf("%.1f %%", row.SavingPct) }
	maxSaving := func(pool int) string {
		best, cls := -1e9, ""
		for _, row := range r.Rows {
			if row.Pool == pool && row.Policy == "C" && row.Class != "mixed" && row.SavingPct > best {
				best, cls = row.SavingPct, row.Class
			}
		}
		if cls == "" {
			return "—"
		}
		return fmt.Sprintf("%.1f %% (%s ms)", best, cls)
	}
	viol := func(pool int) string {
		worst := 0.0
		for _, row := range r.Rows {
			if row.Pool == pool && row.Policy == "C" {
				worst = max(worst, row.ViolationPct)
			}
		}
		return fmt.Sprintf("%.2f %%", worst)
	}
	return [][]string{
		{"A mean (always Mumbai), mixed", fmt.Sprintf("%.1f", r.Paper.AMeanGCO2), get(5, "A", "mixed", mean), get(12, "A", "mixed", mean)},
		{"C saving, best SLA class", fmt.Sprintf("%.1f %%", r.Paper.MaxSavingPct), maxSaving(5), maxSaving(12)},
		{"C saving, mixed workload", fmt.Sprintf("%.1f %% / %.1f %%", r.Paper.MixedSaving5Pct, r.Paper.MixedSaving12Pct), get(5, "C", "mixed", sav), get(12, "C", "mixed", sav)},
		{"C+ saving at 500 ms", fmt.Sprintf("%.1f %%", r.Paper.CPlusSaving500Pct), get(5, "C+", "500", sav), get(12, "C+", "500", sav)},
		{"C SLA violations (P95), worst class", fmt.Sprintf("%.0f %%", r.Paper.ViolationPct), viol(5), viol(12)},
		{"decision time P99", fmt.Sprintf("%.3f ms", r.Paper.DecisionP99ms), fmt.Sprintf("%.6f ms (both pools)", r.DecisionTime.P99ns/1e6), ""},
	}
}

func optF(v *float64, f string) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf(f, *v)
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
