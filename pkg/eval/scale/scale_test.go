package scale

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// The shared ranking keeps an hourly update at 2R+1 writes whatever the
// number of sites; D ranks per site and writes 2R per site more; entries
// grow with N and the v1model program's overflow is found where it is.
func TestMeasureShapes(t *testing.T) {
	r, err := Measure(context.Background(), Options{Sites: []int{10, 400}, Regions: []int{5, 12}, Policies: []string{"A", "C", "D"}, Hours: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Points) != 2*2*3 {
		t.Fatalf("%d points", len(r.Points))
	}
	v1 := Capacities()[0].Target
	for _, p := range r.Points {
		bound := 2*p.Regions + 1
		switch p.Policy {
		case "A":
			if p.WritesMax != 0 {
				t.Errorf("A (ranking by index) writes %d per hour", p.WritesMax)
			}
		case "C":
			if p.WritesMax > bound || p.ChangedHours == 0 {
				t.Errorf("C at N=%d R=%d: %d writes at most over %d changed hours, want ≤ %d", p.Sites, p.Regions, p.WritesMax, p.ChangedHours, bound)
			}
		case "D":
			if p.WritesMax <= bound && p.Sites > 10 {
				t.Errorf("D at N=%d writes only %d", p.Sites, p.WritesMax)
			}
		}
		if p.Policy == "C" && p.Sites == 400 && p.Regions == 12 {
			if n := p.ByTable[pipeline.TableSLAFeasibility]; n <= 4096 || len(p.Overflows[v1]) == 0 {
				t.Errorf("400 sites × 12 regions under C: %d feasibility entries, overflows %v", n, p.Overflows[v1])
			}
		}
		if p.CompileMs <= 0 || p.AllocsPerCompile <= 0 {
			t.Errorf("no timing: %+v", p)
		}
	}
	files, err := WritePlots(r, filepath.Join(t.TempDir(), "plots"))
	if err != nil || len(files) != 6 {
		t.Fatalf("plots %v: %v", files, err)
	}
}
