package p4rtserver_test

import (
	"context"
	"net"
	"sort"
	"sync"
	"testing"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/p4ctl/p4ctl/pkg/dataplane/p4rtserver"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

// testP4Info is a one-table program: exact 16-bit key, one action with an
// 8-bit parameter, and controller packet headers.
const testP4Info = `
tables {
  preamble { id: 1 name: "ingress.t" alias: "t" }
  match_fields { id: 1 name: "f" bitwidth: 16 match_type: EXACT }
  action_refs { id: 10 }
  size: 100000
}
actions {
  preamble { id: 10 name: "ingress.set" alias: "set" }
  params { id: 1 name: "v" bitwidth: 8 }
}
controller_packet_metadata {
  preamble { id: 100 name: "packet_in" }
  metadata { id: 1 name: "ingress_port" bitwidth: 9 }
}
controller_packet_metadata {
  preamble { id: 101 name: "packet_out" }
  metadata { id: 1 name: "egress_port" bitwidth: 9 }
}
`

func mustP4Info(t testing.TB) *p4configv1.P4Info {
	t.Helper()
	info := &p4configv1.P4Info{}
	if err := prototext.Unmarshal([]byte(testP4Info), info); err != nil {
		t.Fatal(err)
	}
	return info
}

// memTarget is the smallest Target that lets the server be tested: a
// table-entry store keyed by p4rt.EntryKey with the INSERT/MODIFY/DELETE
// codes, all-or-nothing atomic batches and hooks for tests. Matching,
// validation and everything else belong to the real engine.
type memTarget struct {
	mu      sync.Mutex
	cfg     *p4v1.ForwardingPipelineConfig
	entries map[string]*p4v1.TableEntry
	subs    map[int]func(*p4v1.PacketIn)
	nextSub int
	outs    []*p4v1.PacketOut

	// beforeWrite, if set, runs at the start of every Write (outside mu).
	beforeWrite func()
}

func newMemTarget(info *p4configv1.P4Info) *memTarget {
	m := &memTarget{entries: map[string]*p4v1.TableEntry{}, subs: map[int]func(*p4v1.PacketIn){}}
	if info != nil {
		m.cfg = &p4v1.ForwardingPipelineConfig{P4Info: info}
	}
	return m
}

func (m *memTarget) P4Info() *p4configv1.P4Info {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cfg.GetP4Info()
}

func (m *memTarget) Pipeline() *p4v1.ForwardingPipelineConfig {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cfg
}

func (m *memTarget) SetPipeline(_ context.Context, a p4v1.SetForwardingPipelineConfigRequest_Action, cfg *p4v1.ForwardingPipelineConfig) error {
	if len(cfg.GetP4Info().GetTables()) == 0 {
		return status.Error(codes.InvalidArgument, "P4Info has no tables")
	}
	if a == p4v1.SetForwardingPipelineConfigRequest_VERIFY {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cfg = proto.Clone(cfg).(*p4v1.ForwardingPipelineConfig)
	m.entries = map[string]*p4v1.TableEntry{}
	return nil
}

func (m *memTarget) hasTable(id uint32) bool {
	for _, t := range m.cfg.GetP4Info().GetTables() {
		if t.GetPreamble().GetId() == id {
			return true
		}
	}
	return false
}

func (m *memTarget) Write(_ context.Context, updates []*p4v1.Update, atomicity p4v1.WriteRequest_Atomicity) []error {
	if m.beforeWrite != nil {
		m.beforeWrite()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	work := m.entries
	atomic := atomicity != p4v1.WriteRequest_CONTINUE_ON_ERROR
	if atomic {
		work = make(map[string]*p4v1.TableEntry, len(m.entries))
		for k, v := range m.entries {
			work[k] = v
		}
	}
	errs := make([]error, len(updates))
	failed := false
	for i, u := range updates {
		errs[i] = m.apply(work, u)
		failed = failed || errs[i] != nil
	}
	if atomic {
		if failed {
			for i := range errs {
				if errs[i] == nil {
					errs[i] = status.Error(codes.Aborted, "batch aborted")
				}
			}
		} else {
			m.entries = work
		}
	}
	return errs
}

func (m *memTarget) apply(work map[string]*p4v1.TableEntry, u *p4v1.Update) error {
	te := u.GetEntity().GetTableEntry()
	if te == nil {
		return status.Error(codes.Unimplemented, "only table entries")
	}
	if !m.hasTable(te.GetTableId()) {
		return status.Errorf(codes.InvalidArgument, "unknown table id %d", te.GetTableId())
	}
	k := p4rt.EntryKey(te)
	_, exists := work[k]
	switch u.GetType() {
	case p4v1.Update_INSERT:
		if exists {
			return status.Error(codes.AlreadyExists, "entry exists")
		}
		work[k] = te
	case p4v1.Update_MODIFY:
		if !exists {
			return status.Error(codes.NotFound, "no such entry")
		}
		work[k] = te
	case p4v1.Update_DELETE:
		if !exists {
			return status.Error(codes.NotFound, "no such entry")
		}
		delete(work, k)
	default:
		return status.Error(codes.InvalidArgument, "update type unspecified")
	}
	return nil
}

func (m *memTarget) Read(ctx context.Context, e *p4v1.Entity, emit func(*p4v1.Entity) error) error {
	q := e.GetTableEntry()
	if q == nil {
		return status.Error(codes.Unimplemented, "only table entries")
	}
	m.mu.Lock()
	var out []*p4v1.TableEntry
	for _, te := range m.entries {
		if q.GetTableId() == 0 || q.GetTableId() == te.GetTableId() {
			out = append(out, te)
		}
	}
	m.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return p4rt.EntryKey(out[i]) < p4rt.EntryKey(out[j]) })
	for _, te := range out {
		if err := emit(p4rt.TableEntity(te)); err != nil {
			return err
		}
	}
	return nil
}

func (m *memTarget) PacketOut(_ context.Context, p *p4v1.PacketOut) error {
	if len(p.GetPayload()) == 0 {
		return status.Error(codes.InvalidArgument, "empty payload")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.outs = append(m.outs, p)
	return nil
}

func (m *memTarget) SubscribePacketIn(fn func(*p4v1.PacketIn)) func() {
	m.mu.Lock()
	defer m.mu.Unlock()
	id := m.nextSub
	m.nextSub++
	m.subs[id] = fn
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		delete(m.subs, id)
	}
}

// emitPacketIn sends p to every subscriber (the server).
func (m *memTarget) emitPacketIn(p *p4v1.PacketIn) {
	m.mu.Lock()
	fns := make([]func(*p4v1.PacketIn), 0, len(m.subs))
	for _, f := range m.subs {
		fns = append(fns, f)
	}
	m.mu.Unlock()
	for _, f := range fns {
		f(p)
	}
}

func (m *memTarget) packetOuts() []*p4v1.PacketOut {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*p4v1.PacketOut(nil), m.outs...)
}

// harness runs a Server over bufconn.
type harness struct {
	srv    *p4rtserver.Server
	target *memTarget
	lis    *bufconn.Listener
}

func startServer(t testing.TB, target *memTarget, opts ...p4rtserver.Option) *harness {
	t.Helper()
	h := &harness{srv: p4rtserver.New(target, opts...), target: target, lis: bufconn.Listen(1 << 20)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.srv.Serve(h.lis)
	}()
	t.Cleanup(func() {
		h.srv.Stop()
		<-done
	})
	return h
}

func (h *harness) conn(t testing.TB) *grpc.ClientConn {
	t.Helper()
	cc, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return h.lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20), grpc.MaxCallSendMsgSize(64<<20)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

func (h *harness) raw(t testing.TB) p4v1.P4RuntimeClient { return p4v1.NewP4RuntimeClient(h.conn(t)) }

func (h *harness) client(t testing.TB, opts ...p4rt.Option) *p4rt.Client {
	t.Helper()
	c, err := p4rt.NewClient(h.conn(t), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
