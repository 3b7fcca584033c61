package dataplane

import (
	"context"
	"sync"
	"testing"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/p4ctl/p4ctl/internal/testing/packetcases"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// digestRig is a switch with one local region whose server answers nothing:
// requests of site 1 with ids id bind and take probes; replies are built on
// demand.
type digestRig struct {
	sw    *Switch
	now   uint64
	id    uint32 // the latency digest's id
	mu    sync.Mutex
	lists []*p4v1.DigestList
}

func newDigestRig(t *testing.T) *digestRig {
	t.Helper()
	r := &digestRig{now: 1000}
	sw, err := New(Options{Clock: func() uint64 { return r.now }})
	if err != nil {
		t.Fatal(err)
	}
	r.sw = sw
	e := append(packetcasesBase(), packetcases.Feasibility(1, 0, 0xFFFF, 1, 0), packetcases.CarbonRank(0, 0, 0),
		packetcases.LocalRegion(0, 0), packetcases.Pool{Base: 0, Policy: pipeline.PolicyRandom}.Entry(0))
	e = append(e, packetcases.Serves(0, packetcases.Server(0))...)
	install(t, sw, e)
	idx, err := p4rt.NewIndex(sw.P4Info())
	if err != nil {
		t.Fatal(err)
	}
	if r.id, err = idx.DigestID(pipeline.DigestLatencySample); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sw.SubscribeDigests(func(l *p4v1.DigestList) {
		r.mu.Lock()
		r.lists = append(r.lists, l)
		r.mu.Unlock()
	}))
	return r
}

func packetcasesBase() []packetcases.Entry {
	return []packetcases.Entry{
		packetcases.ClientSite(packetcases.IPv4(10, 0, 1, 0), 24, 1),
		packetcases.L3Route(packetcases.IPv4(10, 0, 1, 0), 24, 1),
	}
}

func (r *digestRig) configure(t *testing.T, typ p4v1.Update_Type, cfg *p4v1.DigestEntry_Config) error {
	t.Helper()
	ent := &p4v1.Entity{Entity: &p4v1.Entity_DigestEntry{DigestEntry: &p4v1.DigestEntry{DigestId: r.id, Config: cfg}}}
	return r.sw.Write(context.Background(), []*p4v1.Update{{Type: typ, Entity: ent}}, p4v1.WriteRequest_CONTINUE_ON_ERROR)[0]
}

// roundTrip sends request id and, rtt µs later, its reply.
func (r *digestRig) roundTrip(t *testing.T, id uint32, rtt uint64) {
	t.Helper()
	req := packetcases.Request(packetcases.Client(1), id, 500, 0)
	if out := r.sw.Inject(1, packetcases.Bytes(req)); out.Verdict.String() != packetcases.Forwarded {
		t.Fatalf("request %d: %v %v", id, out.Verdict, out.Reason)
	}
	r.now += rtt
	bound := req
	bound.Header.Server, bound.Header.Site, bound.Header.Region = 0, 1, 0
	rep := packetcases.Reply(bound, packetcases.Server(0), 0)
	if out := r.sw.Inject(packetcases.Server(0).Port, packetcases.Bytes(rep)); out.Verdict.String() != packetcases.Forwarded {
		t.Fatalf("reply %d: %v %v", id, out.Verdict, out.Reason)
	}
}

// wait returns the lists received once they hold n digests (or after a
// second).
func (r *digestRig) wait(n int) []*p4v1.DigestList {
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		r.mu.Lock()
		got := 0
		for _, l := range r.lists {
			got += len(l.GetData())
		}
		r.mu.Unlock()
		if got >= n {
			break
		}
	}
	time.Sleep(5 * time.Millisecond)
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*p4v1.DigestList(nil), r.lists...)
}

// Digests are generated only once a controller enables them; lists hold at
// most max_list_size digests, have increasing ids, and a digest whose data
// equals one not yet acknowledged is suppressed until the ack.
func TestDigestConfigBatchesAndAcks(t *testing.T) {
	r := newDigestRig(t)
	r.roundTrip(t, 1, 40)
	if st := r.sw.DigestStats(); st.Dropped != 1 || st.Generated != 0 {
		t.Fatalf("before a DigestEntry: %+v, want 1 dropped", st)
	}
	if err := r.configure(t, p4v1.Update_MODIFY, &p4v1.DigestEntry_Config{}); status.Code(err) != codes.NotFound {
		t.Errorf("MODIFY of an unconfigured digest: %v, want NOT_FOUND", err)
	}
	cfg := &p4v1.DigestEntry_Config{MaxTimeoutNs: int64(20 * time.Millisecond), MaxListSize: 2, AckTimeoutNs: int64(time.Hour)}
	if err := r.configure(t, p4v1.Update_INSERT, cfg); err != nil {
		t.Fatal(err)
	}
	if err := r.configure(t, p4v1.Update_INSERT, cfg); status.Code(err) != codes.AlreadyExists {
		t.Errorf("second INSERT: %v, want ALREADY_EXISTS", err)
	}
	var read []*p4v1.Entity
	if err := r.sw.Read(context.Background(), &p4v1.Entity{Entity: &p4v1.Entity_DigestEntry{DigestEntry: &p4v1.DigestEntry{}}},
		func(e *p4v1.Entity) error { read = append(read, e); return nil }); err != nil || len(read) != 1 ||
		read[0].GetDigestEntry().GetConfig().GetMaxListSize() != 2 {
		t.Errorf("read back the DigestEntry: %v %v", read, err)
	}
	for i, rtt := range []uint64{10, 20, 30} {
		r.roundTrip(t, uint32(4*i+1), rtt) // ids 1, 5, 9: one probe
	}
	lists := r.wait(3)
	if len(lists) != 2 || len(lists[0].GetData()) != 2 || len(lists[1].GetData()) != 1 || lists[1].GetListId() <= lists[0].GetListId() {
		t.Fatalf("3 digests in lists of ≤ 2: got %d lists %v", len(lists), lists)
	}
	var rtts []uint64
	for _, l := range lists {
		for _, d := range l.GetData() {
			v, err := p4rt.DecodeStruct(d, pipeline.DigestWidths())
			if err != nil {
				t.Fatal(err)
			}
			rtts = append(rtts, v[3])
		}
	}
	if len(rtts) != 3 || rtts[0] != 10 || rtts[1] != 20 || rtts[2] != 30 {
		t.Errorf("round trips %v, want [10 20 30] µs", rtts)
	}

	// The same data again while the first list is unacknowledged: suppressed.
	r.roundTrip(t, 13, 10)
	if st := r.sw.DigestStats(); st.Suppressed != 1 {
		t.Errorf("duplicate of unacked data: %+v, want 1 suppressed", st)
	}
	if err := r.sw.AckDigest(context.Background(), &p4v1.DigestListAck{DigestId: r.id, ListId: lists[0].GetListId()}); err != nil {
		t.Fatal(err)
	}
	r.roundTrip(t, 17, 10)
	if got := r.wait(4); len(got) != 3 {
		t.Errorf("after the ack the same data is generated again: %d lists", len(got))
	}
	if err := r.sw.AckDigest(context.Background(), &p4v1.DigestListAck{DigestId: r.id + 1, ListId: 1}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("ack of an unknown digest: %v", err)
	}
	if err := r.configure(t, p4v1.Update_DELETE, nil); err != nil {
		t.Fatal(err)
	}
	before := r.sw.DigestStats().Dropped
	r.roundTrip(t, 21, 10)
	if st := r.sw.DigestStats(); st.Dropped != before+1 {
		t.Errorf("after DELETE: %+v, want the digest dropped", st)
	}
}
