package p4rtserver_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/p4ctl/p4ctl/pkg/dataplane/p4rtserver"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

// rawStream is a StreamChannel driven message by message.
type rawStream struct {
	t      *testing.T
	s      p4v1.P4Runtime_StreamChannelClient
	cancel context.CancelFunc
	msgs   chan *p4v1.StreamMessageResponse
	err    chan error
}

func openStream(t *testing.T, rpc p4v1.P4RuntimeClient) *rawStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s, err := rpc.StreamChannel(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := &rawStream{t: t, s: s, cancel: cancel, msgs: make(chan *p4v1.StreamMessageResponse, 64), err: make(chan error, 1)}
	go func() {
		for {
			m, err := s.Recv()
			if err != nil {
				r.err <- err
				return
			}
			r.msgs <- m
		}
	}()
	t.Cleanup(cancel)
	return r
}

func (r *rawStream) arbitrate(device uint64, role string, election uint64) {
	r.t.Helper()
	u := &p4v1.MasterArbitrationUpdate{DeviceId: device}
	if election != 0 {
		u.ElectionId = &p4v1.Uint128{Low: election}
	}
	if role != "" {
		u.Role = &p4v1.Role{Name: role}
	}
	if err := r.s.Send(&p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_Arbitration{Arbitration: u}}); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rawStream) next() *p4v1.StreamMessageResponse {
	r.t.Helper()
	select {
	case m := <-r.msgs:
		return m
	case err := <-r.err:
		r.t.Fatalf("stream ended: %v", err)
	case <-time.After(5 * time.Second):
		r.t.Fatal("no stream message within 5s")
	}
	return nil
}

// expectArb checks the next message is an arbitration advisory with code
// and highest election id.
func (r *rawStream) expectArb(code codes.Code, election uint64) {
	r.t.Helper()
	m := r.next().GetArbitration()
	if m == nil {
		r.t.Fatalf("want arbitration update")
	}
	if got := codes.Code(m.GetStatus().GetCode()); got != code {
		r.t.Fatalf("arbitration status %v, want %v (%v)", got, code, m)
	}
	if got := m.GetElectionId().GetLow(); got != election {
		r.t.Fatalf("arbitration election id %d, want %d", got, election)
	}
}

func (r *rawStream) expectQuiet() {
	r.t.Helper()
	select {
	case m := <-r.msgs:
		r.t.Fatalf("unexpected message %v", m)
	case <-time.After(50 * time.Millisecond):
	}
}

func (r *rawStream) expectEnd(code codes.Code) error {
	r.t.Helper()
	select {
	case m := <-r.msgs:
		r.t.Fatalf("want stream end %v, got message %v", code, m)
	case err := <-r.err:
		if status.Code(err) != code {
			r.t.Fatalf("stream ended with %v, want %v", err, code)
		}
		return err
	case <-time.After(5 * time.Second):
		r.t.Fatal("stream did not end")
	}
	return nil
}

func write(rpc p4v1.P4RuntimeClient, election uint64, role string, updates ...*p4v1.Update) error {
	req := &p4v1.WriteRequest{DeviceId: 1, Role: role, Updates: updates}
	if election != 0 {
		req.ElectionId = &p4v1.Uint128{Low: election}
	}
	_, err := rpc.Write(context.Background(), req)
	return err
}

func entry(key, val uint64) *p4v1.TableEntry {
	k, _ := p4rt.EncodeUint(key, 16)
	v, _ := p4rt.EncodeUint(val, 8)
	return &p4v1.TableEntry{TableId: 1,
		Match:  []*p4v1.FieldMatch{{FieldId: 1, FieldMatchType: &p4v1.FieldMatch_Exact_{Exact: &p4v1.FieldMatch_Exact{Value: k}}}},
		Action: &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: &p4v1.Action{ActionId: 10, Params: []*p4v1.Action_Param{{ParamId: 1, Value: v}}}}}}
}

func insert(e *p4v1.TableEntry) *p4v1.Update {
	return &p4v1.Update{Type: p4v1.Update_INSERT, Entity: p4rt.TableEntity(e)}
}

// The arbitration rules of P4Runtime spec §5.3–5.4, message by message.
func TestArbitrationSpec(t *testing.T) {
	h := startServer(t, newMemTarget(mustP4Info(t)))
	rpc := h.raw(t)

	a := openStream(t, rpc)
	a.arbitrate(1, "", 10)
	a.expectArb(codes.OK, 10)
	if err := write(rpc, 10, "", insert(entry(1, 1))); err != nil {
		t.Fatalf("primary write: %v", err)
	}

	// Duplicate election id: the stream is terminated with INVALID_ARGUMENT.
	dup := openStream(t, rpc)
	dup.arbitrate(1, "", 10)
	err := dup.expectEnd(codes.InvalidArgument)
	if !strings.Contains(status.Convert(err).Message(), "already used") {
		t.Errorf("duplicate election id message %q", status.Convert(err).Message())
	}
	a.expectQuiet()

	// A lower id is a backup; only it is told.
	b := openStream(t, rpc)
	b.arbitrate(1, "", 5)
	b.expectArb(codes.AlreadyExists, 10)
	a.expectQuiet()
	if err := write(rpc, 5, "", insert(entry(2, 1))); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("backup write: %v, want PERMISSION_DENIED", err)
	}

	// A higher id takes over; everyone is told.
	c := openStream(t, rpc)
	c.arbitrate(1, "", 20)
	c.expectArb(codes.OK, 20)
	a.expectArb(codes.AlreadyExists, 20)
	b.expectArb(codes.AlreadyExists, 20)
	if err := write(rpc, 10, "", insert(entry(3, 1))); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("old primary write: %v, want PERMISSION_DENIED", err)
	}
	if err := write(rpc, 20, "", insert(entry(3, 1))); err != nil {
		t.Fatalf("new primary write: %v", err)
	}

	// The primary leaves: no primary, the highest id stays 20.
	c.cancel()
	a.expectArb(codes.NotFound, 20)
	b.expectArb(codes.NotFound, 20)
	if err := write(rpc, 10, "", insert(entry(4, 1))); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("write without primary: %v", err)
	}

	// Re-arbitrating below the highest id ever seen does not make a primary.
	a.arbitrate(1, "", 15)
	a.expectArb(codes.NotFound, 20)
	b.expectQuiet()
	// At or above it does.
	a.arbitrate(1, "", 21)
	a.expectArb(codes.OK, 21)
	b.expectArb(codes.AlreadyExists, 21)

	// The primary downgrades itself: everyone hears there is no primary.
	a.arbitrate(1, "", 12)
	a.expectArb(codes.NotFound, 21)
	b.expectArb(codes.NotFound, 21)

	// A stream without election id is a backup that never becomes primary.
	ro := openStream(t, rpc)
	ro.arbitrate(1, "", 0)
	ro.expectArb(codes.NotFound, 21)

	// Roles are arbitrated independently.
	r2 := openStream(t, rpc)
	r2.arbitrate(1, "r2", 1)
	r2.expectArb(codes.OK, 1)
	a.expectQuiet()
	// Write: an unknown role is NOT_FOUND.
	if err := write(rpc, 1, "nope", insert(entry(9, 1))); status.Code(err) != codes.NotFound {
		t.Fatalf("write for unknown role: %v", err)
	}

	// Changing device id or role on a live stream: FAILED_PRECONDITION.
	b.arbitrate(2, "", 5)
	b.expectEnd(codes.FailedPrecondition)
	r2.arbitrate(1, "other", 1)
	r2.expectEnd(codes.FailedPrecondition)

	// Unknown device id on a new stream: NOT_FOUND.
	bad := openStream(t, rpc)
	bad.arbitrate(7, "", 30)
	bad.expectEnd(codes.NotFound)
}

func TestStreamLimit(t *testing.T) {
	h := startServer(t, newMemTarget(mustP4Info(t)), p4rtserver.WithMaxStreams(1))
	rpc := h.raw(t)
	a := openStream(t, rpc)
	a.arbitrate(1, "", 1)
	a.expectArb(codes.OK, 1)
	b := openStream(t, rpc)
	b.arbitrate(1, "", 2)
	b.expectEnd(codes.ResourceExhausted)
}

// A new primary is accepted only after the old primary's in-flight write
// finished (spec §5.4).
func TestPrimaryChangeWaitsForInflightWrite(t *testing.T) {
	target := newMemTarget(mustP4Info(t))
	release := make(chan struct{})
	started := make(chan struct{})
	var once sync.Once
	target.beforeWrite = func() {
		once.Do(func() {
			close(started)
			<-release
		})
	}
	h := startServer(t, target)
	rpc := h.raw(t)
	a := openStream(t, rpc)
	a.arbitrate(1, "", 1)
	a.expectArb(codes.OK, 1)
	werr := make(chan error, 1)
	go func() { werr <- write(rpc, 1, "", insert(entry(1, 1))) }()
	<-started
	b := openStream(t, rpc)
	b.arbitrate(1, "", 2)
	b.expectQuiet() // blocked behind the write
	close(release)
	if err := <-werr; err != nil {
		t.Fatalf("in-flight write of the old primary: %v", err)
	}
	b.expectArb(codes.OK, 2)
	a.expectArb(codes.AlreadyExists, 2)
}

func TestWriteBatchDetails(t *testing.T) {
	h := startServer(t, newMemTarget(mustP4Info(t)))
	rpc := h.raw(t)
	a := openStream(t, rpc)
	a.arbitrate(1, "", 1)
	a.expectArb(codes.OK, 1)
	if err := write(rpc, 1, "", insert(entry(1, 1))); err != nil {
		t.Fatal(err)
	}
	bad := entry(3, 1)
	bad.TableId = 99
	err := write(rpc, 1, "", insert(entry(2, 1)), insert(entry(1, 1)), insert(bad))
	st := status.Convert(err)
	if st.Code() != codes.Unknown {
		t.Fatalf("batch with failures: code %v, want UNKNOWN", st.Code())
	}
	want := []codes.Code{codes.OK, codes.AlreadyExists, codes.InvalidArgument}
	if len(st.Proto().Details) != len(want) {
		t.Fatalf("%d details, want %d", len(st.Proto().Details), len(want))
	}
	for i, a := range st.Proto().Details {
		pe := &p4v1.Error{}
		if err := a.UnmarshalTo(pe); err != nil {
			t.Fatal(err)
		}
		if codes.Code(pe.CanonicalCode) != want[i] {
			t.Errorf("detail %d: %v, want %v", i, codes.Code(pe.CanonicalCode), want[i])
		}
		if want[i] == codes.OK && pe.Message != "" {
			t.Errorf("detail %d: OK carries message %q", i, pe.Message)
		}
	}
}

func TestErrorDetailsBudget(t *testing.T) {
	h := startServer(t, newMemTarget(mustP4Info(t)), p4rtserver.WithMaxErrorDetails(2000))
	rpc := h.raw(t)
	a := openStream(t, rpc)
	a.arbitrate(1, "", 1)
	a.expectArb(codes.OK, 1)
	var ups []*p4v1.Update
	for i := range 100 {
		e := entry(uint64(i), 1)
		e.TableId = 99 // every update fails
		ups = append(ups, insert(e))
	}
	st := status.Convert(write(rpc, 1, "", ups...))
	if len(st.Proto().Details) != 100 {
		t.Fatalf("%d details, want 100", len(st.Proto().Details))
	}
	for _, a := range st.Proto().Details {
		pe := &p4v1.Error{}
		a.UnmarshalTo(pe)
		if codes.Code(pe.CanonicalCode) != codes.InvalidArgument || pe.Message != "" {
			t.Fatalf("over budget: want codes without messages, got %v", pe)
		}
	}
}

func TestDeviceIDAndPipelineChecks(t *testing.T) {
	h := startServer(t, newMemTarget(nil), p4rtserver.WithDeviceID(3))
	rpc := h.raw(t)
	ctx := context.Background()
	if _, err := rpc.Write(ctx, &p4v1.WriteRequest{DeviceId: 1}); status.Code(err) != codes.NotFound {
		t.Errorf("write to wrong device: %v", err)
	}
	rs, err := rpc.Read(ctx, &p4v1.ReadRequest{DeviceId: 1, Entities: []*p4v1.Entity{p4rt.TableEntity(&p4v1.TableEntry{})}})
	if err == nil {
		_, err = rs.Recv()
	}
	if status.Code(err) != codes.NotFound {
		t.Errorf("read from wrong device: %v", err)
	}
	if _, err := rpc.GetForwardingPipelineConfig(ctx, &p4v1.GetForwardingPipelineConfigRequest{DeviceId: 1}); status.Code(err) != codes.NotFound {
		t.Errorf("get pipeline of wrong device: %v", err)
	}
	if _, err := rpc.Capabilities(ctx, &p4v1.CapabilitiesRequest{DeviceId: 1}); status.Code(err) != codes.NotFound {
		t.Errorf("capabilities of wrong device: %v", err)
	}
	caps, err := rpc.Capabilities(ctx, &p4v1.CapabilitiesRequest{})
	if err != nil || caps.GetP4RuntimeApiVersion() != "1.5.0" {
		t.Errorf("capabilities: %v %v", caps, err)
	}
	// No pipeline yet.
	got, err := rpc.GetForwardingPipelineConfig(ctx, &p4v1.GetForwardingPipelineConfigRequest{DeviceId: 3})
	if err != nil || got.GetConfig() != nil {
		t.Errorf("get pipeline before set: %v %v", got, err)
	}
	rs, err = rpc.Read(ctx, &p4v1.ReadRequest{DeviceId: 3, Entities: []*p4v1.Entity{p4rt.TableEntity(&p4v1.TableEntry{})}})
	if err == nil {
		_, err = rs.Recv()
	}
	if status.Code(err) != codes.FailedPrecondition {
		t.Errorf("read before pipeline: %v", err)
	}
	a := openStream(t, rpc)
	a.arbitrate(3, "", 1)
	a.expectArb(codes.OK, 1)
	_, err = rpc.Write(ctx, &p4v1.WriteRequest{DeviceId: 3, ElectionId: &p4v1.Uint128{Low: 1}, Updates: []*p4v1.Update{insert(entry(1, 1))}})
	if status.Code(err) != codes.FailedPrecondition {
		t.Errorf("write before pipeline: %v", err)
	}
}

func TestPipelineConfig(t *testing.T) {
	h := startServer(t, newMemTarget(nil))
	rpc := h.raw(t)
	ctx := context.Background()
	cfg := &p4v1.ForwardingPipelineConfig{P4Info: mustP4Info(t), P4DeviceConfig: []byte("blob"),
		Cookie: &p4v1.ForwardingPipelineConfig_Cookie{Cookie: 42}}
	set := func(election uint64, action p4v1.SetForwardingPipelineConfigRequest_Action, cfg *p4v1.ForwardingPipelineConfig) error {
		req := &p4v1.SetForwardingPipelineConfigRequest{DeviceId: 1, Action: action, Config: cfg}
		if election != 0 {
			req.ElectionId = &p4v1.Uint128{Low: election}
		}
		_, err := rpc.SetForwardingPipelineConfig(ctx, req)
		return err
	}
	if err := set(1, p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT, cfg); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("set pipeline without primary: %v", err)
	}
	a := openStream(t, rpc)
	a.arbitrate(1, "", 1)
	a.expectArb(codes.OK, 1)
	for _, tc := range []struct {
		action p4v1.SetForwardingPipelineConfigRequest_Action
		cfg    *p4v1.ForwardingPipelineConfig
		code   codes.Code
	}{
		{p4v1.SetForwardingPipelineConfigRequest_UNSPECIFIED, cfg, codes.InvalidArgument},
		{p4v1.SetForwardingPipelineConfigRequest_VERIFY, nil, codes.InvalidArgument},
		{p4v1.SetForwardingPipelineConfigRequest_COMMIT, cfg, codes.InvalidArgument},
		{p4v1.SetForwardingPipelineConfigRequest_VERIFY, &p4v1.ForwardingPipelineConfig{P4Info: &p4configv1.P4Info{}}, codes.InvalidArgument},
		{p4v1.SetForwardingPipelineConfigRequest_VERIFY, cfg, codes.OK},
		{p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT, cfg, codes.OK},
	} {
		if err := set(1, tc.action, tc.cfg); status.Code(err) != tc.code {
			t.Errorf("%v: %v, want %v", tc.action, err, tc.code)
		}
	}
	for _, tc := range []struct {
		rt         p4v1.GetForwardingPipelineConfigRequest_ResponseType
		info, blob bool
	}{
		{p4v1.GetForwardingPipelineConfigRequest_ALL, true, true},
		{p4v1.GetForwardingPipelineConfigRequest_COOKIE_ONLY, false, false},
		{p4v1.GetForwardingPipelineConfigRequest_P4INFO_AND_COOKIE, true, false},
		{p4v1.GetForwardingPipelineConfigRequest_DEVICE_CONFIG_AND_COOKIE, false, true},
	} {
		r, err := rpc.GetForwardingPipelineConfig(ctx, &p4v1.GetForwardingPipelineConfigRequest{DeviceId: 1, ResponseType: tc.rt})
		if err != nil {
			t.Fatal(err)
		}
		c := r.GetConfig()
		if c.GetCookie().GetCookie() != 42 || (c.GetP4Info() != nil) != tc.info || (c.GetP4DeviceConfig() != nil) != tc.blob {
			t.Errorf("%v: got %v", tc.rt, c)
		}
		if tc.info && !proto.Equal(c.GetP4Info(), cfg.P4Info) {
			t.Errorf("%v: P4Info differs", tc.rt)
		}
	}
}

func TestPacketIO(t *testing.T) {
	target := newMemTarget(mustP4Info(t))
	h := startServer(t, target)
	rpc := h.raw(t)
	a := openStream(t, rpc)
	a.arbitrate(1, "", 2)
	a.expectArb(codes.OK, 2)
	b := openStream(t, rpc)
	b.arbitrate(1, "", 1)
	b.expectArb(codes.AlreadyExists, 2)

	target.emitPacketIn(&p4v1.PacketIn{Payload: []byte("hello")})
	if got := a.next().GetPacket(); string(got.GetPayload()) != "hello" {
		t.Fatalf("primary PacketIn: %v", got)
	}
	b.expectQuiet()

	out := &p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_Packet{Packet: &p4v1.PacketOut{Payload: []byte("x")}}}
	if err := b.s.Send(out); err != nil {
		t.Fatal(err)
	}
	se := b.next().GetError()
	if codes.Code(se.GetCanonicalCode()) != codes.PermissionDenied || se.GetPacketOut() == nil {
		t.Fatalf("backup PacketOut: %v", se)
	}
	if err := a.s.Send(out); err != nil {
		t.Fatal(err)
	}
	empty := &p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_Packet{Packet: &p4v1.PacketOut{}}}
	if err := a.s.Send(empty); err != nil {
		t.Fatal(err)
	}
	if se := a.next().GetError(); codes.Code(se.GetCanonicalCode()) != codes.InvalidArgument {
		t.Fatalf("bad PacketOut: %v", se)
	}
	if got := target.packetOuts(); len(got) != 1 || string(got[0].Payload) != "x" {
		t.Fatalf("target PacketOuts %v", got)
	}
}

func TestReadChunks(t *testing.T) {
	target := newMemTarget(mustP4Info(t))
	h := startServer(t, target)
	c := h.client(t, p4rt.WithElectionID(p4rt.Election(1)), p4rt.WithP4Info(mustP4Info(t)))
	ctx := context.Background()
	if _, err := c.Arbitrate(ctx); err != nil {
		t.Fatal(err)
	}
	var ups []*p4v1.Update
	for i := range 2500 {
		ups = append(ups, insert(entry(uint64(i), 1)))
	}
	if err := c.Write(ctx, ups); err != nil {
		t.Fatal(err)
	}
	rs, err := c.RPC().Read(ctx, &p4v1.ReadRequest{DeviceId: 1, Entities: []*p4v1.Entity{p4rt.TableEntity(&p4v1.TableEntry{})}})
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int
	for {
		r, err := rs.Recv()
		if err != nil {
			break
		}
		sizes = append(sizes, len(r.Entities))
	}
	if fmt.Sprint(sizes) != "[1000 1000 500]" {
		t.Fatalf("ReadResponse sizes %v, want [1000 1000 500]", sizes)
	}
	// A request entity without a type fails alone, with per-request details.
	_, err = c.ReadAll(ctx, p4rt.TableEntity(&p4v1.TableEntry{TableId: 1}), &p4v1.Entity{})
	var re *p4rt.ReadError
	if !errors.As(err, &re) || len(re.Failed) != 1 || re.Failed[0].Index != 1 || re.Failed[0].Code != codes.InvalidArgument {
		t.Fatalf("read with a bad request: %v", err)
	}
}

func TestShutdownEndsStreams(t *testing.T) {
	target := newMemTarget(mustP4Info(t))
	srv := p4rtserver.New(target, p4rtserver.WithAddress("127.0.0.1:0"))
	lis, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(lis) }()
	c, err := p4rt.Dial(lis.Addr().String(), p4rt.WithElectionID(p4rt.Election(1)), p4rt.WithoutReconnect())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if st, err := c.Arbitrate(context.Background()); err != nil || !st.Primary {
		t.Fatalf("arbitrate: %v %v", st, err)
	}
	stopped := make(chan struct{})
	go func() { srv.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("GracefulStop blocked on an open StreamChannel")
	}
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if srv.Addr().(*net.TCPAddr).IP.IsLoopback() != true {
		t.Errorf("listened on %v", srv.Addr())
	}
}

func TestDefaultAddressIsLoopback(t *testing.T) {
	host, _, err := net.SplitHostPort(p4rtserver.DefaultAddress)
	if err != nil || !net.ParseIP(host).IsLoopback() {
		t.Fatalf("DefaultAddress %q is not loopback", p4rtserver.DefaultAddress)
	}
}
