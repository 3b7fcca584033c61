package carbon

import (
	"fmt"
	"io"
	"strings"

	"github.com/p4ctl/p4ctl/pkg/output"
	"github.com/p4ctl/p4ctl/pkg/regions"
)

// WriteMarkdown renders the deterministic part of the result (everything
// but decision times and file paths) as Markdown tables for
// docs/REPRODUCTION.md; label names the carbon source in place of its
// machine-specific description. TestReproductionDoc keeps the document's
// blocks equal to this output.
func (r *Result) WriteMarkdown(w io.Writer, label string) error {
	ew := output.NewReport(w)
	md := func(h []string, rows [][]string) {
		ew.Printf("| %s |\n|%s\n", strings.Join(h, " | "), strings.Repeat("---|", len(h)))
		for _, row := range rows {
			ew.Printf("| %s |\n", strings.Join(row, " | "))
		}
		ew.Printf("\n")
	}
	ew.Printf("Carbon source: %s. Period %s (%d hours), site %s, seed %d, %d runs × %d requests per SLA class and %d per mixed run; α = %.2g, w = %.2g, cold-missing = %s.\n\n",
		label, r.Period, r.Hours, r.Site, r.Seed, r.Runs, r.Requests, r.MixedRequests, r.Options.Alpha, r.Options.W, r.Options.ColdMissing)

	ew.Printf("**Headline figures.** PAPER = the paper's figure (Electricity Maps, January 2025), quoted; the other columns are computed.\n\n")
	var rows [][]string
	for _, h := range r.headline() {
		if strings.HasPrefix(h[0], "decision time") {
			continue // machine-dependent; see the decision-time paragraph
		}
		rows = append(rows, h)
	}
	md([]string{"figure", "PAPER", "ours, 5 regions", "ours, 12 regions"}, rows)

	ew.Printf("**The paper's tables reweighted.** The paper's own figures recomputed from its Tables 3 and 4 (labelled PAPER ARITHMETIC: nothing measured).\n\n")
	rows = nil
	for _, p := range r.PaperArithmetic {
		rows = append(rows, []string{p.Figure, p.Reported, p.Arithmetic, fmt.Sprintf("%.1f", p.Value)})
	}
	md([]string{"figure", "PAPER (reported)", "recomputed from", "PAPER ARITHMETIC"}, rows)

	pols := regions.Policies()
	for _, pool := range r.Pools {
		ew.Printf("**Table 3 analogue, %d regions:** mean ± std (gCO2eq/kWh) of A, and saving vs A in %% (sampled mean; exact expectation in parentheses where the policy is stateless). D's violation rate is the share of requests whose region's P95 exceeds the SLA; p is the Mann–Whitney U p-value of C vs A.\n\n", pool)
		h := []string{"SLA class", "A mean±std"}
		for _, p := range pols[1:] {
			h = append(h, p.String()+" saving")
		}
		h = append(h, "D viol. %", "C p vs A")
		rows = nil
		for _, cl := range classesOf(r) {
			a, _ := r.Find(pool, "A", cl)
			row := []string{cl, fmt.Sprintf("%.1f ± %.1f", a.Mean, a.Std)}
			for _, p := range pols[1:] {
				x, _ := r.Find(pool, p.String(), cl)
				cell := fmt.Sprintf("%.1f", x.SavingPct)
				if x.ExactSavingPct != nil {
					cell += fmt.Sprintf(" (%.1f)", *x.ExactSavingPct)
				}
				row = append(row, cell)
			}
			d, _ := r.Find(pool, "D", cl)
			c, _ := r.Find(pool, "C", cl)
			row = append(row, fmt.Sprintf("%.1f", d.ViolationPct), optF(c.PValueVsA, "%.2g"))
			rows = append(rows, row)
		}
		md(h, rows)
	}

	for _, pool := range r.Pools {
		set, _ := regions.PoolOf(pool)
		ew.Printf("**Table 4 analogue, %d regions:** routing share of policy C per class (%%); regions that never receive a request are omitted.\n\n", pool)
		var used []regions.Index
		for _, i := range set.Indices() {
			reg, _ := regions.RegionAt(i)
			for _, cl := range classesOf(r) {
				if row, _ := r.Find(pool, "C", cl); row.RouteShare[reg.ID] > 0 {
					used = append(used, i)
					break
				}
			}
		}
		h := []string{"class"}
		for _, i := range used {
			reg, _ := regions.RegionAt(i)
			h = append(h, reg.City)
		}
		rows = nil
		for _, cl := range classesOf(r) {
			row := []string{cl}
			x, _ := r.Find(pool, "C", cl)
			for _, i := range used {
				reg, _ := regions.RegionAt(i)
				row = append(row, fmt.Sprintf("%.1f", 100*x.RouteShare[reg.ID]))
			}
			rows = append(rows, row)
		}
		md(h, rows)
	}

	if r.LatencyModel == LatencySampled {
		for _, pool := range r.Pools {
			ew.Printf("**Violations beyond the paper, %d regions** (%%): by construction (region P95 > SLA) / sampled (log-normal RTT with the profile's P95, σ = %.2g, above the SLA).\n\n", pool, r.LatencySigma)
			h := []string{"SLA class"}
			for _, p := range pols {
				h = append(h, p.String())
			}
			rows = nil
			for _, cl := range classesOf(r) {
				row := []string{cl}
				for _, p := range pols {
					x, _ := r.Find(pool, p.String(), cl)
					row = append(row, fmt.Sprintf("%.1f / %s", x.ViolationPct, optF(x.SampledViolationPct, "%.1f")))
				}
				rows = append(rows, row)
			}
			md(h, rows)
		}
	}

	ew.Printf("**Zone means over the period** (gCO2eq/kWh); PAPER = the paper's January-2025 level as quoted in PROVENANCE.md.\n\n")
	rows = nil
	for _, z := range r.Zones {
		rows = append(rows, []string{z.City, z.Zone, fmt.Sprintf("%.1f", z.Mean), fmt.Sprintf("%.1f–%.1f", z.Min, z.Max), orDash(z.Paper)})
	}
	md([]string{"region", "zone", "mean", "min–max", "PAPER"}, rows)
	return ew.Err()
}
