package engine

import (
	"sync/atomic"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
)

func loadPair(c *[2]uint64) (packets, bytes uint64) {
	return atomic.LoadUint64(&c[0]), atomic.LoadUint64(&c[1])
}

// unitData reports the values a counter of the given unit counts.
func unitData(u p4configv1.CounterSpec_Unit, packets, bytes uint64) *p4v1.CounterData {
	d := &p4v1.CounterData{}
	if u != p4configv1.CounterSpec_BYTES {
		d.PacketCount = int64(packets)
	}
	if u != p4configv1.CounterSpec_PACKETS {
		d.ByteCount = int64(bytes)
	}
	return d
}

func (p *Pipeline) readCounters(ce *p4v1.CounterEntry, out *[]*p4v1.Entity) error {
	counters := p.counters
	if ce.GetCounterId() != 0 {
		c, ok := p.countersByID[ce.GetCounterId()]
		if !ok {
			return invalid("unknown counter id %d", ce.GetCounterId())
		}
		counters = []*Counter{c}
	}
	for _, c := range counters {
		i, all, err := checkIndex("counter "+c.Name, ce.GetIndex(), c.Size)
		if err != nil {
			return err
		}
		lo, hi := i, i+1
		if all {
			lo, hi = 0, uint64(c.Size)
		}
		for j := lo; j < hi; j++ {
			pk, by := c.Get(j)
			*out = append(*out, &p4v1.Entity{Entity: &p4v1.Entity_CounterEntry{CounterEntry: &p4v1.CounterEntry{
				CounterId: c.ID, Index: &p4v1.Index{Index: int64(j)}, Data: unitData(c.Unit, pk, by)}}})
		}
	}
	return nil
}

func (p *Pipeline) readDirectCounters(dce *p4v1.DirectCounterEntry, out *[]*p4v1.Entity) error {
	te := dce.GetTableEntry()
	emit := func(t *Table, e *Entry) {
		*out = append(*out, &p4v1.Entity{Entity: &p4v1.Entity_DirectCounterEntry{DirectCounterEntry: &p4v1.DirectCounterEntry{
			TableEntry: t.keyProto(e), Data: t.counterProto(e)}}})
	}
	if te.GetTableId() == 0 {
		for _, t := range p.tables {
			if t.directID == 0 {
				continue
			}
			for _, e := range t.sorted() {
				emit(t, e)
			}
		}
		return nil
	}
	t, err := p.table(te.GetTableId())
	if err != nil {
		return err
	}
	if t.directID == 0 {
		return invalid("table %s has no direct counter", t.Name)
	}
	if te.GetIsDefaultAction() || len(te.GetMatch()) > 0 {
		_, e, err := p.findEntry(te)
		if err != nil {
			return err
		}
		emit(t, e)
		return nil
	}
	for _, e := range t.sorted() {
		emit(t, e)
	}
	return nil
}

func (p *Pipeline) readRegisters(re *p4v1.RegisterEntry, out *[]*p4v1.Entity) error {
	regs := p.registers
	if re.GetRegisterId() != 0 {
		r, ok := p.registersByID[re.GetRegisterId()]
		if !ok {
			return invalid("unknown register id %d", re.GetRegisterId())
		}
		regs = []*Register{r}
	}
	for _, r := range regs {
		i, all, err := checkIndex("register "+r.Name, re.GetIndex(), r.Size)
		if err != nil {
			return err
		}
		lo, hi := i, i+1
		if all {
			lo, hi = 0, uint64(r.Size)
		}
		for j := lo; j < hi; j++ {
			*out = append(*out, &p4v1.Entity{Entity: &p4v1.Entity_RegisterEntry{RegisterEntry: &p4v1.RegisterEntry{
				RegisterId: r.ID, Index: &p4v1.Index{Index: int64(j)},
				Data: &p4v1.P4Data{Data: &p4v1.P4Data_Bitstring{Bitstring: EncodeBits(r.Read(j))}}}}})
		}
	}
	return nil
}
