package engine

import (
	"bytes"
	"context"
	"fmt"
	"sort"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
)

// Read implements p4rtserver.Target with the spec's wildcards: table_id 0
// reads every table, an empty match every (non-default) entry,
// is_default_action the default entry; counter_id / register_id 0 every
// array, an unset index every cell. Results are collected under the read
// lock and emitted after it is released, so a slow reader never stalls
// packets or writes.
func (e *Engine) Read(ctx context.Context, ent *p4v1.Entity, emit func(*p4v1.Entity) error) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	e.mu.RLock()
	p := e.cur
	if p == nil {
		e.mu.RUnlock()
		return noPipeline()
	}
	var out []*p4v1.Entity
	err := p.read(ent, &out)
	e.mu.RUnlock()
	if err != nil {
		return err
	}
	for _, x := range out {
		if err := ctxErr(ctx); err != nil {
			return err
		}
		if err := emit(x); err != nil {
			return err
		}
	}
	return nil
}

func (p *Pipeline) read(ent *p4v1.Entity, out *[]*p4v1.Entity) error {
	switch x := ent.GetEntity().(type) {
	case *p4v1.Entity_TableEntry:
		return p.readTables(x.TableEntry, out)
	case *p4v1.Entity_CounterEntry:
		return p.readCounters(x.CounterEntry, out)
	case *p4v1.Entity_DirectCounterEntry:
		return p.readDirectCounters(x.DirectCounterEntry, out)
	case *p4v1.Entity_RegisterEntry:
		return p.readRegisters(x.RegisterEntry, out)
	case *p4v1.Entity_MeterEntry:
		if len(p.info.GetMeters()) == 0 {
			return nil
		}
	case *p4v1.Entity_DirectMeterEntry:
		if len(p.info.GetDirectMeters()) == 0 {
			return nil
		}
	case *p4v1.Entity_ActionProfileMember, *p4v1.Entity_ActionProfileGroup:
		if len(p.info.GetActionProfiles()) == 0 {
			return nil
		}
	case *p4v1.Entity_ValueSetEntry:
		if len(p.info.GetValueSets()) == 0 {
			return nil
		}
	case *p4v1.Entity_DigestEntry:
		return p.readDigests(x.DigestEntry, out)
	case nil:
		return invalid("read entity has no type")
	}
	return errUnimplemented(fmt.Sprintf("reading %T", ent.GetEntity()))
}

func (p *Pipeline) readTables(te *p4v1.TableEntry, out *[]*p4v1.Entity) error {
	if te == nil {
		te = &p4v1.TableEntry{}
	}
	tables := p.tables
	if te.GetTableId() != 0 {
		t, err := p.table(te.GetTableId())
		if err != nil {
			return err
		}
		tables = []*Table{t}
	}
	withCounter := te.GetCounterData() != nil
	for _, t := range tables {
		if te.GetIsDefaultAction() {
			*out = append(*out, tableEntity(t.toProto(t.def, withCounter)))
			continue
		}
		if len(te.GetMatch()) > 0 {
			match, err := t.parseMatch(te.GetMatch())
			if err != nil {
				return err
			}
			if err := t.checkPriority(te.GetPriority()); err != nil {
				return err
			}
			if e := t.entries[entryKey(match, te.GetPriority())]; e != nil && filter(te, e) {
				*out = append(*out, tableEntity(t.toProto(e, withCounter)))
			}
			continue
		}
		for _, e := range t.sorted() {
			if filter(te, e) {
				*out = append(*out, tableEntity(t.toProto(e, withCounter)))
			}
		}
	}
	return nil
}

// filter applies the non-key read filters of te to e.
func filter(te *p4v1.TableEntry, e *Entry) bool {
	if id := te.GetAction().GetAction().GetActionId(); id != 0 && id != e.Action.ID {
		return false
	}
	if te.GetPriority() != 0 && te.GetPriority() != e.priority {
		return false
	}
	//lint:ignore SA1019 a P4Runtime server honours the deprecated controller_metadata for the clients that still set it
	if te.GetControllerMetadata() != 0 && te.GetControllerMetadata() != e.controllerMetadata {
		return false
	}
	if len(te.GetMetadata()) > 0 && !bytes.Equal(te.GetMetadata(), e.metadata) {
		return false
	}
	return true
}

// sorted returns the table's entries in insertion order.
func (t *Table) sorted() []*Entry {
	s := make([]*Entry, 0, len(t.entries))
	for _, e := range t.entries {
		s = append(s, e)
	}
	sort.Slice(s, func(i, j int) bool { return s[i].seq < s[j].seq })
	return s
}

func tableEntity(te *p4v1.TableEntry) *p4v1.Entity {
	return &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: te}}
}

// keyProto returns e's identifying fields (table, match, priority, default flag).
func (t *Table) keyProto(e *Entry) *p4v1.TableEntry {
	te := &p4v1.TableEntry{TableId: t.ID, IsDefaultAction: e.isDefault}
	if e.isDefault {
		return te
	}
	te.Priority = e.priority
	for i, m := range e.match {
		if !m.present {
			continue
		}
		f := t.fields[i]
		fm := &p4v1.FieldMatch{FieldId: f.id}
		switch f.kind {
		case kindExact:
			fm.FieldMatchType = &p4v1.FieldMatch_Exact_{Exact: &p4v1.FieldMatch_Exact{Value: EncodeBits(m.value)}}
		case kindLPM:
			fm.FieldMatchType = &p4v1.FieldMatch_Lpm{Lpm: &p4v1.FieldMatch_LPM{Value: EncodeBits(m.value), PrefixLen: int32(m.plen)}}
		case kindTernary:
			fm.FieldMatchType = &p4v1.FieldMatch_Ternary_{Ternary: &p4v1.FieldMatch_Ternary{Value: EncodeBits(m.value), Mask: EncodeBits(m.mask)}}
		case kindRange:
			fm.FieldMatchType = &p4v1.FieldMatch_Range_{Range: &p4v1.FieldMatch_Range{Low: EncodeBits(m.lo), High: EncodeBits(m.hi)}}
		case kindOptional:
			fm.FieldMatchType = &p4v1.FieldMatch_Optional_{Optional: &p4v1.FieldMatch_Optional{Value: EncodeBits(m.value)}}
		}
		te.Match = append(te.Match, fm)
	}
	return te
}

func (t *Table) toProto(e *Entry, withCounter bool) *p4v1.TableEntry {
	te := t.keyProto(e)
	if e.Action.ID != 0 {
		a := &p4v1.Action{ActionId: e.Action.ID}
		ai := t.actions[e.Action.ID]
		for i, v := range e.Action.Params {
			a.Params = append(a.Params, &p4v1.Action_Param{ParamId: ai.params[i].id, Value: EncodeBits(v)})
		}
		te.Action = &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: a}}
	}
	//lint:ignore SA1019 a P4Runtime server honours the deprecated controller_metadata for the clients that still set it
	te.ControllerMetadata = e.controllerMetadata
	if len(e.metadata) > 0 {
		te.Metadata = append([]byte(nil), e.metadata...)
	}
	te.IdleTimeoutNs = e.idleTimeoutNs
	te.IsConst = t.constTable && !e.isDefault
	if withCounter && t.directID != 0 {
		te.CounterData = t.counterProto(e)
	}
	return te
}

func (t *Table) counterProto(e *Entry) *p4v1.CounterData {
	pk, by := loadPair(&e.counter)
	return unitData(t.directUnit, pk, by)
}
