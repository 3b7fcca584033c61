package demo

import (
	"fmt"
	"image/color"
	"io"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/p4ctl/p4ctl/pkg/figure"
	"github.com/p4ctl/p4ctl/pkg/regions"
)

// WriteHeader writes the description of the run and the per-hour column
// headers (the table output streams one HourLine per hour below it).
func WriteHeader(w io.Writer, r *Result) error {
	hyst := ""
	if r.Hysteresis != "" {
		hyst = ", hysteresis " + r.Hysteresis
	}
	speed := "as fast as possible"
	if r.Speed > 0 {
		speed = fmt.Sprintf("%gx (%s per hour)", r.Speed, durationPerHour(r.Speed))
	}
	_, err := fmt.Fprintf(w, `p4ctl demo
  switch:  %s
  config:  %s (policy %s%s)
  carbon:  %s
  signal:  %s
  replay:  from %s at %s; per hour: the mixed SLA workload through the data plane
  gCO2:    estimated with %g Wh per request (an assumption; savings do not depend on it)

%-5s  %-6s %5s  %-46s  %-58s  %9s  %9s  %7s  %4s  %s
`, r.Switch, r.Config, r.Policy, hyst, r.CarbonSource, r.Signal, r.Start.Format("2006-01-02 15:04Z"), speed, r.EnergyWh,
		"hour", "policy", "wrote", "carbon ranking (gCO2eq/kWh, cleanest first)", "requests per region (switch counters)",
		"gCO2", "nearest", "saving", "SLA✗", "check")
	return err
}

func durationPerHour(speed float64) string {
	s := 3600 / speed
	if s >= 1 {
		return fmt.Sprintf("%.3gs", s)
	}
	return fmt.Sprintf("%.3gms", s*1000)
}

// HourLine renders one hour.
func HourLine(h Hour) string {
	var rk []string
	for i, r := range h.Ranking {
		if i == 3 {
			rk = append(rk, "…")
			break
		}
		rk = append(rk, fmt.Sprintf("%s %.0f", r.Region, r.GCO2))
	}
	check := "ok"
	if !h.CountersMatch || h.HeaderMismatches > 0 {
		check = "MISMATCH"
	}
	pol := fmt.Sprintf("%s e%d", h.Policy, h.Epoch)
	if h.Stale {
		pol += "*"
	}
	return fmt.Sprintf("%-5s  %-6s %5d  %-46s  %-58s  %9s  %9s  %6.1f%%  %4d  %s",
		h.Hour.Format("15:04"), pol, h.Writes, strings.Join(rk, ", "), counts(h.Routed, 4), grams(h.GCO2), grams(h.BaselineGCO2),
		h.SavingPct, h.SLAViolations, check)
}

func grams(g float64) string {
	switch {
	case g >= 1e6:
		return fmt.Sprintf("%.2f t", g/1e6)
	case g >= 1e3:
		return fmt.Sprintf("%.2f kg", g/1e3)
	}
	return fmt.Sprintf("%.0f g", g)
}

// counts renders a region → count map, largest first, at most n entries.
func counts(m map[string]int, n int) string {
	type kv struct {
		k string
		v int
	}
	var l []kv
	for k, v := range m {
		l = append(l, kv{k, v})
	}
	sort.Slice(l, func(i, j int) bool { return l[i].v > l[j].v || (l[i].v == l[j].v && l[i].k < l[j].k) })
	var parts []string
	for i, x := range l {
		if n > 0 && i == n {
			parts = append(parts, fmt.Sprintf("+%d more", len(l)-n))
			break
		}
		parts = append(parts, fmt.Sprintf("%s %d", x.k, x.v))
	}
	return strings.Join(parts, ", ")
}

// WriteTotals writes the summary after the hours: totals, the comparison
// of the switch's counters with pkg/regions' prediction region by region,
// and the plot files.
func WriteTotals(w io.Writer, r *Result) error {
	t := r.Totals
	if r.Interrupted != "" {
		fmt.Fprintf(w, "\ninterrupted %s: the totals below cover the hours above only", r.Interrupted)
	}
	fmt.Fprintf(w, "\ntotals over %d hours: %d requests, %d entries written, %s vs %s nearest-region baseline (saving %.1f%%), %d SLA violations, %d fallbacks, %d nacks",
		len(r.Hours), t.Requests, t.Writes, grams(t.GCO2), grams(t.BaselineGCO2), t.SavingPct, t.SLAViolations, t.Fallbacks, t.Nacks)
	if r.Drift != nil {
		fmt.Fprintf(w, " (%d of them during the latency-drift episode, whose %d requests are not in the hourly counts)", t.DriftNacks, r.Drift.Requests)
	}
	if t.StaleHours > 0 {
		fmt.Fprintf(w, ", %d hours on the safe policy (stale carbon data, marked *)", t.StaleHours)
	}
	fmt.Fprintf(w, "\n\nrouted requests per region: read back from the switch (region_routed, P4Runtime) vs policy %s in pkg/regions for the same requests\n", r.Policy)
	fmt.Fprintf(w, "  %-16s %10s %10s %8s\n", "region", "switch", "regions."+r.Policy, "share")
	var names []string
	for k := range t.Predicted {
		names = append(names, k)
	}
	for k := range t.Routed {
		if _, ok := t.Predicted[k]; !ok {
			names = append(names, k)
		}
	}
	sort.Slice(names, func(i, j int) bool {
		return t.Predicted[names[i]] > t.Predicted[names[j]] || (t.Predicted[names[i]] == t.Predicted[names[j]] && names[i] < names[j])
	})
	for _, k := range names {
		mark := ""
		if t.Routed[k] != t.Predicted[k] {
			mark = "  <-- differs"
		}
		fmt.Fprintf(w, "  %-16s %10d %10d %7.1f%%%s\n", k, t.Routed[k], t.Predicted[k], 100*float64(t.Routed[k])/float64(max(t.Requests, 1)), mark)
	}
	if t.CountersMatch && t.HeaderMismatches == 0 {
		fmt.Fprintf(w, "  the switch's counters equal the policy's prediction in every hour and region, and every request's header names the predicted region\n")
	} else {
		fmt.Fprintf(w, "  MISMATCH: counters equal in every hour: %v; requests whose header region differs from the prediction: %d\n", t.CountersMatch, t.HeaderMismatches)
	}
	if r.Drift != nil {
		if err := WriteDrift(w, r.Drift, !r.streamed); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "wall time: %.1fs\n", r.WallSeconds)
	return err
}

// WriteText renders the whole result (header, hours, totals): the table
// output when hours were not streamed.
func (r *Result) WriteText(w io.Writer) error {
	if err := WriteHeader(w, r); err != nil {
		return err
	}
	for _, h := range r.Hours {
		if _, err := fmt.Fprintln(w, HourLine(h)); err != nil {
			return err
		}
	}
	return WriteTotals(w, r)
}

// WritePlots renders the report into dir as PNG and SVG: the hourly carbon
// intensity of routed requests beside the nearest-region baseline, and the
// requests per region per hour read back from the switch (stacked). It
// returns the files written and records them in r.Plots. Each plot's
// title says what it shows; the run's provenance (carbon source, signal,
// configuration, switch) is its caption (figure.Caption).
func WritePlots(r *Result, dir string) ([]string, error) {
	out := &figure.Plots{Dir: dir, W: 9 * vg.Inch, H: 4.5 * vg.Inch, Caption: plotCaption(r)}
	p, err := intensityPlot(r)
	if err != nil {
		return nil, err
	}
	if err := out.Save(p, "demo_carbon"); err != nil {
		return nil, err
	}
	if p, err = routedPlot(r); err != nil {
		return nil, err
	}
	if err := out.Save(p, "demo_routed"); err != nil {
		return nil, err
	}
	r.Plots = out.Files
	return out.Files, nil
}

// plotCaption is the provenance of the demo's plots: the carbon source
// whole (file paths included), the signal, the configuration and the switch.
func plotCaption(r *Result) string {
	c := "carbon: " + r.CarbonSource + "; signal: " + r.Signal
	if r.Config != "" {
		c += "; config: " + r.Config + " (policy " + r.Policy + ")"
	}
	if r.Switch != "" {
		c += "; switch: " + r.Switch
	}
	return c
}

func intensityPlot(r *Result) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Carbon intensity of routed requests, policy %s vs nearest region (saving %.1f%%)", r.Policy, r.Totals.SavingPct)
	p.X.Label.Text = "hour (UTC) from " + r.Start.Format("2006-01-02 15:04Z")
	p.Y.Label.Text = "mean gCO2eq/kWh per request"
	var pol, base plotter.XYs
	for i, h := range r.Hours {
		pol = append(pol, plotter.XY{X: float64(i), Y: h.MeanIntensity})
		base = append(base, plotter.XY{X: float64(i), Y: h.BaselineIntensity})
	}
	for k, l := range []struct {
		name string
		pts  plotter.XYs
	}{{"policy " + r.Policy + " (switch)", pol}, {"nearest region (A)", base}} {
		line, pts, err := plotter.NewLinePoints(l.pts)
		if err != nil {
			return nil, fmt.Errorf("plots: %w", err)
		}
		line.Color, pts.Color = plotutil.Color(k), plotutil.Color(k)
		line.Dashes, pts.Shape = plotutil.Dashes(k), plotutil.Shape(k)
		p.Add(line, pts)
		p.Legend.Add(l.name, line, pts)
	}
	p.Add(plotter.NewGrid())
	p.Y.Min = 0
	p.X.Tick.Marker = figure.IntTicks{Max: 24} // whole hours
	p.Y.Tick.Marker = figure.Ticks{}
	ymax := 0.0
	for i := range pol {
		ymax = max(ymax, pol[i].Y, base[i].Y)
	}
	if err := markDrift(p, r, ymax); err != nil {
		return nil, err
	}
	return p, nil
}

// driftLabel is the legend entry of the latency-drift episode's marker.
const driftLabel = "latency-drift episode"

// markDrift draws the latency-drift episode, when the run had one, as a
// dashed vertical line between the hours it ran between (x = AfterHour −
// ½: hour i is drawn at x = i), up to ymax, with a legend entry.
func markDrift(p *plot.Plot, r *Result, ymax float64) error {
	if r.Drift == nil || r.Drift.AfterHour <= 0 {
		return nil
	}
	x := float64(r.Drift.AfterHour) - 0.5
	if ymax <= 0 {
		ymax = 1
	}
	l, err := plotter.NewLine(plotter.XYs{{X: x, Y: 0}, {X: x, Y: ymax}})
	if err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	l.Color = color.Black
	l.Width = vg.Points(1.5)
	l.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
	p.Add(l)
	p.Legend.Add(fmt.Sprintf("%s (between hours %d and %d)", driftLabel, r.Drift.AfterHour-1, r.Drift.AfterHour), l)
	return nil
}

func routedPlot(r *Result) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Requests per region per hour, read back from the switch (region_routed)"
	p.X.Label.Text = "hour (UTC) from " + r.Start.Format("2006-01-02 15:04Z")
	p.Y.Label.Text = "requests"
	// Regions in catalog order, only those that got traffic, each in its
	// catalog colour (the same in every plot).
	var names []string
	var cols []color.Color
	for i, reg := range regions.Catalog() {
		if r.Totals.Routed[reg.ID] > 0 {
			names = append(names, reg.ID)
			cols = append(cols, figure.RegionColor(i))
		}
	}
	values := make([]plotter.Values, len(names))
	for k, name := range names {
		values[k] = make(plotter.Values, len(r.Hours))
		for i, h := range r.Hours {
			values[k][i] = float64(h.Routed[name])
		}
	}
	if err := figure.StackBars(p, vg.Points(14), names, cols, values); err != nil {
		return nil, err
	}
	labels := make([]string, len(r.Hours))
	for i, h := range r.Hours {
		if len(r.Hours) <= 48 || i%6 == 0 {
			labels[i] = h.Hour.Format("15")
		}
	}
	p.NominalX(labels...)
	p.X.Label.Text = "hour (UTC) of " + r.Start.Format("2006-01-02") + " onward"
	p.Y.Tick.Marker = figure.Ticks{}
	n := float64(len(r.Hours))
	p.X.Min, p.X.Max = -0.7, n-0.3
	ymax := 0.0
	for i := range r.Hours {
		sum := 0.0
		for k := range values {
			sum += values[k][i]
		}
		ymax = max(ymax, sum)
	}
	if err := markDrift(p, r, ymax); err != nil {
		return nil, err
	}
	return p, nil
}
