package routecheck

import (
	"testing"

	"github.com/p4ctl/p4ctl/pkg/regions"
)

// plan routes every request of site 0 to one region and site 1 to region 9.
type plan struct{ r regions.Index }

func (p *plan) Decide(site int, _ float64) regions.Decision {
	if site == 1 {
		return regions.Decision{Region: 9}
	}
	return regions.Decision{Region: p.r}
}

func TestAllowedPlans(t *testing.T) {
	a, b, c := &plan{1}, &plan{2}, &plan{3}
	ck := New()
	check := func(m Mark, r regions.Index, ok bool, plans int) {
		t.Helper()
		v := ck.Check(m, 0, 500, r)
		if v.OK != ok || v.Plans != plans || v.Err != nil {
			t.Fatalf("region %d: %+v, want ok %v with %d plans", r, v, ok, plans)
		}
	}
	// An empty switch routes nothing: any routed request is a misroute.
	check(ck.Mark(), 1, false, 0)
	ck.Begin(a)
	check(ck.Mark(), 1, true, 1)
	check(ck.Mark(), 2, false, 1)
	ck.End(a)
	m := ck.Mark()
	ck.Begin(b)
	// Sent while the switch held a, answered during the update to b.
	check(m, 1, true, 2)
	check(m, 2, true, 2)
	ck.End(b)
	// Sent during the update: still a or b; sent after it: b only.
	check(m, 1, true, 2)
	check(ck.Mark(), 1, false, 1)
	check(ck.Mark(), 2, true, 1)
	// In flight across a whole update b → c, then c → a: any of them.
	m = ck.Mark()
	ck.Begin(c)
	ck.End(c)
	ck.Begin(a)
	ck.End(a)
	check(m, 3, true, 3)
	check(m, 2, true, 3)
	check(ck.Mark(), 3, false, 1)
	if v := ck.Check(ck.Mark(), 1, 500, 9); !v.OK {
		t.Fatalf("site 1: %+v", v)
	}
	if v := ck.Check(ck.Mark(), 0, 500, 7); v.OK || len(v.Want) != 1 || v.Want[0] != 1 {
		t.Fatalf("misroute: %+v, want region 1 listed", v)
	}
}

// A crash mid-update leaves the old and the new plan allowed until an
// update completes; the log stays bounded, and a mark older than it is
// reported, not judged.
func TestCrashAndLogBound(t *testing.T) {
	a, b, c := &plan{1}, &plan{2}, &plan{3}
	ck := New()
	ck.Begin(a)
	ck.End(a)
	ck.Begin(b) // the controller dies here
	ck.Begin(c) // a new one plans another hour
	m := ck.Mark()
	for _, r := range []regions.Index{1, 2, 3} {
		if v := ck.Check(m, 0, 300, r); !v.OK || v.Plans != 3 {
			t.Fatalf("region %d after a crash: %+v", r, v)
		}
	}
	ck.End(c)
	old := ck.Mark()
	for range 3 * maxEvents {
		ck.Begin(a)
		ck.End(a)
	}
	if len(ck.events) > 2*maxEvents {
		t.Fatalf("log holds %d events", len(ck.events))
	}
	if v := ck.Check(old, 0, 300, 1); v.OK || v.Err == nil {
		t.Fatalf("a mark older than the log: %+v", v)
	}
	if v := ck.Check(ck.Mark(), 0, 300, 1); !v.OK || v.Plans != 1 {
		t.Fatalf("after trimming: %+v", v)
	}
}
