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
	NumEvents  = 16   // size of the dispatch_events counter

	// Candidates is how many servers the dispatcher samples per pass: the
	// aligned group of 4 around a hash, so pools of <= 4 servers are scanned
	// exhaustively (exact JBSQ) and larger pools are sampled (power-of-4).
	Candidates = 4
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
	WidthTimestamp = 48
	WidthCount     = 16 // server_outstanding cells
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
	PolicyJBSQ    Policy = 3 // least outstanding of the 4 candidates, only if below the bound n
	PolicyJIQ     Policy = 4 // an idle candidate (JBSQ with n = 1)
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
	for p := PolicyRandom; p <= PolicyJIQ; p++ {
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
	OnFullForce OnFull = 1 // bind to the least-loaded candidate anyway (flag forced)
)

// NextHop kinds selected by region_next_hop.
const (
	NextHopNone   = 0 // table miss: region unreachable
	NextHopLocal  = 1 // dispatch_local: bind to a server of this region's pool
	NextHopRemote = 2 // forward_remote: rewrite toward the region's gateway
)

// Event is an index into the dispatch_events counter.
type Event uint32

// dispatch_events counter indices. Written by the data plane only.
const (
	EventMalformed     Event = 0  // parser error, bad version or type on a p4ctl packet: dropped
	EventFallback      Event = 1  // carbon_rank miss: nearest region used
	EventSpilled       Event = 2  // a full feasible region was masked out
	EventHold          Event = 3  // a request was recirculated (one per hold)
	EventNack          Event = 4  // a request was turned into a NACK
	EventForced        Event = 5  // a request was bound above the bound
	EventLongDeferred  Event = 6  // a hold caused by the long-request reserve
	EventStaleReset    Event = 7  // a candidate's credit expired (TTL) and read as 0
	EventReplyReleased Event = 8  // a reply released a server slot
	EventReplyRejected Event = 9  // a reply whose source is not the server's address: dropped
	EventUnreachable   Event = 10 // no next hop, no pool or unknown server: dropped
)

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
	}
	return "event(" + strconv.Itoa(int(e)) + ")"
}
