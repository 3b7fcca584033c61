package pipeline

import (
	"hash/crc32"
	"testing"
	"time"
)

func TestCandidateHash(t *testing.T) {
	// Known value: CRC-32/IEEE of 10.0.1.10, port 40000, request 10, hold 0
	// (cross-checked against zlib.crc32).
	src := [4]byte{10, 0, 1, 10}
	if got, want := CandidateHash(src, 40000, 10, 0), uint16(0x1f4d); got != want {
		t.Errorf("CandidateHash = %#04x, want %#04x", got, want)
	}
	b := []byte{10, 0, 1, 10, 0x12, 0x34, 0xde, 0xad, 0xbe, 0xef, 7}
	if got, want := CandidateHash(src, 0x1234, 0xdeadbeef, 7), uint16(crc32.ChecksumIEEE(b)); got != want {
		t.Errorf("byte order: got %#04x, want %#04x", got, want)
	}
	if CandidateHash(src, 40000, 10, 0) == CandidateHash(src, 40000, 10, 1) {
		t.Error("hold count does not change the hash")
	}
	// Server ids BMv2 (simple_switch 1.15.5, p4src/build/v1model) chose
	// from a random pool with base 0 and size_mask 0xFFFF, i.e. the full
	// 16-bit hash, for requests from 10.0.1.10.
	for _, c := range []struct {
		sport uint16
		rid   uint32
		bmv2  uint16
	}{
		{2000, 0x20000000, 0xec46},
		{2331, 0x20019919, 0x346e},
		{2662, 0x20033232, 0xb78f},
		{6965, 0x2017f877, 0x32b2},
	} {
		c0, n := CandidateServers(PolicyRandom, 0, 0xFFFF, CandidateHash(src, c.sport, c.rid, 0))
		if n != 1 || c0[0] != c.bmv2 {
			t.Errorf("sport %d rid %#x: candidate 0 = %#04x (of %d), BMv2 chose %#04x", c.sport, c.rid, c0[0], n, c.bmv2)
		}
	}
}

func TestCandidateServers(t *testing.T) {
	cases := []struct {
		name          string
		policy        Policy
		base, mask, h uint16
		want          []uint16
	}{
		{"jbsq pool of 4", PolicyJBSQ, 4, 3, 0x1232, []uint16{4, 5, 6, 7}},
		{"jbsq pool of 256: the group, in slot order", PolicyJBSQ, 256, 255, 0xABCD, []uint16{256 + 0xCC, 256 + 0xCD, 256 + 0xCE, 256 + 0xCF}},
		{"jiq pool of 2", PolicyJIQ, 10, 1, 0x0003, []uint16{10, 11}},
		{"jbsq pool of 1", PolicyJBSQ, 9, 0, 0xFFFF, []uint16{9}},
		{"random", PolicyRandom, 8, 7, 0x000D, []uint16{8 + 5}},
		{"unknown code acts as random", Policy(9), 8, 7, 0x000D, []uint16{8 + 5}},
		{"p2c: the hashed server and its successor in the group", PolicyP2C, 256, 255, 0xABCF, []uint16{256 + 0xCF, 256 + 0xCC}},
		{"p2c-work pool of 2", PolicyP2CWork, 8, 1, 0x0003, []uint16{9, 8}},
	}
	for _, c := range cases {
		got, n := CandidateServers(c.policy, c.base, c.mask, c.h)
		if n != len(c.want) {
			t.Errorf("%s: %d candidates %v, want %v", c.name, n, got[:n], c.want)
			continue
		}
		for i, w := range c.want {
			if got[i] != w {
				t.Errorf("%s: candidates %v, want %v", c.name, got[:n], c.want)
				break
			}
		}
	}
	// Every server of a pool is tried for some hash and the random
	// candidate covers the pool uniformly; every tried server lies in one
	// aligned group of four (one cell per slot array).
	tried, first := map[uint16]int{}, map[uint16]int{}
	for h := range 1 << 16 {
		c, n := CandidateServers(PolicyJBSQ, 64, 15, uint16(h))
		for _, s := range c[:n] {
			tried[s]++
			if s>>2 != c[0]>>2 || s < 64 || s > 79 {
				t.Fatalf("h=%#x: candidates %v leave the group or pool", h, c[:n])
			}
		}
		r, _ := CandidateServers(PolicyRandom, 64, 15, uint16(h))
		first[r[0]]++
	}
	if len(tried) != 16 || len(first) != 16 {
		t.Errorf("jbsq tries %d of 16 servers, random %d", len(tried), len(first))
	}
	for s, k := range first {
		if k != 1<<16/16 {
			t.Errorf("random picks server %d %d times, want %d", s, k, 1<<16/16)
		}
	}
}

func TestSlotLayout(t *testing.T) {
	for s := range uint16(MaxServers) {
		slot, idx := Slot(s)
		if slot != int(s%4) || idx != uint64(s/4) || SlotServer(slot, idx) != s {
			t.Fatalf("Slot(%d) = %d, %d", s, slot, idx)
		}
	}
	if slot, idx := Slot(MaxServers + 5); slot != 1 || idx != 1 {
		t.Errorf("out-of-range id does not alias: %d, %d", slot, idx)
	}
	c := Credit{Outstanding: 7, LastTick: 0xdeadbeef}
	if c.Cell() != 0xdeadbeef_00000007 || CreditFromCell(c.Cell()) != c {
		t.Errorf("cell %#x", c.Cell())
	}
}

func TestClaim(t *testing.T) {
	const now = 1000
	fresh, old := uint32(now-CreditTTLTicks), uint32(now-CreditTTLTicks-1)
	cases := []struct {
		name      string
		in        Credit
		threshold uint32
		expiry    bool
		want      Credit
		refused   uint32
		stale     bool
	}{
		{"idle server takes it", Credit{0, 5}, 1, true, Credit{1, now}, 0, false},
		{"below the threshold", Credit{2, fresh}, 3, true, Credit{3, now}, 0, false},
		{"at the threshold: refused, untouched", Credit{3, fresh}, 3, true, Credit{3, fresh}, 3, false},
		{"expired credit claimed with count 1", Credit{9, old}, 3, true, Credit{1, now}, 0, true},
		{"expired but idle: no stale reset", Credit{0, old}, 1, true, Credit{1, now}, 0, false},
		{"no expiry in the pool", Credit{9, 0}, 3, false, Credit{9, 0}, 9, false},
		{"unbounded", Credit{60000, 0}, Unbounded, false, Credit{60001, 0}, 0, false},
	}
	for _, c := range cases {
		got := c.in
		tick := uint32(now)
		if !c.expiry {
			tick = 0
		}
		refused, stale := Claim(&got, c.threshold, c.expiry, tick)
		if c.want.LastTick == now && !c.expiry {
			c.want.LastTick = 0
		}
		if got != c.want || refused != c.refused || stale != c.stale {
			t.Errorf("%s: Claim(%+v, %d) = %+v refused %d stale %v, want %+v %d %v",
				c.name, c.in, c.threshold, got, refused, stale, c.want, c.refused, c.stale)
		}
	}
	r := Credit{0, 3}
	Release(&r, 9)
	if r != (Credit{0, 9}) {
		t.Errorf("release below 0: %+v", r)
	}
}

func TestExpiredWraps(t *testing.T) {
	for _, c := range []struct {
		last, now uint32
		want      bool
	}{
		{100, 107, false}, {100, 108, true},
		{0xFFFFFFFE, 5, false},                                                    // 7 ticks across the wrap
		{0xFFFFFFFE, 6, true},                                                     // 8 ticks across the wrap
		{5, 0xFFFFFFF0, false},                                                    // "in the future": not expired
		{0, 1<<31 + CreditTTLTicks, true}, {0, 1<<31 + CreditTTLTicks + 1, false}, // beyond 2^31 ticks the sign flips (documented)
	} {
		if got := Expired(Credit{1, c.last}, c.now); got != c.want {
			t.Errorf("Expired(last %#x, now %#x) = %v, want %v", c.last, c.now, got, c.want)
		}
	}
}

func TestCreditTick(t *testing.T) {
	for _, ttl := range []time.Duration{time.Microsecond, 6 * time.Microsecond, 7 * time.Microsecond,
		8 * time.Microsecond, 100 * time.Microsecond, time.Millisecond, 50 * time.Millisecond, 3 * time.Second, time.Hour} {
		tick, err := CreditTickFor(ttl)
		if err != nil {
			t.Fatalf("%v: %v", ttl, err)
		}
		lo, hi := TTLRange(tick)
		if lo < ttl.Truncate(time.Microsecond) || float64(hi) > 2.6*float64(max(ttl, 7*time.Microsecond)) {
			t.Errorf("ttl %v: tick %d expires in (%v, %v]", ttl, tick, lo, hi)
		}
		if tick > 1 {
			if prevLo, _ := TTLRange(tick - 1); prevLo >= ttl {
				t.Errorf("ttl %v: tick %d is not the smallest (tick %d expires after %v)", ttl, tick, tick-1, prevLo)
			}
		}
	}
	if tick, err := CreditTickFor(0); tick != 0 || err != nil {
		t.Errorf("no TTL: %d, %v", tick, err)
	}
	if _, err := CreditTickFor(MaxCreditTTL() + time.Microsecond); err == nil {
		t.Error("a TTL beyond the largest tick was accepted")
	}
	// The clock: µs >> (tick − 1) in 32 bits, 0 without expiry.
	if NowTick(0x123456789, 1) != 0x23456789 || NowTick(1<<20, 11) != 1<<10 || NowTick(12345, 0) != 0 {
		t.Error("NowTick")
	}
	// A credit touched at t0 expires between TTLRange's bounds.
	tick := uint8(5) // 16 µs ticks
	lo, hi := TTLRange(tick)
	for t0 := uint64(1000); t0 < 1100; t0++ {
		c := Credit{1, NowTick(t0, tick)}
		for age := uint64(0); ; age++ {
			if Expired(c, NowTick(t0+age, tick)) {
				if d := time.Duration(age) * time.Microsecond; d <= lo || d > hi {
					t.Fatalf("touched at %d µs, expired after %v, outside (%v, %v]", t0, d, lo, hi)
				}
				break
			}
		}
	}
}

func TestPoolSteps(t *testing.T) {
	jbsq := Pool{Policy: PolicyJBSQ, Bound: 4, MaxHolds: 1}
	long := Pool{Policy: PolicyJBSQ, Bound: 4, MaxHolds: 1, LongReserve: 1, LongMaxHolds: 1}
	force := Pool{Policy: PolicyJIQ, OnFull: OnFullForce}
	random := Pool{Policy: PolicyRandom, Bound: 2}
	unbounded := Pool{Policy: PolicyJBSQ, MaxHolds: 1}
	cases := []struct {
		name      string
		pool      Pool
		round     Round
		long      bool
		holds     uint8
		threshold uint32
		minRef    uint32
		want      Step
	}{
		{"bounded jbsq: first fit below the bound; a full group is held", jbsq, Round{}, false, 0, 4, 4, Step{Kind: StepHold}},
		{"bounded jbsq, no holds left: nack", jbsq, Round{}, false, 1, 4, 5, Step{Kind: StepNack}},
		{"unbounded jbsq: idle first, then the least count", unbounded, Round{}, false, 0, 1, 2, Step{StepLevel, 3}},
		{"unbounded level round refused (race): a higher level", unbounded, Round{Level: 3}, false, 0, 3, 3, Step{StepLevel, 4}},
		{"bounded level round refused at the bound: hold", jbsq, Round{Level: 3}, false, 0, 3, 4, Step{Kind: StepHold}},
		{"bounded level round refused below the bound: a higher level", jbsq, Round{Level: 2}, false, 0, 2, 2, Step{StepLevel, 3}},
		{"long under the reserve: cap bound - reserve", long, Round{}, true, 0, 3, 3, Step{Kind: StepLongDeferred}},
		{"long after long_max_holds: the full bound", long, Round{}, true, 1, 4, 4, Step{Kind: StepNack}},
		{"jiq, no holds: forced round at the least count", force, Round{}, false, 0, 1, 2, Step{StepForce, 3}},
		{"forced round refused: unbounded", force, Round{Level: 3, Forced: true}, false, 0, 3, 3, Step{StepForce, Unbounded}},
		{"random: one candidate at the cap", random, Round{}, false, 0, 2, 2, Step{Kind: StepNack}},
	}
	for _, c := range cases {
		if got := c.pool.Threshold(c.round, c.long, c.holds); got != c.threshold {
			t.Errorf("%s: threshold %d, want %d", c.name, got, c.threshold)
		}
		if got := c.pool.AfterRefusal(c.round, c.minRef, c.long, c.holds); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
	// Reserve ≥ bound: a long request never binds while it may wait.
	p := Pool{Policy: PolicyJBSQ, Bound: 2, LongReserve: 2, LongMaxHolds: 3}
	if th := p.Threshold(Round{}, true, 0); th != 0 {
		t.Errorf("threshold %d with reserve = bound", th)
	}
	if s := p.AfterRefusal(Round{}, 0, true, 0); s.Kind != StepLongDeferred {
		t.Errorf("reserve = bound: %+v", s)
	}
	// Unbounded: any count is below the cap; random takes anything.
	if th := unbounded.Threshold(Round{Level: 70000}, false, 0); th != 70000 {
		t.Errorf("unbounded level %d", th)
	}
	if th := (Pool{Policy: PolicyRandom}).Threshold(Round{}, false, 0); th != Unbounded {
		t.Errorf("unbounded random threshold %d", th)
	}
}

// cells is a Credits store that counts its writes.
type cells struct {
	credit map[uint16]Credit
	work   map[uint16]uint64
	writes int
}

func (c *cells) Credit(s uint16) Credit       { return c.credit[s] }
func (c *cells) SetCredit(s uint16, v Credit) { c.credit[s] = v; c.writes++ }
func (c *cells) Work(s uint16) uint64         { return c.work[s] }

func TestDispatch(t *testing.T) {
	// One group of four (servers 4..7, hash 5), bound 2, one hold.
	jbsq := Pool{Base: 4, SizeMask: 3, Policy: PolicyJBSQ, Bound: 2, MaxHolds: 1}
	cases := []struct {
		name        string
		pool        Pool
		outstanding [4]uint32 // servers 4..7
		work        [4]uint64
		round       Round
		long        bool
		want        Dispatched
	}{
		{"first fit in slot order", jbsq, [4]uint32{2, 1, 0, 0}, [4]uint64{}, Round{}, false, Dispatched{Bound: true, Server: 5}},
		{"every candidate at the bound: hold", jbsq, [4]uint32{2, 2, 3, 2}, [4]uint64{}, Round{}, false, Dispatched{Step: Step{Kind: StepHold}}},
		{"unbounded: idle first, then a level round at the least", Pool{Base: 4, SizeMask: 3, Policy: PolicyJBSQ}, [4]uint32{3, 2, 4, 5}, [4]uint64{}, Round{}, false,
			Dispatched{Step: Step{StepLevel, 3}}},
		{"the level round takes the least loaded", Pool{Base: 4, SizeMask: 3, Policy: PolicyJBSQ}, [4]uint32{3, 2, 4, 5}, [4]uint64{}, Round{Level: 3}, false,
			Dispatched{Bound: true, Server: 5}},
		{"threshold 0: nothing claimed, deferred", Pool{Base: 4, SizeMask: 3, Policy: PolicyJBSQ, Bound: 2, LongReserve: 2, LongMaxHolds: 1}, [4]uint32{}, [4]uint64{}, Round{}, true,
			Dispatched{Step: Step{Kind: StepLongDeferred}}},
		{"p2c: the lighter of the two", Pool{Base: 4, SizeMask: 3, Policy: PolicyP2C, Bound: 4}, [4]uint32{0, 3, 1, 0}, [4]uint64{}, Round{}, false, Dispatched{Bound: true, Server: 6}},
		{"p2c, a tie: candidate 0", Pool{Base: 4, SizeMask: 3, Policy: PolicyP2C, Bound: 4}, [4]uint32{0, 1, 1, 0}, [4]uint64{}, Round{}, false, Dispatched{Bound: true, Server: 5}},
		{"p2c-work: less work wins over fewer requests", Pool{Base: 4, SizeMask: 3, Policy: PolicyP2CWork, Bound: 4}, [4]uint32{0, 1, 3, 0}, [4]uint64{0, 50, 10, 0}, Round{}, false,
			Dispatched{Bound: true, Server: 6}},
		{"p2c: only the lighter is tried", Pool{Base: 4, SizeMask: 3, Policy: PolicyP2C, Bound: 2, OnFull: OnFullForce}, [4]uint32{0, 3, 2, 0}, [4]uint64{}, Round{}, false,
			Dispatched{Step: Step{StepForce, 3}}},
	}
	for _, c := range cases {
		st := &cells{credit: map[uint16]Credit{}, work: map[uint16]uint64{}}
		for j := range c.outstanding {
			st.credit[uint16(4+j)], st.work[uint16(4+j)] = Credit{Outstanding: c.outstanding[j]}, c.work[j]
		}
		got := c.pool.Dispatch(st, c.round, 5, c.long, 0, 0)
		if got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
		wantWrites := 0
		if got.Bound {
			wantWrites = 1
			if o := st.credit[got.Server].Outstanding; o != c.outstanding[got.Server-4]+1 {
				t.Errorf("%s: server %d has %d outstanding", c.name, got.Server, o)
			}
		}
		if st.writes != wantWrites {
			t.Errorf("%s: %d writes, want %d", c.name, st.writes, wantWrites)
		}
	}

	// Expiry: a stale credit counts as idle for p2c and is reset by the claim.
	p := Pool{Base: 4, SizeMask: 3, Policy: PolicyP2C, Bound: 2, CreditTick: 1}
	st := &cells{credit: map[uint16]Credit{5: {Outstanding: 1, LastTick: 98}, 6: {Outstanding: 2, LastTick: 10}}}
	if got := p.Dispatch(st, Round{}, 5, false, 0, 100); got != (Dispatched{Bound: true, Server: 6, StaleReset: true}) {
		t.Errorf("expired credit: %+v", got)
	}
	if c := st.credit[6]; c != (Credit{Outstanding: 1, LastTick: 100}) {
		t.Errorf("expired credit after the claim: %+v", c)
	}

	// The next rounds.
	for _, c := range []struct {
		step Step
		want Round
	}{
		{Step{StepLevel, 3}, Round{Level: 3}},
		{Step{StepForce, 4}, Round{Level: 4, Forced: true}},
		{Step{Kind: StepHold}, Round{}},
		{Step{Kind: StepLongDeferred}, Round{}},
		{Step{Kind: StepNack}, Round{}},
	} {
		if got := c.step.Next(); got != c.want {
			t.Errorf("%+v.Next() = %+v, want %+v", c.step, got, c.want)
		}
	}
}

// The shared loop is a hot path: it allocates nothing.
func TestDispatchAllocates(t *testing.T) {
	st := &cells{credit: map[uint16]Credit{}, work: map[uint16]uint64{}}
	p := Pool{SizeMask: 15, Policy: PolicyJBSQ, Bound: 8, MaxHolds: 2}
	h := uint16(0)
	if n := testing.AllocsPerRun(1000, func() {
		h++
		p.Dispatch(st, Round{}, h, false, 0, 0)
	}); n != 0 {
		t.Errorf("%v allocations per pass", n)
	}
}

func TestRegionAcquire(t *testing.T) {
	v := uint32(1)
	if !RegionAcquire(&v, 2, false) || v != 2 || RegionAcquire(&v, 2, false) || v != 2 {
		t.Errorf("capacity 2: %d", v)
	}
	if !RegionAcquire(&v, 2, true) || v != 3 || !RegionAcquire(&v, 0, false) || v != 4 {
		t.Errorf("forced / unlimited: %d", v)
	}
	v = 0
	RegionRelease(&v)
	if v != 0 {
		t.Error("release below 0")
	}
}

// The probe steps: take when free or timed out (reporting the replaced
// probe), leave a busy one alone; match only the timed request's reply.
func TestProbeSteps(t *testing.T) {
	const now = 1 << 30
	for _, c := range []struct {
		name     string
		p        Probe
		id, at   uint32
		want     Probe
		lostSent uint32
	}{
		{"free: taken", Probe{}, 7, now, Probe{7, now}, 0},
		{"busy: left alone", Probe{3, now - 10}, 7, now, Probe{3, now - 10}, 0},
		{"exactly the timeout: busy", Probe{3, now - ProbeTimeout}, 7, now, Probe{3, now - ProbeTimeout}, 0},
		{"past the timeout: taken, lost", Probe{3, now - ProbeTimeout - 1}, 7, now, Probe{7, now}, now - ProbeTimeout - 1},
		{"across the clock's wrap", Probe{3, 0xFFFFFFF0}, 7, 0x10, Probe{3, 0xFFFFFFF0}, 0},
	} {
		p := c.p
		if got := ProbeTake(&p, c.id, c.at); got != c.lostSent || p != c.want {
			t.Errorf("take %s: %+v, replaced %d; want %+v, %d", c.name, p, got, c.want, c.lostSent)
		}
	}
	p := Probe{9, 100}
	if sent := ProbeMatch(&p, 8); sent != 0 || p != (Probe{9, 100}) {
		t.Errorf("another id matched: %d %+v", sent, p)
	}
	if sent := ProbeMatch(&p, 9); sent != 100 || p != (Probe{}) {
		t.Errorf("the timed id: %d %+v, want 100 and a free probe", sent, p)
	}
	if sent := ProbeMatch(&p, 0); sent != 0 {
		t.Errorf("a free probe matched id 0: %d", sent)
	}
	if ProbeIndex(65, 3, 6) != ProbeIndex(1, 3, 2) || ProbeIndex(1, 3, 2) == ProbeIndex(1, 3, 1) || ProbeIndex(63, 31, 3) != SizeLatencyProbe-1 {
		t.Error("probe index layout")
	}
	if s, err := SampleFromMembers([]uint64{5, 2, 1, 99}); err != nil || s != (LatencySample{5, 2, true, 99}) {
		t.Errorf("sample %+v %v", s, err)
	}
	if _, err := SampleFromMembers([]uint64{5, 2, 2, 99}); err == nil {
		t.Error("lost = 2 accepted")
	}
}
