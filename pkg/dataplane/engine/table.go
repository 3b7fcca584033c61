package engine

import (
	"encoding/binary"
	"sort"
	"sync/atomic"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
)

// ActionCall is an action with its parameter values, in the order of the
// action's parameters in the P4Info (see Pipeline.ParamIndex).
type ActionCall struct {
	ID     uint32
	Params []uint64
}

// fieldMatch is one key field of an entry, normalised so that every kind is
// matched by the same test: key&mask == value && lo <= key <= hi.
type fieldMatch struct {
	present     bool // false: "don't care" (omitted in P4Runtime)
	value, mask uint64
	lo, hi      uint64
	plen        int // LPM prefix length
}

// Entry is a table entry. The packet path reads Action; everything else is
// control-plane state.
type Entry struct {
	Action ActionCall

	match              []fieldMatch // P4Info field order
	priority           int32
	controllerMetadata uint64
	metadata           []byte
	idleTimeoutNs      int64
	isDefault          bool
	counter            [2]uint64 // direct counter: packets, bytes (atomic)

	key  string // control-plane identity: match + priority
	seq  uint64 // insertion order (ties between equal priorities)
	k2   key2   // hash key of the fast path
	rank int64  // order inside a scan group (higher first)
	scan []scanMatch
}

// key2 is a fast-path hash key: up to 128 bits of packed fields.
type key2 struct{ hi, lo uint64 }

// hmap is a hash map keyed by packed fields: a map[uint64] (Go's fast path)
// when the fields fit in 64 bits, else a map[key2].
type hmap[V any] struct {
	narrow bool
	m64    map[uint64]V
	m128   map[key2]V
}

func newHmap[V any](bits int) hmap[V] {
	if bits <= 64 {
		return hmap[V]{narrow: true, m64: map[uint64]V{}}
	}
	return hmap[V]{m128: map[key2]V{}}
}

func (h *hmap[V]) get(k key2) (V, bool) {
	if h.narrow {
		v, ok := h.m64[k.lo]
		return v, ok
	}
	v, ok := h.m128[k]
	return v, ok
}

func (h *hmap[V]) put(k key2, v V) {
	if h.narrow {
		h.m64[k.lo] = v
	} else {
		h.m128[k] = v
	}
}

func (h *hmap[V]) del(k key2) {
	if h.narrow {
		delete(h.m64, k.lo)
	} else {
		delete(h.m128, k)
	}
}

func (h *hmap[V]) len() int {
	if h.narrow {
		return len(h.m64)
	}
	return len(h.m128)
}

func (k *key2) push(v uint64, w int) {
	if w >= 64 {
		k.hi, k.lo = k.lo, v
		return
	}
	k.hi = k.hi<<uint(w) | k.lo>>uint(64-w)
	k.lo = k.lo<<uint(w) | v
}

type lookupMode uint8

const (
	modeExact lookupMode = iota // all fields exact: one hash map
	modeLPM                     // exact fields + one LPM field: a hash map per prefix length
	modeScan                    // ternary/range/optional: groups by exact fields, scanned by priority
)

// Table is a match-action table. Lookup and Apply are the packet path; they
// must be called with the engine's read lock held (see Engine.Acquire).
type Table struct {
	ID   uint32
	Name string
	Size int // P4Info size; 0 = unlimited

	fields       []fieldInfo
	actions      map[uint32]*actionInfo // the pipeline's actions
	fieldIdx     map[uint32]int
	refs         map[uint32]p4configv1.ActionRef_Scope
	needPriority bool
	constDefault bool
	constTable   bool
	idleTimeouts bool
	indirect     bool
	strict       bool
	directID     uint32
	directUnit   p4configv1.CounterSpec_Unit

	initialDefault ActionCall
	def            *Entry
	entries        map[string]*Entry
	seq            uint64

	mode       lookupMode
	hashFields []int
	lpmField   int
	scanFields []int
	exact      hmap[*Entry]
	lpmLens    []int // present prefix lengths, longest first
	lpmCount   [MaxWidth + 1]int
	lpmMaps    [MaxWidth + 1]hmap[*Entry]
	lpmFilter  [MaxWidth + 1][]uint32 // per length: entries per value of the prefix's first filterBits bits
	lpmBits    int
	groups     hmap[*group]
}

// group is the entries of a scan table sharing their exact fields, in
// lookup order, with their non-exact fields copied into one flat array so
// that a scan walks contiguous memory.
type group struct {
	entries []*Entry
	flat    []scanMatch // len(entries) * len(scanFields)
}

// scanMatch is a fieldMatch reduced to what the lookup tests.
type scanMatch struct{ value, mask, lo, hi uint64 }

func (g *group) rebuild() {
	g.flat = g.flat[:0]
	for _, e := range g.entries {
		g.flat = append(g.flat, e.scan...)
	}
}

// layout chooses the fast-path structure from the key's match kinds.
func (t *Table) layout() {
	var lpms, hashBits int
	var exact []int
	for i, f := range t.fields {
		switch f.kind {
		case kindTernary, kindRange, kindOptional:
			t.needPriority = true
		case kindLPM:
			lpms++
			t.lpmField = i
		case kindExact:
			exact = append(exact, i)
			hashBits += f.width
		}
	}
	switch {
	case !t.needPriority && lpms == 0 && hashBits <= 128:
		t.mode = modeExact
		t.hashFields = exact
		t.exact = newHmap[*Entry](hashBits)
	case !t.needPriority && lpms == 1 && hashBits+t.fields[t.lpmField].width <= 128:
		t.mode = modeLPM
		t.hashFields = exact
		t.lpmBits = hashBits + t.fields[t.lpmField].width
	default:
		t.mode = modeScan
		if hashBits <= 128 {
			t.hashFields = exact
			t.groups = newHmap[*group](hashBits)
		} else {
			t.groups = newHmap[*group](0)
		}
		in := map[int]bool{}
		for _, f := range t.hashFields {
			in[f] = true
		}
		for i := range t.fields {
			if !in[i] {
				t.scanFields = append(t.scanFields, i)
			}
		}
	}
}

// Fields returns the number of key fields; Lookup and Apply take that many
// values, in P4Info order.
func (t *Table) Fields() int { return len(t.fields) }

func (t *Table) hashKey(key []uint64) key2 {
	var k key2
	for _, f := range t.hashFields {
		k.push(key[f], t.fields[f].width)
	}
	return k
}

// Lookup returns the entry a packet with the given key values hits, or nil.
// It does not allocate.
func (t *Table) Lookup(key []uint64) *Entry {
	if len(key) != len(t.fields) {
		return nil
	}
	switch t.mode {
	case modeExact:
		if t.exact.len() == 0 {
			return nil
		}
		e, _ := t.exact.get(t.hashKey(key))
		return e
	case modeLPM:
		base := t.hashKey(key)
		w := t.fields[t.lpmField].width
		v := key[t.lpmField]
		for _, l := range t.lpmLens {
			if t.lpmFilter[l][filterIndex(v, w, l)] == 0 {
				continue
			}
			k := base
			k.push(v&prefixMask(w, l), w)
			if e, ok := t.lpmMaps[l].get(k); ok {
				return e
			}
		}
		return nil
	default:
		g, _ := t.groups.get(t.hashKey(key))
		if g == nil {
			return nil
		}
		nf := len(t.scanFields)
		flat := g.flat
	next:
		for i, e := range g.entries {
			ms := flat[i*nf : i*nf+nf]
			for j, f := range t.scanFields {
				m, k := &ms[j], key[f]
				if k&m.mask != m.value || k < m.lo || k > m.hi {
					continue next
				}
			}
			return e
		}
		return nil
	}
}

// Apply looks key up, counts the packet in the table's direct counter (if
// any) and returns whether it hit and the action to run: the entry's on a
// hit, the default action on a miss. It does not allocate.
func (t *Table) Apply(key []uint64, packetBytes int) (hit bool, action *ActionCall) {
	e := t.Lookup(key)
	hit = e != nil
	if !hit {
		e = t.def
	}
	if t.directID != 0 {
		atomic.AddUint64(&e.counter[0], 1)
		atomic.AddUint64(&e.counter[1], uint64(packetBytes))
	}
	return hit, &e.Action
}

// Len returns the number of (non-default) entries.
func (t *Table) Len() int { return len(t.entries) }

// index adds e to the fast-path structures (e.key/e.match already set).
func (t *Table) index(e *Entry) {
	var k key2
	for _, f := range t.hashFields {
		k.push(e.match[f].value, t.fields[f].width)
	}
	switch t.mode {
	case modeExact:
		e.k2 = k
		t.exact.put(k, e)
	case modeLPM:
		m := e.match[t.lpmField]
		k.push(m.value, t.fields[t.lpmField].width)
		e.k2 = k
		if t.lpmMaps[m.plen].m64 == nil && t.lpmMaps[m.plen].m128 == nil {
			t.lpmMaps[m.plen] = newHmap[*Entry](t.lpmBits)
		}
		t.lpmMaps[m.plen].put(k, e)
		if t.lpmFilter[m.plen] == nil {
			t.lpmFilter[m.plen] = make([]uint32, 1<<uint(min(m.plen, filterBits)))
		}
		t.lpmFilter[m.plen][filterIndex(m.value, t.fields[t.lpmField].width, m.plen)]++
		t.lpmCount[m.plen]++
		if t.lpmCount[m.plen] == 1 {
			t.rebuildLens()
		}
	default:
		e.k2 = k
		e.scan = e.scan[:0]
		e.rank = int64(e.priority)
		for _, f := range t.scanFields {
			m := e.match[f]
			e.scan = append(e.scan, scanMatch{value: m.value, mask: m.mask, lo: m.lo, hi: m.hi})
			if !t.needPriority { // LPM tables too wide to hash: longest prefix first
				e.rank += int64(e.match[f].plen)
			}
		}
		g, _ := t.groups.get(k)
		if g == nil {
			g = &group{}
			t.groups.put(k, g)
		}
		i := sort.Search(len(g.entries), func(i int) bool {
			o := g.entries[i]
			return o.rank < e.rank || (o.rank == e.rank && o.seq > e.seq)
		})
		g.entries = append(g.entries, nil)
		copy(g.entries[i+1:], g.entries[i:])
		g.entries[i] = e
		g.rebuild()
	}
}

// unindex removes e from the fast-path structures.
func (t *Table) unindex(e *Entry) {
	switch t.mode {
	case modeExact:
		t.exact.del(e.k2)
	case modeLPM:
		m := e.match[t.lpmField]
		t.lpmMaps[m.plen].del(e.k2)
		t.lpmFilter[m.plen][filterIndex(m.value, t.fields[t.lpmField].width, m.plen)]--
		t.lpmCount[m.plen]--
		if t.lpmCount[m.plen] == 0 {
			t.rebuildLens()
			t.lpmFilter[m.plen] = nil
		}
	default:
		g, _ := t.groups.get(e.k2)
		if g == nil {
			return
		}
		for i, o := range g.entries {
			if o == e {
				g.entries = append(g.entries[:i], g.entries[i+1:]...)
				break
			}
		}
		g.rebuild()
		if len(g.entries) == 0 {
			t.groups.del(e.k2)
		}
	}
}

// filterBits is how many leading bits of an LPM prefix index its length's
// presence filter: a lookup skips a prefix length whose filter cell for the
// key is 0, so most lengths cost an array read instead of a hash lookup.
const filterBits = 16

// filterIndex returns the filter cell of value v for prefix length plen of a
// width-bit field.
func filterIndex(v uint64, width, plen int) uint64 {
	fb := min(plen, filterBits)
	if fb == 0 {
		return 0
	}
	return v >> uint(width-fb) & (1<<uint(fb) - 1)
}

func (t *Table) rebuildLens() {
	t.lpmLens = t.lpmLens[:0]
	for l := MaxWidth; l >= 0; l-- {
		if t.lpmCount[l] > 0 {
			t.lpmLens = append(t.lpmLens, l)
		}
	}
}

// entryKey is the control-plane identity of an entry: its match and priority.
func entryKey(match []fieldMatch, priority int32) string {
	b := make([]byte, 0, len(match)*25+4)
	for _, m := range match {
		if !m.present {
			b = append(b, 0)
			continue
		}
		b = append(b, 1)
		b = binary.BigEndian.AppendUint64(b, m.value)
		b = binary.BigEndian.AppendUint64(b, m.mask)
		b = binary.BigEndian.AppendUint64(b, m.lo)
		b = binary.BigEndian.AppendUint64(b, m.hi)
	}
	b = binary.BigEndian.AppendUint32(b, uint32(priority))
	return string(b)
}

// insert adds e (validated, key set) to the table.
func (t *Table) insert(e *Entry) {
	t.seq++
	e.seq = t.seq
	t.entries[e.key] = e
	t.index(e)
}

// remove deletes e from the table.
func (t *Table) remove(e *Entry) {
	delete(t.entries, e.key)
	t.unindex(e)
}
