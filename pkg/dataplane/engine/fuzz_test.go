package engine

import (
	"context"
	"testing"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/protobuf/proto"
)

// fuzzEntry turns bytes into a TableEntry against testInfo's tables, so the
// fuzzer reaches the match and action validation rather than failing at
// the table id.
func fuzzEntry(b []byte) *p4v1.TableEntry {
	next := func() byte {
		if len(b) == 0 {
			return 0
		}
		c := b[0]
		b = b[1:]
		return c
	}
	bytesN := func() []byte {
		n := int(next() % 10)
		if n > len(b) {
			n = len(b)
		}
		v := b[:n]
		b = b[n:]
		return v
	}
	tables := []uint32{tExact, tLPM, tTern, tKeyless, tConst, tSmall, 0x02777777}
	actions := []uint32{aNo, aSet, aDrop, aTOnly, aDOnly, 0}
	te := &p4v1.TableEntry{TableId: tables[int(next())%len(tables)], Priority: int32(int8(next())),
		IsDefaultAction: next()%8 == 0}
	for n := int(next() % 5); n > 0; n-- {
		fm := &p4v1.FieldMatch{FieldId: uint32(next() % 6)}
		switch next() % 6 {
		case 0:
			fm.FieldMatchType = &p4v1.FieldMatch_Exact_{Exact: &p4v1.FieldMatch_Exact{Value: bytesN()}}
		case 1:
			fm.FieldMatchType = &p4v1.FieldMatch_Lpm{Lpm: &p4v1.FieldMatch_LPM{Value: bytesN(), PrefixLen: int32(int8(next()))}}
		case 2:
			fm.FieldMatchType = &p4v1.FieldMatch_Ternary_{Ternary: &p4v1.FieldMatch_Ternary{Value: bytesN(), Mask: bytesN()}}
		case 3:
			fm.FieldMatchType = &p4v1.FieldMatch_Range_{Range: &p4v1.FieldMatch_Range{Low: bytesN(), High: bytesN()}}
		case 4:
			fm.FieldMatchType = &p4v1.FieldMatch_Optional_{Optional: &p4v1.FieldMatch_Optional{Value: bytesN()}}
		}
		te.Match = append(te.Match, fm)
	}
	if next()%4 != 0 {
		a := &p4v1.Action{ActionId: actions[int(next())%len(actions)]}
		for n := int(next() % 3); n > 0; n-- {
			a.Params = append(a.Params, &p4v1.Action_Param{ParamId: uint32(next() % 4), Value: bytesN()})
		}
		te.Action = &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: a}}
	}
	if next()%8 == 0 {
		te.CounterData = &p4v1.CounterData{PacketCount: int64(int8(next()))}
	}
	return te
}

// FuzzWrite: random FieldMatch bytes, priorities and actions must never panic
// the engine; whatever it accepts reads back canonically and deletes cleanly;
// random protobuf bytes as a WriteRequest or a read entity neither.
func FuzzWrite(f *testing.F) {
	f.Add([]byte{0, 0, 2, 1, 0, 2, 1, 2, 2, 0, 1, 3, 1, 1, 0, 0x10}, false)
	f.Add([]byte{1, 0, 2, 1, 0, 1, 5, 2, 1, 8, 4, 10, 0, 0, 0, 1, 1, 1, 2, 0, 5}, false)
	f.Add([]byte{2, 7, 3, 1, 0, 1, 1, 2, 2, 1, 1, 1, 1, 3, 3, 1, 0, 1, 1, 1, 1, 1}, false)
	f.Add([]byte{0x22, 0x04, 0x10, 0x01}, true)
	f.Fuzz(func(t *testing.T, data []byte, raw bool) {
		e := newTestEngine(t, Options{})
		ctx := context.Background()
		if raw {
			var req p4v1.WriteRequest
			if proto.Unmarshal(data, &req) == nil {
				for _, atom := range []p4v1.WriteRequest_Atomicity{req.GetAtomicity(), p4v1.WriteRequest_ROLLBACK_ON_ERROR} {
					if errs := e.Write(ctx, req.GetUpdates(), atom); len(errs) != len(req.GetUpdates()) {
						t.Fatalf("%d errors for %d updates", len(errs), len(req.GetUpdates()))
					}
				}
			}
			var ent p4v1.Entity
			if proto.Unmarshal(data, &ent) == nil {
				_ = e.Read(ctx, &ent, func(*p4v1.Entity) error { return nil })
			}
			return
		}
		te := fuzzEntry(data)
		for _, typ := range []p4v1.Update_Type{p4v1.Update_INSERT, p4v1.Update_MODIFY} {
			if err := write1(t, e, upd(typ, te)); err != nil || te.GetIsDefaultAction() {
				continue
			}
			// Accepted: reading it back gives a canonical entry that deletes it.
			got := readAll(t, e, &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{TableId: te.GetTableId()}}})
			if len(got) != 1 {
				t.Fatalf("inserted %v, read %d entries", te, len(got))
			}
			if err := write1(t, e, upd(p4v1.Update_DELETE, got[0].GetTableEntry())); err != nil {
				t.Fatalf("delete of read-back %v: %v", got[0], err)
			}
			if err := write1(t, e, upd(p4v1.Update_INSERT, got[0].GetTableEntry())); err != nil {
				t.Fatalf("re-insert of read-back %v: %v", got[0], err)
			}
		}
		_ = e.Read(ctx, &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: te}}, func(*p4v1.Entity) error { return nil })
		p := e.Acquire()
		for _, tb := range p.tables {
			key := make([]uint64, len(tb.fields))
			for i := range key {
				key[i] = uint64(len(data)) * 0x9e3779b97f4a7c15
			}
			tb.Apply(key, 64)
		}
		e.Release()
	})
}

// FuzzSetPipeline: a P4Info comes from any P4Runtime client
// (SetForwardingPipelineConfig) or a --p4info file. Whatever protobuf it
// decodes to must be accepted or rejected without a panic, and an accepted
// one must serve wildcard reads of every table, counter and register.
func FuzzSetPipeline(f *testing.F) {
	seed, err := proto.Marshal(testInfo())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add(seed[:len(seed)/2])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		var info p4configv1.P4Info
		if proto.Unmarshal(data, &info) != nil {
			return
		}
		e := New(Options{})
		if err := e.SetPipelineInfo(&info); err != nil {
			return
		}
		ctx := context.Background()
		for _, ent := range []*p4v1.Entity{
			{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{}}},
			{Entity: &p4v1.Entity_CounterEntry{CounterEntry: &p4v1.CounterEntry{}}},
			{Entity: &p4v1.Entity_RegisterEntry{RegisterEntry: &p4v1.RegisterEntry{}}},
		} {
			_ = e.Read(ctx, ent, func(*p4v1.Entity) error { return nil })
		}
	})
}
