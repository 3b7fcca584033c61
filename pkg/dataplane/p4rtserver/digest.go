package p4rtserver

import (
	"context"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// DigestTarget is optionally implemented by a Target whose pipeline emits
// digests (P4Runtime DigestList). The server forwards each list to the
// primary controllers and hands their DigestListAcks back. Digest
// configuration (DigestEntry) arrives through Target.Write like any entity.
type DigestTarget interface {
	// SubscribeDigests registers fn to receive digest lists; the returned
	// function unsubscribes.
	SubscribeDigests(fn func(*p4v1.DigestList)) (unsubscribe func())
	// AckDigest acknowledges a list (so the target may send the next one).
	AckDigest(ctx context.Context, ack *p4v1.DigestListAck) error
}

func (s *Server) digest(d *p4v1.DigestList) {
	s.toPrimaries(&p4v1.StreamMessageResponse{Update: &p4v1.StreamMessageResponse_Digest{Digest: d}})
}

func (s *Server) digestAck(ctx context.Context, c *conn, arbitrated bool, ack *p4v1.DigestListAck) {
	fail := func(code codes.Code, msg string) {
		c.out.push(streamError(code, msg, &p4v1.StreamError_DigestListAck{DigestListAck: &p4v1.DigestListAckError{DigestListAck: ack}}), true)
	}
	if !arbitrated || !s.isPrimary(c) {
		fail(codes.PermissionDenied, "only the primary controller may acknowledge digests")
		return
	}
	d, ok := s.target.(DigestTarget)
	if !ok {
		fail(codes.InvalidArgument, "this target has no digests")
		return
	}
	if err := d.AckDigest(ctx, ack); err != nil {
		st, _ := status.FromError(err)
		fail(st.Code(), st.Message())
	}
}
