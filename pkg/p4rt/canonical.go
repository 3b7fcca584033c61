package p4rt

import (
	"slices"
	"strings"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	"google.golang.org/protobuf/proto"
)

// CanonicalP4Info returns a copy of info with every list whose order
// carries no meaning sorted by id: the top-level entities (tables,
// actions, counters, meters, registers, digests, externs and their
// instances, action profiles, value sets, controller packet metadata) and,
// inside a table, its action references and direct resources. Match
// fields, action parameters and packet metadata fields keep their order
// (their ids are declared in it, and a key's order is the key's layout).
// Two P4Infos of one program listed in another order (the embedded
// target's built-in one and p4c's, say) have equal canonical forms.
func CanonicalP4Info(info *p4configv1.P4Info) *p4configv1.P4Info {
	if info == nil {
		return nil
	}
	c := proto.Clone(info).(*p4configv1.P4Info)
	type withPreamble interface{ GetPreamble() *p4configv1.Preamble }
	byID := func(a, b withPreamble) int {
		return cmpUint32(a.GetPreamble().GetId(), b.GetPreamble().GetId())
	}
	slices.SortFunc(c.Tables, func(a, b *p4configv1.Table) int { return byID(a, b) })
	slices.SortFunc(c.Actions, func(a, b *p4configv1.Action) int { return byID(a, b) })
	slices.SortFunc(c.ActionProfiles, func(a, b *p4configv1.ActionProfile) int { return byID(a, b) })
	slices.SortFunc(c.Counters, func(a, b *p4configv1.Counter) int { return byID(a, b) })
	slices.SortFunc(c.DirectCounters, func(a, b *p4configv1.DirectCounter) int { return byID(a, b) })
	slices.SortFunc(c.Meters, func(a, b *p4configv1.Meter) int { return byID(a, b) })
	slices.SortFunc(c.DirectMeters, func(a, b *p4configv1.DirectMeter) int { return byID(a, b) })
	slices.SortFunc(c.ControllerPacketMetadata, func(a, b *p4configv1.ControllerPacketMetadata) int { return byID(a, b) })
	slices.SortFunc(c.ValueSets, func(a, b *p4configv1.ValueSet) int { return byID(a, b) })
	slices.SortFunc(c.Registers, func(a, b *p4configv1.Register) int { return byID(a, b) })
	slices.SortFunc(c.Digests, func(a, b *p4configv1.Digest) int { return byID(a, b) })
	slices.SortFunc(c.Externs, func(a, b *p4configv1.Extern) int { return cmpUint32(a.GetExternTypeId(), b.GetExternTypeId()) })
	for _, e := range c.Externs {
		slices.SortFunc(e.Instances, func(a, b *p4configv1.ExternInstance) int { return byID(a, b) })
	}
	for _, t := range c.Tables {
		slices.SortFunc(t.ActionRefs, func(a, b *p4configv1.ActionRef) int { return cmpUint32(a.GetId(), b.GetId()) })
		slices.Sort(t.DirectResourceIds)
	}
	return c
}

// SameP4Info reports whether a and b describe the same program: equal
// once both are in canonical order (CanonicalP4Info). proto.Equal alone is
// order-sensitive: a switch started with the same program listed in
// another order compared as another program, and a daemon started with
// --p4info wiped and rewrote all its entries (issue 27 item 12).
func SameP4Info(a, b *p4configv1.P4Info) bool {
	if a == nil || b == nil {
		return a == b
	}
	return proto.Equal(CanonicalP4Info(a), CanonicalP4Info(b))
}

func cmpUint32(a, b uint32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// P4InfoDifference says in a few words how b differs from a as a program
// ("" when SameP4Info): tables only one of them has, or tables whose ids
// differ, or else that sizes, fields or actions differ. Errors use it to
// say why a P4Info is not the switch's.
func P4InfoDifference(a, b *p4configv1.P4Info) string {
	if SameP4Info(a, b) {
		return ""
	}
	ids := func(info *p4configv1.P4Info) map[string]uint32 {
		m := map[string]uint32{}
		for _, t := range info.GetTables() {
			m[t.GetPreamble().GetName()] = t.GetPreamble().GetId()
		}
		return m
	}
	ta, tb := ids(a), ids(b)
	var onlyA, onlyB, moved []string
	for n, id := range ta {
		switch idb, ok := tb[n]; {
		case !ok:
			onlyA = append(onlyA, n)
		case idb != id:
			moved = append(moved, n)
		}
	}
	for n := range tb {
		if _, ok := ta[n]; !ok {
			onlyB = append(onlyB, n)
		}
	}
	slices.Sort(onlyA)
	slices.Sort(onlyB)
	slices.Sort(moved)
	var parts []string
	if len(onlyA) > 0 {
		parts = append(parts, "tables only in the first: "+strings.Join(first(onlyA, 3), ", "))
	}
	if len(onlyB) > 0 {
		parts = append(parts, "tables only in the second: "+strings.Join(first(onlyB, 3), ", "))
	}
	if len(moved) > 0 {
		parts = append(parts, "tables with other ids: "+strings.Join(first(moved, 3), ", "))
	}
	if len(parts) == 0 {
		return "the same tables with other sizes, match fields, actions or other objects"
	}
	return strings.Join(parts, "; ")
}

// first returns up to n elements of s, and "…" when there were more.
func first(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(append([]string(nil), s[:n]...), "…")
}
