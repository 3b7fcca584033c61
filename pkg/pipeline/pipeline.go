// Package pipeline is the one documented home of every name, width and code of
// the p4ctl P4 program (p4src/): tables, match fields, actions, action
// parameters, registers, counters, and the numeric codes the controller and the
// data plane agree on (policies, on-full outcomes, event counter indices).
//
// It is the contract between the P4 program (p4src/), its Go model
// (pkg/dataplane), the compiler that fills its tables (pkg/compiler) and the
// tools that read its state (p4ctl get). docs/PIPELINE.md explains each item:
// who writes it, when, and what the data plane does with it. When the program
// changes, this file, docs/PIPELINE.md and the p4c outputs in p4src/build/
// change in the same commit; a test compares Schema with p4c's P4Info.
package pipeline

import "strconv"

// Sizes of the program's arrays and tables.
const (
	MaxRegions = 32   // width of the feasible-region bitmap; region ids 0..31
	MaxServers = 1024 // per-server register and counter arrays; server ids 0..1023
	MaxSites   = 1024 // client_site table size
	NumEvents  = 16   // size of each dispatch_events counter

	// Candidates is how many servers a pass may try: the aligned group of 4
	// around a hash, one per slot array, so pools of <= 4 servers are
	// scanned exhaustively (exact JBSQ) and larger pools are sampled.
	Candidates = 4
	// SlotCells is the size of each server_credit_<slot> array.
	SlotCells = MaxServers / Candidates
)

// Bit widths of fields and parameters.
const (
	WidthPort      = 9
	WidthMAC       = 48
	WidthIPv4      = 32
	WidthSite      = 16
	WidthSLA       = 16
	WidthEpoch     = 8
	WidthRegion    = 8
	WidthBitmap    = MaxRegions
	WidthServer    = 16
	WidthExecClass = 8
	WidthPolicy    = 8
	WidthBound     = 16
	WidthHolds     = 8
	WidthOnFull    = 8
	WidthCapacity  = 32
	WidthMicros    = 32 // TTLs and exec-class costs, in microseconds
	WidthFlag      = 1
	WidthTimestamp = 48 // v1model's ingress timestamp, µs
	WidthTick      = 8  // set_pool.credit_tick
	WidthCredit    = 64 // server_credit_<slot> cells: last_tick (32) ++ outstanding (32)
	WidthWork      = 32 // server_work_us cells
	WidthRegionCnt = 32 // region_outstanding cells
)

// Policy is the dispatch policy code of a server pool (set_pool.policy).
type Policy uint8

// Dispatch policies. See docs/PIPELINE.md "Server dispatch".
const (
	PolicyRandom  Policy = 0 // bind to candidate 0 (hash): the baseline
	PolicyP2C     Policy = 1 // the less-outstanding of candidates 0 and 1
	PolicyP2CWork Policy = 2 // the smaller expected remaining work of candidates 0 and 1 (PathFinder)
	PolicyJBSQ    Policy = 3 // an idle candidate, else the least outstanding of the group, only below the bound n
	PolicyJIQ     Policy = 4 // an idle candidate (JBSQ with n = 1)

	// PolicyCodes is one more than the largest policy code.
	PolicyCodes = 5
)

// String returns the policy's CLI name.
func (p Policy) String() string {
	switch p {
	case PolicyRandom:
		return "random"
	case PolicyP2C:
		return "p2c"
	case PolicyP2CWork:
		return "p2c-work"
	case PolicyJBSQ:
		return "jbsq"
	case PolicyJIQ:
		return "jiq"
	}
	return "policy(" + strconv.Itoa(int(p)) + ")"
}

// ParsePolicy maps a CLI name to a Policy.
func ParsePolicy(s string) (Policy, bool) {
	for p := range Policy(PolicyCodes) {
		if p.String() == s {
			return p, true
		}
	}
	return 0, false
}

// OnFull is what a pool does with a request still unbound after max_holds.
type OnFull uint8

// On-full outcomes.
const (
	OnFullNack  OnFull = 0 // turn the request into a NACK back to the client
	OnFullForce OnFull = 1 // bind to the least-loaded candidate anyway (forced round, flag forced)
)

// NextHop kinds selected by region_next_hop.
const (
	NextHopNone   = 0 // table miss: region unreachable
	NextHopLocal  = 1 // dispatch_local: bind to a server of this region's pool
	NextHopRemote = 2 // forward_remote: rewrite toward the region's gateway
)

// Event is an index into the dispatch_events counters.
type Event uint32

// dispatch_events counter indices. Written by the data plane only. Each
// event belongs to one Lane, a counter of its own, so that a pass counts at
// most once per counter (Tofino's rule); an event's count is its lane's
// counter at the event's index.
const (
	EventMalformed     Event = 0  // parser error, bad version or type on a p4ctl packet: dropped
	EventFallback      Event = 1  // carbon_rank miss: nearest region used
	EventSpilled       Event = 2  // a pass retried region selection without the regions that refused (capacity)
	EventHold          Event = 3  // a request was resampled after every candidate refused (one per hold)
	EventNack          Event = 4  // a request was turned into a NACK
	EventForced        Event = 5  // a request was bound by a forced round (on_full = force, no holds left)
	EventLongDeferred  Event = 6  // a hold caused by the long-request reserve
	EventStaleReset    Event = 7  // an expired credit with outstanding requests was reset (not counted on TNA)
	EventReplyReleased Event = 8  // a reply released a server slot
	EventReplyRejected Event = 9  // a reply whose source is not the server's address: dropped
	EventUnreachable   Event = 10 // no next hop, no pool or unknown server: dropped
	EventLevelRound    Event = 11 // a request was recirculated to retry its group at the least refused count
	EventRegionFull    Event = 12 // a region at capacity refused the request: recirculated to spill
	lastEvent                = EventRegionFull
)

// Events lists every event code in order.
func Events() []Event {
	out := make([]Event, 0, lastEvent+1)
	for e := EventMalformed; e <= lastEvent; e++ {
		out = append(out, e)
	}
	return out
}

// String returns the event's name, as p4ctl prints counters.
func (e Event) String() string {
	switch e {
	case EventMalformed:
		return "malformed"
	case EventFallback:
		return "fallback"
	case EventSpilled:
		return "spilled"
	case EventHold:
		return "hold"
	case EventNack:
		return "nack"
	case EventForced:
		return "forced"
	case EventLongDeferred:
		return "long-deferred"
	case EventStaleReset:
		return "stale-reset"
	case EventReplyReleased:
		return "reply-released"
	case EventReplyRejected:
		return "reply-rejected"
	case EventUnreachable:
		return "unreachable"
	case EventLevelRound:
		return "level-round"
	case EventRegionFull:
		return "region-full"
	}
	return "event(" + strconv.Itoa(int(e)) + ")"
}

// Lane is one of the dispatch_events counters. A pass counts at most one
// event per lane: its outcome, a spill, a fallback, and a cause.
type Lane uint8

// Lanes, in the order of Lanes().
const (
	LaneOutcome  Lane = iota // what the pass did: malformed, hold, nack, forced, replies, unreachable, level-round, region-full
	LaneSpill                // spilled
	LaneFallback             // fallback
	LaneCause                // why: long-deferred, stale-reset
)

// Lane returns the counter that counts e.
func (e Event) Lane() Lane {
	switch e {
	case EventSpilled:
		return LaneSpill
	case EventFallback:
		return LaneFallback
	case EventLongDeferred, EventStaleReset:
		return LaneCause
	}
	return LaneOutcome
}

// Counter is the lane's counter name.
func (l Lane) Counter() string {
	switch l {
	case LaneSpill:
		return CounterDispatchEventsSpill
	case LaneFallback:
		return CounterDispatchEventsFallback
	case LaneCause:
		return CounterDispatchEventsCause
	}
	return CounterDispatchEvents
}

// Lanes lists the dispatch_events counters.
func Lanes() []Lane { return []Lane{LaneOutcome, LaneSpill, LaneFallback, LaneCause} }
