package dataplane

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/p4ctl/p4ctl/pkg/dataplane/p4rtserver"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

// DefaultBufferSize is the buffer of an in-process listener (ServeOptions).
const DefaultBufferSize = 8 << 20

// ServeOptions say where an embedded target serves P4Runtime.
type ServeOptions struct {
	// Addr is "" for an in-process listener that only Conn and Client
	// reach, else a TCP host:port (port 0 picks a free one).
	Addr string
	// Listener, when set, is served instead of listening on Addr (a
	// caller that must re-bind a port with retries listens itself).
	Listener net.Listener
	// Remote allows a TCP address beyond loopback (p4ctl switch); without
	// it only loopback addresses are accepted.
	Remote bool
	// BufferSize is the in-process listener's buffer per direction of a
	// connection (default DefaultBufferSize).
	BufferSize int
	// Server are the P4Runtime server's options.
	Server []p4rtserver.Option
}

// Embedded is an embedded target serving P4Runtime: the one way the
// embedded switch is brought up, by p4ctl switch and demo, the fleet and
// the tests (Start, Serve).
type Embedded struct {
	// Switch is the switch served (nil when Serve was given another
	// target).
	Switch *Switch
	// Target is what the server serves.
	Target p4rtserver.Target
	// Server is the P4Runtime server.
	Server *p4rtserver.Server

	buf  *bufconn.Listener
	addr net.Addr
	done chan struct{}
	err  error // Serve's error, set before done is closed
}

// Start builds a Switch from opts and serves P4Runtime for it on addr
// ("" in-process, else a loopback TCP address) with serverOpts.
func Start(opts Options, addr string, serverOpts ...p4rtserver.Option) (*Embedded, error) {
	sw, err := New(opts)
	if err != nil {
		return nil, err
	}
	e, err := Serve(sw, ServeOptions{Addr: addr, Server: serverOpts})
	if err != nil {
		sw.Close()
		return nil, err
	}
	return e, nil
}

// Serve serves P4Runtime for target as o says, in a goroutine, until
// Shutdown or Stop.
func Serve(target p4rtserver.Target, o ServeOptions) (*Embedded, error) {
	e := &Embedded{Target: target, done: make(chan struct{})}
	e.Switch, _ = target.(*Switch)
	lis := o.Listener
	switch {
	case lis != nil:
		e.addr = lis.Addr()
	case o.Addr == "":
		size := o.BufferSize
		if size <= 0 {
			size = DefaultBufferSize
		}
		e.buf = bufconn.Listen(size)
		lis = e.buf
	default:
		host, _, err := net.SplitHostPort(o.Addr)
		if err != nil {
			return nil, fmt.Errorf("embedded switch address %q: %w", o.Addr, err)
		}
		if ip := net.ParseIP(host); !o.Remote && host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return nil, fmt.Errorf("embedded switch address %q: only loopback addresses", o.Addr)
		}
		l, err := net.Listen("tcp", o.Addr)
		if err != nil {
			return nil, fmt.Errorf("embedded switch: listen on %s: %w", o.Addr, err)
		}
		lis, e.addr = l, l.Addr()
	}
	e.Server = p4rtserver.New(target, o.Server...)
	go func() {
		defer close(e.done)
		e.err = e.Server.Serve(lis)
	}()
	return e, nil
}

// Addr is the TCP address served ("" for an in-process listener).
func (e *Embedded) Addr() string {
	if e.addr == nil {
		return ""
	}
	return e.addr.String()
}

// ListenAddr is the TCP listener's address (nil for an in-process
// listener).
func (e *Embedded) ListenAddr() net.Addr { return e.addr }

// Conn dials the switch (the in-process listener, or the TCP address in
// plaintext) with the p4rt client's message and header-list sizes.
func (e *Embedded) Conn() (*grpc.ClientConn, error) {
	dial := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(p4rt.DefaultMaxMsgSize), grpc.MaxCallSendMsgSize(p4rt.DefaultMaxMsgSize)),
		grpc.WithMaxHeaderListSize(p4rt.DefaultMaxHeaderListSize)}
	target := e.Addr()
	if e.buf != nil {
		target = "passthrough:///embedded"
		dial = append(dial, grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return e.buf.DialContext(ctx) }))
	}
	return grpc.NewClient(target, dial...)
}

// Client returns a P4Runtime client of the switch and a function that
// closes it and its connection.
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

// Done is closed when the server has stopped serving.
func (e *Embedded) Done() <-chan struct{} { return e.done }

// Err is the server's error once Done is closed: nil when it was shut
// down, else why it stopped.
func (e *Embedded) Err() error {
	select {
	case <-e.done:
	default:
		return nil
	}
	if errors.Is(e.err, grpc.ErrServerStopped) {
		return nil
	}
	return e.err
}

// Shutdown stops the server gracefully, waiting for in-flight RPCs until
// ctx is done, and waits for it to stop serving.
func (e *Embedded) Shutdown(ctx context.Context) error {
	e.Server.Shutdown(ctx)
	select {
	case <-e.done:
		return nil
	case <-ctx.Done():
		return errors.New("embedded switch: server did not stop")
	}
}

// Stop is Shutdown with a deadline of 2 s.
func (e *Embedded) Stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return e.Shutdown(ctx)
}
