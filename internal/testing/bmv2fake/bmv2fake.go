// Package bmv2fake is an in-process stand-in for BMv2's Thrift server
// (the register calls of its "standard" service), for tests of code that
// reads BMv2's registers over Thrift (pkg/bmv2rt, p4ctl get registers).
package bmv2fake

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"

	"github.com/apache/thrift/lib/go/thrift"
	"github.com/p4ctl/p4ctl/pkg/bmv2rt/thriftwire"
)

// Fake is an in-process stand-in for BMv2's Thrift server that answers the
// three register calls from its own register arrays, for tests of code that
// reads BMv2's registers. It listens on 127.0.0.1.
type Fake struct {
	ln net.Listener

	mu   sync.Mutex
	regs map[string][]uint64
	wg   sync.WaitGroup
}

// New serves regs (name → cells; copied) on a loopback port.
func New(regs map[string][]uint64) (*Fake, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("bmv2 fake: %w", err)
	}
	f := &Fake{ln: ln, regs: map[string][]uint64{}}
	for n, cells := range regs {
		f.regs[n] = append([]uint64(nil), cells...)
	}
	f.wg.Add(1)
	go f.accept()
	return f, nil
}

// Addr is the fake's host:port.
func (f *Fake) Addr() string { return f.ln.Addr().String() }

// Get returns a copy of register name's cells.
func (f *Fake) Get(name string) []uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]uint64(nil), f.regs[name]...)
}

// Close stops the fake and waits for its connections to end.
func (f *Fake) Close() error {
	err := f.ln.Close()
	f.wg.Wait()
	return err
}

func (f *Fake) accept() {
	defer f.wg.Done()
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			defer c.Close()
			f.serve(c)
		}()
	}
}

func (f *Fake) serve(c net.Conn) {
	ctx := context.Background()
	trans := thrift.NewTBufferedTransport(thrift.NewTSocketFromConnConf(c, nil), 4096)
	p := thrift.NewTBinaryProtocolConf(trans, nil)
	for {
		name, _, seq, err := p.ReadMessageBegin(ctx)
		if err != nil {
			return
		}
		method, ok := strings.CutPrefix(name, thriftwire.Service+":")
		args, err := readArgs(ctx, p)
		if err != nil {
			return
		}
		_ = p.ReadMessageEnd(ctx)
		if !ok {
			ex := thrift.NewTApplicationException(thrift.UNKNOWN_METHOD, "not a multiplexed "+thriftwire.Service+" call: "+name)
			_ = p.WriteMessageBegin(ctx, name, thrift.EXCEPTION, seq)
			_ = ex.Write(ctx, p)
			_ = p.WriteMessageEnd(ctx)
			_ = p.Flush(ctx)
			continue
		}
		if err := f.reply(ctx, p, method, seq, args); err != nil {
			return
		}
	}
}

// callArgs are the fields the register calls send.
type callArgs struct {
	name  string
	index int32
}

func readArgs(ctx context.Context, p thrift.TProtocol) (callArgs, error) {
	var a callArgs
	err := thriftwire.ReadStruct(ctx, p, func(id int16, ft thrift.TType) (bool, error) {
		var err error
		switch {
		case id == 2 && ft == thrift.STRING:
			a.name, err = p.ReadString(ctx)
		case id == 3 && ft == thrift.I32:
			a.index, err = p.ReadI32(ctx)
		default:
			return false, nil
		}
		return true, err
	})
	return a, err
}

func (f *Fake) reply(ctx context.Context, p thrift.TProtocol, method string, seq int32, a callArgs) error {
	f.mu.Lock()
	cells, known := f.regs[a.name]
	var code int32
	var result func() error
	switch {
	case method != "bm_register_read" && method != "bm_register_read_all" && method != "bm_register_reset":
		f.mu.Unlock()
		ex := thrift.NewTApplicationException(thrift.UNKNOWN_METHOD, "the fake serves register calls only: "+method)
		if err := p.WriteMessageBegin(ctx, method, thrift.EXCEPTION, seq); err != nil {
			return err
		}
		if err := ex.Write(ctx, p); err != nil {
			return err
		}
		if err := p.WriteMessageEnd(ctx); err != nil {
			return err
		}
		return p.Flush(ctx)
	case !known:
		code = 1
	case method == "bm_register_read":
		if a.index < 0 || int(a.index) >= len(cells) {
			code = 2
			break
		}
		v := cells[a.index]
		result = func() error { return writeField0I64(ctx, p, v) }
	case method == "bm_register_read_all":
		vals := append([]uint64(nil), cells...)
		result = func() error {
			if err := p.WriteFieldBegin(ctx, "success", thrift.LIST, 0); err != nil {
				return err
			}
			if err := p.WriteListBegin(ctx, thrift.I64, len(vals)); err != nil {
				return err
			}
			for _, v := range vals {
				if err := p.WriteI64(ctx, int64(v)); err != nil {
					return err
				}
			}
			if err := p.WriteListEnd(ctx); err != nil {
				return err
			}
			return p.WriteFieldEnd(ctx)
		}
	case method == "bm_register_reset":
		clear(cells)
	}
	f.mu.Unlock()

	if err := p.WriteMessageBegin(ctx, method, thrift.REPLY, seq); err != nil {
		return err
	}
	if err := p.WriteStructBegin(ctx, method+"_result"); err != nil {
		return err
	}
	switch {
	case code != 0:
		if err := p.WriteFieldBegin(ctx, "ouch", thrift.STRUCT, 1); err != nil {
			return err
		}
		if err := p.WriteStructBegin(ctx, "InvalidRegisterOperation"); err != nil {
			return err
		}
		if err := thriftwire.WriteI32(ctx, p, 1, code); err != nil {
			return err
		}
		if err := p.WriteFieldStop(ctx); err != nil {
			return err
		}
		if err := p.WriteStructEnd(ctx); err != nil {
			return err
		}
		if err := p.WriteFieldEnd(ctx); err != nil {
			return err
		}
	case result != nil:
		if err := result(); err != nil {
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
	return p.Flush(ctx)
}

func writeField0I64(ctx context.Context, p thrift.TProtocol, v uint64) error {
	if err := p.WriteFieldBegin(ctx, "success", thrift.I64, 0); err != nil {
		return err
	}
	if err := p.WriteI64(ctx, int64(v)); err != nil {
		return err
	}
	return p.WriteFieldEnd(ctx)
}
