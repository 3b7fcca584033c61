package micro

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// E1's figure: a linear axis from 0 (box heights compare) under a subtitle
// naming the scenario it ran (issue 15 item 22).
func TestE1PlotAxisAndScenario(t *testing.T) {
	r, err := E1(context.Background(), Scenario(), nil, tiny())
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.plot()
	if err != nil {
		t.Fatal(err)
	}
	if p.Y.Min != 0 {
		t.Errorf("y axis starts at %v, want 0", p.Y.Min)
	}
	sc := r.Scenario
	for _, want := range []string{fmt.Sprintf("%d hosts × %d cores", sc.Hosts, sc.CoresPerHost), fmt.Sprintf("ρ = %g", sc.Load),
		fmt.Sprintf("SLO %g µs", sc.SLO), fmt.Sprintf("%d seeds", r.Options.Seeds)} {
		if !strings.Contains(p.Title.Text, want) {
			t.Errorf("title %q lacks %q", p.Title.Text, want)
		}
	}
}
