package p4rt

import (
	"context"
	"errors"
	"fmt"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// StateEvent says what changed in an ArbitrationState.
type StateEvent int

// Arbitration events.
const (
	EventNone         StateEvent = iota
	EventPrimary                 // this client is (now, or still) primary
	EventBackup                  // this client is a backup (another controller is primary, or none is)
	EventLostPrimary             // this client was primary and no longer is (stream told us, or it broke)
	EventDisconnected            // the StreamChannel broke; reconnecting unless disabled
	EventReconnected             // the StreamChannel was re-opened and re-arbitrated; resync ran
)

// String names the event for logs.
func (e StateEvent) String() string {
	switch e {
	case EventPrimary:
		return "primary"
	case EventBackup:
		return "backup"
	case EventLostPrimary:
		return "lost-primary"
	case EventDisconnected:
		return "disconnected"
	case EventReconnected:
		return "reconnected"
	}
	return "none"
}

// ArbitrationState is the client's view of arbitration for its (device,
// role), as last reported by the switch.
type ArbitrationState struct {
	Event      StateEvent
	Device     uint64
	Role       string
	Connected  bool       // a StreamChannel is open and arbitrated
	Primary    bool       // this client is the primary
	ElectionID ElectionID // this client's election id
	// PrimaryElectionID is the highest election id the switch has seen for
	// the role (the primary's, when there is one); zero if none.
	PrimaryElectionID ElectionID
	HasPrimary        bool  // some controller is primary
	Err               error // why the stream broke, or the resync error
}

// String renders the state for logs and errors.
func (s ArbitrationState) String() string {
	role := ""
	if s.Role != "" {
		role = fmt.Sprintf(" role %q", s.Role)
	}
	who := "backup"
	if s.Primary {
		who = "primary"
	}
	if !s.Connected {
		who = "disconnected"
	}
	out := fmt.Sprintf("device %d%s: %s (election id %s, switch's highest %s)", s.Device, role, who, s.ElectionID, s.PrimaryElectionID)
	if s.Err != nil {
		out += ": " + s.Err.Error()
	}
	return out
}

// session is one StreamChannel.
type session struct {
	stream p4v1.P4Runtime_StreamChannelClient
	cancel context.CancelFunc
	send   chan struct{} // 1-token semaphore serialising Send
	arb    chan ArbitrationState
	done   chan struct{}
	err    error // set before done is closed
}

func (s *session) sendMsg(ctx context.Context, m *p4v1.StreamMessageRequest) error {
	select {
	case s.send <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-s.done:
		return fmt.Errorf("stream closed: %w", s.err)
	}
	defer func() { <-s.send }()
	return s.stream.Send(m)
}

// Arbitrate opens the StreamChannel (or, if open, re-sends the arbitration
// update, e.g. after SetElectionID) and waits for the switch's answer. The
// result says whether this client is primary. A duplicate election id,
// unknown device id or similar refusal is an *ArbitrationError. After a
// successful first call the stream is kept open, and re-opened with backoff
// (then re-arbitrated and the resync hook called) if it breaks.
func (c *Client) Arbitrate(ctx context.Context) (ArbitrationState, error) {
	ctx, cancel := c.callCtx(ctx)
	defer cancel()
	c.mu.Lock()
	s := c.sess
	c.mu.Unlock()
	if s != nil {
		return c.arbitrateOn(ctx, s)
	}
	s, st, err := c.openSession(ctx)
	if err != nil {
		return st, err
	}
	c.wg.Add(1)
	go c.supervise(s)
	return st, nil
}

// SetElectionID changes the election id (e.g. to take over as primary after
// the old primary left) and, when the stream is open, re-arbitrates.
func (c *Client) SetElectionID(ctx context.Context, id ElectionID) (ArbitrationState, error) {
	c.mu.Lock()
	c.election = id
	c.state.ElectionID = id
	s := c.sess
	c.mu.Unlock()
	if s == nil {
		return c.State(), nil
	}
	ctx, cancel := c.callCtx(ctx)
	defer cancel()
	return c.arbitrateOn(ctx, s)
}

func (c *Client) arbitrationMsg() *p4v1.StreamMessageRequest {
	u := &p4v1.MasterArbitrationUpdate{DeviceId: c.opts.deviceID, ElectionId: c.ElectionID().proto()}
	if c.opts.role != "" {
		u.Role = &p4v1.Role{Name: c.opts.role}
	}
	return &p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_Arbitration{Arbitration: u}}
}

func (c *Client) arbitrateOn(ctx context.Context, s *session) (ArbitrationState, error) {
	for len(s.arb) > 0 { // drop stale answers
		<-s.arb
	}
	if err := s.sendMsg(ctx, c.arbitrationMsg()); err != nil {
		return c.State(), c.arbError(err)
	}
	select {
	case st := <-s.arb:
		return st, nil
	case <-s.done:
		return c.State(), c.arbError(s.err)
	case <-ctx.Done():
		return c.State(), fmt.Errorf("arbitration on device %d: waiting for the switch: %w", c.opts.deviceID, ctx.Err())
	}
}

func (c *Client) arbError(err error) error {
	st, ok := status.FromError(err)
	if !ok {
		return fmt.Errorf("arbitration on device %d: %w", c.opts.deviceID, err)
	}
	switch st.Code() {
	case codes.Unavailable, codes.Canceled, codes.DeadlineExceeded:
		return c.rpcError("StreamChannel", err)
	}
	return &ArbitrationError{Device: c.opts.deviceID, Role: c.opts.role, ElectionID: c.ElectionID(), Status: st}
}

// openSession opens a stream, starts its receiver, arbitrates. The stream
// lives as long as the client, but until the switch has answered the
// arbitration it also ends with ctx: a switch that accepts and never
// answers leaves gRPC waiting for a transport, which only ctx (Ctrl-C, the
// call deadline) can cut short.
func (c *Client) openSession(ctx context.Context) (*session, ArbitrationState, error) {
	sctx, cancel := context.WithCancel(c.ctx)
	opening := context.AfterFunc(ctx, cancel)
	stream, err := c.rpc.StreamChannel(sctx)
	if err != nil {
		cancel()
		return nil, c.State(), c.rpcError("StreamChannel", err)
	}
	s := &session{stream: stream, cancel: cancel, send: make(chan struct{}, 1),
		arb: make(chan ArbitrationState, 8), done: make(chan struct{})}
	c.wg.Add(1)
	go c.receive(s)
	st, err := c.arbitrateOn(ctx, s)
	if err == nil && !opening() { // ctx ended as the answer came: the stream is cancelled
		err = fmt.Errorf("arbitration on device %d: %w", c.opts.deviceID, ctx.Err())
	}
	if err != nil {
		cancel()
		<-s.done
		return nil, st, err
	}
	c.mu.Lock()
	c.sess = s
	c.mu.Unlock()
	return s, st, nil
}

// receive reads the stream until it ends.
func (c *Client) receive(s *session) {
	defer c.wg.Done()
	for {
		m, err := s.stream.Recv()
		if err != nil {
			s.err = err
			close(s.done)
			return
		}
		switch u := m.GetUpdate().(type) {
		case *p4v1.StreamMessageResponse_Arbitration:
			st := c.onArbitration(u.Arbitration)
			select {
			case s.arb <- st:
			default:
			}
		case *p4v1.StreamMessageResponse_Packet:
			c.deliver(func() bool {
				select {
				case c.packetIn <- u.Packet:
					return true
				default:
					return false
				}
			})
		case *p4v1.StreamMessageResponse_Digest:
			c.deliver(func() bool {
				select {
				case c.digests <- u.Digest:
					return true
				default:
					return false
				}
			})
		case *p4v1.StreamMessageResponse_Error:
			select {
			case c.errs <- u.Error:
			default:
				c.deliver(func() bool { return false })
			}
		}
	}
}

func (c *Client) deliver(try func() bool) {
	if !try() {
		c.mu.Lock()
		c.dropped++
		c.mu.Unlock()
	}
}

// Dropped returns how many PacketIns, digest lists and stream errors were
// dropped because the application did not drain its channels.
func (c *Client) Dropped() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dropped
}

func (c *Client) onArbitration(u *p4v1.MasterArbitrationUpdate) ArbitrationState {
	code := codes.Code(u.GetStatus().GetCode())
	c.mu.Lock()
	prev := c.state
	st := ArbitrationState{Device: c.opts.deviceID, Role: c.opts.role, Connected: true,
		Primary: code == codes.OK, ElectionID: c.election,
		PrimaryElectionID: electionFromProto(u.GetElectionId()),
		HasPrimary:        code == codes.OK || code == codes.AlreadyExists}
	switch {
	case st.Primary:
		st.Event = EventPrimary
	case prev.Primary:
		st.Event = EventLostPrimary
	default:
		st.Event = EventBackup
	}
	c.setStateLocked(st)
	c.mu.Unlock()
	return st
}

// setStateLocked records st; c.mu is held.
func (c *Client) setStateLocked(st ArbitrationState) {
	c.state = st
	select {
	case c.stateCh <- st:
	default: // full: drop the oldest, keep the newest
		select {
		case <-c.stateCh:
		default:
		}
		select {
		case c.stateCh <- st:
		default:
		}
	}
}

func (c *Client) setState(st ArbitrationState) {
	c.mu.Lock()
	c.setStateLocked(st)
	c.mu.Unlock()
}

// supervise waits for the stream to break and re-opens it with backoff.
func (c *Client) supervise(s *session) {
	defer c.wg.Done()
	for {
		select {
		case <-c.ctx.Done():
			s.cancel()
			return
		case <-s.done:
		}
		s.cancel()
		if c.ctx.Err() != nil {
			return
		}
		prev := c.State()
		st := prev
		st.Connected, st.Primary, st.HasPrimary, st.Err = false, false, false, c.rpcError("StreamChannel", s.err)
		st.Event = EventDisconnected
		if prev.Primary {
			st.Event = EventLostPrimary
		}
		c.mu.Lock()
		c.sess = nil
		c.mu.Unlock()
		c.setState(st)
		if !c.opts.reconnect {
			return
		}
		var delay time.Duration
		for {
			delay = c.opts.backoff.next(delay)
			t := time.NewTimer(delay)
			select {
			case <-c.ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			actx, cancel := context.WithTimeout(c.ctx, max(c.opts.callTimeout, time.Second))
			ns, _, err := c.openSession(actx)
			cancel()
			if err == nil {
				s = ns
				break
			}
			if c.ctx.Err() != nil {
				return
			}
			es := c.State()
			es.Err = err
			es.Event = EventDisconnected
			c.setState(es)
		}
		var rerr error
		if c.opts.onResync != nil {
			rerr = c.opts.onResync(c.ctx, c)
			if rerr != nil {
				rerr = fmt.Errorf("resync after reconnect: %w", rerr)
			}
		}
		rs := c.State()
		rs.Event, rs.Err = EventReconnected, rerr
		c.setState(rs)
	}
}

// State returns the last known arbitration state.
func (c *Client) State() ArbitrationState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// StateChanges returns a channel of arbitration state changes. It keeps the
// 16 most recent changes; older ones are dropped if nobody reads.
func (c *Client) StateChanges() <-chan ArbitrationState { return c.stateCh }

// WaitPrimary blocks until the client is primary or ctx is done.
func (c *Client) WaitPrimary(ctx context.Context) (ArbitrationState, error) {
	if st := c.State(); st.Primary {
		return st, nil
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return c.State(), fmt.Errorf("waiting to become primary on device %d: %w", c.opts.deviceID, ctx.Err())
		case <-tick.C:
			if st := c.State(); st.Primary {
				return st, nil
			}
		}
	}
}

func (c *Client) session() (*session, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sess == nil {
		return nil, fmt.Errorf("device %d: no StreamChannel (call Arbitrate first): %w", c.opts.deviceID, ErrFailedPrecondition)
	}
	return c.sess, nil
}

// PacketIns returns the channel of PacketIns the switch sends to this
// (primary) controller. PacketIns beyond the buffer are dropped (Dropped).
func (c *Client) PacketIns() <-chan *p4v1.PacketIn { return c.packetIn }

// Digests returns the channel of digest lists; acknowledge each with
// AckDigest.
func (c *Client) Digests() <-chan *p4v1.DigestList { return c.digests }

// StreamErrors returns the channel of StreamErrors the switch reports for
// PacketOuts and digest acks.
func (c *Client) StreamErrors() <-chan *p4v1.StreamError { return c.errs }

// SendPacketOut sends a PacketOut on the stream (primary only; the switch
// reports refusals on StreamErrors).
func (c *Client) SendPacketOut(ctx context.Context, p *p4v1.PacketOut) error {
	s, err := c.session()
	if err != nil {
		return err
	}
	ctx, cancel := c.callCtx(ctx)
	defer cancel()
	if err := s.sendMsg(ctx, &p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_Packet{Packet: p}}); err != nil {
		return c.rpcError("PacketOut", err)
	}
	return nil
}

// AckDigest acknowledges a digest list.
func (c *Client) AckDigest(ctx context.Context, d *p4v1.DigestList) error {
	s, err := c.session()
	if err != nil {
		return err
	}
	ctx, cancel := c.callCtx(ctx)
	defer cancel()
	ack := &p4v1.DigestListAck{DigestId: d.GetDigestId(), ListId: d.GetListId()}
	if err := s.sendMsg(ctx, &p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_DigestAck{DigestAck: ack}}); err != nil {
		return c.rpcError("DigestListAck", err)
	}
	return nil
}

// BuildPacketOut builds a PacketOut whose metadata fields (of the P4Info's
// "packet_out" controller header) are given by name; every field must be
// given.
func (x *Index) BuildPacketOut(payload []byte, metadata ...ActionParam) (*p4v1.PacketOut, error) {
	h, err := x.PacketMetadata("packet_out")
	if err != nil {
		return nil, err
	}
	out := &p4v1.PacketOut{Payload: payload}
	given := map[string]bool{}
	for _, m := range metadata {
		given[m.Name] = true
	}
	for _, f := range h.GetMetadata() {
		if !given[f.Name] {
			return nil, fmt.Errorf("packet_out: metadata %s missing", f.Name)
		}
	}
	for _, m := range metadata {
		var found bool
		for _, f := range h.GetMetadata() {
			if f.Name != m.Name {
				continue
			}
			v, err := Encode(m.Value, int(f.Bitwidth))
			if err != nil {
				return nil, fmt.Errorf("packet_out metadata %s: %w", f.Name, err)
			}
			out.Metadata = append(out.Metadata, &p4v1.PacketMetadata{MetadataId: f.Id, Value: v})
			found = true
		}
		if !found {
			return nil, fmt.Errorf("%w: packet_out has no metadata %q", ErrUnknownName, m.Name)
		}
	}
	return out, nil
}

// DecodePacketIn returns a PacketIn's metadata by name (values up to 64
// bits; wider ones are an error).
func (x *Index) DecodePacketIn(p *p4v1.PacketIn) (map[string]uint64, error) {
	h, err := x.PacketMetadata("packet_in")
	if err != nil {
		return nil, err
	}
	names := map[uint32]string{}
	for _, f := range h.GetMetadata() {
		names[f.Id] = f.Name
	}
	out := map[string]uint64{}
	var errs []error
	for _, m := range p.GetMetadata() {
		n, ok := names[m.GetMetadataId()]
		if !ok {
			errs = append(errs, fmt.Errorf("packet_in metadata id %d is not in the P4Info", m.GetMetadataId()))
			continue
		}
		v, err := DecodeUint(m.GetValue())
		if err != nil {
			errs = append(errs, fmt.Errorf("packet_in metadata %s: %w", n, err))
			continue
		}
		out[n] = v
	}
	return out, errors.Join(errs...)
}
