// Package bmv2rt is a small client of BMv2's Thrift runtime API: the
// register calls P4Runtime cannot make on BMv2 (PI's P4Runtime server
// answers UNIMPLEMENTED "Register reads are not supported yet"), so that
// p4ctl reads BMv2's registers without simple_switch_CLI or Python.
//
// The calls are hand-written against the "standard" service of BMv2's
// standard.thrift (binary protocol, multiplexed, buffered transport, as
// simple_switch_CLI speaks it): bm_register_read, bm_register_read_all and
// bm_register_reset, all on context 0. Only apache/thrift's Go protocol and
// transport are used; nothing is generated from or copied out of BMv2.
//
// BMv2's Thrift server listens on every interface (port 9090 by default):
// keep the switch in a network namespace of its own or on a host where that
// port is not reachable, and give Dial a dialer into that namespace.
package bmv2rt

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
	"github.com/p4ctl/p4ctl/pkg/bmv2rt/thriftwire"
)

// DefaultPort is BMv2's default Thrift port.
const DefaultPort = 9090

// Options configure Dial.
type Options struct {
	// Dial connects to addr; nil uses a net.Dialer (a test harness passes
	// one that dials inside the switch's network namespace).
	Dial func(ctx context.Context, addr string) (net.Conn, error)
	// Timeout bounds each call when the context has no deadline (default
	// 10 s).
	Timeout time.Duration
}

// Client is a connection to one BMv2 Thrift server. Calls are serialised;
// it is safe for concurrent use.
type Client struct {
	addr    string
	timeout time.Duration

	mu    sync.Mutex
	trans thrift.TTransport
	proto thrift.TProtocol
	seq   int32
}

// Dial connects to BMv2's Thrift server at addr (host:port).
func Dial(ctx context.Context, addr string, o Options) (*Client, error) {
	dial := o.Dial
	if dial == nil {
		var d net.Dialer
		dial = func(ctx context.Context, addr string) (net.Conn, error) { return d.DialContext(ctx, "tcp", addr) }
	}
	conn, err := dial(ctx, addr)
	if err != nil {
		return nil, fmt.Errorf("bmv2 thrift %s: %w", addr, err)
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	conf := &thrift.TConfiguration{ConnectTimeout: timeout, SocketTimeout: timeout}
	trans := thrift.NewTBufferedTransport(thrift.NewTSocketFromConnConf(conn, conf), 4096)
	bin := thrift.NewTBinaryProtocolConf(trans, conf)
	return &Client{addr: addr, timeout: timeout, trans: trans,
		proto: thrift.NewTMultiplexedProtocol(bin, thriftwire.Service)}, nil
}

// Close closes the connection.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.trans.Close()
}

// RegisterError is BMv2's InvalidRegisterOperation.
type RegisterError struct {
	Register string
	Code     int32 // 1 invalid register name, 2 invalid index, 3 error
}

func (e *RegisterError) Error() string {
	what := fmt.Sprintf("error code %d", e.Code)
	switch e.Code {
	case 1:
		what = "no such register"
	case 2:
		what = "index out of range"
	}
	return fmt.Sprintf("bmv2 register %s: %s", e.Register, what)
}

// ErrUnknownRegister matches a RegisterError for a name BMv2 does not know.
var ErrUnknownRegister = errors.New("unknown register")

// Is makes errors.Is(err, ErrUnknownRegister) true for code 1.
func (e *RegisterError) Is(target error) bool { return target == ErrUnknownRegister && e.Code == 1 }

// RegisterRead returns cell index of register name.
func (c *Client) RegisterRead(ctx context.Context, name string, index int) (uint64, error) {
	var v uint64
	err := c.call(ctx, "bm_register_read", name,
		func(p thrift.TProtocol) error {
			return thriftwire.WriteI32(ctx, p, 3, int32(index))
		},
		func(p thrift.TProtocol, ft thrift.TType) error {
			if ft != thrift.I64 {
				return p.Skip(ctx, ft)
			}
			x, err := p.ReadI64(ctx)
			v = uint64(x)
			return err
		})
	return v, err
}

// RegisterReadAll returns every cell of register name.
func (c *Client) RegisterReadAll(ctx context.Context, name string) ([]uint64, error) {
	var vals []uint64
	err := c.call(ctx, "bm_register_read_all", name, nil,
		func(p thrift.TProtocol, ft thrift.TType) error {
			if ft != thrift.LIST {
				return p.Skip(ctx, ft)
			}
			et, n, err := p.ReadListBegin(ctx)
			if err != nil {
				return err
			}
			if et != thrift.I64 {
				return fmt.Errorf("list of %v, want i64", et)
			}
			vals = make([]uint64, 0, n)
			for range n {
				x, err := p.ReadI64(ctx)
				if err != nil {
					return err
				}
				vals = append(vals, uint64(x))
			}
			return p.ReadListEnd(ctx)
		})
	return vals, err
}

// RegisterReset sets every cell of register name to 0.
func (c *Client) RegisterReset(ctx context.Context, name string) error {
	return c.call(ctx, "bm_register_reset", name, nil, nil)
}

// call sends method(cxt_id = 0, register name, more…) and reads its result:
// field 0 (the return value) goes to success, field 1 is the service's
// InvalidRegisterOperation.
func (c *Client) call(ctx context.Context, method, register string,
	more func(thrift.TProtocol) error, success func(thrift.TProtocol, thrift.TType) error) (err error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	defer func() {
		if err != nil {
			var re *RegisterError
			if !errors.As(err, &re) {
				err = fmt.Errorf("bmv2 thrift %s %s(%s): %w", c.addr, method, register, err)
			}
		}
	}()
	if d, ok := ctx.Deadline(); ok {
		if s, ok := c.trans.(interface{ SetDeadline(time.Time) error }); ok {
			_ = s.SetDeadline(d)
		}
	}
	c.seq++
	p := c.proto
	if err := p.WriteMessageBegin(ctx, method, thrift.CALL, c.seq); err != nil {
		return err
	}
	if err := p.WriteStructBegin(ctx, method+"_args"); err != nil {
		return err
	}
	if err := thriftwire.WriteI32(ctx, p, 1, 0); err != nil { // cxt_id
		return err
	}
	if err := p.WriteFieldBegin(ctx, "register_array_name", thrift.STRING, 2); err != nil {
		return err
	}
	if err := p.WriteString(ctx, register); err != nil {
		return err
	}
	if err := p.WriteFieldEnd(ctx); err != nil {
		return err
	}
	if more != nil {
		if err := more(p); err != nil {
			return err
		}
	}
	if err := p.WriteFieldStop(ctx); err != nil {
		return err
	}
	if err := p.WriteStructEnd(ctx); err != nil {
		return err
	}
	if err := p.WriteMessageEnd(ctx); err != nil {
		return err
	}
	if err := p.Flush(ctx); err != nil {
		return err
	}

	_, typ, seq, err := p.ReadMessageBegin(ctx)
	if err != nil {
		return err
	}
	if typ == thrift.EXCEPTION {
		ex := thrift.NewTApplicationException(thrift.UNKNOWN_APPLICATION_EXCEPTION, "")
		if err := ex.Read(ctx, p); err != nil {
			return err
		}
		_ = p.ReadMessageEnd(ctx)
		return ex
	}
	if typ != thrift.REPLY || seq != c.seq {
		return fmt.Errorf("unexpected message type %d, sequence %d (sent %d)", typ, seq, c.seq)
	}
	var callErr error
	err = thriftwire.ReadStruct(ctx, p, func(id int16, ft thrift.TType) (bool, error) {
		switch {
		case id == 0 && success != nil:
			return true, success(p, ft)
		case id == 1 && ft == thrift.STRUCT:
			code, err := readCode(ctx, p)
			callErr = &RegisterError{Register: register, Code: code}
			return true, err
		}
		return false, nil
	})
	if err != nil {
		return err
	}
	if err := p.ReadMessageEnd(ctx); err != nil {
		return err
	}
	return callErr
}

// readCode reads InvalidRegisterOperation { 1: i32 code }.
func readCode(ctx context.Context, p thrift.TProtocol) (int32, error) {
	var code int32
	err := thriftwire.ReadStruct(ctx, p, func(id int16, ft thrift.TType) (bool, error) {
		if id != 1 || ft != thrift.I32 {
			return false, nil
		}
		var err error
		code, err = p.ReadI32(ctx)
		return true, err
	})
	return code, err
}
