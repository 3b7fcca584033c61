// Package p4rttest runs a P4Runtime switch in-process for tests: the
// P4Runtime server (pkg/dataplane/p4rtserver) over an in-memory gRPC
// connection (bufconn) or a loopback TCP port, in front of the generic
// match-action engine (pkg/dataplane/engine) loaded with a P4Info — by
// default the p4ctl program's — or in front of any Target you pass.
//
//	c, sw := p4rttest.New(t)                   // primary client, p4ctl P4Info
//	backup := sw.Dial(t, p4rt.WithElectionID(p4rt.Election(0)))
//
// Everything is torn down with t.Cleanup.
package p4rttest

import (
	"context"
	"testing"
	"time"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	"google.golang.org/grpc"

	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/dataplane/engine"
	"github.com/p4ctl/p4ctl/pkg/dataplane/p4info"
	"github.com/p4ctl/p4ctl/pkg/dataplane/p4rtserver"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// Option configures the fake switch.
type Option func(*config)

type config struct {
	target      p4rtserver.Target
	info        *p4configv1.P4Info
	noPipeline  bool
	tcp         bool
	serverOpts  []p4rtserver.Option
	clientOpts  []p4rt.Option
	noArbitrate bool
}

// WithTarget serves target instead of a fresh engine (e.g. the embedded
// p4ctl switch from pkg/dataplane).
func WithTarget(t p4rtserver.Target) Option { return func(c *config) { c.target = t } }

// WithP4Info loads the engine with info instead of the p4ctl program's
// P4Info.
func WithP4Info(info *p4configv1.P4Info) Option { return func(c *config) { c.info = info } }

// WithoutPipeline starts the engine with no pipeline, like
// simple_switch_grpc --no-p4: the client must SetPipeline first.
func WithoutPipeline() Option { return func(c *config) { c.noPipeline = true } }

// WithTCP serves on 127.0.0.1 (a free port; Switch.Addr) instead of bufconn,
// for code under test that dials an address itself.
func WithTCP() Option { return func(c *config) { c.tcp = true } }

// WithServerOptions passes options to the P4Runtime server.
func WithServerOptions(opts ...p4rtserver.Option) Option {
	return func(c *config) { c.serverOpts = append(c.serverOpts, opts...) }
}

// WithClientOptions passes options to the client New returns (after the
// defaults: device 1, election id 1, the switch's P4Info).
func WithClientOptions(opts ...p4rt.Option) Option {
	return func(c *config) { c.clientOpts = append(c.clientOpts, opts...) }
}

// WithoutArbitration makes New return a client that has not opened its
// StreamChannel (so it is neither primary nor backup yet).
func WithoutArbitration() Option { return func(c *config) { c.noArbitrate = true } }

// ProgramP4Info is the P4Info of the p4ctl program (pipeline.Schema with
// p4c's ids), the default of the fake switch.
func ProgramP4Info() *p4configv1.P4Info { return p4info.FromSchema(pipeline.Schema()) }

// Switch is a running in-process P4Runtime switch.
type Switch struct {
	Server *p4rtserver.Server
	Target p4rtserver.Target
	// Engine is the default target, nil when WithTarget was given.
	Engine *engine.Engine

	embedded *dataplane.Embedded
}

// Start runs a switch until the test ends.
func Start(t testing.TB, opts ...Option) *Switch {
	t.Helper()
	var cfg config
	for _, f := range opts {
		f(&cfg)
	}
	sw := &Switch{Target: cfg.target}
	if sw.Target == nil {
		sw.Engine = engine.New(engine.Options{})
		if !cfg.noPipeline {
			info := cfg.info
			if info == nil {
				info = ProgramP4Info()
			}
			if err := sw.Engine.SetPipelineInfo(info); err != nil {
				t.Fatalf("p4rttest: load P4Info into the engine: %v", err)
			}
		}
		sw.Target = sw.Engine
	}
	so := dataplane.ServeOptions{BufferSize: 256 << 10, Server: cfg.serverOpts}
	if cfg.tcp {
		so.Addr = "127.0.0.1:0"
	}
	e, err := dataplane.Serve(sw.Target, so)
	if err != nil {
		t.Fatalf("p4rttest: %v", err)
	}
	sw.Server, sw.embedded = e.Server, e
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = e.Shutdown(ctx)
		<-e.Done()
	})
	return sw
}

// Addr is the TCP address of a switch started WithTCP ("" otherwise).
func (s *Switch) Addr() string { return s.embedded.Addr() }

// Conn returns a new gRPC connection to the switch, closed at cleanup.
func (s *Switch) Conn(t testing.TB) *grpc.ClientConn {
	t.Helper()
	cc, err := s.embedded.Conn()
	if err != nil {
		t.Fatalf("p4rttest: %v", err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

// Dial returns a new client (device 1, no election id unless given, the
// switch's P4Info when it has one) without arbitrating; it is closed at
// cleanup.
func (s *Switch) Dial(t testing.TB, opts ...p4rt.Option) *p4rt.Client {
	t.Helper()
	base := []p4rt.Option{}
	if info := s.Target.P4Info(); info != nil {
		base = append(base, p4rt.WithP4Info(info))
	}
	c, err := p4rt.NewClient(s.Conn(t), append(base, opts...)...)
	if err != nil {
		t.Fatalf("p4rttest: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// New starts a switch and returns a client that is its primary (election
// id 1), plus the switch.
func New(t testing.TB, opts ...Option) (*p4rt.Client, *Switch) {
	t.Helper()
	var cfg config
	for _, f := range opts {
		f(&cfg)
	}
	sw := Start(t, opts...)
	c := sw.Dial(t, append([]p4rt.Option{p4rt.WithElectionID(p4rt.Election(1))}, cfg.clientOpts...)...)
	if !cfg.noArbitrate {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		st, err := c.Arbitrate(ctx)
		if err != nil {
			t.Fatalf("p4rttest: arbitrate: %v", err)
		}
		if !st.Primary && !c.ElectionID().IsZero() {
			t.Fatalf("p4rttest: client is not primary: %v", st)
		}
	}
	return c, sw
}
