package engine

import (
	"context"
	"fmt"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Write implements p4rtserver.Target. Updates are applied in order under the
// engine's write lock, so packets see a batch either not at all or whole.
// With ROLLBACK_ON_ERROR or DATAPLANE_ATOMIC, a batch with any failed update
// is undone entirely and the updates that succeeded report ABORTED.
func (e *Engine) Write(ctx context.Context, updates []*p4v1.Update, atomicity p4v1.WriteRequest_Atomicity) []error {
	errs := make([]error, len(updates))
	fail := func(err error) []error {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	if err := ctxErr(ctx); err != nil {
		return fail(err)
	}
	var atomic bool
	switch atomicity {
	case p4v1.WriteRequest_CONTINUE_ON_ERROR:
	case p4v1.WriteRequest_ROLLBACK_ON_ERROR, p4v1.WriteRequest_DATAPLANE_ATOMIC:
		atomic = true
	default:
		return fail(invalid("unknown write atomicity %v", atomicity))
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	p := e.cur
	if p == nil {
		return fail(noPipeline())
	}
	var undo *[]func()
	if atomic {
		undo = new([]func())
	}
	failed := false
	ch := &Changes{}
	p.pending = ch
	for i, u := range updates {
		if errs[i] = p.apply(u, undo); errs[i] != nil {
			failed = true
		}
	}
	p.pending = nil
	if atomic && failed {
		ch = &Changes{}
		for j := len(*undo) - 1; j >= 0; j-- {
			(*undo)[j]()
		}
		for i := range errs {
			if errs[i] == nil {
				errs[i] = status.Error(codes.Aborted, "not applied: another update of this atomic batch failed")
			}
		}
	}
	if e.opts.OnWrite != nil && !ch.Empty() {
		e.opts.OnWrite(p, ch)
	}
	return errs
}

func record(undo *[]func(), fn func()) {
	if undo != nil {
		*undo = append(*undo, fn)
	}
}

// apply performs one update. It either succeeds entirely or changes nothing.
func (p *Pipeline) apply(u *p4v1.Update, undo *[]func()) error {
	if u == nil || u.GetEntity() == nil {
		return invalid("update has no entity")
	}
	switch u.GetType() {
	case p4v1.Update_INSERT, p4v1.Update_MODIFY, p4v1.Update_DELETE:
	default:
		return invalid("update type %v", u.GetType())
	}
	switch ent := u.GetEntity().GetEntity().(type) {
	case *p4v1.Entity_TableEntry:
		return p.writeTableEntry(u.GetType(), ent.TableEntry, undo)
	case *p4v1.Entity_CounterEntry:
		return p.writeCounter(u.GetType(), ent.CounterEntry, undo)
	case *p4v1.Entity_DirectCounterEntry:
		return p.writeDirectCounter(u.GetType(), ent.DirectCounterEntry, undo)
	case *p4v1.Entity_RegisterEntry:
		return p.writeRegister(u.GetType(), ent.RegisterEntry, undo)
	case *p4v1.Entity_DigestEntry:
		return p.writeDigest(u.GetType(), ent.DigestEntry, undo)
	case nil:
		return invalid("update has no entity")
	default:
		return errUnimplemented(fmt.Sprintf("writing %T", ent))
	}
}

func (p *Pipeline) table(id uint32) (*Table, error) {
	t, ok := p.tablesByID[id]
	if !ok {
		return nil, invalid("unknown table id %d", id)
	}
	return t, nil
}

// parseMatch validates a TableEntry's match per the P4Runtime spec ("Match
// Format") and returns it normalised, in P4Info field order.
func (t *Table) parseMatch(fms []*p4v1.FieldMatch) ([]fieldMatch, error) {
	m := make([]fieldMatch, len(t.fields))
	for i, f := range t.fields {
		m[i] = fieldMatch{hi: f.max}
	}
	seen := make([]bool, len(t.fields))
	for _, fm := range fms {
		i, ok := t.fieldIdx[fm.GetFieldId()]
		if !ok {
			return nil, invalid("table %s: unknown match field id %d", t.Name, fm.GetFieldId())
		}
		if seen[i] {
			return nil, invalid("table %s: match field %s given twice", t.Name, t.fields[i].name)
		}
		seen[i] = true
		f := t.fields[i]
		where := func(err error) error {
			return invalid("table %s: field %s (%s, %d bits): %v", t.Name, f.name, f.kind, f.width, err)
		}
		dec := func(b []byte) (uint64, error) { return decodeBits(b, f.width, t.strict) }
		var want fieldKind
		switch x := fm.GetFieldMatchType().(type) {
		case *p4v1.FieldMatch_Exact_:
			want = kindExact
			if f.kind == want {
				v, err := dec(x.Exact.GetValue())
				if err != nil {
					return nil, where(err)
				}
				m[i] = fieldMatch{present: true, value: v, mask: f.max, hi: f.max}
			}
		case *p4v1.FieldMatch_Lpm:
			want = kindLPM
			if f.kind == want {
				plen := int(x.Lpm.GetPrefixLen())
				if plen <= 0 {
					return nil, where(fmt.Errorf("prefix_len %d: a don't-care LPM match must be omitted", plen))
				}
				if plen > f.width {
					return nil, where(fmt.Errorf("prefix_len %d exceeds the field width", plen))
				}
				v, err := dec(x.Lpm.GetValue())
				if err != nil {
					return nil, where(err)
				}
				pm := prefixMask(f.width, plen)
				if v&^pm != 0 {
					return nil, where(fmt.Errorf("value %#x has bits set beyond prefix /%d", v, plen))
				}
				m[i] = fieldMatch{present: true, value: v, mask: pm, hi: f.max, plen: plen}
			}
		case *p4v1.FieldMatch_Ternary_:
			want = kindTernary
			if f.kind == want {
				v, err := dec(x.Ternary.GetValue())
				if err != nil {
					return nil, where(fmt.Errorf("value: %w", err))
				}
				mk, err := dec(x.Ternary.GetMask())
				if err != nil {
					return nil, where(fmt.Errorf("mask: %w", err))
				}
				if mk == 0 {
					return nil, where(fmt.Errorf("mask 0: a don't-care ternary match must be omitted"))
				}
				if v&^mk != 0 {
					return nil, where(fmt.Errorf("value %#x has bits outside mask %#x", v, mk))
				}
				m[i] = fieldMatch{present: true, value: v, mask: mk, hi: f.max}
			}
		case *p4v1.FieldMatch_Range_:
			want = kindRange
			if f.kind == want {
				lo, err := dec(x.Range.GetLow())
				if err != nil {
					return nil, where(fmt.Errorf("low: %w", err))
				}
				hi, err := dec(x.Range.GetHigh())
				if err != nil {
					return nil, where(fmt.Errorf("high: %w", err))
				}
				if lo > hi {
					return nil, where(fmt.Errorf("low %d > high %d", lo, hi))
				}
				if lo == 0 && hi == f.max {
					return nil, where(fmt.Errorf("range [0, %d] is a don't care and must be omitted", hi))
				}
				m[i] = fieldMatch{present: true, lo: lo, hi: hi}
			}
		case *p4v1.FieldMatch_Optional_:
			want = kindOptional
			if f.kind == want {
				v, err := dec(x.Optional.GetValue())
				if err != nil {
					return nil, where(err)
				}
				m[i] = fieldMatch{present: true, value: v, mask: f.max, hi: f.max}
			}
		case nil:
			return nil, where(fmt.Errorf("no match value set"))
		default:
			return nil, status.Errorf(codes.Unimplemented, "table %s: field %s: match type %T is not supported", t.Name, f.name, x)
		}
		if want != f.kind {
			return nil, where(fmt.Errorf("got a %s match", want))
		}
	}
	for i, f := range t.fields {
		if f.kind == kindExact && !seen[i] {
			return nil, invalid("table %s: exact field %s is missing (exact fields cannot be omitted)", t.Name, f.name)
		}
	}
	return m, nil
}

func (t *Table) checkPriority(prio int32) error {
	switch {
	case prio < 0:
		return invalid("table %s: negative priority %d", t.Name, prio)
	case t.needPriority && prio == 0:
		return invalid("table %s has ternary, range or optional fields: priority must be > 0", t.Name)
	case !t.needPriority && prio != 0:
		return invalid("table %s has only exact/LPM fields: priority must be 0, got %d", t.Name, prio)
	}
	return nil
}

// parseAction validates a TableAction for t (isDefault: for the default entry).
func (p *Pipeline) parseAction(t *Table, ta *p4v1.TableAction, isDefault bool) (ActionCall, error) {
	a := ta.GetAction()
	if a == nil {
		if ta.GetType() != nil && !t.indirect {
			return ActionCall{}, invalid("table %s is a direct table: give an action, not %T", t.Name, ta.GetType())
		}
		return ActionCall{}, invalid("table %s: entry has no action", t.Name)
	}
	ai, ok := p.actions[a.GetActionId()]
	if !ok {
		return ActionCall{}, invalid("table %s: unknown action id %d", t.Name, a.GetActionId())
	}
	scope, ok := t.refs[ai.id]
	if !ok {
		return ActionCall{}, invalid("table %s: action %s is not one of the table's actions", t.Name, ai.name)
	}
	if isDefault && scope == p4configv1.ActionRef_TABLE_ONLY {
		return ActionCall{}, status.Errorf(codes.PermissionDenied, "table %s: action %s is @tableonly and cannot be the default action", t.Name, ai.name)
	}
	if !isDefault && scope == p4configv1.ActionRef_DEFAULT_ONLY {
		return ActionCall{}, status.Errorf(codes.PermissionDenied, "table %s: action %s is @defaultonly and cannot be used in an entry", t.Name, ai.name)
	}
	call := ActionCall{ID: ai.id, Params: make([]uint64, len(ai.params))}
	seen := make([]bool, len(ai.params))
	for _, prm := range a.GetParams() {
		i, ok := ai.paramIdx[prm.GetParamId()]
		if !ok {
			return ActionCall{}, invalid("table %s: action %s has no param id %d", t.Name, ai.name, prm.GetParamId())
		}
		if seen[i] {
			return ActionCall{}, invalid("table %s: action %s: param %s given twice", t.Name, ai.name, ai.params[i].name)
		}
		seen[i] = true
		v, err := decodeBits(prm.GetValue(), ai.params[i].width, t.strict)
		if err != nil {
			return ActionCall{}, invalid("table %s: action %s param %s (%d bits): %v", t.Name, ai.name, ai.params[i].name, ai.params[i].width, err)
		}
		call.Params[i] = v
	}
	for i, s := range seen {
		if !s {
			return ActionCall{}, invalid("table %s: action %s: param %s is missing", t.Name, ai.name, ai.params[i].name)
		}
	}
	return call, nil
}

func counterData(d *p4v1.CounterData) (packets, bytes uint64, err error) {
	if d.GetPacketCount() < 0 || d.GetByteCount() < 0 {
		return 0, 0, invalid("negative counter data")
	}
	return uint64(d.GetPacketCount()), uint64(d.GetByteCount()), nil
}

func (t *Table) checkExtras(te *p4v1.TableEntry) error {
	if te.GetMeterConfig() != nil || te.GetMeterCounterData() != nil {
		return invalid("table %s has no direct meter", t.Name)
	}
	if te.GetCounterData() != nil && t.directID == 0 {
		return invalid("table %s has no direct counter", t.Name)
	}
	if te.GetIdleTimeoutNs() != 0 && !t.idleTimeouts {
		return invalid("table %s does not support idle timeouts", t.Name)
	}
	if te.GetIdleTimeoutNs() < 0 {
		return invalid("table %s: negative idle_timeout_ns", t.Name)
	}
	return nil
}

func (p *Pipeline) writeTableEntry(typ p4v1.Update_Type, te *p4v1.TableEntry, undo *[]func()) error {
	t, err := p.table(te.GetTableId())
	if err != nil {
		return err
	}
	if te.GetIsConst() {
		return invalid("table %s: is_const must be false in writes", t.Name)
	}
	if t.indirect {
		return errUnimplemented(fmt.Sprintf("table %s: action profiles", t.Name))
	}
	if te.GetIsDefaultAction() {
		return p.writeDefault(typ, t, te, undo)
	}
	if t.constTable && !(typ == p4v1.Update_MODIFY && te.GetAction() == nil) {
		return status.Errorf(codes.PermissionDenied, "table %s is const", t.Name)
	}
	match, err := t.parseMatch(te.GetMatch())
	if err != nil {
		return err
	}
	if err := t.checkPriority(te.GetPriority()); err != nil {
		return err
	}
	key := entryKey(match, te.GetPriority())
	existing := t.entries[key]
	switch typ {
	case p4v1.Update_INSERT:
		if len(t.fields) == 0 {
			return invalid("table %s is keyless: modify its default entry instead of inserting", t.Name)
		}
		if existing != nil {
			return status.Errorf(codes.AlreadyExists, "table %s: an entry with this match and priority already exists", t.Name)
		}
		if t.Size > 0 && len(t.entries) >= t.Size {
			return status.Errorf(codes.ResourceExhausted, "table %s is full (%d entries)", t.Name, t.Size)
		}
		if te.GetAction() == nil {
			return invalid("table %s: INSERT needs an action", t.Name)
		}
		call, err := p.parseAction(t, te.GetAction(), false)
		if err != nil {
			return err
		}
		if err := t.checkExtras(te); err != nil {
			return err
		}
		e := &Entry{Action: call, match: match, priority: te.GetPriority(), key: key,
			//lint:ignore SA1019 a P4Runtime server honours the deprecated controller_metadata for the clients that still set it
			controllerMetadata: te.GetControllerMetadata(), metadata: append([]byte(nil), te.GetMetadata()...),
			idleTimeoutNs: te.GetIdleTimeoutNs()}
		if d := te.GetCounterData(); d != nil {
			pk, by, err := counterData(d)
			if err != nil {
				return err
			}
			e.counter = [2]uint64{pk, by}
		}
		if p.admit != nil {
			if err := p.admit(t, e); err != nil {
				if _, ok := status.FromError(err); ok {
					return err
				}
				return invalid("table %s: %v", t.Name, err)
			}
		}
		t.insert(e)
		record(undo, func() { t.remove(e) })
		p.noteEntry(t, e)
		return nil
	case p4v1.Update_MODIFY:
		if existing == nil {
			return status.Errorf(codes.NotFound, "table %s: no entry with this match and priority", t.Name)
		}
		call := existing.Action
		if te.GetAction() != nil {
			if call, err = p.parseAction(t, te.GetAction(), false); err != nil {
				return err
			}
		}
		if err := t.checkExtras(te); err != nil {
			return err
		}
		counter := existing.counter
		if d := te.GetCounterData(); d != nil {
			pk, by, err := counterData(d)
			if err != nil {
				return err
			}
			counter = [2]uint64{pk, by}
		}
		old := *existing
		existing.Action = call
		//lint:ignore SA1019 a P4Runtime server honours the deprecated controller_metadata for the clients that still set it
		existing.controllerMetadata = te.GetControllerMetadata()
		existing.metadata = append([]byte(nil), te.GetMetadata()...)
		existing.idleTimeoutNs = te.GetIdleTimeoutNs()
		existing.counter = counter
		record(undo, func() {
			existing.Action, existing.controllerMetadata, existing.metadata = old.Action, old.controllerMetadata, old.metadata
			existing.idleTimeoutNs, existing.counter = old.idleTimeoutNs, old.counter
		})
		p.noteEntry(t, existing)
		return nil
	default: // DELETE: only the key counts
		if existing == nil {
			return status.Errorf(codes.NotFound, "table %s: no entry with this match and priority", t.Name)
		}
		t.remove(existing)
		record(undo, func() {
			t.entries[existing.key] = existing
			t.index(existing)
		})
		p.noteEntry(t, existing)
		return nil
	}
}

func (p *Pipeline) writeDefault(typ p4v1.Update_Type, t *Table, te *p4v1.TableEntry, undo *[]func()) error {
	if typ != p4v1.Update_MODIFY {
		return invalid("table %s: the default entry can only be modified (got %v)", t.Name, typ)
	}
	if len(te.GetMatch()) > 0 || te.GetPriority() != 0 {
		return invalid("table %s: the default entry has no match and priority 0", t.Name)
	}
	if t.constDefault {
		return status.Errorf(codes.PermissionDenied, "table %s: the default action is const", t.Name)
	}
	if te.GetIdleTimeoutNs() != 0 || te.GetMeterConfig() != nil {
		return invalid("table %s: the default entry takes no idle timeout or meter", t.Name)
	}
	if te.GetCounterData() != nil && t.directID == 0 {
		return invalid("table %s has no direct counter", t.Name)
	}
	old := *t.def
	var call ActionCall
	var counter [2]uint64
	if te.GetAction() == nil { // reset to the program's default, direct resources too
		call = cloneCall(t.initialDefault)
	} else {
		var err error
		if call, err = p.parseAction(t, te.GetAction(), true); err != nil {
			return err
		}
		counter = t.def.counter
	}
	if d := te.GetCounterData(); d != nil {
		pk, by, err := counterData(d)
		if err != nil {
			return err
		}
		counter = [2]uint64{pk, by}
	}
	t.def.Action, t.def.counter = call, counter
	//lint:ignore SA1019 a P4Runtime server honours the deprecated controller_metadata for the clients that still set it
	t.def.controllerMetadata, t.def.metadata = te.GetControllerMetadata(), append([]byte(nil), te.GetMetadata()...)
	record(undo, func() {
		t.def.Action, t.def.counter = old.Action, old.counter
		t.def.controllerMetadata, t.def.metadata = old.controllerMetadata, old.metadata
	})
	p.noteDefault(t)
	return nil
}

// index validates an optional P4Runtime index against size; all=true when unset.
func checkIndex(what string, idx *p4v1.Index, size int) (i uint64, all bool, err error) {
	if idx == nil {
		return 0, true, nil
	}
	if idx.GetIndex() < 0 {
		return 0, false, invalid("%s: negative index %d", what, idx.GetIndex())
	}
	if idx.GetIndex() >= int64(size) {
		return 0, false, status.Errorf(codes.OutOfRange, "%s: index %d out of range (size %d)", what, idx.GetIndex(), size)
	}
	return uint64(idx.GetIndex()), false, nil
}

func (p *Pipeline) writeCounter(typ p4v1.Update_Type, ce *p4v1.CounterEntry, undo *[]func()) error {
	if typ != p4v1.Update_MODIFY {
		return invalid("counter entries can only be modified (got %v)", typ)
	}
	c, ok := p.countersByID[ce.GetCounterId()]
	if !ok {
		return invalid("unknown counter id %d", ce.GetCounterId())
	}
	i, all, err := checkIndex("counter "+c.Name, ce.GetIndex(), c.Size)
	if err != nil {
		return err
	}
	if ce.GetData() == nil {
		return nil
	}
	pk, by, err := counterData(ce.GetData())
	if err != nil {
		return err
	}
	lo, hi := i, i+1
	if all {
		lo, hi = 0, uint64(c.Size)
	}
	if undo != nil {
		old := append([]uint64(nil), c.cells[2*lo:2*hi]...)
		record(undo, func() { copy(c.cells[2*lo:2*hi], old) })
	}
	for j := lo; j < hi; j++ {
		c.set(j, pk, by)
	}
	p.noteCounter(c)
	return nil
}

// findEntry locates the entry a DirectCounterEntry (or read filter) names.
func (p *Pipeline) findEntry(te *p4v1.TableEntry) (*Table, *Entry, error) {
	t, err := p.table(te.GetTableId())
	if err != nil {
		return nil, nil, err
	}
	if te.GetIsDefaultAction() {
		return t, t.def, nil
	}
	match, err := t.parseMatch(te.GetMatch())
	if err != nil {
		return nil, nil, err
	}
	if err := t.checkPriority(te.GetPriority()); err != nil {
		return nil, nil, err
	}
	e := t.entries[entryKey(match, te.GetPriority())]
	if e == nil {
		return t, nil, status.Errorf(codes.NotFound, "table %s: no entry with this match and priority", t.Name)
	}
	return t, e, nil
}

func (p *Pipeline) writeDirectCounter(typ p4v1.Update_Type, dce *p4v1.DirectCounterEntry, undo *[]func()) error {
	if typ != p4v1.Update_MODIFY {
		return invalid("direct counter entries can only be modified (got %v)", typ)
	}
	if dce.GetTableEntry() == nil {
		return invalid("direct counter entry without table_entry")
	}
	t, e, err := p.findEntry(dce.GetTableEntry())
	if err != nil {
		return err
	}
	if t.directID == 0 {
		return invalid("table %s has no direct counter", t.Name)
	}
	if dce.GetData() == nil {
		return nil
	}
	pk, by, err := counterData(dce.GetData())
	if err != nil {
		return err
	}
	old := e.counter
	e.counter = [2]uint64{pk, by}
	record(undo, func() { e.counter = old })
	return nil
}

func (p *Pipeline) writeRegister(typ p4v1.Update_Type, re *p4v1.RegisterEntry, undo *[]func()) error {
	if typ != p4v1.Update_MODIFY {
		return invalid("register entries can only be modified (got %v)", typ)
	}
	r, ok := p.registersByID[re.GetRegisterId()]
	if !ok {
		return invalid("unknown register id %d", re.GetRegisterId())
	}
	i, all, err := checkIndex("register "+r.Name, re.GetIndex(), r.Size)
	if err != nil {
		return err
	}
	bs, ok := re.GetData().GetData().(*p4v1.P4Data_Bitstring)
	if !ok {
		return invalid("register %s: data must be a bitstring (bit<%d>)", r.Name, r.Width)
	}
	v, err := decodeBits(bs.Bitstring, r.Width, p.strict)
	if err != nil {
		return invalid("register %s (bit<%d>): %v", r.Name, r.Width, err)
	}
	lo, hi := i, i+1
	if all {
		lo, hi = 0, uint64(r.Size)
	}
	if undo != nil {
		old := append([]uint64(nil), r.cells[lo:hi]...)
		record(undo, func() { copy(r.cells[lo:hi], old) })
	}
	for j := lo; j < hi; j++ {
		r.Write(j, v)
	}
	p.noteRegister(r)
	return nil
}
