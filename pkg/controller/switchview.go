package controller

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	"github.com/p4ctl/p4ctl/pkg/compiler"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
	"github.com/p4ctl/p4ctl/pkg/regions"
)

// ShortName is a P4Info name without the p4ctl program's control prefix
// (carbon_rank for Ingress.carbon_rank), as p4ctl get prints it.
func ShortName(n string) string {
	return strings.TrimPrefix(n, pipeline.Control+".")
}

// EntriesView is the entries read from a switch (p4ctl get entries), as
// P4Info names (-o json|yaml) and, in table form, in plan's notation where
// the switch runs the p4ctl program (feasible=has(5:eu-north-1),
// region=5:eu-north-1, MACs, IPv4 addresses), so that get and plan print
// the same entry the same way.
type EntriesView struct {
	entries []p4rt.Entry
	// program holds each entry in compiled form, or nil for all when the
	// switch's program is not p4ctl's (raw P4Runtime notation then).
	program []*compiler.Entry
}

// MarshalJSON writes the entries with their P4Info names.
func (r EntriesView) MarshalJSON() ([]byte, error) { return json.Marshal(r.entries) }

// TableHeaders implements output.Tabular.
func (r EntriesView) TableHeaders() []string {
	return []string{"TABLE", "MATCH", "PRIORITY", "ACTION"}
}

// TableRows implements output.Tabular.
func (r EntriesView) TableRows() [][]string {
	var out [][]string
	for i, e := range r.entries {
		if r.program != nil && r.program[i] != nil {
			out = append(out, programRow(*r.program[i]))
			continue
		}
		var m []string
		for _, f := range e.Match {
			m = append(m, f.Field+"="+f.Value)
		}
		match := strings.Join(m, " ")
		if e.Default {
			match = "(default)"
		}
		var ps []string
		for _, p := range e.Params {
			ps = append(ps, p.Name+"="+p.Value)
		}
		prio := ""
		if e.Priority != 0 {
			prio = strconv.Itoa(int(e.Priority))
		}
		act := ShortName(e.Action) + "(" + strings.Join(ps, ", ") + ")"
		if e.ActionRaw != "" {
			act = e.ActionRaw
		}
		out = append(out, []string{ShortName(e.Table), match, prio, act})
	}
	return out
}

// programRow splits compiler.Entry's one-line rendering (plan's notation)
// into get's columns.
func programRow(e compiler.Entry) []string {
	line := e.String()
	lhs, act, _ := strings.Cut(line, " -> ")
	fields := strings.Fields(lhs)
	var match []string
	prio := ""
	for _, f := range fields[1:] {
		switch {
		case f == "default":
			match = append(match, "(default)")
		case strings.HasPrefix(f, "priority="):
			prio = strings.TrimPrefix(f, "priority=")
		default:
			match = append(match, f)
		}
	}
	return []string{ShortName(e.Table), strings.Join(match, " "), prio, act}
}

// ReadEntries reads the entries of tables (full P4Info names; nil: every
// table, in one wildcard read) with the default entries that differ from
// the P4Info's initial default action, sorted by table. An entry the
// P4Info cannot decode fails the read with the decoding error.
func ReadEntries(ctx context.Context, c *p4rt.Client, idx *p4rt.Index, tables []string) (EntriesView, error) {
	tes, err := c.ReadTableEntries(ctx, tables...)
	if err != nil {
		return EntriesView{}, err
	}
	if len(tables) == 0 {
		tables = idx.Tables()
	}
	tes = append(tes, changedDefaults(ctx, c, idx, tables)...)
	tr, terr := NewTranslator(idx) // nil unless the p4ctl program runs
	type decoded struct {
		e  p4rt.Entry
		ce *compiler.Entry
	}
	ds := make([]decoded, 0, len(tes))
	for _, te := range tes {
		e, err := idx.DecodeTableEntry(te)
		if err != nil {
			return EntriesView{}, err
		}
		d := decoded{e: e}
		if terr == nil {
			if ce, err := tr.Entry(te); err == nil {
				d.ce = &ce
			}
		}
		ds = append(ds, d)
	}
	sort.SliceStable(ds, func(i, j int) bool { return ds[i].e.Table < ds[j].e.Table })
	rows := EntriesView{entries: make([]p4rt.Entry, len(ds))}
	if terr == nil {
		rows.program = make([]*compiler.Entry, len(ds))
	}
	for i, d := range ds {
		rows.entries[i] = d.e
		if rows.program != nil {
			rows.program[i] = d.ce
		}
	}
	return rows, nil
}

// changedDefaults reads the default entries of tables (one Read) and
// returns those that differ from the P4Info's initial default action:
// a wildcard read returns no default entry (P4Runtime reads one only when
// asked with is_default_action), so a default set by another client —
// active_epoch's, say — was not shown. A switch that refuses the read
// leaves them out.
func changedDefaults(ctx context.Context, c *p4rt.Client, idx *p4rt.Index, tables []string) []*p4v1.TableEntry {
	var ents []*p4v1.Entity
	for _, name := range tables {
		if id, err := idx.TableID(name); err == nil {
			ents = append(ents, p4rt.TableEntity(&p4v1.TableEntry{TableId: id, IsDefaultAction: true}))
		}
	}
	if len(ents) == 0 {
		return nil
	}
	got, err := c.ReadAll(ctx, ents...)
	if err != nil {
		return nil
	}
	var out []*p4v1.TableEntry
	for _, e := range got {
		te := e.GetTableEntry()
		t, ok := idx.TableByID(te.GetTableId())
		if te == nil || !ok || !te.GetIsDefaultAction() || sameAsInitial(te, t.GetInitialDefaultAction()) {
			continue
		}
		out = append(out, te)
	}
	return out
}

// sameAsInitial reports whether default entry te runs the table's initial
// default action with its arguments.
func sameAsInitial(te *p4v1.TableEntry, init *p4configv1.TableActionCall) bool {
	a := te.GetAction().GetAction()
	if a == nil || init == nil || a.GetActionId() != init.GetActionId() || len(a.GetParams()) != len(init.GetArguments()) {
		return false
	}
	args := map[uint32]string{}
	for _, arg := range init.GetArguments() {
		args[arg.GetParamId()] = string(bytes.TrimLeft(arg.GetValue(), "\x00"))
	}
	for _, p := range a.GetParams() {
		if v, ok := args[p.GetParamId()]; !ok || v != string(bytes.TrimLeft(p.GetValue(), "\x00")) {
			return false
		}
	}
	return true
}

// CellView is one counter or register cell as p4ctl get prints it.
type CellView struct {
	Name    string `json:"name"`
	Index   int64  `json:"index"`
	Label   string `json:"label,omitempty"`
	Packets *int64 `json:"packets,omitempty"`
	Bytes   *int64 `json:"bytes,omitempty"`
	Value   *int64 `json:"value,omitempty"`
}

// CellsView is the cells read of counters or of registers (p4ctl get
// counters, get registers), each labelled where the p4ctl program gives
// its index a meaning.
type CellsView struct {
	Cells    []CellView
	Counters bool
	// Hidden counts the zero cells left out (ReadCounters or
	// ReadRegisters without all).
	Hidden int
}

// MarshalJSON writes the cells shown.
func (r CellsView) MarshalJSON() ([]byte, error) { return json.Marshal(r.Cells) }

// TableHeaders implements output.Tabular.
func (r CellsView) TableHeaders() []string {
	if r.Counters {
		return []string{"COUNTER", "INDEX", "LABEL", "PACKETS", "BYTES"}
	}
	return []string{"REGISTER", "INDEX", "LABEL", "VALUE"}
}

// TableRows implements output.Tabular.
func (r CellsView) TableRows() [][]string {
	var out [][]string
	for _, c := range r.Cells {
		row := []string{ShortName(c.Name), strconv.FormatInt(c.Index, 10), c.Label}
		if r.Counters {
			row = append(row, strconv.FormatInt(*c.Packets, 10), strconv.FormatInt(*c.Bytes, 10))
		} else {
			row = append(row, strconv.FormatInt(*c.Value, 10))
		}
		out = append(out, row)
	}
	return out
}

// cellLabel names a cell of the p4ctl program's arrays.
func cellLabel(name string, i int64) string {
	switch name {
	case pipeline.CounterRegionRouted, pipeline.CounterRegionFallback, pipeline.RegisterRegionOutstanding:
		if r, ok := regions.RegionAt(regions.Index(i)); ok {
			return r.ID
		}
	case pipeline.CounterServerBound, pipeline.RegisterServerWork:
		return "server " + strconv.FormatInt(i, 10)
	}
	for _, l := range pipeline.Lanes() {
		if name == l.Counter() {
			return pipeline.Event(i).String()
		}
	}
	for slot := range pipeline.Candidates {
		if name == pipeline.RegisterServerCredit(slot) {
			return "server " + strconv.Itoa(int(pipeline.SlotServer(slot, uint64(i))))
		}
	}
	return ""
}

// ReadCounters reads every cell of the counters names (full P4Info
// names); zero cells are counted in Hidden unless all.
func ReadCounters(ctx context.Context, c *p4rt.Client, names []string, all bool) (CellsView, error) {
	res := CellsView{Cells: []CellView{}, Counters: true} // -o json: [] rather than null
	for _, n := range names {
		cells, err := c.ReadCounter(ctx, n, -1)
		if err != nil {
			return CellsView{}, err
		}
		for _, cell := range cells {
			if cell.Packets == 0 && cell.Bytes == 0 && !all {
				res.Hidden++
				continue
			}
			p, b := cell.Packets, cell.Bytes
			res.Cells = append(res.Cells, CellView{Name: n, Index: cell.Index, Label: cellLabel(n, cell.Index), Packets: &p, Bytes: &b})
		}
	}
	return res, nil
}

// ReadRegisters reads every cell of the registers names (full P4Info
// names) through regs; zero cells are counted in Hidden unless all. A
// server_credit cell's label adds its outstanding count and last tick.
func ReadRegisters(ctx context.Context, regs RegisterReader, names []string, all bool) (CellsView, error) {
	res := CellsView{Cells: []CellView{}}
	for _, n := range names {
		cells, err := regs.Read(ctx, n, -1)
		if err != nil {
			return CellsView{}, err
		}
		for _, cell := range cells {
			if cell.Value == 0 && !all {
				res.Hidden++
				continue
			}
			v := int64(cell.Value)
			l := cellLabel(n, cell.Index)
			if strings.HasPrefix(n, pipeline.RegisterServerCreditPrefix) {
				cr := pipeline.CreditFromCell(cell.Value)
				l += fmt.Sprintf(": %d outstanding, last tick %d", cr.Outstanding, cr.LastTick)
			}
			res.Cells = append(res.Cells, CellView{Name: n, Index: cell.Index, Label: l, Value: &v})
		}
	}
	return res, nil
}
