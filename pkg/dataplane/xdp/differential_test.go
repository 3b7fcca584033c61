package xdp_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/p4ctl/p4ctl/internal/testing/casesuite"
	pc "github.com/p4ctl/p4ctl/internal/testing/packetcases"
	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// randomTables are entries that stress the translation of the range and
// ternary tables: overlapping sla_feasibility ranges with priorities (ties
// included) and NoAction entries, carbon_rank entries of every site-mask
// kind (exact, omitted, partial) with arbitrary feasible masks and tied
// priorities, and default actions that are not the program's.
func randomTables(r *rand.Rand) []pc.Entry {
	var es []pc.Entry
	for site := uint8(1); site <= 3; site++ {
		es = append(es, pc.ClientSite(pc.IPv4(10, 0, site, 0), 24, uint16(site)), pc.L3Route(pc.IPv4(10, 0, site, 0), 24, uint32(site)))
	}
	for region := uint8(0); region < 6; region++ {
		es = append(es, pc.LocalRegion(region, 0), pc.Pool{Base: uint16(region) * 4, SizeMask: 3, Policy: pipeline.PolicyJBSQ, Bound: 4, MaxHolds: 1}.Entry(region))
		for j := uint16(0); j < 4; j++ {
			es = append(es, pc.Serves(uint16(region)*4+j, pc.Server(uint16(region)*4+j))...)
		}
	}
	seenSLA := map[[4]uint64]bool{}
	for range 40 {
		site := uint64(r.IntN(4)) // site 0: clients of no site
		lo := uint64(r.IntN(400))
		hi := lo + uint64(r.IntN(300))
		prio := uint64(1 + r.IntN(4))
		if seenSLA[[4]uint64{site, lo, hi, prio}] {
			continue
		}
		seenSLA[[4]uint64{site, lo, hi, prio}] = true
		e := pc.Entry{Table: pipeline.TableSLAFeasibility, Priority: int32(prio),
			Match:  []pc.Match{pc.Exact(pipeline.FieldSite, site), pc.Range(pipeline.FieldSLA, lo, hi)},
			Action: pipeline.ActionSetFeasible, Params: []pc.Param{{Name: pipeline.ParamFeasible, Value: uint64(r.IntN(64))}, {Name: pipeline.ParamNearest, Value: uint64(r.IntN(6))}}}
		if r.IntN(8) == 0 {
			e.Action, e.Params = pipeline.ActionNoAction, nil
		}
		es = append(es, e)
	}
	seenRank := map[[6]uint64]bool{}
	for range 60 {
		epoch := uint64(r.IntN(2))
		var site pc.Match
		switch r.IntN(3) {
		case 0:
			site = pc.Ternary(pipeline.FieldSite, uint64(1+r.IntN(3)), 0xFFFF)
		case 1:
			site = pc.Match{} // omitted
		default:
			site = pc.Ternary(pipeline.FieldSite, uint64(r.IntN(4))&1, 1)
		}
		fmask := uint64(1+r.IntN(63)) & 0x3F
		fval := uint64(r.IntN(64)) & fmask
		prio := uint64(1 + r.IntN(6))
		key := [6]uint64{epoch, site.Value, site.Mask, fval, fmask, prio}
		if seenRank[key] {
			continue
		}
		seenRank[key] = true
		m := []pc.Match{pc.Exact(pipeline.FieldEpoch, epoch)}
		if site.Field != "" {
			m = append(m, site)
		}
		m = append(m, pc.Ternary(pipeline.FieldFeasible, fval, fmask))
		e := pc.Entry{Table: pipeline.TableCarbonRank, Priority: int32(prio), Match: m,
			Action: pipeline.ActionRouteToRegion, Params: []pc.Param{{Name: pipeline.ParamRegion, Value: uint64(r.IntN(6))}}}
		if r.IntN(10) == 0 {
			e.Action, e.Params = pipeline.ActionNoAction, nil
		}
		es = append(es, e)
	}
	// Nested and overlapping client prefixes of every length, some
	// NoAction, sometimes a default route (the LPM field omitted).
	seenPfx := map[[2]uint64]bool{{uint64(pc.IPv4(10, 0, 1, 0)), 24}: true, {uint64(pc.IPv4(10, 0, 2, 0)), 24}: true, {uint64(pc.IPv4(10, 0, 3, 0)), 24}: true}
	for range 30 {
		plen := []int{8, 12, 16, 20, 22, 24, 26, 28, 30, 32}[r.IntN(10)]
		addr := pc.IPv4(10, 0, byte(r.IntN(4)), byte(r.IntN(256))) &^ (1<<(32-plen) - 1)
		if seenPfx[[2]uint64{uint64(addr), uint64(plen)}] {
			continue
		}
		seenPfx[[2]uint64{uint64(addr), uint64(plen)}] = true
		e := pc.ClientSite(addr, plen, uint16(1+r.IntN(3)))
		if r.IntN(8) == 0 {
			e.Action, e.Params = pipeline.ActionNoAction, nil
		}
		es = append(es, e)
	}
	if r.IntN(2) == 0 {
		es = append(es, pc.Entry{Table: pipeline.TableClientSite, Action: pipeline.ActionSetClientSite,
			Params: []pc.Param{{Name: pipeline.ParamSite, Value: 2}}}) // 0.0.0.0/0: the LPM field omitted
	}
	if r.IntN(2) == 0 {
		es = append(es, pc.ActiveEpoch(1))
	}
	// A default that is not the program's: a miss of sla_feasibility feasible everywhere.
	es = append(es, pc.Entry{Table: pipeline.TableSLAFeasibility, Default: true, Action: pipeline.ActionSetFeasible,
		Params: []pc.Param{{Name: pipeline.ParamFeasible, Value: 0x3F}, {Name: pipeline.ParamNearest, Value: 5}}})
	return es
}

// compare sends the same requests to both switches and fails on the first
// difference: verdict, reason, port, bytes.
func compare(t *testing.T, r *rand.Rand, model, prog *dataplane.Switch, n int, what string) {
	t.Helper()
	for i := range n {
		site := uint8(1 + r.IntN(3))
		client := pc.Client(site)
		client.IP = pc.IPv4(10, 0, byte(r.IntN(4)), byte(r.IntN(256))) // anywhere in the random prefixes
		if r.IntN(10) == 0 {
			client.IP = pc.IPv4(192, 0, 2, byte(r.IntN(256))) // no prefix but the default route's
		}
		frame := pc.Bytes(pc.Request(client, uint32(i), uint16(r.IntN(800)), 0))
		a, b := model.Inject(1, frame), prog.Inject(1, frame)
		if a.Verdict != b.Verdict || a.Reason != b.Reason || a.Port != b.Port || !bytes.Equal(a.Frame, b.Frame) {
			t.Fatalf("%s, request %d (site %d): Go model %s %s port %d, XDP %s %s port %d\nGo:  % x\nXDP: % x",
				what, i, site, a.Verdict, a.Reason, a.Port, b.Verdict, b.Reason, b.Port, a.Frame, b.Frame)
		}
	}
}

// On random range and ternary tables, the XDP program and the Go model
// route every request alike — after the first load, after deletes and
// modifications (groups rebuilt incrementally), and after a reload of the
// whole pipeline state (RECONCILE_AND_COMMIT).
func TestRandomTablesMatchTheGoModel(t *testing.T) {
	for seed := range uint64(8) {
		r := rand.New(rand.NewPCG(seed, 7))
		clock := func() uint64 { return 5000 }
		model, err := dataplane.New(dataplane.Options{Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		prog := newSwitch(t, clock)
		entries := randomTables(r)
		casesuite.Install(t, model, entries)
		casesuite.Install(t, prog, entries)
		compare(t, r, model, prog, 300, "loaded")

		// Delete a third of the range and ternary entries, modify some.
		ups, err := pc.Updates(model.P4Info(), entries)
		if err != nil {
			t.Fatal(err)
		}
		var change []*p4v1.Update
		for i, u := range ups {
			tb := entries[i].Table
			if entries[i].Default || (tb != pipeline.TableSLAFeasibility && tb != pipeline.TableCarbonRank && tb != pipeline.TableClientSite) {
				continue
			}
			switch r.IntN(3) {
			case 0:
				change = append(change, &p4v1.Update{Type: p4v1.Update_DELETE, Entity: u.Entity})
			case 1:
				if entries[i].Action != pipeline.ActionNoAction {
					m := &p4v1.Update{Type: p4v1.Update_MODIFY, Entity: u.Entity}
					for _, prm := range m.Entity.GetTableEntry().GetAction().GetAction().GetParams() {
						prm.Value = []byte{byte(r.IntN(6))}
					}
					change = append(change, m)
				}
			}
		}
		for _, sw := range []*dataplane.Switch{model, prog} {
			for i, err := range sw.Write(context.Background(), change, p4v1.WriteRequest_CONTINUE_ON_ERROR) {
				if err != nil {
					t.Fatalf("seed %d: update %d: %v", seed, i, err)
				}
			}
		}
		compare(t, r, model, prog, 300, "changed")

		for _, sw := range []*dataplane.Switch{model, prog} {
			cfg := &p4v1.ForwardingPipelineConfig{P4Info: sw.P4Info()}
			if err := sw.SetPipeline(context.Background(), p4v1.SetForwardingPipelineConfigRequest_RECONCILE_AND_COMMIT, cfg); err != nil {
				t.Fatal(err)
			}
		}
		compare(t, r, model, prog, 300, "reconciled")
	}
}

// The XDP target applies a batch entry by entry: it refuses
// DATAPLANE_ATOMIC, as the P4Runtime spec asks, and keeps ROLLBACK_ON_ERROR
// all or nothing.
func TestDataplaneAtomicRefused(t *testing.T) {
	sw := newSwitch(t, nil)
	ups, err := pc.Updates(sw.P4Info(), []pc.Entry{pc.L3Route(pc.IPv4(10, 0, 0, 0), 8, 1), pc.L3Route(pc.IPv4(10, 0, 0, 0), 8, 2)})
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range sw.Write(context.Background(), ups[:1], p4v1.WriteRequest_DATAPLANE_ATOMIC) {
		if status.Code(err) != codes.Unimplemented {
			t.Fatalf("DATAPLANE_ATOMIC: %v, want UNIMPLEMENTED", err)
		}
	}
	errs := sw.Write(context.Background(), ups, p4v1.WriteRequest_ROLLBACK_ON_ERROR) // the second is a duplicate
	if status.Code(errs[0]) != codes.Aborted || status.Code(errs[1]) != codes.AlreadyExists {
		t.Fatalf("ROLLBACK_ON_ERROR: %v", errs)
	}
	frame := pc.Bytes(pc.Request(pc.Client(1), 1, 100, 0))
	frame[14+20+2], frame[14+20+3] = 0, 53 // plain UDP to 10.255.0.1: l3_forward
	if out := sw.Inject(1, frame); out.Verdict.String() != pc.Dropped {
		t.Fatalf("a rolled-back route forwards: %s to port %d", out.Verdict, out.Port)
	}
}
