package demo

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/dataplane/p4rtserver"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

// Embedded is the embedded p4ctl switch with its P4Runtime server running
// in-process, served over an in-memory connection (bufconn) or a loopback
// TCP port. Controllers reach it only through P4Runtime, exactly as they
// reach BMv2.
type Embedded struct {
	Switch *dataplane.Switch
	Server *p4rtserver.Server

	buf  *bufconn.Listener
	addr string
	done chan struct{}
}

// StartEmbedded starts a switch. With addr "" it serves over bufconn (no
// network at all); otherwise it listens on addr, which must be loopback
// (host:port, port 0 for a free one).
func StartEmbedded(opts dataplane.Options, addr string, serverOpts ...p4rtserver.Option) (*Embedded, error) {
	sw, err := dataplane.New(opts)
	if err != nil {
		return nil, err
	}
	e := &Embedded{Switch: sw, Server: p4rtserver.New(sw, serverOpts...), done: make(chan struct{})}
	var lis net.Listener
	if addr == "" {
		e.buf = bufconn.Listen(8 << 20)
		lis = e.buf
	} else {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("embedded switch address %q: %w", addr, err)
		}
		if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return nil, fmt.Errorf("embedded switch address %q: only loopback addresses", addr)
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("embedded switch: %w", err)
		}
		lis, e.addr = l, l.Addr().String()
	}
	go func() {
		defer close(e.done)
		_ = e.Server.Serve(lis)
	}()
	return e, nil
}

// Addr is the TCP address ("" over bufconn).
func (e *Embedded) Addr() string { return e.addr }

// Conn returns a new gRPC connection to the switch's P4Runtime server.
func (e *Embedded) Conn() (*grpc.ClientConn, error) {
	dial := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(p4rt.DefaultMaxMsgSize), grpc.MaxCallSendMsgSize(p4rt.DefaultMaxMsgSize)),
		grpc.WithMaxHeaderListSize(p4rt.DefaultMaxHeaderListSize)}
	target := e.addr
	if e.buf != nil {
		target = "passthrough:///embedded"
		dial = append(dial, grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return e.buf.DialContext(ctx) }))
	}
	return grpc.NewClient(target, dial...)
}

// Client returns a P4Runtime client of the switch (not yet arbitrated) and
// a function closing it and its connection.
func (e *Embedded) Client(opts ...p4rt.Option) (*p4rt.Client, func(), error) {
	cc, err := e.Conn()
	if err != nil {
		return nil, nil, err
	}
	c, err := p4rt.NewClient(cc, opts...)
	if err != nil {
		cc.Close()
		return nil, nil, err
	}
	return c, func() { c.Close(); cc.Close() }, nil
}

// Stop shuts the server down (streams end, in-flight calls get up to 2 s).
func (e *Embedded) Stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	e.Server.Shutdown(ctx)
	select {
	case <-e.done:
		return nil
	case <-ctx.Done():
		return errors.New("embedded switch: server did not stop")
	}
}
