package micro

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/p4ctl/p4ctl/research/sim/verdict"
)

// TestE2Decreasing: a pair counts only when Δ at m is significantly larger
// than at 2m over the seeds.
func TestE2Decreasing(t *testing.T) {
	row := func(m int, in string, d ...float64) E2Row {
		return E2Row{CoresPerHost: m, Ingress: in, DeltaPerSeed: d}
	}
	falls := []E2Row{
		row(1, "random", 0.40, 0.41, 0.42, 0.43, 0.44), row(2, "random", 0.20, 0.21, 0.22, 0.23, 0.24),
		row(4, "random", 0.10, 0.11, 0.12, 0.13, 0.14),
	}
	if k, n, _ := e2Decreasing(falls); k != 2 || n != 2 {
		t.Errorf("falling Δ: %d of %d", k, n)
	}
	flat := append(falls, row(8, "random", 0.10, 0.11, 0.12, 0.13, 0.14))
	if k, n, why := e2Decreasing(flat); k != 2 || n != 3 || !strings.Contains(why, "random m = 4 → 8") {
		t.Errorf("a flat step: %d of %d (%s)", k, n, why)
	}
}

// TestSeedsNeverTunedOnScored: JBSQ(n*) is chosen on seeds disjoint from
// those it is scored on, in every experiment that tunes it; this fails if
// the two ever overlap.
func TestSeedsNeverTunedOnScored(t *testing.T) {
	for _, c := range []struct {
		a, b SeedRange
		want bool
	}{
		{SeedRange{1, 10}, SeedRange{11, 10}, false},
		{SeedRange{1, 10}, SeedRange{10, 1}, true},
		{SeedRange{5, 1}, SeedRange{1, 10}, true},
		{SeedRange{1, 0}, SeedRange{1, 10}, false},
	} {
		if got := c.a.Overlaps(c.b); got != c.want || c.b.Overlaps(c.a) != c.want {
			t.Errorf("%s overlaps %s: %v, want %v", c.a, c.b, got, c.want)
		}
	}
	ctx := context.Background()
	sc, _ := LookupScenario(ScenarioStudy)
	o := Options{Quick: true, Requests: 5000, Seeds: 1000} // the most seeds Options allows
	tuned := tuningOptions(o.withDefaults(1, 1, 1, 1))
	if seedsOf(tuned).Overlaps(seedsOf(o.withDefaults(1, 1, 1, 1))) {
		t.Fatalf("tuning seeds %s overlap the scored %s", seedsOf(tuned), seedsOf(o.withDefaults(1, 1, 1, 1)))
	}
	small := Options{Quick: true, Requests: 5000}
	e1, err := E1(ctx, sc.Config, nil, small)
	if err != nil {
		t.Fatal(err)
	}
	e3, err := E3(ctx, sc.Config, small)
	if err != nil {
		t.Fatal(err)
	}
	t40b, err := T40b(ctx, sc.Config, small)
	if err != nil {
		t.Fatal(err)
	}
	type tunedRun struct {
		tu  *Tuned
		ran Options // the experiment's scored runs
	}
	all := []tunedRun{{e1.Tuned, e1.Options}, {t40b.Tuned, t40b.Options}}
	for i := range e3.Tuned {
		all = append(all, tunedRun{&e3.Tuned[i].Tuned, e3.Options})
	}
	for i, x := range all {
		if x.tu == nil {
			t.Fatalf("tuned bound %d missing", i)
		}
		if x.tu.TunedOn.Overlaps(x.tu.ScoredOn) || x.tu.TunedOn.Count != x.tu.ScoredOn.Count {
			t.Errorf("bound %d: tuned on %s, scored on %s", i, x.tu.TunedOn, x.tu.ScoredOn)
		}
		if x.tu.ScoredOn != seedsOf(x.ran) || x.tu.TunedOn.Overlaps(seedsOf(x.ran)) {
			t.Errorf("bound %d: tuned on %s, scored on %s, the experiment ran %s", i, x.tu.TunedOn, x.tu.ScoredOn, seedsOf(x.ran))
		}
	}
	// And the scored JBSQ(n*) row is the tuned bound, not re-tuned.
	if last := e1.Cells[len(e1.Cells)-1]; last.Bound != e1.Tuned.Bound {
		t.Errorf("E1's last row has bound %d, n* = %d", last.Bound, e1.Tuned.Bound)
	}
}

// TestSeedFiguresGolden: the study scenario's seed-figure table at quick
// size (exact values in testdata), every figure judged, no fitted values,
// the counts adding up, and the figures a quick run cannot hold (E2's
// m = 8 rows) absent.
func TestSeedFiguresGolden(t *testing.T) {
	s, _ := LookupScenario(ScenarioStudy)
	if len(s.Fitted) != 0 {
		t.Fatalf("the study scenario lists fitted values: %+v", s.Fitted)
	}
	res, err := SeedFigures(context.Background(), s.Config, s.Fitted, Options{Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	checkPlots(t, res, res.Scenario, res.Options, "seed_figures")
	var buf bytes.Buffer
	n := 0
	seen := map[string]bool{}
	for _, f := range res.Figures {
		fmt.Fprintf(&buf, "%s | %s | %s | %s | %s | %s\n", f.Figure, f.Source, f.Ours, f.RuleText, f.Verdict, f.Why)
		switch f.Verdict {
		case verdict.Reproduced, verdict.NotReproduced, verdict.Inconclusive:
		default:
			t.Errorf("%s: verdict %q in a scenario with nothing fitted", f.Figure, f.Verdict)
		}
		if f.Section == "" || f.RuleText == "" {
			t.Errorf("%s: no section or rule", f.Figure)
		}
		seen[f.Figure] = true
	}
	for _, v := range res.Count {
		n += v
	}
	if n != len(res.Figures) {
		t.Errorf("counts add up to %d of %d figures", n, len(res.Figures))
	}
	for _, want := range []string{"E1 random", "E1 JBSQ(n*)", "E1 forwarding's share of random's gap to late binding",
		"E1 forwarding's share of JSW's gap to late binding", "E2 Δ m = 1, random", "E2 Δ m = 16, jsw", "E2 Δ falls with m at every step",
		"E3 D/S = 4 random+fwd", "E3 early binding + movement fails first", "T40b static hash", "T40b request-level credits, extra msgs/RPC",
		"gateway cliff, 1 core, 200–500 ns", "TTL ablation, jbsq/p2c cells worse without a TTL"} {
		if !seen[want] {
			t.Errorf("no figure %q", want)
		}
	}
	if seen["E2 Δ m = 8, random"] {
		t.Error("quick E2 has no m = 8 row, yet the figure is there")
	}
	studyGolden(t, "study_figures.golden", buf.Bytes())
	var text bytes.Buffer
	if err := res.WriteText(&text); err != nil || !strings.Contains(text.String(), "values chosen by looking at results: none") {
		t.Errorf("text (%v) does not say nothing was fitted:\n%s", err, text.String())
	}
	js, err := json.Marshal(res)
	if err != nil || !strings.Contains(string(js), `"fitted":[]`) || !strings.Contains(string(js), `"ci95"`) {
		t.Errorf("JSON (%v) lacks the empty fitted list or the CIs: %.300s", err, js)
	}
}

// TestSeedFiguresMarkFitted: in the exploration scenario every figure a
// fitted value affects is marked fitted and not counted as reproduced.
func TestSeedFiguresMarkFitted(t *testing.T) {
	s, _ := LookupScenario(ScenarioStudyBurst)
	if len(s.Fitted) == 0 {
		t.Fatal("the exploration lists no fitted values")
	}
	figs := []string{"E1 random", "E3 D/S = 4 random", "gateway cliff, 1 core, 200–500 ns"}
	for _, f := range figs {
		if got := dependsOn(f, s.Fitted); len(got) == 0 || got[0] != "burst intensity" {
			t.Errorf("%s depends on %v", f, got)
		}
	}
	if got := dependsOn("E3 D/S = 4 random", s.Fitted); len(got) != 3 {
		t.Errorf("E3 depends on %v, want bursts, hops and the SLO rule", got)
	}
	if got := dependsOn("E3 x", nil); len(got) != 0 {
		t.Errorf("nothing fitted, yet %v", got)
	}
}
