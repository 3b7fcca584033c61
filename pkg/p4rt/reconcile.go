package p4rt

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
)

// EntryKey returns the identity of a table entry as P4Runtime defines it:
// table id, match fields (canonical bytes, sorted by field id), priority,
// and whether it is the default entry. Two entries with equal keys are the
// same switch entry.
func EntryKey(e *p4v1.TableEntry) string {
	var b strings.Builder
	b.WriteString("t")
	b.WriteString(strconv.FormatUint(uint64(e.GetTableId()), 16))
	if e.GetIsDefaultAction() {
		b.WriteString("|default")
		return b.String()
	}
	b.WriteString("|p")
	b.WriteString(strconv.FormatInt(int64(e.GetPriority()), 10))
	ms := append([]*p4v1.FieldMatch(nil), e.GetMatch()...)
	sort.Slice(ms, func(i, j int) bool { return ms[i].GetFieldId() < ms[j].GetFieldId() })
	for _, m := range ms {
		fmt.Fprintf(&b, "|f%x:", m.GetFieldId())
		switch v := m.GetFieldMatchType().(type) {
		case *p4v1.FieldMatch_Exact_:
			fmt.Fprintf(&b, "e%x", Canonical(v.Exact.GetValue()))
		case *p4v1.FieldMatch_Lpm:
			fmt.Fprintf(&b, "l%x/%d", Canonical(v.Lpm.GetValue()), v.Lpm.GetPrefixLen())
		case *p4v1.FieldMatch_Ternary_:
			fmt.Fprintf(&b, "t%x&%x", Canonical(v.Ternary.GetValue()), Canonical(v.Ternary.GetMask()))
		case *p4v1.FieldMatch_Range_:
			fmt.Fprintf(&b, "r%x-%x", Canonical(v.Range.GetLow()), Canonical(v.Range.GetHigh()))
		case *p4v1.FieldMatch_Optional_:
			fmt.Fprintf(&b, "o%x", Canonical(v.Optional.GetValue()))
		default:
			b.WriteString(compactText(m))
		}
	}
	return b.String()
}

// SameContents reports whether two entries with the same key carry the same
// action (id and canonical parameter values, or the same action profile
// member/group), controller metadata and metadata: i.e. whether a MODIFY
// would change nothing.
func SameContents(a, b *p4v1.TableEntry) bool {
	//lint:ignore SA1019 the client still reads and writes the deprecated controller_metadata for entries and operators that use it (metadata, its successor, is handled beside it)
	if a.GetControllerMetadata() != b.GetControllerMetadata() || string(a.GetMetadata()) != string(b.GetMetadata()) {
		return false
	}
	return proto.Equal(canonicalAction(a.GetAction()), canonicalAction(b.GetAction()))
}

func canonicalAction(a *p4v1.TableAction) *p4v1.TableAction {
	act := a.GetAction()
	if act == nil {
		return a
	}
	c := &p4v1.Action{ActionId: act.GetActionId()}
	for _, p := range act.GetParams() {
		c.Params = append(c.Params, &p4v1.Action_Param{ParamId: p.GetParamId(), Value: Canonical(p.GetValue())})
	}
	sort.Slice(c.Params, func(i, j int) bool { return c.Params[i].ParamId < c.Params[j].ParamId })
	return &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: c}}
}

// Plan is the minimal set of updates that turns what a switch holds into a
// desired set, in three phases applied in order: INSERTs (new entries),
// MODIFYs (changed actions, default entries), DELETEs (entries no longer
// desired). This order is hitless for epoch-versioned tables (DESIGN §2):
// the new generation is installed before the switch-over MODIFY, and the
// old one is deleted last.
type Plan struct {
	Inserts  []*p4v1.Update
	Modifies []*p4v1.Update
	Deletes  []*p4v1.Update
}

// Len is the number of updates.
func (p Plan) Len() int { return len(p.Inserts) + len(p.Modifies) + len(p.Deletes) }

// Empty reports whether the switch already holds the desired state.
func (p Plan) Empty() bool { return p.Len() == 0 }

// Phases returns the non-empty phases in order.
func (p Plan) Phases() [][]*p4v1.Update {
	var out [][]*p4v1.Update
	for _, ph := range [][]*p4v1.Update{p.Inserts, p.Modifies, p.Deletes} {
		if len(ph) > 0 {
			out = append(out, ph)
		}
	}
	return out
}

// Updates returns all updates in application order.
func (p Plan) Updates() []*p4v1.Update {
	out := make([]*p4v1.Update, 0, p.Len())
	for _, ph := range p.Phases() {
		out = append(out, ph...)
	}
	return out
}

// String summarises the plan: "3 inserts, 1 modify, 2 deletes".
func (p Plan) String() string {
	plural := func(n int, one, many string) string {
		if n == 1 {
			return "1 " + one
		}
		return strconv.Itoa(n) + " " + many
	}
	return plural(len(p.Inserts), "insert", "inserts") + ", " + plural(len(p.Modifies), "modify", "modifies") + ", " + plural(len(p.Deletes), "delete", "deletes")
}

// Diff computes the Plan from current (what the switch holds) to desired.
// Entries are matched by EntryKey; a desired entry missing from current is
// inserted, one whose contents differ is modified; a current entry not
// desired is deleted if owned(tableID) (nil owned = every table) and it is
// not const. Desired default entries (is_default_action) are MODIFY'd when
// they differ from the current default or when current holds none.
// Duplicate keys in desired are an error.
func Diff(desired, current []*p4v1.TableEntry, owned func(tableID uint32) bool) (Plan, error) {
	var plan Plan
	want := make(map[string]*p4v1.TableEntry, len(desired))
	for i, e := range desired {
		k := EntryKey(e)
		if _, dup := want[k]; dup {
			return Plan{}, fmt.Errorf("desired entry %d duplicates the key of an earlier entry (table id 0x%08x)", i, e.GetTableId())
		}
		want[k] = e
	}
	have := make(map[string]*p4v1.TableEntry, len(current))
	for _, e := range current {
		have[EntryKey(e)] = e
	}
	upd := func(t p4v1.Update_Type, e *p4v1.TableEntry) *p4v1.Update {
		return &p4v1.Update{Type: t, Entity: TableEntity(e)}
	}
	for _, e := range desired {
		cur, ok := have[EntryKey(e)]
		switch {
		case e.GetIsDefaultAction():
			if !ok || !SameContents(e, cur) {
				plan.Modifies = append(plan.Modifies, upd(p4v1.Update_MODIFY, e))
			}
		case !ok:
			plan.Inserts = append(plan.Inserts, upd(p4v1.Update_INSERT, e))
		case !SameContents(e, cur):
			plan.Modifies = append(plan.Modifies, upd(p4v1.Update_MODIFY, e))
		}
	}
	for _, e := range current {
		if e.GetIsDefaultAction() || e.GetIsConst() {
			continue
		}
		if _, ok := want[EntryKey(e)]; ok {
			continue
		}
		if owned != nil && !owned(e.GetTableId()) {
			continue
		}
		key := &p4v1.TableEntry{TableId: e.GetTableId(), Match: e.GetMatch(), Priority: e.GetPriority()}
		plan.Deletes = append(plan.Deletes, upd(p4v1.Update_DELETE, key))
	}
	return plan, nil
}

// ReconcileOptions scope a reconcile.
type ReconcileOptions struct {
	// Tables the desired set fully describes: their entries not in the
	// desired set are deleted. Empty means every non-const table of the
	// P4Info.
	Tables []string
	// Write options for the writes (batch size, atomicity).
	Write []WriteOption
}

// PlanReconcile reads the owned tables (and the default entries the desired
// set mentions) back from the switch and returns the Plan; it writes
// nothing.
func (c *Client) PlanReconcile(ctx context.Context, desired []*p4v1.TableEntry, opts ReconcileOptions) (Plan, error) {
	idx, err := c.Index(ctx)
	if err != nil {
		return Plan{}, err
	}
	owned := map[uint32]bool{}
	if len(opts.Tables) == 0 {
		for _, t := range idx.P4Info().GetTables() {
			if !t.GetIsConstTable() {
				owned[t.GetPreamble().GetId()] = true
			}
		}
	} else {
		for _, name := range opts.Tables {
			id, err := idx.TableID(name)
			if err != nil {
				return Plan{}, err
			}
			owned[id] = true
		}
	}
	// Read the owned tables and every table a desired entry is in.
	read := map[uint32]bool{}
	for id := range owned {
		read[id] = true
	}
	defaults := map[uint32]bool{}
	var req []*p4v1.Entity
	for _, e := range desired {
		if _, ok := idx.TableByID(e.GetTableId()); !ok {
			return Plan{}, fmt.Errorf("desired entry for table id 0x%08x: not in the switch's P4Info", e.GetTableId())
		}
		if !e.GetIsDefaultAction() {
			read[e.GetTableId()] = true
		}
		if e.GetIsDefaultAction() && !defaults[e.GetTableId()] {
			defaults[e.GetTableId()] = true
			req = append(req, TableEntity(&p4v1.TableEntry{TableId: e.GetTableId(), IsDefaultAction: true}))
		}
	}
	for _, t := range idx.P4Info().GetTables() {
		if id := t.GetPreamble().GetId(); read[id] && len(t.GetMatchFields()) > 0 {
			req = append(req, TableEntity(&p4v1.TableEntry{TableId: id}))
		}
	}
	var current []*p4v1.TableEntry
	if len(req) > 0 {
		if current, err = c.readTableEntries(ctx, req); err != nil {
			return Plan{}, fmt.Errorf("reconcile: read current state: %w", err)
		}
	}
	return Diff(desired, current, func(id uint32) bool { return owned[id] })
}

// Reconcile makes the switch hold desired: it plans (PlanReconcile) and
// applies the phases in order with ApplyRetrySafe. It returns the plan it
// applied.
func (c *Client) Reconcile(ctx context.Context, desired []*p4v1.TableEntry, opts ReconcileOptions) (Plan, error) {
	plan, err := c.PlanReconcile(ctx, desired, opts)
	if err != nil {
		return plan, err
	}
	for _, ph := range plan.Phases() {
		if err := c.ApplyRetrySafe(ctx, ph, opts.Write...); err != nil {
			return plan, fmt.Errorf("reconcile (%s): %w", plan, err)
		}
	}
	return plan, nil
}

// PlanRequests returns the WriteRequests Reconcile would send for plan
// (each phase starts a new request), for a dry run; FormatWriteRequests
// prints them.
func (c *Client) PlanRequests(plan Plan, opts ...WriteOption) []*p4v1.WriteRequest {
	var out []*p4v1.WriteRequest
	for _, ph := range plan.Phases() {
		out = append(out, c.WriteRequests(ph, opts...)...)
	}
	return out
}

// ApplyRetrySafe writes updates so that re-running after a crash or restart
// converges instead of failing: an INSERT that finds the entry
// (ALREADY_EXISTS) is retried as a MODIFY, a MODIFY that finds none
// (NOT_FOUND) as an INSERT, a DELETE of a missing entry (NOT_FOUND) counts
// as done, and updates aborted by an atomic batch are retried. Other
// failures are returned as a *WriteError with indices into updates.
func (c *Client) ApplyRetrySafe(ctx context.Context, updates []*p4v1.Update, opts ...WriteOption) error {
	err := c.Write(ctx, updates, opts...)
	var we *WriteError
	if err == nil || !errors.As(err, &we) || len(we.Failed) == 0 {
		return err
	}
	var retry []*p4v1.Update
	var origin []int
	var hard []*UpdateError
	for _, f := range we.Failed {
		u := updates[f.Index]
		switch {
		case f.Op == p4v1.Update_INSERT && f.Code == codes.AlreadyExists:
			retry, origin = append(retry, &p4v1.Update{Type: p4v1.Update_MODIFY, Entity: u.GetEntity()}), append(origin, f.Index)
		case f.Op == p4v1.Update_MODIFY && f.Code == codes.NotFound && !u.GetEntity().GetTableEntry().GetIsDefaultAction() && u.GetEntity().GetTableEntry() != nil:
			retry, origin = append(retry, &p4v1.Update{Type: p4v1.Update_INSERT, Entity: u.GetEntity()}), append(origin, f.Index)
		case f.Op == p4v1.Update_DELETE && f.Code == codes.NotFound:
			// already gone: done
		case f.Code == codes.Aborted:
			retry, origin = append(retry, u), append(origin, f.Index)
		default:
			hard = append(hard, f)
		}
	}
	for i := len(updates) - we.NotAttempted; i < len(updates); i++ {
		retry, origin = append(retry, updates[i]), append(origin, i)
	}
	if len(hard) > 0 {
		we.Failed, we.NotAttempted = hard, len(retry)
		return we
	}
	if len(retry) == 0 {
		return nil
	}
	err = c.Write(ctx, retry, opts...)
	if errors.As(err, &we) {
		for _, f := range we.Failed {
			f.Index = origin[f.Index]
		}
		we.Total = len(updates)
	}
	return err
}
