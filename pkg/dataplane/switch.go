// Package dataplane is p4ctl's embedded target: the Go model of the p4ctl P4
// program (pkg/dataplane/program) on a generic P4Runtime match-action engine
// (pkg/dataplane/engine), with packet I/O. A Switch implements
// p4rtserver.Target, so the P4Runtime server (pkg/dataplane/p4rtserver) can
// serve it to any controller exactly as BMv2 would be served; tests and the
// demo use it in-process.
//
//	sw, err := dataplane.New(dataplane.Options{})
//	// install entries: sw.Write(ctx, updates, p4v1.WriteRequest_CONTINUE_ON_ERROR)
//	out := sw.Inject(1, frame) // out.Verdict, out.Port, out.Frame
//	pk, by, err := sw.CounterValue(pipeline.CounterDispatchEvents, uint64(pipeline.EventHold))
package dataplane

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/p4ctl/p4ctl/pkg/dataplane/engine"
	"github.com/p4ctl/p4ctl/pkg/dataplane/p4info"
	"github.com/p4ctl/p4ctl/pkg/dataplane/p4rtserver"
	"github.com/p4ctl/p4ctl/pkg/dataplane/program"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// DefaultCPUPort is the port whose traffic is exchanged with the controller
// (PacketOut enters the pipeline on it; frames sent to it become PacketIn).
const DefaultCPUPort = 510

// Options configure a Switch. The zero value is a switch running the p4ctl
// program with its default P4Info, a real-time clock and CPU port 510.
type Options struct {
	// P4Info to install at start; nil means DefaultP4Info().
	P4Info *p4configv1.P4Info
	// NoPipeline starts the switch without a pipeline, like
	// simple_switch_grpc --no-p4: the controller must call
	// SetForwardingPipelineConfig first, and packets are dropped until then.
	NoPipeline bool
	// Clock returns the time in µs; nil means µs since New (as BMv2's
	// ingress_global_timestamp). Tests inject a fake clock for credit TTLs.
	Clock program.Clock
	// CPUPort overrides DefaultCPUPort.
	CPUPort uint32
	// StrictBytestrings rejects zero-padded P4Runtime bytestrings.
	StrictBytestrings bool
	// Datapath starts what runs the packets; nil means GoModel. The XDP
	// program is pkg/dataplane/xdp.
	Datapath NewDatapath
	// Log receives the datapath's operational messages; nil discards them.
	Log *slog.Logger
}

// Switch is the embedded p4ctl target. It is safe for concurrent use.
type Switch struct {
	eng     *engine.Engine
	dp      Datapath
	follow  Follower // dp, when it keeps its own copy of the state
	cpuPort uint32
	log     *slog.Logger

	bindErr error // last datapath bind error (under the engine's write lock)
	digests *digester

	outMu   sync.RWMutex
	outs    map[uint64]func(Egress)
	nextOut uint64
}

var (
	_ p4rtserver.Target       = (*Switch)(nil)
	_ p4rtserver.DigestTarget = (*Switch)(nil)
)

// DefaultP4Info returns the P4Info of the p4ctl program: generated from
// pipeline.Schema() with the ids p4c assigns (see pkg/dataplane/p4info).
func DefaultP4Info() *p4configv1.P4Info {
	return p4info.FromSchema(pipeline.Schema())
}

// VerifyP4Info reports whether info describes the program the switch models
// (same names, match kinds and widths); the error lists every difference.
func VerifyP4Info(info *p4configv1.P4Info) error {
	if err := p4info.Check(info, pipeline.Schema(), false); err != nil {
		return status.Errorf(codes.InvalidArgument, "the embedded p4ctl target runs a fixed program: %v", err)
	}
	return nil
}

// schemaDefaults supplies default actions for P4Infos that carry none.
func schemaDefaults(prog pipeline.Program) engine.DefaultsFunc {
	return func(table string) (string, []uint64, bool) {
		t, ok := prog.Table(table)
		if !ok {
			return "", nil, false
		}
		return t.DefaultAction, t.DefaultParams, true
	}
}

// New returns a running switch.
func New(opts Options) (*Switch, error) {
	s := &Switch{cpuPort: opts.CPUPort, outs: map[uint64]func(Egress){}, digests: newDigester(), log: opts.Log}
	if s.cpuPort == 0 {
		s.cpuPort = DefaultCPUPort
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	clock := opts.Clock
	if clock == nil {
		start := time.Now()
		clock = func() uint64 { return uint64(time.Since(start).Microseconds()) }
	}
	s.eng = engine.New(engine.Options{
		StrictBytestrings: opts.StrictBytestrings,
		Verify:            VerifyP4Info,
		Defaults:          schemaDefaults(pipeline.Schema()),
		OnCommit: func(p *engine.Pipeline) {
			s.bindErr = s.dp.Bind(p)
		},
		OnWrite: func(p *engine.Pipeline, ch *engine.Changes) {
			if s.follow == nil {
				return
			}
			if err := s.follow.Apply(p, ch); err != nil {
				s.log.Error("the datapath did not follow a write", "err", err)
			}
		},
		Admit: func(t *engine.Table, e *engine.Entry) error {
			if s.follow == nil {
				return nil
			}
			return s.follow.Admit(t, e)
		},
	})
	start := opts.Datapath
	if start == nil {
		start = GoModel
	}
	dp, err := start(DatapathEnv{Engine: s.eng, Clock: clock, Digest: s.digests.sample, Log: s.log,
		PacketIn: func(frame []byte) { s.eng.EmitPacketIn(&p4v1.PacketIn{Payload: frame}) }})
	if err != nil {
		return nil, fmt.Errorf("start the datapath: %w", err)
	}
	s.dp = dp
	s.follow, _ = dp.(Follower)
	if !opts.NoPipeline {
		info := opts.P4Info
		if info == nil {
			info = DefaultP4Info()
		}
		if err := s.eng.SetPipelineInfo(info); err != nil {
			return nil, fmt.Errorf("start embedded switch: %w", err)
		}
		if err := s.bindError(); err != nil {
			return nil, fmt.Errorf("start embedded switch: %w", err)
		}
	}
	return s, nil
}

func (s *Switch) bindError() error {
	s.eng.Acquire()
	defer s.eng.Release()
	return s.bindErr
}

// P4Info implements p4rtserver.Target.
func (s *Switch) P4Info() *p4configv1.P4Info { return s.eng.P4Info() }

// SetPipeline implements p4rtserver.Target. A P4Info whose names, match
// kinds and widths match the p4ctl program is accepted whatever its ids
// (the model re-binds by name); any other is rejected with INVALID_ARGUMENT
// listing the differences. The device config (BMv2 JSON) is kept, not used.
func (s *Switch) SetPipeline(ctx context.Context, action p4v1.SetForwardingPipelineConfigRequest_Action, cfg *p4v1.ForwardingPipelineConfig) error {
	return s.eng.SetPipeline(ctx, action, cfg)
}

// Pipeline implements p4rtserver.Target.
func (s *Switch) Pipeline() *p4v1.ForwardingPipelineConfig { return s.eng.Pipeline() }

// Write implements p4rtserver.Target. A datapath that keeps its own copy
// of the state applies a batch entry by entry, as BMv2 and Tofino do: it
// refuses DATAPLANE_ATOMIC (UNIMPLEMENTED, as the P4Runtime spec asks of a
// target that cannot provide it); ROLLBACK_ON_ERROR still makes the batch
// all or nothing.
func (s *Switch) Write(ctx context.Context, updates []*p4v1.Update, atomicity p4v1.WriteRequest_Atomicity) []error {
	if s.follow != nil && atomicity == p4v1.WriteRequest_DATAPLANE_ATOMIC {
		errs := make([]error, len(updates))
		for i := range errs {
			errs[i] = status.Error(codes.Unimplemented, "DATAPLANE_ATOMIC: this datapath applies a batch entry by entry; use ROLLBACK_ON_ERROR (all or nothing) or CONTINUE_ON_ERROR")
		}
		return errs
	}
	return s.eng.Write(ctx, updates, atomicity)
}

// Read implements p4rtserver.Target. A datapath that keeps its own
// registers and counters copies them in first.
func (s *Switch) Read(ctx context.Context, e *p4v1.Entity, emit func(*p4v1.Entity) error) error {
	if s.follow != nil {
		switch e.GetEntity().(type) {
		case *p4v1.Entity_CounterEntry, *p4v1.Entity_RegisterEntry:
			p := s.eng.Acquire()
			err := s.sync(p, "", -1)
			s.eng.Release()
			if err != nil {
				return err
			}
		}
	}
	return s.eng.Read(ctx, e, emit)
}

// SubscribePacketIn implements p4rtserver.Target: fn receives every frame the
// pipeline sends to the CPU port.
func (s *Switch) SubscribePacketIn(fn func(*p4v1.PacketIn)) (unsubscribe func()) {
	return s.eng.SubscribePacketIn(fn)
}

// PacketOut implements p4rtserver.Target: the payload enters the pipeline on
// the CPU port (the program declares no packet_out header, so metadata must
// be empty). A Transmitter with ports sends it out of them; otherwise it
// goes through Inject. The Switch handles it itself, not through the
// engine's PacketOut hook.
func (s *Switch) PacketOut(ctx context.Context, p *p4v1.PacketOut) error {
	if err := ctx.Err(); err != nil {
		return status.FromContextError(err).Err()
	}
	if len(p.GetMetadata()) > 0 {
		return status.Error(codes.InvalidArgument, "the p4ctl program declares no packet_out header: PacketOut metadata must be empty")
	}
	if tx, ok := s.dp.(Transmitter); ok {
		err := tx.Transmit(p.GetPayload(), s.cpuPort)
		if !errors.Is(err, ErrNoPorts) {
			if err != nil {
				return status.Errorf(codes.Internal, "PacketOut: %v", err)
			}
			return nil
		}
	}
	s.Inject(s.cpuPort, p.GetPayload())
	return nil
}

// Egress is a frame leaving the switch.
type Egress struct {
	Port  uint32
	Frame []byte // owned by the receiver
	Nack  bool   // a request turned into a nack
}

// OnEgress registers fn to receive every frame leaving a front-panel port
// (frames to the CPU port go to PacketIn subscribers instead). fn is called
// synchronously from Inject; the returned function unregisters it.
func (s *Switch) OnEgress(fn func(Egress)) (cancel func()) {
	s.outMu.Lock()
	id := s.nextOut
	s.nextOut++
	s.outs[id] = fn
	s.outMu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.outMu.Lock()
			delete(s.outs, id)
			s.outMu.Unlock()
		})
	}
}

// Output is the outcome of an injected frame.
type Output struct {
	program.Result
	Frame []byte // the frame as it left (nil when dropped)
}

// Inject runs a copy of frame, received on inPort, through the pipeline and
// delivers the result: to OnEgress listeners, or to PacketIn subscribers
// when it leaves on the CPU port. It returns the outcome too.
func (s *Switch) Inject(inPort uint32, frame []byte) Output {
	buf := append([]byte(nil), frame...)
	res := s.dp.Process(buf, inPort)
	out := Output{Result: res}
	if res.Verdict == program.Dropped {
		return out
	}
	out.Frame = buf
	if res.Port == s.cpuPort {
		s.eng.EmitPacketIn(&p4v1.PacketIn{Payload: append([]byte(nil), buf...)})
		return out
	}
	s.outMu.RLock()
	fns := make([]func(Egress), 0, len(s.outs))
	for _, fn := range s.outs {
		fns = append(fns, fn)
	}
	s.outMu.RUnlock()
	// Listeners run without the lock: they may inject (a host answering) or
	// register other listeners.
	for _, fn := range fns {
		fn(Egress{Port: res.Port, Frame: append([]byte(nil), buf...), Nack: res.Verdict == program.Nacked})
	}
	return out
}

// Process runs frame, received on inPort, through the pipeline, rewriting it
// in place, without delivering it anywhere: the allocation-free path for
// benchmarks and for callers that route frames themselves.
func (s *Switch) Process(frame []byte, inPort uint32) program.Result {
	return s.dp.Process(frame, inPort)
}

// sync copies the datapath's registers and counters into p (a no-op for
// the Go model, whose state is p's): name's ("" every one's) cells at
// index (-1 every cell). Called with the engine's read lock.
func (s *Switch) sync(p *engine.Pipeline, name string, index int64) error {
	if s.follow == nil || p == nil {
		return nil
	}
	if err := s.follow.Sync(p, name, index); err != nil {
		return status.Errorf(codes.Internal, "read the datapath's registers and counters: %v", err)
	}
	return nil
}

// CounterValue reads cell index of the named indirect counter.
func (s *Switch) CounterValue(name string, index uint64) (packets, bytes uint64, err error) {
	p := s.eng.Acquire()
	defer s.eng.Release()
	if p == nil {
		return 0, 0, fmt.Errorf("counter %s: no pipeline", name)
	}
	if err := s.sync(p, name, int64(index)); err != nil {
		return 0, 0, err
	}
	c, err := p.Counter(name)
	if err != nil {
		return 0, 0, err
	}
	if index >= uint64(c.Size) {
		return 0, 0, fmt.Errorf("counter %s: index %d out of range (size %d)", name, index, c.Size)
	}
	packets, bytes = c.Get(index)
	return packets, bytes, nil
}

// RegisterValue reads cell index of the named register.
func (s *Switch) RegisterValue(name string, index uint64) (uint64, error) {
	p := s.eng.Acquire()
	defer s.eng.Release()
	if p == nil {
		return 0, fmt.Errorf("register %s: no pipeline", name)
	}
	if err := s.sync(p, name, int64(index)); err != nil {
		return 0, err
	}
	r, err := p.Register(name)
	if err != nil {
		return 0, err
	}
	if index >= uint64(r.Size) {
		return 0, fmt.Errorf("register %s: index %d out of range (size %d)", name, index, r.Size)
	}
	return r.Read(index), nil
}

// CPUPort returns the switch's CPU port.
func (s *Switch) CPUPort() uint32 { return s.cpuPort }

// Left describes what the switch holds, all of it in memory, for the line
// a stopping switch prints: it goes with the process.
func (s *Switch) Left() string {
	if s.eng.P4Info() == nil {
		return "no pipeline, nothing held"
	}
	n := 0
	_ = s.eng.Read(context.Background(), &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{}}},
		func(*p4v1.Entity) error { n++; return nil })
	return fmt.Sprintf("the pipeline, %d table entries and every counter and register were in memory and are gone (controllers re-push them to the next switch: p4ctl run does, p4ctl apply once)", n)
}

// Close stops the datapath (the XDP program detaches from its interfaces;
// the Go model has nothing to stop). The switch must not be used after.
func (s *Switch) Close() error {
	if c, ok := s.dp.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}
