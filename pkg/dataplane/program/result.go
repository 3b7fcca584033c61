package program

import "strconv"

// Verdict is what happened to a packet.
type Verdict uint8

// Verdicts.
const (
	// Dropped: the packet leaves no port; Result.Reason says why.
	Dropped Verdict = iota
	// Forwarded: the packet leaves Result.Port (possibly rewritten).
	Forwarded
	// Nacked: a request turned into a nack, sent back out of the port it
	// arrived on (Result.Port).
	Nacked
)

// String returns the verdict's name.
func (v Verdict) String() string {
	switch v {
	case Dropped:
		return "dropped"
	case Forwarded:
		return "forwarded"
	case Nacked:
		return "nacked"
	}
	return "verdict(" + strconv.Itoa(int(v)) + ")"
}

// DropReason says why a packet was dropped.
type DropReason uint8

// Drop reasons. Malformed, Unreachable and ReplyRejected are the program's
// own (counted in dispatch_events); L2Drop and L3Drop are the forwarding
// tables' drop action or miss; DropPort is a forward to the drop port 511.
const (
	NotDropped DropReason = iota
	Malformed
	Unreachable
	ReplyRejected
	L2Drop
	L3Drop
	DropPort
	NoPipeline
)

// String returns the reason's name.
func (r DropReason) String() string {
	switch r {
	case NotDropped:
		return "-"
	case Malformed:
		return "malformed"
	case Unreachable:
		return "unreachable"
	case ReplyRejected:
		return "reply-rejected"
	case L2Drop:
		return "l2-drop"
	case L3Drop:
		return "l3-drop"
	case DropPort:
		return "drop-port"
	case NoPipeline:
		return "no-pipeline"
	}
	return "reason(" + strconv.Itoa(int(r)) + ")"
}

// Result is the outcome of one packet (all its passes).
type Result struct {
	Verdict Verdict
	Port    uint32     // egress port (Forwarded, Nacked)
	Reason  DropReason // Dropped
	Passes  int        // 1 + number of holds
}

// DropPortNumber is v1model's drop port (mark_to_drop): a packet whose
// egress port is 511 is dropped.
const DropPortNumber = 511
