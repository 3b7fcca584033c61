// Package routecheck tells misrouted requests from well-routed ones while
// a switch's plans change under traffic. It is the checker of the
// controller's hitless-update tests (TestNoMisroutesDuring1000Updates) and
// of the soak (internal/testing/soak).
//
// A request is routed well when the region the switch chose is what one of
// the plans the switch may have held while the request was in flight
// decides for its site and SLA (regions.Decide, through Decider). The
// switch may hold the plan of the last update that completed, any plan an
// update began towards since (a hitless update leaves the switch routing as
// the old or the new plan at every write; a crash mid-update leaves it so
// until the next one), and — for a request in flight across updates —
// every plan an update began towards or completed while it was in flight:
//
//	c := routecheck.New()
//	c.Begin(p1)           // before an update towards p1 writes anything
//	c.End(p1)             // after it completed: the switch holds exactly p1
//	m := c.Mark()         // before sending a request
//	v := c.Check(m, site, sla, region) // after it left the switch
package routecheck

import (
	"fmt"
	"slices"
	"sync"

	"github.com/p4ctl/p4ctl/pkg/regions"
)

// Decider is a plan: the region it routes a request of site with SLA
// slaMs to (controller.Plan).
type Decider interface {
	Decide(site int, slaMs float64) regions.Decision
}

// maxEvents bounds the update log, and with it the plans the checker keeps
// alive: a Mark older than that many updates is reported as too old (a
// request does not stay in a switch for hundreds of updates).
const maxEvents = 256

// event is an update beginning (end false) or completing towards plan.
type event struct {
	plan Decider
	end  bool
}

// Checker follows the plans one switch may hold. It is safe for
// concurrent use. The zero value is not usable: call New.
type Checker struct {
	mu     sync.Mutex
	events []event // newest last; events[i] has sequence number first+i+1
	first  uint64  // sequence number of the event before events[0]
	last   Decider // plan of the last End before events[0] (nil: none)
	memo   map[Decider]map[key]regions.Index
}

type key struct {
	site int
	sla  uint16
}

// New returns a checker for a switch that holds no plan yet (an empty
// switch routes nothing, so any routed request is a misroute until an
// update begins).
func New() *Checker {
	return &Checker{memo: map[Decider]map[key]regions.Index{}}
}

// Begin records that an update towards p starts: from now on the switch
// may route as p.
func (c *Checker) Begin(p Decider) { c.add(event{plan: p}) }

// End records that an update towards p completed: the switch holds exactly
// p (until the next update begins).
func (c *Checker) End(p Decider) { c.add(event{plan: p, end: true}) }

func (c *Checker) add(e event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events = append(c.events, e)
	if len(c.events) > 2*maxEvents {
		drop := len(c.events) - maxEvents
		for _, old := range c.events[:drop] {
			if old.end {
				c.last = old.plan
			}
		}
		c.events = append(c.events[:0], c.events[drop:]...)
		clear(c.events[len(c.events):cap(c.events)]) // release the dropped plans
		c.first += uint64(drop)
		live := map[Decider]bool{c.last: true}
		for _, e := range c.events {
			live[e.plan] = true
		}
		for p := range c.memo {
			if !live[p] {
				delete(c.memo, p)
			}
		}
	}
}

// Mark is a point in the checker's update log: taken before a request is
// sent, it says which plans the switch may have held then.
type Mark struct{ seq uint64 }

// Mark returns the current point in the update log.
func (c *Checker) Mark() Mark {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Mark{seq: c.first + uint64(len(c.events))}
}

// Verdict is the check of one request.
type Verdict struct {
	// OK: the region is what an allowed plan decides.
	OK bool
	// Plans is how many plans were allowed (more than one: the request
	// overlapped an update).
	Plans int
	// Want lists the allowed plans' regions (when !OK).
	Want []regions.Index
	// Err is set when m is older than the log (the request cannot be
	// checked; it counts as not OK).
	Err error
}

// Check judges a request of site with SLA slaMs, sent at m, that the switch
// routed to region: allowed are the plans the switch may have held at m
// (the last completed update's and those begun since) and every plan an
// update began towards or completed after m.
func (c *Checker) Check(m Mark, site int, slaMs uint16, region regions.Index) Verdict {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m.seq < c.first {
		return Verdict{Err: fmt.Errorf("routecheck: mark %d is older than the update log (from %d)", m.seq, c.first)}
	}
	// The last End at or before m, then everything after it.
	from, last := 0, c.last
	for i := int(m.seq-c.first) - 1; i >= 0; i-- {
		if c.events[i].end {
			from, last = i+1, c.events[i].plan
			break
		}
	}
	var v Verdict
	var tried []Decider
	try := func(p Decider) bool {
		if p == nil || slices.Contains(tried, p) {
			return false
		}
		tried = append(tried, p)
		v.Plans++
		got := c.decide(p, site, slaMs)
		if got == region {
			return true
		}
		v.Want = append(v.Want, got)
		return false
	}
	if try(last) {
		v.OK = true
	}
	for _, e := range c.events[from:] {
		if try(e.plan) {
			v.OK = true
		}
	}
	if v.OK {
		v.Want = nil
	}
	return v
}

func (c *Checker) decide(p Decider, site int, slaMs uint16) regions.Index {
	m := c.memo[p]
	if m == nil {
		m = map[key]regions.Index{}
		c.memo[p] = m
	}
	k := key{site, slaMs}
	r, ok := m[k]
	if !ok {
		r = p.Decide(site, float64(slaMs)).Region
		m[k] = r
	}
	return r
}
