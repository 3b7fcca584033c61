package micro

import (
	"context"
	"math"
	"testing"
)

func TestStudyTargetOff(t *testing.T) {
	rng, pt := StudyTarget{Lo: 0.10, Hi: 0.15}, StudyTarget{Lo: 0.1878, Hi: 0.1878}
	for _, c := range []struct {
		t    StudyTarget
		v    float64
		want float64
	}{
		{rng, 0.12, 0}, {rng, 0.10, 0}, {rng, 0.15, 0}, {rng, 0.05, 5}, {rng, 0.20, 5},
		{pt, 0.1878, 0}, {pt, 0.0776, 11.02}, {pt, 0.2504, 6.26},
	} {
		if got := c.t.Off(c.v); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%+v.Off(%g) = %g, want %g", c.t, c.v, got, c.want)
		}
	}
}

// TestSearchQuick: every row repeats what E3 alone prints for its
// combination at D/S = 4, combinations that give the same point are run
// once, rows come closest first, and OFF is the largest distance.
func TestSearchQuick(t *testing.T) {
	s, _ := LookupScenario(ScenarioStudy)
	o := Options{Quick: true}
	res, err := Search(context.Background(), s.Config, SearchGrid{}, o)
	if err != nil {
		t.Fatal(err)
	}
	// Quick grid: σ 1 × {service, delay} × {fixed, round-trip} × {fixed};
	// on the service axis round-trip is fixed (D does not move).
	if len(res.Tails) != 1 || len(res.Rows) != 3 {
		t.Fatalf("%d tails, %d rows", len(res.Tails), len(res.Rows))
	}
	same := 0
	for i, r := range res.Rows {
		same += len(r.Same)
		if i > 0 && r.Off < res.Rows[i-1].Off {
			t.Errorf("row %d (off %.2f) after one off %.2f", i, r.Off, res.Rows[i-1].Off)
		}
		want := max(targetE3Random.Off(r.Random.Violation.Mean), targetE3Forward.Off(r.Forward.Violation.Mean), targetE3JBSQ.Off(r.JBSQ.Violation.Mean))
		if r.E3Off != want || r.Off != max(want, res.Tails[0].Off) {
			t.Errorf("%s/%s: off %.2f / %.2f, want %.2f", r.Axis, r.SLO, r.E3Off, r.Off, want)
		}
		c := s.Config
		c.Sweep.E3Axis, c.Sweep.E3SLO, c.Sweep.E3Burst, c.Sweep.E3Points = r.Axis, r.SLO, r.Burst, []float64{4}
		e3, err := E3(context.Background(), c, 0, o)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range e3.Points {
			if p.Label == "random" && p.Cell.Violation != r.Random.Violation {
				t.Errorf("%s/%s: search random %+v, e3 %+v", r.Axis, r.SLO, r.Random.Violation, p.Cell.Violation)
			}
			if p.Label == "jbsq tuned n" && p.Cell.Bound != r.JBSQ.Bound {
				t.Errorf("%s/%s: search n* %d, e3 %d", r.Axis, r.SLO, r.JBSQ.Bound, p.Cell.Bound)
			}
		}
	}
	if same != 1 {
		t.Errorf("%d combinations folded into others, want 1 (service/round-trip)", same)
	}
	if tl := res.Tails[0]; tl.E2M8 != nil || tl.Random < 0.2 {
		t.Errorf("quick tail %+v (E2's quick grid has no m = 8)", tl)
	}
	checkPlots(t, res, "search_e3")
	if _, err := Search(context.Background(), s.Config, SearchGrid{Sigmas: []float64{-1}}, o); err == nil {
		t.Error("σ = −1 accepted")
	}
}

func TestSearchBurstFactors(t *testing.T) {
	s, _ := LookupScenario(ScenarioStudy)
	o := Options{Quick: true, Seeds: 1, Requests: 5000}
	grid := SearchGrid{BurstFactors: []float64{1.2, 1.3}, Axes: []E3Axis{AxisService}, SLOs: []E3SLO{SLOFixed}}
	res, err := Search(context.Background(), s.Config, grid, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tails) != 2 || len(res.Rows) != 2 || res.Tails[0].BurstFactor != 1.2 || res.Tails[1].BurstFactor != 1.3 {
		t.Fatalf("tails %+v, %d rows", res.Tails, len(res.Rows))
	}
	// More intense bursts: more violations behind random, at E1 and at E3.
	if !(res.Tails[1].Random > res.Tails[0].Random) {
		t.Errorf("E1 random %.3f at ×1.3, %.3f at ×1.2", res.Tails[1].Random, res.Tails[0].Random)
	}
	for _, bad := range []SearchGrid{{BurstFactors: []float64{0.9}}, {BurstFactors: []float64{12}}} {
		if _, err := Search(context.Background(), s.Config, bad, o); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if _, err := Search(context.Background(), Scenario(), SearchGrid{BurstFactors: []float64{1.2}}, o); err == nil {
		t.Error("burst factors accepted for a scenario without bursts")
	}
}

// TestSearchMarksScenario: the row of the searched scenario's own E3 rules
// is marked, and only that one, for each scenario.
func TestSearchMarksScenario(t *testing.T) {
	grid := SearchGrid{Axes: []E3Axis{AxisDelay}, SLOs: []E3SLO{SLORoundTrip, SLORoundTripHop}, Bursts: []E3Burst{BurstFixed}}
	for name, want := range map[string]E3SLO{ScenarioStudy: SLORoundTripHop, ScenarioPooled: SLORoundTrip} {
		s, _ := LookupScenario(name)
		res, err := Search(context.Background(), s.Config, grid, Options{Quick: true, Seeds: 1, Requests: 5000})
		if err != nil {
			t.Fatal(err)
		}
		marked := 0
		for _, r := range res.Rows {
			if r.Scenario {
				marked++
				if r.SLO != want {
					t.Errorf("%s: marked %s/%s, want the scenario's %s", name, r.Axis, r.SLO, want)
				}
			}
		}
		if marked != 1 {
			t.Errorf("%s: %d rows marked as the scenario's, want 1", name, marked)
		}
	}
}
