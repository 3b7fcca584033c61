package micro

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Binding says when a request is bound to a host.
type Binding uint8

// Bindings.
const (
	// Early binding: the ingress picks a host the moment the request arrives.
	Early Binding = iota
	// JBSQ is late binding through a central dispatcher that keeps at most
	// Bound requests outstanding per host (its counters learn completions one
	// network delay after they happen) and holds the rest in a FIFO.
	JBSQ
	// JIQ is late binding on idle tokens: each core that goes idle sends the
	// dispatcher a token (arriving one delay later); a request is held until
	// a token is available and then bound to that token's host.
	JIQ
	// Switch is the switch's own one-pass dispatch (pkg/pipeline, the
	// algorithm of the P4 programs): each pass tries the hosts of one
	// aligned group of four with one atomic claim each; a pass in which all
	// refuse recirculates (Config.Recirc) as a level round, a hold (a new
	// group), or a forced round. Ingress Least is the switch's jbsq (idle
	// first, then the least loaded of the group), Random its random; Bound 1
	// is its jiq. Hosts must be a power of two (the pool layout).
	Switch
)

// Ingress is how an early-binding ingress (or the JBSQ dispatcher, among
// the hosts below the bound) chooses a host.
type Ingress uint8

// Ingress choices.
const (
	// Random hashes each request to a uniformly random host.
	Random Ingress = iota
	// P2C samples two distinct hosts and picks the one with fewer requests in
	// its last load report (plus what the ingress sent it since).
	P2C
	// JSW joins the host with the least work per core in the periodically
	// refreshed global summary (plus mean service × requests sent since).
	JSW
	// Hash pins each connection to a host by a static hash.
	Hash
	// Migrate is Hash plus periodic migration of a connection from the most
	// to the least loaded host (by the ingress's own request counts).
	Migrate
	// Least picks the host with the fewest outstanding requests on the
	// dispatcher's own counters (ties rotate). Only meaningful with JBSQ;
	// JBSQ with an unbounded n and Least is join-shortest-queue.
	Least
	// Passive is Hash plus passive migration: a host that receives a
	// request of a connection while ForwardThreshold or more requests wait
	// hands that connection to a uniformly random other host (2 messages);
	// the request itself stays. The host reacts to its own queue, with no
	// view of where the connection goes.
	Passive
	// PassiveMiss is Hash plus passive migration after the fact: when a
	// request of a connection misses the SLO (its reply reaches the ingress
	// later than the SLO), the connection is handed from the host that served
	// it to a uniformly random other host (2 messages), effective from that
	// moment, unless an earlier late reply has moved it away from that host
	// since. It reacts to a violation, not to a queue, and takes no movement
	// (+fwd, +ideal: the serving host need not be the connection's).
	PassiveMiss
)

// Movement is what a host may do with a request after it arrived.
type Movement uint8

// Movements.
const (
	// NoMovement keeps every request on the host it was sent to.
	NoMovement Movement = iota
	// Forward sends a request on to a uniformly random other host when the
	// receiving host has at least ForwardThreshold requests waiting; the
	// extra hop (host → switch → host) costs 2D. A request is forwarded at
	// most Config.ForwardHops times (default once), then queues where it is.
	Forward
	// Ideal moves requests between hosts at zero cost whenever a core
	// anywhere is idle while a request waits (oldest first): an upper bound
	// on what any movement scheme can achieve.
	Ideal
)

// BoundAuto asks for the Little's-law bound (see LittleBound).
const BoundAuto = -1

// Policy is one dispatch policy.
type Policy struct {
	Binding  Binding
	Ingress  Ingress
	Movement Movement
	// Bound is JBSQ's n per host: 0 = unbounded, BoundAuto = LittleBound.
	Bound int
}

var ingressNames = map[Ingress]string{
	Random: "random", P2C: "p2c", JSW: "jsw", Hash: "hash", Migrate: "migrate", Least: "least", Passive: "passive", PassiveMiss: "passive-miss",
}

// String is the canonical name, which ParsePolicy accepts.
func (p Policy) String() string {
	switch p.Binding {
	case JIQ:
		return "jiq"
	case Switch:
		s := "switch"
		switch {
		case p.Bound == 0:
			s += ":inf"
		case p.Bound > 0:
			s += ":" + strconv.Itoa(p.Bound)
		}
		if p.Ingress == Random {
			s += "/random"
		}
		return s
	case JBSQ:
		n := "auto"
		switch {
		case p.Bound == 0:
			n = "inf"
		case p.Bound > 0:
			n = strconv.Itoa(p.Bound)
		}
		if p.Ingress == Least && p.Bound == 0 {
			return "jsq"
		}
		s := "jbsq"
		if p.Bound != BoundAuto {
			s += ":" + n
		}
		if p.Ingress != Least {
			s += "/" + ingressNames[p.Ingress]
		}
		return s
	}
	s := ingressNames[p.Ingress]
	switch p.Movement {
	case Forward:
		s += "+fwd"
	case Ideal:
		s += "+ideal"
	}
	return s
}

// ParsePolicy reads a policy name:
//
//	random | p2c | jsw | hash | migrate | passive | passive-miss
//	    early binding at the ingress,
//	    optionally followed by +fwd (forwarding) or +ideal (ideal movement)
//	jbsq[:n|:inf|:auto][/least|/random|/p2c]   late binding, n per host
//	    (default auto = Little's-law bound, default choice least); n is
//	    1..65535, or 0 = inf (unbounded), as the switch's bound 0
//	    (docs/CONFIG.md)
//	jsq                                   jbsq:inf/least
//	jiq                                   late binding on idle tokens
//	switch[:n|:inf|:auto][/random]        the switch's one-pass jbsq (or
//	    random) of pkg/pipeline, n per host (default auto)
//	switch-jiq                            switch:1, the switch's jiq
func ParsePolicy(s string) (Policy, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	switch s {
	case "jiq":
		return Policy{Binding: JIQ}, nil
	case "jsq":
		return Policy{Binding: JBSQ, Ingress: Least, Bound: 0}, nil
	case "switch-jiq":
		return Policy{Binding: Switch, Ingress: Least, Bound: 1}, nil
	}
	if rest, ok := strings.CutPrefix(s, "switch"); ok {
		p, err := parseBound(s, "switch", rest, map[string]Ingress{"least": Least, "random": Random})
		p.Binding = Switch
		return p, err
	}
	if rest, ok := strings.CutPrefix(s, "jbsq"); ok {
		p, err := parseBound(s, "jbsq", rest, map[string]Ingress{"least": Least, "random": Random, "p2c": P2C})
		p.Binding = JBSQ
		return p, err
	}
	base, mv, _ := strings.Cut(s, "+")
	p := Policy{Binding: Early}
	found := false
	for in, name := range ingressNames {
		if name == base && in != Least {
			p.Ingress, found = in, true
		}
	}
	if !found {
		return Policy{}, fmt.Errorf("unknown policy %q (want random, p2c, jsw, hash, migrate, passive, passive-miss [+fwd|+ideal], jbsq[:n][/choice], jsq, jiq, switch[:n][/random] or switch-jiq)", s)
	}
	switch mv {
	case "":
	case "fwd", "forward":
		p.Movement = Forward
	case "ideal":
		p.Movement = Ideal
	default:
		return Policy{}, fmt.Errorf("policy %q: movement must be +fwd or +ideal", s)
	}
	return p, nil
}

// parseBound reads "[:n|:inf|:auto][/choice]" after a late-binding policy's
// name (family) in s.
func parseBound(s, family, rest string, choices map[string]Ingress) (Policy, error) {
	p := Policy{Ingress: Least, Bound: BoundAuto}
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		in, ok := choices[rest[i+1:]]
		if !ok {
			names := make([]string, 0, len(choices))
			for n := range choices {
				names = append(names, n)
			}
			sort.Strings(names)
			return Policy{}, fmt.Errorf("policy %q: %s choice must be %s", s, family, strings.Join(names, ", "))
		}
		p.Ingress = in
		rest = rest[:i]
	}
	if rest != "" {
		n, ok := strings.CutPrefix(rest, ":")
		if !ok {
			return Policy{}, fmt.Errorf("policy %q: want %s:n", s, family)
		}
		switch n {
		case "auto":
		case "inf", "0":
			p.Bound = 0
		default:
			v, err := strconv.Atoi(n)
			if err != nil || v < 1 || v > 65535 {
				return Policy{}, fmt.Errorf("policy %q: bound must be auto, inf (or 0, unbounded as the switch's bound 0) or 1..65535 (the switch's 16-bit bound)", s)
			}
			p.Bound = v
		}
	}
	return p, nil
}

// MarshalText implements encoding.TextMarshaler (the canonical name).
func (p Policy) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (p *Policy) UnmarshalText(b []byte) error {
	q, err := ParsePolicy(string(b))
	if err != nil {
		return err
	}
	*p = q
	return nil
}

// MustPolicy is ParsePolicy for names fixed in code; it panics on a typo,
// which tests catch.
func MustPolicy(s string) Policy {
	p, err := ParsePolicy(s)
	if err != nil {
		panic(err)
	}
	return p
}
