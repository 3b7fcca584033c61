package p4info

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// Ids seen in p4c-generated P4Info files: NoAction is 21257015 in every
// v1model program (p4lang tutorials, ONOS pipeconfs).
func TestIDsMatchP4c(t *testing.T) {
	got := IDs(p4configv1.P4Ids_ACTION, []string{"NoAction"}, map[uint32]bool{})
	if got["NoAction"] != 21257015 {
		t.Fatalf("NoAction id = %d, want 21257015 (p4c)", got["NoAction"])
	}
}

func TestIDsProbeOnCollision(t *testing.T) {
	taken := map[uint32]bool{}
	first := IDs(p4configv1.P4Ids_TABLE, []string{"a"}, taken)["a"]
	// A second symbol hashing to the same slot must get the next id.
	taken2 := map[uint32]bool{first: true}
	again := IDs(p4configv1.P4Ids_TABLE, []string{"a"}, taken2)["a"]
	if again != first+1 {
		t.Fatalf("probe: got %#x, want %#x", again, first+1)
	}
	if first>>24 != uint32(p4configv1.P4Ids_TABLE) {
		t.Fatalf("prefix of %#x", first)
	}
}

func TestAliases(t *testing.T) {
	a := aliases([]string{"C.x", "D.x", "C.y", "NoAction"})
	want := map[string]string{"C.x": "C.x", "D.x": "D.x", "C.y": "y", "NoAction": "NoAction"}
	for k, v := range want {
		if a[k] != v {
			t.Errorf("alias(%s) = %s, want %s", k, a[k], v)
		}
	}
}

func TestFromSchemaChecksAgainstSchema(t *testing.T) {
	prog := pipeline.Schema()
	info := FromSchema(prog)
	if err := Check(info, prog, true); err != nil {
		t.Fatal(err)
	}
	seen := map[uint32]string{}
	for _, tb := range info.GetTables() {
		if prev, dup := seen[tb.GetPreamble().GetId()]; dup {
			t.Fatalf("id collision %s / %s", prev, tb.GetPreamble().GetName())
		}
		seen[tb.GetPreamble().GetId()] = tb.GetPreamble().GetName()
		if tb.GetPreamble().GetAlias() == tb.GetPreamble().GetName() {
			t.Errorf("table %s alias not shortened", tb.GetPreamble().GetName())
		}
	}
}

func TestCheckReportsDifferences(t *testing.T) {
	prog := pipeline.Schema()
	info := FromSchema(prog)
	bad := proto.Clone(info).(*p4configv1.P4Info)
	bad.Tables[0].MatchFields[0].Bitwidth = 31
	bad.Tables[1].MatchFields[1].Match = &p4configv1.MatchField_MatchType_{MatchType: p4configv1.MatchField_TERNARY}
	bad.Registers = slices.DeleteFunc(bad.Registers, func(r *p4configv1.Register) bool {
		return r.GetPreamble().GetName() == pipeline.RegisterServerCredit(0)
	})
	bad.Actions[1].Params[0].Name = "other"
	bad.Tables = append(bad.Tables, &p4configv1.Table{Preamble: &p4configv1.Preamble{Id: 1, Name: "P4ctlIngress.extra"}})
	err := Check(bad, prog, false)
	if err == nil {
		t.Fatal("Check accepted a mismatching p4info")
	}
	for _, want := range []string{"key src_addr is 31 bits, want 32", "key sla_ms is TERNARY, want RANGE",
		"register " + pipeline.RegisterServerCredit(0) + " is missing", "parameter site is missing",
		"unexpected parameter other", "unexpected table P4ctlIngress.extra"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	// Size differences only count in strict mode.
	sized := proto.Clone(info).(*p4configv1.P4Info)
	sized.Tables[0].Size = 7
	if err := Check(sized, prog, false); err != nil {
		t.Errorf("non-strict Check rejected a size change: %v", err)
	}
	if err := Check(sized, prog, true); err == nil {
		t.Error("strict Check accepted a size change")
	}
}

// Issue 27 item 12: the embedded target's built-in P4Info listed three
// tables (and some actions and registers) in another order than p4c's, so
// a client comparing P4Infos with proto.Equal saw another program. It is
// now p4c's P4Info byte for byte (deterministic encoding).
func TestFromSchemaIsP4cs(t *testing.T) {
	b, err := os.ReadFile("../../../p4src/build/v1model/p4ctl.p4info.txtpb")
	if err != nil {
		t.Fatal(err)
	}
	var p4c p4configv1.P4Info
	if err := prototext.Unmarshal(b, &p4c); err != nil {
		t.Fatal(err)
	}
	ours := FromSchema(pipeline.Schema())
	m := proto.MarshalOptions{Deterministic: true}
	a, _ := m.Marshal(ours)
	w, _ := m.Marshal(&p4c)
	if !bytes.Equal(a, w) {
		for i := range min(len(ours.Tables), len(p4c.Tables)) {
			if g, x := ours.Tables[i].GetPreamble().GetName(), p4c.Tables[i].GetPreamble().GetName(); g != x {
				t.Errorf("table %d: %s, p4c lists %s", i, g, x)
			}
		}
		t.Fatalf("the built-in P4Info is not p4c's byte for byte:\n%s", prototext.Format(ours))
	}
}
