package engine

// This file is what a datapath that keeps its own copy of the switch state
// (the XDP target's BPF maps, pkg/dataplane/xdp) needs from the engine:
// the net changes of each Write batch (Options.OnWrite), a veto on inserts
// its representation cannot hold (Options.Admit), and read access to
// entries' matches and precedence.

// Changes are the net effects of one Write batch, in the order the updates
// were applied. An atomic batch that failed and was undone changes nothing
// and is not reported.
type Changes struct {
	// Entries lists table entries inserted, modified or deleted. An entry
	// still in its table (Table.Has) was inserted or modified; one that is
	// not was deleted (the same match may have been inserted again: a later
	// EntryChange says so).
	Entries []EntryChange
	// Defaults are the tables whose default entry was modified.
	Defaults []*Table
	// Counters, Registers and Digests were written by the controller.
	Counters  []*Counter
	Registers []*Register
	Digests   []*Digest
}

// EntryChange is one table entry a batch touched.
type EntryChange struct {
	Table *Table
	Entry *Entry
}

// Empty reports whether the batch changed nothing.
func (c *Changes) Empty() bool {
	return len(c.Entries)+len(c.Defaults)+len(c.Counters)+len(c.Registers)+len(c.Digests) == 0
}

// note* record a successful update of the batch being applied (no-ops
// outside Write).
func (p *Pipeline) noteEntry(t *Table, e *Entry) {
	if p.pending != nil {
		p.pending.Entries = append(p.pending.Entries, EntryChange{t, e})
	}
}

func (p *Pipeline) noteDefault(t *Table) {
	if p.pending != nil {
		p.pending.Defaults = append(p.pending.Defaults, t)
	}
}

func (p *Pipeline) noteCounter(c *Counter) {
	if p.pending != nil {
		p.pending.Counters = append(p.pending.Counters, c)
	}
}

func (p *Pipeline) noteRegister(r *Register) {
	if p.pending != nil {
		p.pending.Registers = append(p.pending.Registers, r)
	}
}

func (p *Pipeline) noteDigest(d *Digest) {
	if p.pending != nil {
		p.pending.Digests = append(p.pending.Digests, d)
	}
}

// FieldMatch is one key field of an entry: a field matches key k when
// k&Mask == Value and Low <= k <= High. Exact fields have Mask = all ones,
// LPM fields the prefix's mask and PrefixLen, ternary fields their mask,
// range fields Mask = 0 and their bounds; an omitted (don't care) field has
// Present = false and matches everything.
type FieldMatch struct {
	Present     bool
	Value, Mask uint64
	Low, High   uint64
	PrefixLen   int
}

// Match returns the entry's key field i (P4Info field order).
func (e *Entry) Match(i int) FieldMatch {
	if i < 0 || i >= len(e.match) {
		return FieldMatch{}
	}
	m := e.match[i]
	return FieldMatch{Present: m.present, Value: m.value, Mask: m.mask, Low: m.lo, High: m.hi, PrefixLen: m.plen}
}

// Priority returns the entry's P4Runtime priority (0 in tables without
// ternary, range or optional fields).
func (e *Entry) Priority() int32 { return e.priority }

// Seq is the entry's insertion order in its table: between two matching
// entries of equal priority, the lower Seq wins (Precedes).
func (e *Entry) Seq() uint64 { return e.seq }

// Precedes reports whether e wins over o when a key matches both: the
// higher priority, and between equal priorities the entry inserted first
// (the engine's lookup order).
func (e *Entry) Precedes(o *Entry) bool {
	if e.priority != o.priority {
		return e.priority > o.priority
	}
	return e.seq < o.seq
}

// Has reports whether e is one of t's current entries.
func (t *Table) Has(e *Entry) bool { return e != nil && t.entries[e.key] == e }

// Entries calls fn for each of t's entries, in no particular order, until
// fn returns false. Call it with the engine's lock held (in OnWrite,
// OnCommit, Admit, or between Acquire and Release).
func (t *Table) Entries(fn func(*Entry) bool) {
	for _, e := range t.entries {
		if !fn(e) {
			return
		}
	}
}

// DefaultAction returns the action t runs on a miss.
func (t *Table) DefaultAction() *ActionCall { return &t.def.Action }

// Set stores packets and bytes at index i (out-of-range indices are
// ignored): for a datapath that counts elsewhere and copies its counts in
// before a read.
func (c *Counter) Set(i uint64, packets, bytes uint64) {
	if i >= uint64(c.Size) {
		return
	}
	c.set(i, packets, bytes)
}

// Carried reports whether the pipeline was installed by
// RECONCILE_AND_COMMIT over a running one, taking its state: a datapath
// that holds registers and counters itself keeps them.
func (p *Pipeline) Carried() bool { return p.carried }

// Siblings calls fn for each of t's entries whose exact key fields equal
// e's (e need not be in t), until fn returns false: in a table with
// ternary, range or optional fields, the entries a lookup with e's exact
// fields scans; in other tables, every entry. Call it with the engine's
// lock held.
func (t *Table) Siblings(e *Entry, fn func(*Entry) bool) {
	if t.mode != modeScan {
		t.Entries(fn)
		return
	}
	var k key2
	for _, f := range t.hashFields {
		k.push(e.match[f].value, t.fields[f].width)
	}
	g, _ := t.groups.get(k)
	if g == nil {
		return
	}
	for _, o := range g.entries {
		if !fn(o) {
			return
		}
	}
}
