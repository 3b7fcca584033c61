// Package p4info turns the p4ctl program contract (pkg/pipeline.Schema) into
// a P4Runtime P4Info with the ids p4c would assign, and checks that a P4Info
// (for instance p4c's output for p4src/) carries the names, match kinds and
// bit widths the Go model of the program relies on.
package p4info

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"strings"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"

	"github.com/p4ctl/p4ctl/pkg/p4rt"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// hash is the Jenkins one-at-a-time hash p4c applies to a symbol's
// fully-qualified name (control-plane/p4RuntimeSymbolTable.cpp).
func hash(name string) uint32 {
	var h uint32
	for i := 0; i < len(name); i++ {
		h += uint32(name[i])
		h += h << 10
		h ^= h >> 6
	}
	h += h << 3
	h ^= h >> 11
	h += h << 15
	return h
}

// IDs assigns P4Runtime ids to names of one kind the way p4c does: names are
// processed in sorted order, id = prefix<<24 | (hash & 0xffffff), and a
// collision is resolved by incrementing the hash input value until the id is
// free. taken holds ids already assigned (it is updated).
func IDs(prefix p4configv1.P4Ids_Prefix, names []string, taken map[uint32]bool) map[string]uint32 {
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	out := make(map[string]uint32, len(sorted))
	for _, n := range sorted {
		if _, dup := out[n]; dup {
			continue
		}
		start := hash(n)
		v := start
		for {
			id := uint32(prefix)<<24 | v&0xffffff
			if !taken[id] {
				taken[id] = true
				out[n] = id
				break
			}
			v++
			if v == start { // cannot happen with < 2^24 names
				break
			}
		}
	}
	return out
}

// aliases returns p4c's default alias for each name: the shortest suffix of
// dot-separated components that is unique among all names.
func aliases(names []string) map[string]string {
	count := map[string]int{}
	for _, n := range names {
		parts := strings.Split(n, ".")
		for i := range parts {
			count[strings.Join(parts[i:], ".")]++
		}
	}
	out := map[string]string{}
	for _, n := range names {
		parts := strings.Split(n, ".")
		out[n] = n
		for i := len(parts) - 1; i >= 0; i-- {
			if s := strings.Join(parts[i:], "."); count[s] == 1 {
				out[n] = s
				break
			}
		}
	}
	return out
}

var kinds = map[pipeline.MatchKind]p4configv1.MatchField_MatchType{
	pipeline.Exact:    p4configv1.MatchField_EXACT,
	pipeline.LPM:      p4configv1.MatchField_LPM,
	pipeline.Ternary:  p4configv1.MatchField_TERNARY,
	pipeline.Range:    p4configv1.MatchField_RANGE,
	pipeline.Optional: p4configv1.MatchField_OPTIONAL,
}

var units = map[pipeline.CounterUnit]p4configv1.CounterSpec_Unit{
	pipeline.Packets: p4configv1.CounterSpec_PACKETS,
	pipeline.Bytes:   p4configv1.CounterSpec_BYTES,
	pipeline.Both:    p4configv1.CounterSpec_BOTH,
}

// p4cOrder lists, by short name, the tables, actions and registers of the
// p4ctl program in the order p4c's P4Info lists them (their declaration
// order in p4src/v1model), where pipeline.Schema's order differs; the
// others keep the schema's order after them. TestFromSchemaIsP4cs checks
// the whole P4Info against p4src/build/v1model/p4ctl.p4info.txtpb, so a
// program change that moves one fails there until this follows.
func p4cOrder() (tables, actions, registers []string) {
	return []string{"client_site", "sla_feasibility", "active_epoch", "carbon_rank", "exec_class_cost", "region_next_hop",
			"server_pool", "server_endpoint", "reply_source", "l3_forward", "l2_forward"},
		[]string{"NoAction", "set_client_site", "set_feasible", "set_active_epoch", "route_to_region", "set_exec_cost",
			"dispatch_local", "forward_remote", "set_pool", "set_server_endpoint", "set_reply_source", "forward", "drop"},
		[]string{"region_outstanding", "server_credit_0", "server_credit_1", "server_credit_2", "server_credit_3",
			"server_work_us", "latency_probe"}
}

// inOrder sorts list (stably) by the position of each element's short name
// (the part after the last dot) in order; names not in it go last.
func inOrder[T any](list []T, name func(T) string, order []string) {
	pos := map[string]int{}
	for i, n := range order {
		pos[n] = i
	}
	rank := func(v T) int {
		n := name(v)
		if i := strings.LastIndexByte(n, '.'); i >= 0 {
			n = n[i+1:]
		}
		if p, ok := pos[n]; ok {
			return p
		}
		return len(order)
	}
	slices.SortStableFunc(list, func(a, b T) int { return rank(a) - rank(b) })
}

// FromSchema returns the P4Info of prog for the v1model architecture, with
// ids, aliases, match-field and parameter ids numbered as p4c numbers them
// (fields and params 1, 2, ... in declaration order) and entities listed in
// p4c's order: for the p4ctl program it equals p4c's P4Info message for
// message, so a client comparing the two without sorting (proto.Equal)
// sees the same program (issue 27 item 12).
func FromSchema(prog pipeline.Program) *p4configv1.P4Info {
	var all, tn, an, cn, rn, dn []string
	for _, t := range prog.Tables {
		tn = append(tn, t.Name)
	}
	for _, a := range prog.Actions {
		an = append(an, a.Name)
	}
	for _, c := range prog.Counters {
		cn = append(cn, c.Name)
	}
	for _, r := range prog.Registers {
		rn = append(rn, r.Name)
	}
	for _, d := range prog.Digests {
		dn = append(dn, d.Name)
	}
	all = append(append(append(append(append(all, tn...), an...), cn...), rn...), dn...)
	alias := aliases(all)
	taken := map[uint32]bool{}
	actionIDs := IDs(p4configv1.P4Ids_ACTION, an, taken)
	tableIDs := IDs(p4configv1.P4Ids_TABLE, tn, taken)
	counterIDs := IDs(p4configv1.P4Ids_COUNTER, cn, taken)
	registerIDs := IDs(p4configv1.P4Ids_REGISTER, rn, taken)
	digestIDs := IDs(p4configv1.P4Ids_DIGEST, dn, taken)
	pre := func(id uint32, name string) *p4configv1.Preamble {
		return &p4configv1.Preamble{Id: id, Name: name, Alias: alias[name]}
	}
	info := &p4configv1.P4Info{PkgInfo: &p4configv1.PkgInfo{Arch: "v1model"}}
	actions := map[string]pipeline.Action{}
	for _, a := range prog.Actions {
		actions[a.Name] = a
		pa := &p4configv1.Action{Preamble: pre(actionIDs[a.Name], a.Name)}
		if a.Name == pipeline.ActionNoAction {
			pa.Preamble.Annotations = []string{`@noWarn("unused")`}
		}
		for i, prm := range a.Params {
			pa.Params = append(pa.Params, &p4configv1.Action_Param{Id: uint32(i + 1), Name: prm.Name, Bitwidth: int32(prm.Width)})
		}
		info.Actions = append(info.Actions, pa)
	}
	for _, t := range prog.Tables {
		pt := &p4configv1.Table{Preamble: pre(tableIDs[t.Name], t.Name), Size: int64(t.Size)}
		for i, k := range t.Keys {
			pt.MatchFields = append(pt.MatchFields, &p4configv1.MatchField{Id: uint32(i + 1), Name: k.Name,
				Bitwidth: int32(k.Width), Match: &p4configv1.MatchField_MatchType_{MatchType: kinds[k.Kind]}})
		}
		for _, an := range t.Actions {
			pt.ActionRefs = append(pt.ActionRefs, &p4configv1.ActionRef{Id: actionIDs[an]})
		}
		def := &p4configv1.TableActionCall{ActionId: actionIDs[t.DefaultAction]}
		for i, v := range t.DefaultParams {
			def.Arguments = append(def.Arguments, &p4configv1.TableActionCall_Argument{ParamId: uint32(i + 1), Value: canonical(v)})
		}
		pt.InitialDefaultAction = def
		if t.ConstDefault {
			pt.ConstDefaultActionId = actionIDs[t.DefaultAction]
		}
		info.Tables = append(info.Tables, pt)
	}
	for _, c := range prog.Counters {
		info.Counters = append(info.Counters, &p4configv1.Counter{Preamble: pre(counterIDs[c.Name], c.Name),
			Spec: &p4configv1.CounterSpec{Unit: units[c.Unit]}, Size: int64(c.Size)})
	}
	for _, r := range prog.Registers {
		info.Registers = append(info.Registers, &p4configv1.Register{Preamble: pre(registerIDs[r.Name], r.Name),
			TypeSpec: bitSpec(r.Width), Size: int32(r.Size)})
	}
	for _, d := range prog.Digests {
		info.Digests = append(info.Digests, &p4configv1.Digest{Preamble: pre(digestIDs[d.Name], d.Name),
			TypeSpec: &p4configv1.P4DataTypeSpec{TypeSpec: &p4configv1.P4DataTypeSpec_Struct{Struct: &p4configv1.P4NamedType{Name: d.Name}}}})
		if info.TypeInfo == nil {
			info.TypeInfo = &p4configv1.P4TypeInfo{Structs: map[string]*p4configv1.P4StructTypeSpec{}}
		}
		st := &p4configv1.P4StructTypeSpec{}
		for _, m := range d.Members {
			st.Members = append(st.Members, &p4configv1.P4StructTypeSpec_Member{Name: m.Name, TypeSpec: bitSpec(m.Width)})
		}
		info.TypeInfo.Structs[d.Name] = st
	}
	tOrder, aOrder, rOrder := p4cOrder()
	inOrder(info.Tables, func(t *p4configv1.Table) string { return t.GetPreamble().GetName() }, tOrder)
	inOrder(info.Actions, func(a *p4configv1.Action) string { return a.GetPreamble().GetName() }, aOrder)
	inOrder(info.Registers, func(r *p4configv1.Register) string { return r.GetPreamble().GetName() }, rOrder)
	return info
}

func bitSpec(width int) *p4configv1.P4DataTypeSpec {
	return &p4configv1.P4DataTypeSpec{TypeSpec: &p4configv1.P4DataTypeSpec_Bitstring{
		Bitstring: &p4configv1.P4BitstringLikeTypeSpec{TypeSpec: &p4configv1.P4BitstringLikeTypeSpec_Bit{
			Bit: &p4configv1.P4BitTypeSpec{Bitwidth: int32(width)}}}}}
}

// canonical is the canonical bytestring of v (p4rt.Canonical of its
// big-endian bytes; engine.EncodeBits cannot be imported here: the
// engine's benchmarks import this package).
func canonical(v uint64) []byte { return p4rt.Canonical(binary.BigEndian.AppendUint64(nil, v)) }

// Check reports every way info differs from prog in what the Go model relies
// on: the same tables (match-field names, kinds and widths, the same action
// set), actions (parameter names and widths), registers (cell width, size)
// counters (size, unit) and digests (struct members and widths), and nothing
// else of those kinds. With strict it
// also compares table sizes, default actions and const-ness, which the model
// does not depend on but p4c's output should agree on. The error lists all
// differences, one per line.
func Check(info *p4configv1.P4Info, prog pipeline.Program, strict bool) error {
	var diffs []string
	add := func(format string, a ...any) { diffs = append(diffs, fmt.Sprintf(format, a...)) }
	if info == nil {
		return fmt.Errorf("no p4info")
	}
	actionName := map[uint32]string{}
	pActions := map[string]*p4configv1.Action{}
	for _, a := range info.GetActions() {
		actionName[a.GetPreamble().GetId()] = a.GetPreamble().GetName()
		pActions[a.GetPreamble().GetName()] = a
	}
	for _, a := range prog.Actions {
		pa, ok := pActions[a.Name]
		if !ok {
			add("action %s is missing", a.Name)
			continue
		}
		delete(pActions, a.Name)
		got := map[string]int32{}
		for _, prm := range pa.GetParams() {
			got[prm.GetName()] = prm.GetBitwidth()
		}
		for _, prm := range a.Params {
			w, ok := got[prm.Name]
			switch {
			case !ok:
				add("action %s: parameter %s is missing", a.Name, prm.Name)
			case int(w) != prm.Width:
				add("action %s: parameter %s is %d bits, want %d", a.Name, prm.Name, w, prm.Width)
			}
			delete(got, prm.Name)
		}
		for n := range got {
			add("action %s: unexpected parameter %s", a.Name, n)
		}
	}
	for n := range pActions {
		add("unexpected action %s", n)
	}

	pTables := map[string]*p4configv1.Table{}
	for _, t := range info.GetTables() {
		pTables[t.GetPreamble().GetName()] = t
	}
	for _, t := range prog.Tables {
		pt, ok := pTables[t.Name]
		if !ok {
			add("table %s is missing", t.Name)
			continue
		}
		delete(pTables, t.Name)
		got := map[string]*p4configv1.MatchField{}
		for _, mf := range pt.GetMatchFields() {
			got[mf.GetName()] = mf
		}
		for _, k := range t.Keys {
			mf, ok := got[k.Name]
			switch {
			case !ok:
				add("table %s: key %s is missing", t.Name, k.Name)
			case mf.GetMatchType() != kinds[k.Kind]:
				add("table %s: key %s is %v, want %v", t.Name, k.Name, mf.GetMatchType(), kinds[k.Kind])
			case int(mf.GetBitwidth()) != k.Width:
				add("table %s: key %s is %d bits, want %d", t.Name, k.Name, mf.GetBitwidth(), k.Width)
			}
			delete(got, k.Name)
		}
		for n := range got {
			add("table %s: unexpected key %s", t.Name, n)
		}
		refs := map[string]bool{}
		for _, r := range pt.GetActionRefs() {
			refs[actionName[r.GetId()]] = true
		}
		for _, an := range t.Actions {
			if !refs[an] {
				add("table %s: action %s is missing", t.Name, an)
			}
			delete(refs, an)
		}
		for an := range refs {
			add("table %s: unexpected action %s", t.Name, an)
		}
		if strict {
			if pt.GetSize() != int64(t.Size) {
				add("table %s: size %d, want %d", t.Name, pt.GetSize(), t.Size)
			}
			if (pt.GetConstDefaultActionId() != 0) != t.ConstDefault {
				add("table %s: const default action %v, want %v", t.Name, pt.GetConstDefaultActionId() != 0, t.ConstDefault)
			}
			if d := pt.GetInitialDefaultAction(); d != nil && actionName[d.GetActionId()] != t.DefaultAction {
				add("table %s: default action %s, want %s", t.Name, actionName[d.GetActionId()], t.DefaultAction)
			}
		}
	}
	for n := range pTables {
		add("unexpected table %s", n)
	}

	pRegs := map[string]*p4configv1.Register{}
	for _, r := range info.GetRegisters() {
		pRegs[r.GetPreamble().GetName()] = r
	}
	for _, r := range prog.Registers {
		pr, ok := pRegs[r.Name]
		if !ok {
			add("register %s is missing", r.Name)
			continue
		}
		delete(pRegs, r.Name)
		if w := pr.GetTypeSpec().GetBitstring().GetBit().GetBitwidth(); int(w) != r.Width {
			add("register %s: cells are bit<%d>, want bit<%d>", r.Name, w, r.Width)
		}
		if int(pr.GetSize()) != r.Size {
			add("register %s: size %d, want %d", r.Name, pr.GetSize(), r.Size)
		}
	}
	for n := range pRegs {
		add("unexpected register %s", n)
	}

	pCtrs := map[string]*p4configv1.Counter{}
	for _, c := range info.GetCounters() {
		pCtrs[c.GetPreamble().GetName()] = c
	}
	for _, c := range prog.Counters {
		pc, ok := pCtrs[c.Name]
		if !ok {
			add("counter %s is missing", c.Name)
			continue
		}
		delete(pCtrs, c.Name)
		if int(pc.GetSize()) != c.Size {
			add("counter %s: size %d, want %d", c.Name, pc.GetSize(), c.Size)
		}
		if pc.GetSpec().GetUnit() != units[c.Unit] {
			add("counter %s: unit %v, want %v", c.Name, pc.GetSpec().GetUnit(), units[c.Unit])
		}
	}
	for n := range pCtrs {
		add("unexpected counter %s", n)
	}

	pDigests := map[string]*p4configv1.Digest{}
	for _, d := range info.GetDigests() {
		pDigests[d.GetPreamble().GetName()] = d
	}
	for _, d := range prog.Digests {
		pd, ok := pDigests[d.Name]
		if !ok {
			add("digest %s is missing", d.Name)
			continue
		}
		delete(pDigests, d.Name)
		st := info.GetTypeInfo().GetStructs()[pd.GetTypeSpec().GetStruct().GetName()]
		if st == nil {
			add("digest %s: its data is not a struct of type_info", d.Name)
			continue
		}
		var got []string
		for _, m := range st.GetMembers() {
			got = append(got, fmt.Sprintf("%s:%d", m.GetName(), m.GetTypeSpec().GetBitstring().GetBit().GetBitwidth()))
		}
		var want []string
		for _, m := range d.Members {
			want = append(want, fmt.Sprintf("%s:%d", m.Name, m.Width))
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			add("digest %s: members %v, want %v", d.Name, got, want)
		}
	}
	for n := range pDigests {
		add("unexpected digest %s", n)
	}
	if n := len(info.GetDirectCounters()) + len(info.GetMeters()) + len(info.GetDirectMeters()) + len(info.GetActionProfiles()); n > 0 {
		add("%d direct counters, meters or action profiles that the program does not declare", n)
	}
	if len(diffs) == 0 {
		return nil
	}
	sort.Strings(diffs)
	return fmt.Errorf("p4info does not match the p4ctl program (pkg/pipeline):\n  %s", strings.Join(diffs, "\n  "))
}
