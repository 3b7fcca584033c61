package carbon

import (
	"context"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot"

	"github.com/p4ctl/p4ctl/pkg/figure"
	"github.com/p4ctl/p4ctl/pkg/regions"
)

func smallResult(t *testing.T) *Result {
	t.Helper()
	src, jan := synthetic(t)
	res, err := Run(context.Background(), Config{Source: src, Period: jan, Runs: 3, Requests: 50, MixedRequests: 100})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// What the saving plot encodes (issue 15 item 20): a point is hollow
// exactly when its row violates the SLA (B at 300 ms does: it ignores
// SLAs), and no two policies are drawn at the same spot, so C+ does not
// hide under C+warm.
func TestSavingSeries(t *testing.T) {
	r := smallResult(t)
	for _, pool := range r.Pools {
		series, slas, _ := savingSeriesOf(r, pool)
		at := map[[2]float64]string{}
		sawViolation := false
		for _, s := range series {
			for i, pt := range s.Points {
				row, ok := r.Find(pool, s.Policy, slas[i])
				if !ok {
					t.Fatalf("no row %s %s", s.Policy, slas[i])
				}
				if pt.Violates != (row.ViolationPct > 0) {
					t.Errorf("pool %d %s %s: hollow %v, violation %.1f %%", pool, s.Policy, slas[i], pt.Violates, row.ViolationPct)
				}
				sawViolation = sawViolation || pt.Violates
				key := [2]float64{pt.X, pt.Y}
				if other, dup := at[key]; dup {
					t.Errorf("pool %d: %s and %s drawn at the same point %v", pool, other, s.Policy, key)
				}
				at[key] = s.Policy
			}
		}
		if b, _ := r.Find(pool, "B", slas[0]); b.ViolationPct > 0 && !series[0].Points[0].Violates {
			t.Errorf("pool %d: B at %s ms violates but is drawn filled", pool, slas[0])
		}
		if !sawViolation {
			t.Errorf("pool %d: no point marked as violating", pool)
		}
	}
}

// Every region has its catalog colour in every routing-share plot
// (issue 15 item 21: Singapore changed colour between 5 and 12 regions).
func TestShareColoursKeyedByCatalog(t *testing.T) {
	r := smallResult(t)
	colour := map[string]any{}
	for _, pool := range r.Pools {
		for _, s := range shareSeriesOf(r, pool) {
			if s.Color != figure.RegionColor(int(s.Region)) {
				t.Errorf("pool %d: %s drawn in %v, not its catalog colour", pool, s.City, s.Color)
			}
			if c, ok := colour[s.City]; ok && c != s.Color {
				t.Errorf("%s changes colour between pools", s.City)
			}
			colour[s.City] = s.Color
		}
	}
	if len(colour) != regions.Pool12.Len() { // the experiment's largest pool
		t.Errorf("%d regions seen", len(colour))
	}
}

// The heatmap has a colour bar over the data's range and dated x ticks
// (issue 15 item 22).
func TestHeatmapScaleAndDates(t *testing.T) {
	r := smallResult(t)
	p, bar := heatmap(r)
	if bar == nil {
		t.Fatal("no colour bar")
	}
	lo, hi := 1e9, -1e9
	for _, z := range r.Zones {
		lo, hi = min(lo, z.Min), max(hi, z.Max)
	}
	if bar.Y.Min != lo || bar.Y.Max != hi || !strings.Contains(bar.Y.Label.Text, "gCO2eq/kWh") {
		t.Errorf("colour bar %v..%v %q, data %v..%v", bar.Y.Min, bar.Y.Max, bar.Y.Label.Text, lo, hi)
	}
	var labels []string
	for _, tk := range p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if len(labels) < 3 || labels[0] != r.Period.From.Format("Jan 2") {
		t.Errorf("x tick labels %v, want dates from %s", labels, r.Period.From.Format("Jan 2"))
	}
	// A tick labelled with a date sits at that date's midnight.
	for _, tk := range p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max) {
		if tk.Label == "" {
			continue
		}
		at := r.Period.From.Add(time.Duration(tk.Value) * time.Hour)
		if at.Format("Jan 2") != tk.Label || at.Hour() != 0 {
			t.Errorf("tick %q at hour %v = %s", tk.Label, tk.Value, at)
		}
	}
	var _ plot.Ticker = DayTicks{}
}
