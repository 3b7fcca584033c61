package p4rt_test

import (
	"net"
	"strings"
	"testing"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/protobuf/encoding/prototext"

	"github.com/p4ctl/p4ctl/internal/testing/golden"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

func TestEntryBuilderGolden(t *testing.T) {
	idx := programIndex(t)
	var out strings.Builder
	add := func(label string, b *p4rt.EntryBuilder) {
		t.Helper()
		e, err := b.Build()
		if err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		out.WriteString("# " + label + "\n")
		// protobuf-go randomises text whitespace between builds: collapse it.
		out.WriteString(strings.Join(strings.Fields(prototext.Format(e)), " ") + "\n")
		out.WriteString("# " + idx.FormatTableEntry(e) + "\n\n")
	}
	add("carbon rank, any site", idx.TableEntry("carbon_rank").Exact("epoch", 1).
		Ternary("feasible", uint32(1<<3), uint32(1<<3)).Ternary("site", 0, 0).Priority(30).
		Action("route_to_region", p4rt.Param("region", 3)))
	add("client site /24 (value masked to the prefix)", idx.TableEntry("client_site").
		LPM("src_addr", net.ParseIP("10.1.2.3"), 24).Action("set_client_site", p4rt.Param("site", 7)))
	add("feasibility range", idx.TableEntry("sla_feasibility").Exact("site", 7).Range("sla_ms", 300, 499).
		Priority(1).Action("set_feasible", p4rt.Param("feasible", uint32(0b10110)), p4rt.Param("nearest", 1)))
	add("full range is don't care", idx.TableEntry("sla_feasibility").Exact("site", 7).Range("sla_ms", 0, 65535).
		Priority(1).Action("set_feasible", p4rt.Param("feasible", 1), p4rt.Param("nearest", 0)))
	add("remote next hop", idx.TableEntry("region_next_hop").Exact("region", 2).
		Action("forward_remote", p4rt.Param("port", 3), p4rt.Param("dmac", net.HardwareAddr{0, 0x11, 0x22, 0x33, 0x44, 0x55}),
			p4rt.Param("addr", net.ParseIP("192.0.2.1")), p4rt.Param("capacity", 0)))
	add("active epoch (default entry)", idx.TableEntry("active_epoch").Default().Action("set_active_epoch", p4rt.Param("epoch", 2)))
	golden.Check(t, "entries.golden", []byte(out.String()))
}

func TestEntryBuilderErrors(t *testing.T) {
	idx := programIndex(t)
	for _, tc := range []struct {
		name string
		b    *p4rt.EntryBuilder
		want string
	}{
		{"unknown table", idx.TableEntry("nope"), "no table"},
		{"unknown field", idx.TableEntry("region_next_hop").Exact("nope", 1), "no match field"},
		{"wrong kind", idx.TableEntry("region_next_hop").Ternary("region", 1, 1), "is exact, not ternary"},
		{"too wide", idx.TableEntry("region_next_hop").Exact("region", 256), "does not fit in 8 bits"},
		{"field twice", idx.TableEntry("region_next_hop").Exact("region", 1).Exact("region", 2), "set twice"},
		{"exact missing", idx.TableEntry("carbon_rank").Priority(1).Action("route_to_region", p4rt.Param("region", 1)), "exact match field epoch missing"},
		{"priority missing", idx.TableEntry("carbon_rank").Exact("epoch", 1).Action("route_to_region", p4rt.Param("region", 1)), "need a priority"},
		{"priority on exact table", idx.TableEntry("region_next_hop").Exact("region", 1).Priority(3).Action("dispatch_local", p4rt.Param("capacity", 1)), "must not have a priority"},
		{"negative priority", idx.TableEntry("carbon_rank").Priority(-1), "must be positive"},
		{"foreign action", idx.TableEntry("region_next_hop").Exact("region", 1).Action("route_to_region", p4rt.Param("region", 1)), "not one of its actions"},
		{"param missing", idx.TableEntry("region_next_hop").Exact("region", 1).Action("forward_remote", p4rt.Param("port", 1)), "missing"},
		{"param too wide", idx.TableEntry("region_next_hop").Exact("region", 1).Action("forward_remote", p4rt.Param("port", 512), p4rt.Param("dmac", 0), p4rt.Param("addr", 0), p4rt.Param("capacity", 0)), "does not fit in 9 bits"},
		{"unknown param", idx.TableEntry("region_next_hop").Exact("region", 1).Action("dispatch_local", p4rt.Param("cap", 1)), "no parameter"},
		{"no action", idx.TableEntry("region_next_hop").Exact("region", 1), "no action"},
		{"keyless insert", idx.TableEntry("active_epoch").Action("set_active_epoch", p4rt.Param("epoch", 1)), "keyless"},
		{"default with match", idx.TableEntry("region_next_hop").Exact("region", 1).Default(), "no match fields"},
		{"lpm too long", idx.TableEntry("client_site").LPM("src_addr", 1, 33), "prefix length"},
		{"range reversed", idx.TableEntry("sla_feasibility").Range("sla_ms", 5, 4), "low"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.b.Build()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestDecodeTableEntry(t *testing.T) {
	idx := programIndex(t)
	e, err := idx.TableEntry("l2_forward").Exact("dst_mac", net.HardwareAddr{2, 0, 0, 0, 0, 1}).Action("forward", p4rt.Param("port", 5)).Build()
	if err != nil {
		t.Fatal(err)
	}
	d, err := idx.DecodeTableEntry(e)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := d.String(), "P4ctlIngress.l2_forward dst_mac=02:00:00:00:00:01 -> P4ctlIngress.forward(port=5)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	e.TableId = 12345
	if _, err := idx.DecodeTableEntry(e); err == nil {
		t.Error("unknown table id decoded")
	}
	if u, err := idx.RegisterWrite("server_work_us", 3, 7); err != nil || u.GetType() != p4v1.Update_MODIFY {
		t.Errorf("RegisterWrite: %v %v", u, err)
	}
	if _, err := idx.RegisterWrite("server_work_us", 1024, 7); err == nil {
		t.Error("register index beyond size accepted")
	}
	if _, err := idx.RegisterWrite("server_work_us", 1, 1<<32); err == nil {
		t.Error("register value wider than the cell accepted")
	}
}
