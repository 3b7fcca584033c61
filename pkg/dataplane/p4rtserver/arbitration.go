package p4rtserver

import (
	"context"
	"fmt"
	"math/big"
	"sync"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/anypb"
)

// Arbitration follows P4Runtime spec §5 (1.3+): per (device, role) the
// primary is the live controller whose election id is >= the highest id the
// server has ever seen for that role; duplicate ids among live controllers
// are refused with INVALID_ARGUMENT; every primary change is advertised to
// all controllers of the role (OK to the primary, ALREADY_EXISTS to backups,
// NOT_FOUND to everyone when there is no primary).
//
// Deviation, on purpose: an election id equal to 0 is treated like an unset
// one (a read-only backup that never becomes primary). The spec
// distinguishes {high:0, low:0} from unset, but proto3 clients that leave
// the field at its zero value would otherwise race to primary; p4ctl's
// client never sends 0.

// electionID is a 128-bit election id; nil means unset.
type electionID = *p4v1.Uint128

func validElection(e electionID) bool { return e != nil && (e.High != 0 || e.Low != 0) }

func cmpElection(a, b electionID) int {
	switch {
	case a.High < b.High:
		return -1
	case a.High > b.High:
		return 1
	case a.Low < b.Low:
		return -1
	case a.Low > b.Low:
		return 1
	}
	return 0
}

func fmtElection(e electionID) string {
	if !validElection(e) {
		return "unset"
	}
	if e.High == 0 {
		return fmt.Sprint(e.Low)
	}
	v := new(big.Int).Lsh(new(big.Int).SetUint64(e.High), 64)
	return v.Or(v, new(big.Int).SetUint64(e.Low)).String()
}

// role is the arbitration state of one (device, role).
type role struct {
	name    string
	streams map[*conn]struct{}
	highest electionID // election_id_past; nil if never set
	primary *conn
	config  *anypb.Any
}

// conn is one live StreamChannel.
type conn struct {
	id       uint64
	role     string
	election electionID // nil = backup forever
	device   uint64
	out      *outbox
}

// checkPrimary returns NOT_FOUND for an unknown role and PERMISSION_DENIED
// unless election is the role's primary. The caller holds gate.
func (s *Server) checkPrimary(roleName string, election electionID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.roles[roleName]
	if !ok && roleName != "" {
		return status.Errorf(codes.NotFound, "unknown role %q on device %d", roleName, s.opts.deviceID)
	}
	if !ok || r.primary == nil {
		return status.Errorf(codes.PermissionDenied, "no primary controller for device %d role %q: open a StreamChannel and win arbitration first", s.opts.deviceID, roleName)
	}
	if !validElection(election) || cmpElection(election, r.primary.election) != 0 {
		return status.Errorf(codes.PermissionDenied, "election id %s is not the primary's for device %d role %q (primary has %s)",
			fmtElection(election), s.opts.deviceID, roleName, fmtElection(r.primary.election))
	}
	return nil
}

// StreamChannel runs one controller session: arbitration, PacketOut in,
// PacketIn / digests / arbitration advisories out.
func (s *Server) StreamChannel(stream p4v1.P4Runtime_StreamChannelServer) error {
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	s.mu.Lock()
	s.nextID++
	c := &conn{id: s.nextID, out: newOutbox()}
	s.mu.Unlock()

	sendErr := make(chan error, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		sendErr <- c.out.run(ctx, stream.Send)
	}()
	recvd := make(chan *p4v1.StreamMessageRequest)
	recvErr := make(chan error, 1)
	go func() {
		for {
			m, err := stream.Recv()
			if err != nil {
				recvErr <- err
				return
			}
			select {
			case recvd <- m:
			case <-ctx.Done():
				return
			}
		}
	}()

	arbitrated := false
	defer func() {
		if arbitrated {
			s.leave(c)
		}
		cancel()
		wg.Wait()
	}()
	for {
		select {
		case <-s.shutdown:
			return status.Error(codes.Unavailable, "P4Runtime server shutting down")
		case err := <-sendErr:
			return err
		case <-recvErr:
			return nil // client closed or connection lost
		case m := <-recvd:
			switch u := m.GetUpdate().(type) {
			case *p4v1.StreamMessageRequest_Arbitration:
				if err := s.arbitrate(c, u.Arbitration, !arbitrated); err != nil {
					return err
				}
				arbitrated = true
			case *p4v1.StreamMessageRequest_Packet:
				s.packetOut(ctx, c, arbitrated, u.Packet)
			case *p4v1.StreamMessageRequest_DigestAck:
				s.digestAck(ctx, c, arbitrated, u.DigestAck)
			default:
				c.out.push(streamError(codes.Unimplemented, "unsupported stream message", &p4v1.StreamError_Other{Other: &p4v1.StreamOtherError{}}), true)
			}
		}
	}
}

func streamError(code codes.Code, msg string, details interface{}) *p4v1.StreamMessageResponse {
	se := &p4v1.StreamError{CanonicalCode: int32(code), Message: msg}
	switch d := details.(type) {
	case *p4v1.StreamError_PacketOut:
		se.Details = d
	case *p4v1.StreamError_DigestListAck:
		se.Details = d
	case *p4v1.StreamError_Other:
		se.Details = d
	}
	return &p4v1.StreamMessageResponse{Update: &p4v1.StreamMessageResponse_Error{Error: se}}
}

// arbitrate applies a MasterArbitrationUpdate (spec §5.3). A returned error
// terminates the stream.
func (s *Server) arbitrate(c *conn, u *p4v1.MasterArbitrationUpdate, first bool) error {
	roleName := u.GetRole().GetName()
	//lint:ignore SA1019 a P4Runtime server still accepts the deprecated numeric role id
	if id := u.GetRole().GetId(); roleName == "" && id != 0 {
		roleName = fmt.Sprint(id)
	}
	election := u.GetElectionId()
	if !validElection(election) {
		election = nil
	}
	// Take the gate first: a primary change waits for in-flight writes.
	s.gate.Lock()
	defer s.gate.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if first {
		if err := s.checkDevice(u.GetDeviceId()); err != nil {
			return err
		}
	} else {
		if u.GetDeviceId() != c.device {
			return status.Errorf(codes.FailedPrecondition, "device id changed on a live stream (%d → %d)", c.device, u.GetDeviceId())
		}
		if roleName != c.role {
			return status.Errorf(codes.FailedPrecondition, "role changed on a live stream (%q → %q): open a new stream", c.role, roleName)
		}
	}
	r := s.roles[roleName]
	if r == nil {
		r = &role{name: roleName, streams: map[*conn]struct{}{}}
	}
	if election != nil {
		for o := range r.streams {
			if o != c && o.election != nil && cmpElection(o.election, election) == 0 {
				return status.Errorf(codes.InvalidArgument, "election id %s is already used by another controller for device %d role %q",
					fmtElection(election), s.opts.deviceID, roleName)
			}
		}
	}
	if first && len(r.streams) >= s.opts.maxStreams {
		return status.Errorf(codes.ResourceExhausted, "too many controllers for device %d role %q (limit %d)", s.opts.deviceID, roleName, s.opts.maxStreams)
	}
	s.roles[roleName] = r
	c.role, c.device, c.election = roleName, u.GetDeviceId(), election
	r.streams[c] = struct{}{}

	wasPrimary := r.primary == c
	if election != nil && (r.highest == nil || cmpElection(election, r.highest) >= 0) {
		r.primary = c
		r.highest = election
		if u.GetRole().GetConfig() != nil {
			r.config = u.GetRole().GetConfig()
		}
		s.log.Info("p4runtime primary", "device", s.opts.deviceID, "role", roleName, "election_id", fmtElection(election), "stream", c.id)
		s.advertise(r, nil)
		return nil
	}
	if wasPrimary {
		r.primary = nil
		s.advertise(r, nil)
		return nil
	}
	s.advertise(r, c)
	return nil
}

// leave removes a closed stream; a departing primary leaves the role without
// primary, which is advertised to the remaining controllers.
func (s *Server) leave(c *conn) {
	s.gate.Lock()
	defer s.gate.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.roles[c.role]
	if r == nil {
		return
	}
	delete(r.streams, c)
	if r.primary == c {
		r.primary = nil
		s.log.Info("p4runtime primary left", "device", s.opts.deviceID, "role", c.role, "stream", c.id)
		s.advertise(r, nil)
	}
}

// advertise sends the arbitration advisory to only (if non-nil) or to every
// controller of r. The caller holds s.mu.
func (s *Server) advertise(r *role, only *conn) {
	for c := range r.streams {
		if only != nil && c != only {
			continue
		}
		code, msg := codes.NotFound, "no primary controller"
		switch {
		case r.primary == c:
			code, msg = codes.OK, "primary"
		case r.primary != nil:
			code, msg = codes.AlreadyExists, "backup: another controller is primary"
		}
		upd := &p4v1.MasterArbitrationUpdate{
			DeviceId: s.opts.deviceID,
			Status:   &spb.Status{Code: int32(code), Message: msg},
		}
		if r.highest != nil {
			upd.ElectionId = &p4v1.Uint128{High: r.highest.High, Low: r.highest.Low}
		}
		if r.name != "" || r.config != nil {
			upd.Role = &p4v1.Role{Name: r.name, Config: r.config}
		}
		c.out.push(&p4v1.StreamMessageResponse{Update: &p4v1.StreamMessageResponse_Arbitration{Arbitration: upd}}, true)
	}
}

// isPrimary reports whether c is currently the primary of its role.
func (s *Server) isPrimary(c *conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.roles[c.role]
	return r != nil && r.primary == c
}

func (s *Server) packetOut(ctx context.Context, c *conn, arbitrated bool, p *p4v1.PacketOut) {
	if !arbitrated || !s.isPrimary(c) {
		c.out.push(streamError(codes.PermissionDenied, "only the primary controller may send PacketOut",
			&p4v1.StreamError_PacketOut{PacketOut: &p4v1.PacketOutError{PacketOut: p}}), true)
		return
	}
	if err := s.target.PacketOut(ctx, p); err != nil {
		st, _ := status.FromError(err)
		c.out.push(streamError(st.Code(), st.Message(),
			&p4v1.StreamError_PacketOut{PacketOut: &p4v1.PacketOutError{PacketOut: p}}), true)
	}
}

// packetIn forwards a PacketIn from the target to the primary of every role.
func (s *Server) packetIn(p *p4v1.PacketIn) {
	msg := &p4v1.StreamMessageResponse{Update: &p4v1.StreamMessageResponse_Packet{Packet: p}}
	s.toPrimaries(msg)
}

func (s *Server) toPrimaries(msg *p4v1.StreamMessageResponse) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.roles {
		if r.primary != nil {
			r.primary.out.push(msg, false)
		}
	}
}

// outbox is a stream's send queue: arbitration advisories and errors are
// never dropped; PacketIns and digests are dropped beyond outboxLimit.
type outbox struct {
	mu      sync.Mutex
	q       []*p4v1.StreamMessageResponse
	wake    chan struct{}
	dropped uint64
}

func newOutbox() *outbox { return &outbox{wake: make(chan struct{}, 1)} }

func (o *outbox) push(m *p4v1.StreamMessageResponse, mustDeliver bool) {
	o.mu.Lock()
	if !mustDeliver && len(o.q) >= outboxLimit {
		o.dropped++
		o.mu.Unlock()
		return
	}
	o.q = append(o.q, m)
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

func (o *outbox) run(ctx context.Context, send func(*p4v1.StreamMessageResponse) error) error {
	for {
		o.mu.Lock()
		q := o.q
		o.q = nil
		o.mu.Unlock()
		for _, m := range q {
			if err := send(m); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-o.wake:
		}
	}
}
