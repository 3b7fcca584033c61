package dataplane

import (
	"errors"
	"log/slog"

	"github.com/p4ctl/p4ctl/pkg/dataplane/engine"
	"github.com/p4ctl/p4ctl/pkg/dataplane/program"
)

// Datapath runs the p4ctl program's packets for a Switch. The Switch keeps
// the P4Runtime state in its engine (entries, default actions, digest
// configuration, the P4Info); a datapath either reads the engine's tables
// and registers directly (the Go model, the default) or follows them into a
// copy of its own (the XDP program's BPF maps, pkg/dataplane/xdp, which also
// implements Follower).
type Datapath interface {
	// Bind is called with every pipeline the engine installs, under the
	// engine's write lock, before any packet or request sees it. An error
	// leaves the switch dropping every packet (NoPipeline).
	Bind(p *engine.Pipeline) error
	// Process runs frame, received on inPort, through the program, rewriting
	// it in place, and returns the outcome after every pass (a recirculated
	// request is run again until it is bound, nacked or dropped).
	Process(frame []byte, inPort uint32) program.Result
}

// Follower is implemented by a datapath that keeps its own copy of the
// switch state.
type Follower interface {
	// Admit is asked before an entry is inserted; an error (a status error,
	// RESOURCE_EXHAUSTED for a limit of the datapath's representation)
	// refuses it.
	Admit(t *engine.Table, e *engine.Entry) error
	// Apply follows the net changes of a committed Write batch; it is called
	// under the engine's write lock.
	Apply(p *engine.Pipeline, ch *engine.Changes) error
	// Sync copies what the data plane writes (registers, counters) into p's
	// cells, before the controller reads them: those of the register or
	// counter named name ("" for every one), at index (-1 for every cell).
	Sync(p *engine.Pipeline, name string, index int64) error
}

// Transmitter is implemented by a datapath whose ports are real interfaces:
// a PacketOut then enters the program on the CPU port and leaves on the
// wire, instead of being run by Process and handed to OnEgress listeners.
type Transmitter interface {
	// Transmit runs frame from inPort through the program and sends what
	// it decides out of the datapath's ports. ErrNoPorts means the datapath
	// has none (the Switch falls back to Process).
	Transmit(frame []byte, inPort uint32) error
}

// ErrNoPorts is Transmit's error when a datapath has no attached ports.
var ErrNoPorts = errors.New("datapath has no attached ports")

// DatapathEnv is what a Switch gives the datapath it starts.
type DatapathEnv struct {
	// Engine holds the P4Runtime state.
	Engine *engine.Engine
	// Clock is the switch's pass clock (µs).
	Clock program.Clock
	// Digest receives the program's latency samples (the switch batches
	// them into DigestLists as the controller configured).
	Digest program.DigestSink
	// PacketIn delivers a frame the datapath sent to the CPU port by itself
	// (from the wire, not through Process) to the PacketIn subscribers.
	PacketIn func(frame []byte)
	// Log receives the datapath's operational messages.
	Log *slog.Logger
}

// NewDatapath starts a datapath for a switch; Options.Datapath.
type NewDatapath func(DatapathEnv) (Datapath, error)

// GoModel is the default datapath: the Go model of the program
// (pkg/dataplane/program) on the engine's own tables and registers.
func GoModel(env DatapathEnv) (Datapath, error) {
	return program.New(env.Engine, env.Clock, env.Digest), nil
}
