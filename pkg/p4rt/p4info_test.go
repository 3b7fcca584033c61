package p4rt_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/p4ctl/p4ctl/internal/testing/p4rttest"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

func programIndex(t testing.TB) *p4rt.Index {
	t.Helper()
	idx, err := p4rt.NewIndex(p4rttest.ProgramP4Info())
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

func TestIndexLookups(t *testing.T) {
	idx := programIndex(t)
	full, err := idx.TableID(pipeline.TableCarbonRank)
	if err != nil || full == 0 {
		t.Fatalf("TableID(%s) = %d, %v", pipeline.TableCarbonRank, full, err)
	}
	short, err := idx.TableID("carbon_rank")
	if err != nil || short != full {
		t.Fatalf("short name: %d, %v (full %d)", short, err, full)
	}
	if idx.Name(full) != pipeline.TableCarbonRank {
		t.Errorf("Name(%d) = %s", full, idx.Name(full))
	}
	for _, tc := range []struct {
		name   string
		lookup func(string) (uint32, error)
		arg    string
	}{
		{"action", idx.ActionID, "route_to_region"},
		{"register", idx.RegisterID, "server_credit_0"},
		{"counter", idx.CounterID, "dispatch_events"},
	} {
		id, err := tc.lookup(tc.arg)
		if err != nil || id == 0 {
			t.Errorf("%s %s: %d, %v", tc.name, tc.arg, id, err)
		}
	}
	if id, err := idx.MatchFieldID("carbon_rank", "feasible"); err != nil || id == 0 {
		t.Errorf("match field: %d %v", id, err)
	}
	if id, err := idx.ParamID("set_pool", "credit_tick"); err != nil || id == 0 {
		t.Errorf("param: %d %v", id, err)
	}
	// Unknown names are errors, never id 0 with nil error.
	for _, tc := range []struct {
		what string
		f    func() (uint32, error)
	}{
		{"table", func() (uint32, error) { return idx.TableID("no_such_table") }},
		{"action", func() (uint32, error) { return idx.ActionID("nope") }},
		{"counter", func() (uint32, error) { return idx.CounterID("nope") }},
		{"direct counter", func() (uint32, error) { return idx.DirectCounterID("nope") }},
		{"register", func() (uint32, error) { return idx.RegisterID("nope") }},
		{"digest", func() (uint32, error) { return idx.DigestID("nope") }},
		{"field", func() (uint32, error) { return idx.MatchFieldID("carbon_rank", "nope") }},
		{"field of unknown table", func() (uint32, error) { return idx.MatchFieldID("nope", "epoch") }},
		{"param", func() (uint32, error) { return idx.ParamID("route_to_region", "nope") }},
		{"packet metadata", func() (uint32, error) { return idx.PacketMetadataID("packet_in", "nope") }},
		{"partial word", func() (uint32, error) { return idx.TableID("rank") }},
	} {
		id, err := tc.f()
		if err == nil || id != 0 || !errors.Is(err, p4rt.ErrUnknownName) {
			t.Errorf("%s: id %d err %v, want ErrUnknownName", tc.what, id, err)
		}
	}
	// A short name shared by two controls is ambiguous.
	info := &p4configv1.P4Info{Tables: []*p4configv1.Table{
		{Preamble: &p4configv1.Preamble{Id: 1, Name: "A.fwd"}},
		{Preamble: &p4configv1.Preamble{Id: 2, Name: "B.fwd"}},
	}}
	amb := p4rt.MustIndex(info)
	if _, err := amb.TableID("fwd"); !errors.Is(err, p4rt.ErrAmbiguousName) {
		t.Errorf("ambiguous: %v", err)
	}
	if id, err := amb.TableID("B.fwd"); err != nil || id != 2 {
		t.Errorf("full name of an ambiguous short name: %d %v", id, err)
	}
	// Broken P4Infos are refused.
	if _, err := p4rt.NewIndex(&p4configv1.P4Info{Tables: []*p4configv1.Table{{Preamble: &p4configv1.Preamble{Name: "x"}}}}); err == nil {
		t.Error("table without id accepted")
	}
	dup := &p4configv1.P4Info{Actions: []*p4configv1.Action{{Preamble: &p4configv1.Preamble{Id: 5, Name: "a"}}, {Preamble: &p4configv1.Preamble{Id: 5, Name: "b"}}}}
	if _, err := p4rt.NewIndex(dup); err == nil {
		t.Error("duplicate ids accepted")
	}
	if _, err := p4rt.NewIndex(nil); err == nil {
		t.Error("nil P4Info accepted")
	}
}

func TestLoadP4Info(t *testing.T) {
	info := p4rttest.ProgramP4Info()
	dir := t.TempDir()
	text, _ := prototext.Marshal(info)
	js, _ := protojson.Marshal(info)
	bin, _ := proto.Marshal(info)
	for name, data := range map[string][]byte{"p4info.txt": text, "p4info.json": js, "p4info.bin": bin, "noext": text, "binnoext": bin} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := p4rt.LoadP4Info(path)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !proto.Equal(got, info) {
			t.Errorf("%s: round trip differs", name)
		}
	}
	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(bad, []byte("tables { oops"), 0o644)
	if _, err := p4rt.LoadP4Info(bad); err == nil {
		t.Error("malformed P4Info accepted")
	}
	if _, err := p4rt.LoadP4Info(filepath.Join(dir, "missing.txt")); err == nil {
		t.Error("missing file accepted")
	}
}

// An empty file parses as an empty P4Info; LoadP4Info refuses it rather
// than letting a switch answer a push of nothing (issue 15 item 9).
func TestLoadP4InfoEmpty(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"empty.txtpb", "empty.json", "blank.txt"} {
		path := filepath.Join(dir, name)
		body := ""
		if name == "empty.json" {
			body = "{}"
		}
		if name == "blank.txt" {
			body = "\n# nothing\n"
		}
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := p4rt.LoadP4Info(path)
		if !errors.Is(err, p4rt.ErrEmptyP4Info) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: %v, want ErrEmptyP4Info naming the file", name, err)
		}
	}
}
