package compiler

import (
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/pkg/regions"
)

// PlanUpdate puts feasibility changes where every mixture of old and new
// contents routes as one of the plans: before the flip when moving to the
// safe policy A, after it when coming back (the controller's crash test
// checks the result on a switch at every write).
func TestPlanUpdateOrdersFeasibilityAroundTheFlip(t *testing.T) {
	cfg := loadConfig(t, "../../examples/mumbai.yaml")
	h0 := time.Date(2022, 1, 10, 0, 0, 0, 0, time.UTC)
	c0 := compile(t, input(t, cfg, regions.PolicyC, snapshot(t, cfg, h0), 1))
	// The safe policy while carbon data is stale: A, with the last known values.
	a1 := compile(t, input(t, cfg, regions.PolicyA, snapshot(t, cfg, h0), 2))
	c2 := compile(t, input(t, cfg, regions.PolicyC, snapshot(t, cfg, h0.Add(2*time.Hour)), 3))
	cases := []struct {
		name                  string
		installed, next       *State
		wantBefore, wantAfter bool
	}{
		{"C to safe A", c0, a1, true, false},
		{"safe A to C", a1, c2, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u, err := PlanUpdate(tc.installed, tc.next)
			if err != nil {
				t.Fatal(err)
			}
			if (len(u.Before) > 0) != tc.wantBefore || (len(u.After) > 0) != tc.wantAfter || !u.Hitless || len(u.Flip) != 1 {
				t.Fatalf("before %d, after %d, flip %d, hitless %v; want before %v, after %v, one flip, hitless",
					len(u.Before), len(u.After), len(u.Flip), u.Hitless, tc.wantBefore, tc.wantAfter)
			}
			// Executed in order, the phases leave exactly the new state.
			got, err := Apply(tc.installed, u.All())
			if err != nil {
				t.Fatal(err)
			}
			if d := Diff(got, tc.next); !d.Empty() {
				t.Fatalf("after the update the switch differs from the new state by %d writes", d.Len())
			}
		})
	}
	// A carbon-only hour touches no non-versioned table: 2R+1 writes.
	c1 := compile(t, input(t, cfg, regions.PolicyC, snapshot(t, cfg, h0.Add(time.Hour)), 2))
	u, err := PlanUpdate(c0, c1)
	if err != nil {
		t.Fatal(err)
	}
	if u.Unchanged || len(u.Before)+len(u.After) != 0 || u.Writes() != 2*len(cfg.Regions)+1 {
		t.Fatalf("carbon hour: %d writes (before %d, after %d), want %d", u.Writes(), len(u.Before), len(u.After), 2*len(cfg.Regions)+1)
	}
}
