package p4rt

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"
)

// ConnectTimeout bounds one connection attempt: the TCP connection and
// the HTTP/2 (and TLS) handshake of gRPC. A server that accepts and never
// answers fails after it, not after a call's whole deadline. Commands that
// reach a controller's HTTP endpoints (get latency) use the same bound.
const ConnectTimeout = 5 * time.Second

// ErrNoP4RuntimeAnswer marks a switch address that accepts TCP
// connections but gave no P4Runtime (gRPC) answer within ConnectTimeout.
var ErrNoP4RuntimeAnswer = errors.New("connected, but no P4Runtime answer")

// Target returns the address the client dials ("" when it was given a
// connection of its own).
func (c *Client) Target() string {
	if c.conn == nil {
		return ""
	}
	return c.conn.Target()
}

// ExplainUnreachable tells apart, for an error of a call that could not
// reach addr, a port where nothing listens from one that accepts a TCP
// connection but does not answer as a P4Runtime server (another service, a
// TLS server spoken to in plaintext or the reverse, a hung switch): for
// the latter it returns err wrapped with ErrNoP4RuntimeAnswer and a hint.
// Other errors are returned as they are. It dials addr once (at most
// a second).
func ExplainUnreachable(ctx context.Context, addr string, err error) error {
	if err == nil || addr == "" || errors.Is(err, ErrNoP4RuntimeAnswer) {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	conn, derr := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if derr != nil {
		return err
	}
	conn.Close()
	return fmt.Errorf("%w within %v: %s accepts TCP connections but does not answer P4Runtime (another service? TLS expected, or not? a hung switch?): %w",
		ErrNoP4RuntimeAnswer, ConnectTimeout, addr, err)
}
