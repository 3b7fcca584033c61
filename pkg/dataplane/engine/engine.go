// Package engine is a generic P4Runtime match-action engine: built from any
// P4Info (p4.config.v1), it holds table entries with exact, LPM, ternary,
// range and optional matches, default actions, direct and indirect counters
// and registers, applies P4Runtime Write and Read requests with the spec's
// semantics and error codes, and offers a zero-allocation lookup path for a
// program model running packets through it.
//
// Engine implements p4rtserver.Target, so it can sit behind the P4Runtime
// server on its own (as a generic table store) or inside the embedded p4ctl
// switch (pkg/dataplane), which adds the program model and packet I/O.
//
// Concurrency: control-plane writes take the engine's write lock; reads and
// packets take the read lock (Acquire/Release). Counters and registers are
// updated atomically, so reading them never blocks packets for long.
// Every key field, action parameter and register cell must be at most 64
// bits wide (MaxWidth).
package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// Options configure an Engine. The zero value is a generic table store.
type Options struct {
	// StrictBytestrings rejects zero-padded bytestrings with INVALID_ARGUMENT.
	// By default they are accepted, as the P4Runtime spec ("Bytestrings")
	// requires; reads always return the canonical (shortest) form.
	StrictBytestrings bool

	// Verify, when set, is called on every P4Info given to SetPipeline
	// before it is compiled; an error rejects the config (a status error is
	// returned as is, any other error as INVALID_ARGUMENT).
	Verify func(*p4configv1.P4Info) error

	// Defaults supplies initial default actions for tables whose P4Info has
	// neither initial_default_action nor const_default_action_id.
	Defaults DefaultsFunc

	// OnCommit, when set, is called with the new pipeline while the engine's
	// write lock is held, after it was installed and before any packet or
	// request sees it: the place to resolve typed handles by name.
	OnCommit func(*Pipeline)

	// PacketOut handles PacketOut messages from the controller. When nil,
	// PacketOut returns UNIMPLEMENTED.
	PacketOut func(ctx context.Context, p *p4v1.PacketOut) error

	// OnWrite, when set, is called with the pipeline and the net changes of
	// every Write batch that changed something, while the write lock is
	// held (after a failed atomic batch was undone): the place for a
	// datapath that keeps its own copy of the state to follow it.
	OnWrite func(*Pipeline, *Changes)

	// Admit, when set, is asked before an entry is inserted (e is complete
	// but not yet in t). An error refuses the insert and is the update's
	// error: a status error as is (RESOURCE_EXHAUSTED for a datapath's
	// limit), any other as INVALID_ARGUMENT.
	Admit func(t *Table, e *Entry) error
}

// Engine is the P4Runtime-facing state of a target. It is safe for
// concurrent use.
type Engine struct {
	opts Options

	mu    sync.RWMutex
	cur   *Pipeline
	saved *p4v1.ForwardingPipelineConfig

	subMu   sync.RWMutex
	subs    map[uint64]func(*p4v1.PacketIn)
	nextSub uint64
}

// New returns an engine with no pipeline.
func New(opts Options) *Engine {
	return &Engine{opts: opts, subs: map[uint64]func(*p4v1.PacketIn){}}
}

// Acquire takes the engine's read lock and returns the current pipeline (nil
// when none is set). The packet path calls it once per pass and must call
// Release when done; tables, counters and registers of the returned pipeline
// may be used until then.
func (e *Engine) Acquire() *Pipeline {
	e.mu.RLock()
	return e.cur
}

// Release releases the read lock taken by Acquire.
func (e *Engine) Release() { e.mu.RUnlock() }

// P4Info returns the running pipeline's P4Info (read-only), or nil.
func (e *Engine) P4Info() *p4configv1.P4Info {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.cur == nil {
		return nil
	}
	return e.cur.info
}

// Pipeline returns the running pipeline config (read-only), or nil.
func (e *Engine) Pipeline() *p4v1.ForwardingPipelineConfig {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.cur == nil {
		return nil
	}
	return e.cur.config
}

func ctxErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return status.FromContextError(err).Err()
	}
	return nil
}

// build verifies and compiles cfg (cloned: the caller may reuse its message).
func (e *Engine) build(cfg *p4v1.ForwardingPipelineConfig) (*Pipeline, error) {
	if cfg == nil || cfg.GetP4Info() == nil {
		return nil, invalid("SetForwardingPipelineConfig: config has no p4info")
	}
	cfg = proto.Clone(cfg).(*p4v1.ForwardingPipelineConfig)
	if e.opts.Verify != nil {
		if err := e.opts.Verify(cfg.GetP4Info()); err != nil {
			if _, ok := status.FromError(err); ok {
				return nil, err
			}
			return nil, invalid("p4info rejected: %v", err)
		}
	}
	p, err := compile(cfg, e.opts.StrictBytestrings, e.opts.Defaults)
	if err != nil {
		return nil, err
	}
	p.admit = e.opts.Admit
	return p, nil
}

// SetPipeline implements p4rtserver.Target: VERIFY compiles only;
// VERIFY_AND_SAVE keeps the config for a later COMMIT; VERIFY_AND_COMMIT
// installs it with empty state; RECONCILE_AND_COMMIT installs it keeping the
// entries, default actions, counters and registers whose names, match kinds
// and widths carry over (and fails with FAILED_PRECONDITION if some state
// cannot be carried); COMMIT installs the saved config.
func (e *Engine) SetPipeline(ctx context.Context, action p4v1.SetForwardingPipelineConfigRequest_Action, cfg *p4v1.ForwardingPipelineConfig) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	switch action {
	case p4v1.SetForwardingPipelineConfigRequest_VERIFY:
		_, err := e.build(cfg)
		return err
	case p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_SAVE:
		p, err := e.build(cfg)
		if err != nil {
			return err
		}
		e.mu.Lock()
		e.saved = p.config
		e.mu.Unlock()
		return nil
	case p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT:
		p, err := e.build(cfg)
		if err != nil {
			return err
		}
		e.mu.Lock()
		defer e.mu.Unlock()
		e.install(p)
		return nil
	case p4v1.SetForwardingPipelineConfigRequest_COMMIT:
		e.mu.Lock()
		saved := e.saved
		e.mu.Unlock()
		if saved == nil {
			return status.Error(codes.NotFound, "COMMIT: no config was saved with VERIFY_AND_SAVE")
		}
		p, err := e.build(saved)
		if err != nil {
			return err
		}
		e.mu.Lock()
		defer e.mu.Unlock()
		e.saved = nil
		e.install(p)
		return nil
	case p4v1.SetForwardingPipelineConfigRequest_RECONCILE_AND_COMMIT:
		p, err := e.build(cfg)
		if err != nil {
			return err
		}
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.cur != nil {
			if err := transfer(e.cur, p); err != nil {
				return status.Errorf(codes.FailedPrecondition, "RECONCILE_AND_COMMIT: %v", err)
			}
			p.carried = true
		}
		e.install(p)
		return nil
	}
	return invalid("SetForwardingPipelineConfig: unsupported action %v", action)
}

// SetPipelineInfo installs info with empty state (VERIFY_AND_COMMIT), for
// callers that have a P4Info rather than a full config.
func (e *Engine) SetPipelineInfo(info *p4configv1.P4Info) error {
	return e.SetPipeline(context.Background(), p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT,
		&p4v1.ForwardingPipelineConfig{P4Info: info})
}

// install must be called with the write lock held.
func (e *Engine) install(p *Pipeline) {
	e.cur = p
	if e.opts.OnCommit != nil {
		e.opts.OnCommit(p)
	}
}

// noPipeline is the error of every state operation before SetPipeline.
func noPipeline() error {
	return status.Error(codes.FailedPrecondition, "no forwarding pipeline config has been set")
}

// PacketOut implements p4rtserver.Target.
func (e *Engine) PacketOut(ctx context.Context, p *p4v1.PacketOut) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	if e.opts.PacketOut == nil {
		return status.Error(codes.Unimplemented, "this target does not process packets")
	}
	return e.opts.PacketOut(ctx, p)
}

// SubscribePacketIn implements p4rtserver.Target.
func (e *Engine) SubscribePacketIn(fn func(*p4v1.PacketIn)) (unsubscribe func()) {
	e.subMu.Lock()
	id := e.nextSub
	e.nextSub++
	e.subs[id] = fn
	e.subMu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			e.subMu.Lock()
			delete(e.subs, id)
			e.subMu.Unlock()
		})
	}
}

// EmitPacketIn delivers p to every PacketIn subscriber and reports how many
// received it.
func (e *Engine) EmitPacketIn(p *p4v1.PacketIn) int {
	e.subMu.RLock()
	defer e.subMu.RUnlock()
	for _, fn := range e.subs {
		fn(p)
	}
	return len(e.subs)
}

// errUnimplemented is returned for entity kinds the engine does not hold.
func errUnimplemented(kind string) error {
	return status.Errorf(codes.Unimplemented, "%s is not supported by the embedded target", kind)
}

// transfer copies the state of old into p where names, kinds and widths
// carry over. Called with the write lock held; p is not yet visible.
func transfer(old, p *Pipeline) error {
	var errs []error
	for _, ot := range old.tables {
		nt, ok := p.tablesByName[ot.Name]
		if !ok {
			if len(ot.entries) > 0 {
				errs = append(errs, fmt.Errorf("table %s (%d entries) is not in the new p4info", ot.Name, len(ot.entries)))
			}
			continue
		}
		if err := transferTable(old, ot, p, nt); err != nil {
			errs = append(errs, err)
		}
	}
	for _, oc := range old.counters {
		if nc, ok := p.counterByName[oc.Name]; ok && nc.Size == oc.Size {
			copy(nc.cells, oc.cells)
		}
	}
	for _, or := range old.registers {
		if nr, ok := p.registerNames[or.Name]; ok && nr.Size == or.Size && nr.Width >= or.Width {
			copy(nr.cells, or.cells)
		}
	}
	for _, od := range old.digests {
		if nd, ok := p.digestNames[od.Name]; ok {
			nd.cfg.Store(od.cfg.Load())
		}
	}
	return errors.Join(errs...)
}

func transferTable(old *Pipeline, ot *Table, p *Pipeline, nt *Table) error {
	if len(ot.fields) != len(nt.fields) {
		return fmt.Errorf("table %s: key changed", ot.Name)
	}
	perm := make([]int, len(ot.fields)) // old field index -> new field index
	for i, of := range ot.fields {
		found := false
		for j, nf := range nt.fields {
			if nf.name == of.name && nf.kind == of.kind && nf.width == of.width {
				perm[i], found = j, true
			}
		}
		if !found {
			return fmt.Errorf("table %s: key field %s changed", ot.Name, of.name)
		}
	}
	mapCall := func(a ActionCall) (ActionCall, error) {
		oa := old.actions[a.ID]
		if oa == nil {
			return ActionCall{}, nil
		}
		na := p.actionsByName[oa.name]
		if na == nil || len(na.params) != len(oa.params) {
			return ActionCall{}, fmt.Errorf("table %s: action %s changed", ot.Name, oa.name)
		}
		if _, ok := nt.refs[na.id]; !ok {
			return ActionCall{}, fmt.Errorf("table %s: action %s no longer allowed", ot.Name, oa.name)
		}
		out := ActionCall{ID: na.id, Params: make([]uint64, len(na.params))}
		for i, prm := range oa.params {
			j := -1
			for k, q := range na.params {
				if q.name == prm.name && q.width >= prm.width {
					j = k
				}
			}
			if j < 0 {
				return ActionCall{}, fmt.Errorf("table %s: action %s param %s changed", ot.Name, oa.name, prm.name)
			}
			out.Params[j] = a.Params[i]
		}
		return out, nil
	}
	// In insertion order, so that between entries of equal priority the
	// one that won before still wins.
	olds := make([]*Entry, 0, len(ot.entries))
	for _, oe := range ot.entries {
		olds = append(olds, oe)
	}
	sort.Slice(olds, func(i, j int) bool { return olds[i].seq < olds[j].seq })
	for _, oe := range olds {
		call, err := mapCall(oe.Action)
		if err != nil {
			return err
		}
		ne := &Entry{Action: call, priority: oe.priority, controllerMetadata: oe.controllerMetadata,
			metadata: oe.metadata, idleTimeoutNs: oe.idleTimeoutNs, counter: oe.counter,
			match: make([]fieldMatch, len(nt.fields))}
		for i, m := range oe.match {
			ne.match[perm[i]] = m
		}
		ne.key = entryKey(ne.match, ne.priority)
		nt.insert(ne)
	}
	if !nt.constDefault {
		call, err := mapCall(ot.def.Action)
		if err != nil {
			return err
		}
		if call.ID != 0 {
			nt.def.Action = call
		}
	}
	nt.def.counter = ot.def.counter
	return nil
}
