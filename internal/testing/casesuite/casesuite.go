// Package casesuite runs the shared packet-case table
// (internal/testing/packetcases) against a dataplane.Switch in-process: the
// embedded target's Go model and the XDP program run through BPF_PROG_RUN
// pass the same cases with the same checks — every frame out, every
// counter cell, the listed register cells and the latency digests.
package casesuite

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	"github.com/p4ctl/p4ctl/internal/testing/packetcases"
	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// NewSwitch makes a fresh switch (pipeline set, no state) whose pass clock
// is clock, in µs.
type NewSwitch func(t *testing.T, clock func() uint64) *dataplane.Switch

// Run runs every case on its own switch.
func Run(t *testing.T, newSwitch NewSwitch) {
	for _, c := range packetcases.Cases() {
		t.Run(c.Name, func(t *testing.T) { RunCase(t, c, newSwitch) })
	}
}

// RunCase installs the case's entries, sends its packets in order (moving
// the clock by each one's After) and checks what came out, the counters,
// the listed registers and the digests.
func RunCase(t *testing.T, c packetcases.Case, newSwitch NewSwitch) {
	t.Helper()
	now := uint64(1000)
	sw := newSwitch(t, func() uint64 { return now })
	Install(t, sw, c.Entries)
	digests := CaptureDigests(t, sw)
	for i, p := range c.Packets {
		now += uint64(p.After.Microseconds())
		out := sw.Inject(p.Port, p.Frame)
		where := fmt.Sprintf("packet %d (%s)", i, p.Note)
		if got := out.Verdict.String(); got != p.Expect.Verdict {
			t.Fatalf("%s: %s (reason %s, port %d), want %s %s", where, got, out.Reason, out.Port, p.Expect.Verdict, p.Expect.Reason)
		}
		if p.Expect.Verdict == packetcases.Dropped {
			if out.Reason.String() != p.Expect.Reason {
				t.Errorf("%s: dropped as %s, want %s", where, out.Reason, p.Expect.Reason)
			}
			continue
		}
		if out.Port != p.Expect.Port {
			t.Errorf("%s: egress port %d, want %d", where, out.Port, p.Expect.Port)
		}
		if !bytes.Equal(out.Frame, p.Expect.Frame) {
			t.Errorf("%s: frame\n got % x\nwant % x\n%s\nwant:\n%s", where, out.Frame, p.Expect.Frame, Describe(out.Frame), Describe(p.Expect.Frame))
		}
	}
	CheckCounters(t, sw, c.Counters)
	for _, r := range c.Registers {
		v, err := sw.RegisterValue(r.Register, r.Index)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Matches(v) {
			t.Errorf("register %s[%d] = %#x, want %#x (mask %#x)", r.Register, r.Index, v, r.Value, r.Mask)
		}
	}
	if err := packetcases.MatchSamples(digests(len(c.Digests)), c.Digests, 0); err != nil {
		t.Error(err)
	}
}

// Install writes entries to sw, failing the test on any error.
func Install(t testing.TB, sw *dataplane.Switch, entries []packetcases.Entry) {
	t.Helper()
	ups, err := packetcases.Updates(sw.P4Info(), entries)
	if err != nil {
		t.Fatal(err)
	}
	for i, err := range sw.Write(context.Background(), ups, p4v1.WriteRequest_CONTINUE_ON_ERROR) {
		if err != nil {
			t.Fatalf("install %v: %v", entries[i], err)
		}
	}
}

// Describe decodes a frame for failure messages.
func Describe(b []byte) string {
	if b == nil {
		return "<nil>"
	}
	return gopacket.NewPacket(b, layers.LayerTypeEthernet, gopacket.Default).String()
}

// CaptureDigests enables the latency digest on sw (lists sent at once) and
// returns a function that waits for n samples (at most a second), then
// briefly for any more, and returns them in list order.
func CaptureDigests(t testing.TB, sw *dataplane.Switch) func(n int) []packetcases.Sample {
	t.Helper()
	id, err := p4rt.NewIndex(sw.P4Info())
	if err != nil {
		t.Fatal(err)
	}
	did, err := id.DigestID(pipeline.DigestLatencySample)
	if err != nil {
		t.Fatal(err)
	}
	ent := &p4v1.Entity{Entity: &p4v1.Entity_DigestEntry{DigestEntry: &p4v1.DigestEntry{DigestId: did, Config: &p4v1.DigestEntry_Config{}}}}
	if errs := sw.Write(context.Background(), []*p4v1.Update{{Type: p4v1.Update_INSERT, Entity: ent}}, p4v1.WriteRequest_CONTINUE_ON_ERROR); errs[0] != nil {
		t.Fatal(errs[0])
	}
	var rec packetcases.Digests
	t.Cleanup(sw.SubscribeDigests(rec.Add))
	return func(n int) []packetcases.Sample {
		got, err := rec.Wait(n, time.Second, 10*time.Millisecond)
		if err != nil {
			t.Error(err)
		}
		return got
	}
}

// CheckCounters compares every cell of the program's counters with want
// (cells not listed must be 0).
func CheckCounters(t testing.TB, sw *dataplane.Switch, want []packetcases.Count) {
	t.Helper()
	exp := map[string]map[uint64]uint64{}
	for _, c := range want {
		if exp[c.Counter] == nil {
			exp[c.Counter] = map[uint64]uint64{}
		}
		exp[c.Counter][c.Index] += c.Packets
	}
	for _, c := range pipeline.Schema().Counters {
		for i := uint64(0); i < uint64(c.Size); i++ {
			pk, _, err := sw.CounterValue(c.Name, i)
			if err != nil {
				t.Fatal(err)
			}
			if w := exp[c.Name][i]; pk != w {
				name := fmt.Sprint(i)
				if isLane(c.Name) {
					name = pipeline.Event(i).String()
				}
				t.Errorf("counter %s[%s] = %d packets, want %d", c.Name, name, pk, w)
			}
		}
	}
}

// isLane reports whether counter is one of the dispatch_events lanes.
func isLane(counter string) bool {
	for _, l := range pipeline.Lanes() {
		if l.Counter() == counter {
			return true
		}
	}
	return false
}
