package engine

import (
	"math/rand/v2"
	"testing"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
)

// bruteBest is the reference lookup: among all entries matching key, the
// best by P4Runtime semantics (highest priority; for LPM tables the longest
// prefix). It returns the best rank and whether anything matched.
func bruteBest(t *Table, key []uint64) (best int64, found bool) {
	for _, e := range t.entries {
		ok := true
		var plen int64
		for i, m := range e.match {
			if !m.matches(key[i]) {
				ok = false
				break
			}
			plen += int64(m.plen)
		}
		if !ok {
			continue
		}
		r := int64(e.priority)
		if !t.needPriority {
			r = plen
		}
		if !found || r > best {
			best, found = r, true
		}
	}
	return best, found
}

// Random inserts and deletes in every kind of table; every lookup must agree
// with a brute-force scan (the entry returned matches and has the best rank).
func TestLookupMatchesBruteForce(t *testing.T) {
	e := newTestEngine(t, Options{})
	r := rand.New(rand.NewPCG(7, 9))
	small := func(w int) uint64 { return r.Uint64() & mask(w) & 0x13 } // few distinct values: many overlaps
	var live []*p4v1.TableEntry
	gen := func() *p4v1.TableEntry {
		switch r.IntN(4) {
		case 0: // LPM with an exact field
			plen := 1 + r.IntN(32)
			v := r.Uint64() & prefixMask(32, plen)
			return te(tLPM, 0, setAct(uint16(plen)), exact(1, EncodeBits(small(8))...), lpm(2, int32(plen), EncodeBits(v)...))
		case 1: // ternary/range/optional
			var m []*p4v1.FieldMatch
			m = append(m, exact(1, EncodeBits(small(8))...))
			if r.IntN(2) == 0 {
				mk := r.Uint64()&0xFF | 1
				m = append(m, tern(2, EncodeBits(small(32)&mk), EncodeBits(mk)))
			}
			if r.IntN(2) == 0 {
				lo := r.Uint64() % 100
				m = append(m, rng(3, EncodeBits(lo), EncodeBits(lo+r.Uint64()%100)))
			}
			if r.IntN(2) == 0 {
				m = append(m, opt(4, EncodeBits(small(9))...))
			}
			return te(tTern, int32(1+r.IntN(20)), setAct(1), m...)
		case 2: // wide exact (89 bits)
			return te(tWide, 0, setAct(2), exact(1, EncodeBits(small(48))...), exact(2, EncodeBits(small(32))...), exact(3, EncodeBits(small(9))...))
		default: // beyond 128 bits: scanned, LPM by prefix length
			plen := 1 + r.IntN(48)
			return te(tHuge, 0, setAct(3), exact(1, EncodeBits(small(48))...), exact(2, EncodeBits(small(48))...),
				exact(3, EncodeBits(small(48))...), lpm(4, int32(plen), EncodeBits(r.Uint64()&prefixMask(48, plen))...))
		}
	}
	check := func(round int) {
		p := e.Acquire()
		defer e.Release()
		for _, id := range []uint32{tLPM, tTern, tWide, tHuge} {
			tb := p.tablesByID[id]
			for i := 0; i < 200; i++ {
				key := make([]uint64, len(tb.fields))
				for j, f := range tb.fields {
					key[j] = small(f.width)
					if f.kind == kindLPM && r.IntN(2) == 0 {
						key[j] = r.Uint64() & f.max
					}
					if f.kind == kindRange {
						key[j] = r.Uint64() % 220
					}
				}
				got := tb.Lookup(key)
				best, found := bruteBest(tb, key)
				if (got != nil) != found {
					t.Fatalf("round %d table %s key %v: lookup %v, brute force found=%v", round, tb.Name, key, got != nil, found)
				}
				if got == nil {
					continue
				}
				r := int64(got.priority)
				var plen int64
				for j, m := range got.match {
					if !m.matches(key[j]) {
						t.Fatalf("table %s: returned entry does not match key %v", tb.Name, key)
					}
					plen += int64(m.plen)
				}
				if !tb.needPriority {
					r = plen
				}
				if r != best {
					t.Fatalf("round %d table %s key %v: rank %d, best %d", round, tb.Name, key, r, best)
				}
			}
		}
	}
	for round := 0; round < 60; round++ {
		for i := 0; i < 40; i++ {
			x := gen()
			if write1(t, e, upd(p4v1.Update_INSERT, x)) == nil {
				live = append(live, x)
			}
		}
		for i := 0; i < 15 && len(live) > 0; i++ {
			j := r.IntN(len(live))
			mustWrite(t, e, upd(p4v1.Update_DELETE, live[j]))
			live = append(live[:j], live[j+1:]...)
		}
		check(round)
	}
}

// matches is the reference rule of one field: the packet path compiles
// the same test into its lookups; the tests check those against it.
func (m *fieldMatch) matches(k uint64) bool {
	return k&m.mask == m.value && k >= m.lo && k <= m.hi
}
