package micro

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/p4ctl/p4ctl/pkg/stats"
)

func TestJudgeRate(t *testing.T) {
	s := func(mean, ci float64) stats.Summary { return stats.Summary{N: 5, Mean: mean, CI95: ci} }
	for _, c := range []struct {
		name   string
		lo, hi float64
		ours   stats.Summary
		want   Verdict
		why    string
	}{
		{"inside a range", 0.10, 0.15, s(0.12, 0.05), VerdictReproduced, "inside 10–15 %"},
		{"open range", 0.35, 1, s(0.42, 0.02), VerdictReproduced, "inside > 35 %"},
		{"CI reaches a range", 0.10, 0.15, s(0.155, 0.01), VerdictWithinCI, "our CI reaches 10–15 % (0.50 points above)"},
		{"below a range", 0.10, 0.15, s(0.0639, 0.0187), VerdictNot, "3.61 points below 10–15 %"},
		{"within a few points", 0.3547, 0.3547, s(0.3485, 0.0128), VerdictReproduced, "0.62 points below 35.47 %"},
		{"few points end inclusive", 0.20, 0.20, s(0.23, 0), VerdictReproduced, "3.00 points above 20.00 %"},
		// 1 % against 4.1 % is within 3 points but not within half of it.
		{"within few points, not half", 0.041, 0.041, s(0.01, 0.005), VerdictNot, "3.10 points below 4.10 %"},
		{"within half, CI", 0.041, 0.041, s(0.01, 0.04), VerdictWithinCI, "4.10 % inside our CI (3.10 points below)"},
		{"far", 0.1878, 0.1878, s(0.2418, 0.0102), VerdictNot, "5.40 points above 18.78 %"},
		{"far but wide CI", 0.1878, 0.1878, s(0.2418, 0.06), VerdictWithinCI, "18.78 % inside our CI (5.40 points above)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			v, why := judgeRate(c.lo, c.hi, c.ours, DefaultFewPoints, "%")
			if v != c.want || why != c.why {
				t.Errorf("got %s (%s), want %s (%s)", v, why, c.want, c.why)
			}
		})
	}
	if v, why := judgeRate(0.1171, 0.1171, s(0.0345, 0.0099), DefaultFewPoints, "pp"); v != VerdictNot || why != "8.26 points below 11.71 pp" {
		t.Errorf("Δ: %s (%s)", v, why)
	}
	// A wider tolerance turns a miss into a reproduction.
	if v, _ := judgeRate(0.1878, 0.1878, s(0.2418, 0.0102), 6, "%"); v != VerdictReproduced {
		t.Errorf("few = 6: %s", v)
	}
}

func TestJudgeValue(t *testing.T) {
	if v, why := judgeValue(0.351, stats.Summary{N: 10, Mean: 0.368, CI95: 0.019}, "msgs/RPC"); v != VerdictWithinCI || why != "0.351 msgs/RPC inside our CI" {
		t.Errorf("%s (%s)", v, why)
	}
	if v, why := judgeValue(0.351, stats.Summary{N: 10, Mean: 1}, "msgs/RPC"); v != VerdictNot || why != "0.649 msgs/RPC above" {
		t.Errorf("%s (%s)", v, why)
	}
}

func TestE2Monotone(t *testing.T) {
	row := func(m int, in string, d float64) E2Row {
		return E2Row{CoresPerHost: m, Ingress: in, Delta: stats.Summary{Mean: d}}
	}
	falls := []E2Row{row(1, "random", 0.4), row(1, "jsw", 0.04), row(2, "random", 0.2), row(2, "jsw", 0.04), row(4, "random", 0.1), row(4, "jsw", 0.01)}
	if !e2Monotone(falls) {
		t.Error("falling (and flat) Δ judged not monotone")
	}
	rises := append(falls, row(8, "jsw", 0.02))
	if e2Monotone(rises) {
		t.Error("Δ rising behind JSW judged monotone")
	}
}

// TestSeedFiguresGolden: the study scenario's seed-figure table at quick
// size (exact values in testdata), every figure judged, the counts adding
// up, and the figures a quick run cannot hold (E2's m = 8 row, the TTL's
// 12-cell grid) absent or said to be off the study's grid.
func TestSeedFiguresGolden(t *testing.T) {
	s, _ := LookupScenario(ScenarioStudy)
	res, err := SeedFigures(context.Background(), s.Config, 0, Options{Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.FewPoints != DefaultFewPoints {
		t.Errorf("few points %g, want the default %g", res.FewPoints, DefaultFewPoints)
	}
	var buf bytes.Buffer
	n := 0
	seen := map[string]bool{}
	for _, f := range res.Figures {
		fmt.Fprintf(&buf, "%s | %s | %s | %s | %s\n", f.Figure, f.Study, f.Ours, f.Verdict, f.Why)
		if f.Verdict != VerdictReproduced && f.Verdict != VerdictWithinCI && f.Verdict != VerdictNot {
			t.Errorf("%s: verdict %q", f.Figure, f.Verdict)
		}
		if f.Rate && (f.Value == nil || f.Lo <= 0) {
			t.Errorf("%s: rate %v, value %v, lo %g", f.Figure, f.Rate, f.Value, f.Lo)
		}
		seen[f.Figure] = true
	}
	for _, v := range res.Count {
		n += v
	}
	if n != len(res.Figures) {
		t.Errorf("counts add up to %d of %d figures", n, len(res.Figures))
	}
	for _, want := range []string{"E1 random", "E1 JBSQ(n*)", "E3 D/S = 4 random+fwd", "E3 early binding fails first", "T40b static hash", "gateway cliff, 1 core, 200–500 ns", "TTL ablation, jbsq/p2c cells worse without a TTL"} {
		if !seen[want] {
			t.Errorf("no figure %q", want)
		}
	}
	if seen["E2 Δ at m = 8, random"] {
		t.Error("quick E2 has no m = 8 row, yet the figure is there")
	}
	for _, f := range res.Figures {
		if strings.HasPrefix(f.Figure, "TTL") && (f.Verdict != VerdictNot || !strings.Contains(f.Why, "not the study's grid")) {
			t.Errorf("%s on a quick grid: %s (%s)", f.Figure, f.Verdict, f.Why)
		}
	}
	studyGolden(t, "study_figures.golden", buf.Bytes())
	var text bytes.Buffer
	if err := res.WriteText(&text); err != nil || !strings.Contains(text.String(), "within 3 points of its value") {
		t.Errorf("text (%v) does not state the tolerance:\n%s", err, text.String())
	}
}

// TestSeedFiguresRefusesTolerance: a tolerance outside (0, 100) points is
// an error, not a silent default (0 means the default).
func TestSeedFiguresRefusesTolerance(t *testing.T) {
	s, _ := LookupScenario(ScenarioStudy)
	for _, few := range []float64{100, 1e9} {
		if _, err := SeedFigures(context.Background(), s.Config, few, Options{Quick: true}); err == nil {
			t.Errorf("few = %g accepted", few)
		}
	}
}
