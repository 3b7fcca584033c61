package engine

import (
	"context"
	"errors"
	"testing"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// recorder keeps what OnWrite reported, resolved to (table, value of field
// a, still present) while the write lock is held.
type recorder struct {
	batches [][]string
}

func (r *recorder) onWrite(_ *Pipeline, ch *Changes) {
	var b []string
	for _, c := range ch.Entries {
		state := "deleted"
		if c.Table.Has(c.Entry) {
			state = "present"
		}
		b = append(b, c.Table.Name+":"+string(rune('0'+c.Entry.Match(0).Value))+":"+state)
	}
	for _, t := range ch.Defaults {
		b = append(b, t.Name+":default")
	}
	for _, c := range ch.Counters {
		b = append(b, c.Name+":counter")
	}
	for _, reg := range ch.Registers {
		b = append(b, reg.Name+":register")
	}
	r.batches = append(r.batches, b)
}

func TestOnWriteReportsNetChanges(t *testing.T) {
	rec := &recorder{}
	e := newTestEngine(t, Options{OnWrite: rec.onWrite})
	ctx := context.Background()
	ins := func(v byte) *p4v1.Update {
		return upd(p4v1.Update_INSERT, te(tExact, 0, setAct(1), exact(1, v), exact(2, 1)))
	}
	mod := upd(p4v1.Update_MODIFY, te(tExact, 0, setAct(2), exact(1, 1), exact(2, 1)))
	del := upd(p4v1.Update_DELETE, te(tExact, 0, nil, exact(1, 2), exact(2, 1)))

	// One batch: two inserts, a modify, a failing duplicate, a delete.
	errs := e.Write(ctx, []*p4v1.Update{ins(1), ins(2), mod, ins(1), del}, p4v1.WriteRequest_CONTINUE_ON_ERROR)
	if code(errs[3]) != codes.AlreadyExists {
		t.Fatalf("duplicate insert: %v", errs[3])
	}
	want := []string{"C.exact:1:present", "C.exact:2:deleted", "C.exact:1:present", "C.exact:2:deleted"}
	if len(rec.batches) != 1 || !equal(rec.batches[0], want) {
		t.Fatalf("reported %v, want one batch %v", rec.batches, want)
	}

	// A failed atomic batch is undone and reports nothing.
	errs = e.Write(ctx, []*p4v1.Update{ins(3), ins(1)}, p4v1.WriteRequest_ROLLBACK_ON_ERROR)
	if errs[1] == nil || code(errs[0]) != codes.Aborted {
		t.Fatalf("atomic batch: %v", errs)
	}
	if len(rec.batches) != 1 {
		t.Fatalf("a rolled-back batch was reported: %v", rec.batches[1:])
	}

	// A batch that changes nothing reports nothing.
	e.Write(ctx, []*p4v1.Update{ins(1)}, p4v1.WriteRequest_CONTINUE_ON_ERROR)
	if len(rec.batches) != 1 {
		t.Fatalf("a batch with no change was reported: %v", rec.batches[1:])
	}

	// Defaults, counters and registers.
	def := upd(p4v1.Update_MODIFY, &p4v1.TableEntry{TableId: tLPM, IsDefaultAction: true, Action: setAct(4)})
	ups := []*p4v1.Update{def,
		{Type: p4v1.Update_MODIFY, Entity: &p4v1.Entity{Entity: &p4v1.Entity_CounterEntry{CounterEntry: &p4v1.CounterEntry{CounterId: cEvents, Data: &p4v1.CounterData{}}}}},
		{Type: p4v1.Update_MODIFY, Entity: &p4v1.Entity{Entity: &p4v1.Entity_RegisterEntry{RegisterEntry: &p4v1.RegisterEntry{RegisterId: rCells,
			Data: &p4v1.P4Data{Data: &p4v1.P4Data_Bitstring{Bitstring: []byte{0}}}}}}},
	}
	for i, err := range e.Write(ctx, ups, p4v1.WriteRequest_CONTINUE_ON_ERROR) {
		if err != nil {
			t.Fatalf("update %d: %v", i, err)
		}
	}
	want = []string{"C.lpm:default", "C.events:counter", "C.cells:register"}
	if len(rec.batches) != 2 || !equal(rec.batches[1], want) {
		t.Fatalf("reported %v, want a second batch %v", rec.batches, want)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestAdmitRefusesInserts(t *testing.T) {
	full := status.Error(codes.ResourceExhausted, "group full")
	e := newTestEngine(t, Options{Admit: func(tb *Table, en *Entry) error {
		switch {
		case tb.Name != "C.exact":
			return nil
		case en.Match(0).Value == 9:
			return full
		case en.Match(0).Value == 8:
			return errors.New("not a status")
		}
		return nil
	}})
	ins := func(v byte) *p4v1.Update {
		return upd(p4v1.Update_INSERT, te(tExact, 0, setAct(1), exact(1, v), exact(2, 1)))
	}
	errs := e.Write(context.Background(), []*p4v1.Update{ins(1), ins(9), ins(8)}, p4v1.WriteRequest_CONTINUE_ON_ERROR)
	if errs[0] != nil || code(errs[1]) != codes.ResourceExhausted || code(errs[2]) != codes.InvalidArgument {
		t.Fatalf("errors %v, want nil, RESOURCE_EXHAUSTED, INVALID_ARGUMENT", errs)
	}
	if hit, _, _ := lookup(t, e, "C.exact", 9, 1); hit {
		t.Fatal("a refused entry was inserted")
	}
	if hit, _, _ := lookup(t, e, "C.exact", 1, 1); !hit {
		t.Fatal("an admitted entry is missing")
	}
}

func TestPrecedesAndCarried(t *testing.T) {
	e := newTestEngine(t, Options{})
	ctx := context.Background()
	w := func(prio int32, v byte) {
		mustWrite(t, e, upd(p4v1.Update_INSERT, te(tTern, prio, setAct(uint16(v)), exact(1, 1), tern(2, []byte{v}, []byte{0xff}))))
	}
	w(5, 1)
	w(7, 2)
	w(5, 3)
	p := e.Acquire()
	tb, _ := p.Table("C.tern")
	byVal := map[uint64]*Entry{}
	tb.Entries(func(en *Entry) bool {
		byVal[en.Match(1).Value] = en
		return true
	})
	e.Release()
	if !byVal[2].Precedes(byVal[1]) || !byVal[1].Precedes(byVal[3]) || byVal[3].Precedes(byVal[1]) {
		t.Fatal("precedence: want priority first, then insertion order")
	}
	if p.Carried() {
		t.Fatal("a fresh pipeline reports carried state")
	}
	if err := e.SetPipeline(ctx, p4v1.SetForwardingPipelineConfigRequest_RECONCILE_AND_COMMIT, &p4v1.ForwardingPipelineConfig{P4Info: testInfo()}); err != nil {
		t.Fatal(err)
	}
	p = e.Acquire()
	defer e.Release()
	if !p.Carried() {
		t.Fatal("RECONCILE_AND_COMMIT over a running pipeline does not report carried state")
	}
}

// RECONCILE_AND_COMMIT keeps which of several matching entries of equal
// priority wins: the one inserted first.
func TestReconcileKeepsPrecedence(t *testing.T) {
	e := newTestEngine(t, Options{})
	for v := range 20 {
		mask := EncodeBits(1 << (v + 8))
		mustWrite(t, e, upd(p4v1.Update_INSERT, te(tTern, 5, setAct(uint16(100+v)), exact(1, 1), tern(2, []byte{0}, mask))))
	}
	if err := e.SetPipeline(context.Background(), p4v1.SetForwardingPipelineConfigRequest_RECONCILE_AND_COMMIT, &p4v1.ForwardingPipelineConfig{P4Info: testInfo()}); err != nil {
		t.Fatal(err)
	}
	// Every entry matches t = 7 (its masked bits are 0): the first inserted (v = 0) wins.
	if hit, _, v := lookup(t, e, "C.tern", 1, 7, 0, 0); !hit || v != 100 {
		t.Fatalf("after RECONCILE_AND_COMMIT the winner is %d (hit %v), want 100 (the first inserted)", v, hit)
	}
}

// Siblings are the entries with the same exact fields.
func TestSiblings(t *testing.T) {
	e := newTestEngine(t, Options{})
	for i, ev := range []byte{1, 1, 2} {
		mustWrite(t, e, upd(p4v1.Update_INSERT, te(tTern, int32(i)+1, setAct(uint16(ev)), exact(1, ev), tern(2, []byte{ev}, []byte{0xff}))))
	}
	p := e.Acquire()
	defer e.Release()
	tb, _ := p.Table("C.tern")
	count := func(exactValue uint64) int {
		var probe *Entry
		tb.Entries(func(o *Entry) bool {
			if o.Match(0).Value == exactValue {
				probe = o
			}
			return probe == nil
		})
		n := 0
		tb.Siblings(probe, func(*Entry) bool { n++; return true })
		return n
	}
	if a, b := count(1), count(2); a != 2 || b != 1 {
		t.Fatalf("siblings: %d with e=1, %d with e=2; want 2 and 1", a, b)
	}
}
