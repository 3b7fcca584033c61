package pipeline

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"time"
)

// This file is the executable form of docs/PIPELINE.md "Server dispatch": the
// one-pass dispatch algorithm that the v1model program, the TNA program and
// the Go model (pkg/dataplane/program) implement, and that the µs simulator
// (research/sim/micro, policy "switch") runs. Every data plane step is a pure
// function here; the P4 programs are its translations.

// CandidateHash is the dispatch hash of docs/PIPELINE.md step 9.2: the low 16
// bits of the IEEE CRC-32 (reflected, as zlib and v1model's
// HashAlgorithm.crc32 on BMv2) of the 11 bytes src address, UDP source port,
// request id and hold count, big-endian. A held request hashes differently on
// each pass because its hold count changed.
func CandidateHash(src [4]byte, srcPort uint16, requestID uint32, holdCount uint8) uint16 {
	var b [11]byte
	copy(b[:4], src[:])
	binary.BigEndian.PutUint16(b[4:6], srcPort)
	binary.BigEndian.PutUint32(b[6:10], requestID)
	b[10] = holdCount
	// The table-driven CRC-32 byte by byte: crc32.ChecksumIEEE would move b
	// to the heap (its assembly takes the slice), and the embedded target
	// hashes every request without allocating.
	tab := crc32.IEEETable
	crc := ^uint32(0)
	for _, c := range b {
		crc = tab[byte(crc)^c] ^ crc>>8
	}
	return uint16(^crc)
}

// Group returns the first server id of the aligned group of four that a
// pool (set_pool base, size_mask) samples for hash h: base + (h & size_mask
// & ~3). With the pool layout (power-of-two size, base aligned to min(size,
// 4)) every candidate of a pass lies in this group, one per slot array.
func Group(base, sizeMask, h uint16) uint16 {
	return base + (h & sizeMask &^ (Candidates - 1))
}

// CandidateServers returns the servers a pass tries, in the order it tries
// them, and how many there are:
//
//   - jbsq, jiq: the pool's servers in the group of h, in slot (id) order —
//     the four of the group for pools of four or more, the whole pool for
//     pools of one or two;
//   - random: the one server base + (h & size_mask);
//   - p2c, p2c-work: candidate 0 = base + (h & size_mask) and candidate 1, its
//     successor in the group (base + ((h&^3 | (h+1)&3) & size_mask)), which the
//     v1model program compares before it claims one of them.
//
// Any other policy code is treated as random. All arithmetic is 16-bit.
func CandidateServers(policy Policy, base, sizeMask, h uint16) (c [Candidates]uint16, n int) {
	switch policy {
	case PolicyJBSQ, PolicyJIQ:
		g := Group(base, sizeMask, h)
		for j := range uint16(Candidates) {
			if j&^sizeMask == 0 {
				c[n] = g + j
				n++
			}
		}
	case PolicyP2C, PolicyP2CWork:
		g := h &^ (Candidates - 1)
		c[0] = base + (h & sizeMask)
		c[1] = base + ((g | (h+1)&(Candidates-1)) & sizeMask)
		n = 2
	default:
		c[0] = base + (h & sizeMask)
		n = 1
	}
	return c, n
}

// Slot returns where server s's credit lives: register server_credit_<slot>
// (and, on v1model, server_work_us) at index: slot = s mod 4, index = s / 4
// (the low bits of the id beyond MaxServers are dropped, so a misconfigured
// id aliases instead of indexing out of bounds).
func Slot(s uint16) (slot int, index uint64) {
	s &= MaxServers - 1
	return int(s & (Candidates - 1)), uint64(s >> 2)
}

// CreditCell names server s's credit cell: its register and index.
func CreditCell(s uint16) (register string, index uint64) {
	slot, index := Slot(s)
	return RegisterServerCredit(slot), index
}

// SlotServer is the inverse of Slot.
func SlotServer(slot int, index uint64) uint16 {
	return uint16(index<<2) | uint16(slot)
}

// Credit is one server's credit cell (server_credit_<slot>[index]).
type Credit struct {
	// Outstanding counts requests bound to the server and not yet released.
	Outstanding uint32
	// LastTick is the credit-clock tick (NowTick) of the last bind or
	// release; 0 in pools without expiry.
	LastTick uint32
}

// Cell is the register value: LastTick in the high 32 bits, Outstanding in
// the low 32 (v1model bit<64>; TNA's pair {outstanding, last_tick}).
func (c Credit) Cell() uint64 { return uint64(c.LastTick)<<32 | uint64(c.Outstanding) }

// CreditFromCell decodes a register value written by Cell.
func CreditFromCell(v uint64) Credit {
	return Credit{Outstanding: uint32(v), LastTick: uint32(v >> 32)}
}

// CreditTTLTicks is how many credit-clock ticks a credit survives without a
// bind or release: it expires once more than CreditTTLTicks ticks have
// passed. A constant (not a table parameter) so that Tofino's stateful ALU
// can test it with one PHV input; the pool's tick size sets the TTL.
const CreditTTLTicks = 7

// MaxCreditTick is the largest set_pool.credit_tick: ticks of 2^37 µs
// (≈ 38 h), a TTL of ≈ 11 days; beyond it the 48-bit µs clock runs out.
const MaxCreditTick = 38

// NowTick is the credit clock of a pool with set_pool.credit_tick t at time
// now (µs, the low 48 bits): now >> (t − 1) in 32 bits, or 0 when t = 0 (no
// expiry). On Tofino the µs are 1.024 µs (global_tstamp >> 10).
func NowTick(nowMicros uint64, tick uint8) uint32 {
	if tick == 0 {
		return 0
	}
	if tick > MaxCreditTick {
		tick = MaxCreditTick
	}
	return uint32((nowMicros & (1<<WidthTimestamp - 1)) >> (tick - 1))
}

// Expired reports whether credit c, in a pool with expiry, has not been
// touched for more than CreditTTLTicks ticks at tick now: the signed 32-bit
// difference last − (now − CreditTTLTicks) is negative (what Tofino's
// stateful ALU computes; ages up to 2^31 ticks are exact).
func Expired(c Credit, now uint32) bool {
	return int32(c.LastTick-(now-CreditTTLTicks)) < 0
}

// CreditTickFor returns set_pool.credit_tick for a credit TTL: 0 for no
// expiry, else the smallest t with CreditTTLTicks·2^(t−1) µs ≥ ttl, so a
// credit never expires before ttl and always within (ttl, 2.6·ttl) of its
// last bind or release (TTLRange). TTLs beyond MaxCreditTick are an error.
func CreditTickFor(ttl time.Duration) (uint8, error) {
	if ttl <= 0 {
		return 0, nil
	}
	us := uint64((ttl + time.Microsecond - 1) / time.Microsecond)
	for t := uint8(1); t <= MaxCreditTick; t++ {
		if CreditTTLTicks<<(t-1) >= us {
			return t, nil
		}
	}
	return 0, fmt.Errorf("credit TTL %v exceeds the data plane's largest (%v)", ttl, MaxCreditTTL())
}

// MaxCreditTTL is the largest TTL CreditTickFor accepts.
func MaxCreditTTL() time.Duration {
	return time.Duration(CreditTTLTicks<<(MaxCreditTick-1)) * time.Microsecond
}

// TTLRange is when a credit of a pool with credit_tick t expires, counted
// from its last bind or release: after more than CreditTTLTicks ticks and at
// most CreditTTLTicks+2 ticks (the first tick is partial). Zero for t = 0.
func TTLRange(tick uint8) (earliest, latest time.Duration) {
	if tick == 0 {
		return 0, 0
	}
	t := time.Duration(1<<(tick-1)) * time.Microsecond
	return CreditTTLTicks * t, (CreditTTLTicks + 2) * t
}

// Claim is the RegisterAction every tried slot runs (TNA's claim_<slot>):
// in one atomic step over {outstanding, last_tick}, an expired credit (pools
// with expiry) is claimed with count 1; else a count below threshold is
// incremented; else the slot refuses. A claim or an increment touches the
// credit (last_tick = now). It returns the refused count (≥ threshold ≥ 1)
// or 0 when the request was taken, and whether an expired credit with
// outstanding requests was reset (the stale-reset event; Tofino's stateful
// ALU returns one word and cannot report it, docs/PIPELINE.md). threshold
// must be ≥ 1: a pass whose threshold is 0 runs no claim.
func Claim(c *Credit, threshold uint32, expiry bool, now uint32) (refused uint32, staleReset bool) {
	switch {
	case expiry && Expired(*c, now):
		staleReset = c.Outstanding != 0
		c.Outstanding, c.LastTick = 1, now
	case c.Outstanding < threshold:
		c.Outstanding++
		c.LastTick = now
	default:
		return c.Outstanding, false
	}
	return 0, staleReset
}

// Release is what a valid reply does to its server's credit: one fewer
// outstanding (never below 0) and last_tick = now.
func Release(c *Credit, now uint32) {
	if c.Outstanding != 0 {
		c.Outstanding--
	}
	c.LastTick = now
}

// RegionAcquire is the region capacity's RegisterAction: a region with
// capacity 0 (unlimited), or a forced acquire, always counts the request;
// otherwise it is counted only while v < capacity. It reports whether the
// request now holds a region credit.
func RegionAcquire(v *uint32, capacity uint32, force bool) bool {
	if force || capacity == 0 || *v < capacity {
		*v++
		return true
	}
	return false
}

// RegionRelease returns a region credit (never below 0).
func RegionRelease(v *uint32) {
	if *v != 0 {
		*v--
	}
}

// Unbounded is the threshold of a pass with no bound.
const Unbounded = math.MaxUint32

// Pool holds a server_pool entry's dispatch parameters (action set_pool).
type Pool struct {
	Base, SizeMask uint16
	Policy         Policy
	Bound          uint16 // n of JBSQ(n), for every policy but jiq; 0 = unbounded
	MaxHolds       uint8
	OnFull         OnFull
	CreditTick     uint8 // 0 = credits never expire
	LongReserve    uint16
	LongMaxHolds   uint8
}

// Limit is the count a bind may not reach: 1 for jiq, the bound for every
// other policy (0 = none).
func (p Pool) Limit() uint32 {
	if p.Policy == PolicyJIQ {
		return 1
	}
	return uint32(p.Bound)
}

// Cap is the limit a request of this pass binds under, Unbounded when there
// is none, and whether bounded preemption lowered it: a long request (while
// hold_count < long_max_holds) may only take a server with fewer than limit
// − long_reserve outstanding (saturating at 0), keeping long_reserve slots
// for short requests.
func (p Pool) Cap(isLong bool, holds uint8) (capacity uint32, longCut bool) {
	limit := p.Limit()
	if limit == 0 {
		return Unbounded, false
	}
	if isLong && p.LongReserve != 0 && holds < p.LongMaxHolds {
		if uint32(p.LongReserve) >= limit {
			return 0, true
		}
		return limit - uint32(p.LongReserve), true
	}
	return limit, false
}

// Round is the dispatch state a request carries from pass to pass (TNA: the
// bridge header; v1model: @field_list metadata): the threshold of its next
// pass's chain and whether the round is forced (uncapped).
type Round struct {
	// Level is the next pass's threshold; 0 starts a new attempt (a fresh
	// request, or one resampled after a hold).
	Level uint32
	// Forced marks a forced round: on_full = force after max_holds holds.
	Forced bool
}

// Threshold is the chain threshold of a pass: a forced or level round uses
// its level; a new attempt takes the first candidate below the cap (first
// fit in slot order), or, in an unbounded jbsq pool, an idle one (threshold
// 1) and then, after a level round, the least loaded; never above the cap
// except in forced rounds.
//
// First fit rather than least-loaded for bounded pools is measured, not
// assumed: at the late-binding study's E1 point (16 × 8 cores, ρ = 0.85, D =
// 4.5 µs, n = the Little bound) idle-first-then-least costs 2.2
// recirculations per request (requests racing for a group's least-loaded
// server within a recirculation) and more violations than first fit at 0.4
// recirculations (docs/PIPELINE.md "Why first fit").
func (p Pool) Threshold(r Round, isLong bool, holds uint8) uint32 {
	if r.Forced {
		return r.Level
	}
	c, _ := p.Cap(isLong, holds)
	t := r.Level
	if t == 0 {
		t = c
		if c == Unbounded && (p.Policy == PolicyJBSQ || p.Policy == PolicyJIQ) {
			t = 1
		}
	}
	return min(t, c)
}

// StepKind is what a pass whose every candidate refused does next.
type StepKind uint8

// What follows a refused pass. Every kind but Nack recirculates the request.
const (
	// StepLevel retries the same candidates (same hash) at the level
	// Step.Level = the smallest refused count + 1: the least-loaded server of
	// the group, found in one more pass.
	StepLevel StepKind = iota + 1
	// StepHold resamples: hold_count + 1, a new candidate group, a new
	// attempt (flag held, event hold).
	StepHold
	// StepLongDeferred is a hold caused by bounded preemption (flags held and
	// long-deferred, events hold and long-deferred).
	StepLongDeferred
	// StepForce is a forced round at Step.Level, without cap (on_full =
	// force and no holds left; flag and event forced when it binds).
	StepForce
	// StepNack turns the request into a NACK to the client.
	StepNack
)

// Step is the decision after a refused pass.
type Step struct {
	Kind  StepKind
	Level uint32 // StepLevel, StepForce: the next pass's threshold
}

// AfterRefusal decides what follows a pass of round r in which every tried
// candidate refused; minRefused is the smallest refused count (ignored when
// the pass's threshold was 0 and no claim ran). While the least count is
// below the cap the request retries the same candidates at that level (a
// level round: the first pass of an attempt finds no idle server, or another
// request took the least-loaded server between two passes — each refusal
// raises the level, so an attempt takes at most cap level rounds, and one
// without contention); otherwise bounded preemption defers a long request, a
// request with holds left is held (resampled), and the last resort is a
// forced round (on_full = force) or a NACK. A refused forced round retries
// with no threshold at all, so forcing takes at most two passes.
func (p Pool) AfterRefusal(r Round, minRefused uint32, isLong bool, holds uint8) Step {
	if r.Forced {
		return Step{Kind: StepForce, Level: Unbounded}
	}
	capacity, longCut := p.Cap(isLong, holds)
	switch {
	case p.Threshold(r, isLong, holds) != 0 && minRefused < capacity:
		return Step{Kind: StepLevel, Level: minRefused + 1}
	case longCut:
		return Step{Kind: StepLongDeferred}
	case holds < p.MaxHolds:
		return Step{Kind: StepHold}
	case p.OnFull == OnFullForce:
		return Step{Kind: StepForce, Level: satInc(minRefused)}
	}
	return Step{Kind: StepNack}
}

func satInc(v uint32) uint32 {
	if v == Unbounded {
		return v
	}
	return v + 1
}

// Next is the round of the pass that follows the step: a level round or a
// forced round at Level, a new attempt after a hold. StepNack has none (no
// dispatch pass follows it): the zero Round.
func (s Step) Next() Round {
	switch s.Kind {
	case StepLevel:
		return Round{Level: s.Level}
	case StepForce:
		return Round{Level: s.Level, Forced: true}
	}
	return Round{}
}

// Credits is the credit store a dispatch pass runs over: the Go model's
// registers (pkg/dataplane/program), the simulator's array
// (research/sim/micro). Pool.Dispatch reads a candidate's cell, runs Claim
// on it and stores it back only when the claim took the request; the caller
// keeps the pass atomic (one pass at a time, as a pipeline stage is).
type Credits interface {
	// Credit returns server s's credit cell.
	Credit(s uint16) Credit
	// SetCredit stores server s's credit cell.
	SetCredit(s uint16, c Credit)
	// Work returns server s's outstanding work (server_work_us), which
	// p2c-work compares; a store without work counters returns 0.
	Work(s uint16) uint64
}

// Dispatched is the outcome of one dispatch pass (Pool.Dispatch).
type Dispatched struct {
	// Bound reports that Server took the request; StaleReset that its
	// claim reset an expired credit with outstanding requests.
	Bound      bool
	Server     uint16
	StaleReset bool
	// Step is what follows when every candidate refused (Bound false).
	Step Step
}

// Dispatch is the server dispatch of one pass (docs/PIPELINE.md step 10),
// the loop the Go model and the simulator share: the pass's Threshold for
// round r; the CandidateServers of hash h, of which the p2c policies keep
// the lighter; one Claim on each in order, on the credit clock of
// nowMicros, until one takes the request; and when every candidate refused
// (or the threshold was 0 and none was tried), AfterRefusal. The caller
// applies the outcome: a bind's effects, or the step's (Step.Next is the
// next pass's round). It does not allocate.
func (p Pool) Dispatch(credits Credits, r Round, h uint16, isLong bool, holds uint8, nowMicros uint64) Dispatched {
	threshold := p.Threshold(r, isLong, holds)
	minRefused := uint32(Unbounded)
	if threshold != 0 {
		tick, expiry := NowTick(nowMicros, p.CreditTick), p.CreditTick != 0
		cands, k := CandidateServers(p.Policy, p.Base, p.SizeMask, h)
		if p.Policy == PolicyP2C || p.Policy == PolicyP2CWork {
			cands[0], k = cands[p.lighter(credits, cands[0], cands[1], tick)], 1
		}
		for _, s := range cands[:k] {
			c := credits.Credit(s)
			refused, stale := Claim(&c, threshold, expiry, tick)
			if refused == 0 {
				credits.SetCredit(s, c)
				return Dispatched{Bound: true, Server: s, StaleReset: stale}
			}
			minRefused = min(minRefused, refused)
		}
	}
	return Dispatched{Step: p.AfterRefusal(r, minRefused, isLong, holds)}
}

// lighter is the p2c policies' comparison before the claim (step 10.2,
// v1model only): which of candidates a (0) and b (1) the pass tries. p2c
// takes b only when it has fewer outstanding requests, p2c-work when it has
// less outstanding work or, as much, fewer requests; an expired credit
// (pools with expiry, at tick now) counts as idle.
func (p Pool) lighter(credits Credits, a, b uint16, now uint32) int {
	var out, work [2]uint64
	for j, s := range [2]uint16{a, b} {
		c := credits.Credit(s)
		if p.CreditTick == 0 || !Expired(c, now) {
			out[j], work[j] = uint64(c.Outstanding), credits.Work(s)
		}
	}
	if p.Policy == PolicyP2C && out[1] < out[0] ||
		p.Policy == PolicyP2CWork && (work[1] < work[0] || work[1] == work[0] && out[1] < out[0]) {
		return 1
	}
	return 0
}

// MaxPasses is a guard, not a property: the Go model drops a request still
// recirculating after this many passes. Without contention a request takes
// at most 2·(holds + 1) + 2 passes plus one per region that refused it
// (docs/PIPELINE.md "Passes per request").
const MaxPasses = 1 << 12
