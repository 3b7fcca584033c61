package dataplane

import (
	"testing"

	pc "github.com/p4ctl/p4ctl/internal/testing/packetcases"
	"github.com/p4ctl/p4ctl/pkg/dataplane/program"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// FuzzProcess: any frame on any port, through a switch with every table
// populated, must not panic; what leaves has the length it came in with, and
// holds stay bounded.
func FuzzProcess(f *testing.F) {
	for _, c := range pc.Cases() {
		for _, p := range c.Packets {
			f.Add(p.Frame, uint16(p.Port))
		}
	}
	sw, err := New(Options{Clock: func() uint64 { return 5 }})
	if err != nil {
		f.Fatal(err)
	}
	pool := pc.Pool{Base: 0, SizeMask: 7, Policy: pipeline.PolicyJBSQ, Bound: 2, MaxHolds: 3, LongReserve: 1, LongMaxHolds: 2, CreditTick: 2}
	entries := []pc.Entry{
		pc.ClientSite(pc.IPv4(10, 0, 0, 0), 8, 1), pc.Feasibility(1, 0, 499, 0b11, 1), pc.Feasibility(0, 0, 0xFFFF, 0b101, 2),
		pc.CarbonRank(0, 0, 0), pc.CarbonRank(0, 1, 1), pc.CarbonRank(0, 2, 2),
		pc.LocalRegion(0, 3), pc.LocalRegion(1, 0), pc.RemoteRegion(2, pc.Gateway()), pool.Entry(0),
		pc.ExecCost(0, 5, false), pc.ExecCost(1, 50, true),
		pc.L3Route(0, 1, 3), pc.L2Route(0xffffffffffff, 4),
	}
	for s := uint16(0); s < 8; s++ {
		entries = append(entries, pc.Serves(s, pc.Server(s))...)
	}
	ups, err := pc.Updates(sw.P4Info(), entries)
	if err != nil {
		f.Fatal(err)
	}
	for i, err := range sw.Write(f.Context(), ups, 0) {
		if err != nil {
			f.Fatalf("%v: %v", entries[i], err)
		}
	}
	f.Fuzz(func(t *testing.T, frame []byte, port uint16) {
		in := len(frame)
		res := sw.Process(frame, uint32(port)&0x1FF)
		if res.Verdict != program.Dropped && len(frame) != in {
			t.Fatalf("length %d -> %d", in, len(frame))
		}
		if res.Passes < 1 || res.Passes > 256 {
			t.Fatalf("%d passes", res.Passes)
		}
	})
}
