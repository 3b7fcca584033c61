// Package p4rtserver is a P4Runtime gRPC server (p4.v1.P4Runtime) in front of
// any Target: the embedded p4ctl data plane, or a generic table store used as
// an in-process fake in tests. The server owns everything that is protocol:
// stream arbitration (device id, election id, role, primary-only writes),
// batching, per-update p4.v1.Error details, message limits; the Target owns
// the state: entries, matching, counters, registers and packets.
package p4rtserver

import (
	"context"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
)

// Target is the switch state behind the server. Implementations must be safe
// for concurrent use. Errors are gRPC status errors (google.golang.org/grpc/
// status) with the P4Runtime-specified codes: ALREADY_EXISTS on a duplicate
// INSERT, NOT_FOUND on MODIFY/DELETE of a missing entry, INVALID_ARGUMENT on
// malformed entities (unknown ids, bad widths, non-canonical bytestrings,
// missing priority), RESOURCE_EXHAUSTED when a table is full,
// FAILED_PRECONDITION when no pipeline is set, UNIMPLEMENTED for unsupported
// entity kinds.
type Target interface {
	// P4Info returns the running pipeline's P4Info, or nil when none is set.
	P4Info() *p4configv1.P4Info

	// SetPipeline validates (VERIFY) or installs (VERIFY_AND_COMMIT,
	// RECONCILE_AND_COMMIT, COMMIT) a pipeline config. A target that runs a
	// fixed program rejects a P4Info that does not match it.
	SetPipeline(ctx context.Context, action p4v1.SetForwardingPipelineConfigRequest_Action, cfg *p4v1.ForwardingPipelineConfig) error

	// Pipeline returns the current config (for GetForwardingPipelineConfig).
	Pipeline() *p4v1.ForwardingPipelineConfig

	// Write applies updates in order and returns one error per update (nil
	// for success); the slice has len(updates) elements. With atomicity
	// ROLLBACK_ON_ERROR or DATAPLANE_ATOMIC the batch is all-or-nothing: if
	// any update fails none is applied, and the updates that would have
	// succeeded report codes.Aborted.
	Write(ctx context.Context, updates []*p4v1.Update, atomicity p4v1.WriteRequest_Atomicity) []error

	// Read calls emit for every entity matching e, which may be a wildcard
	// as the P4Runtime spec defines (table_id 0 = all tables, empty match =
	// all entries of the table, index unset = all cells, ...).
	Read(ctx context.Context, e *p4v1.Entity, emit func(*p4v1.Entity) error) error

	// PacketOut injects a packet sent by the controller.
	PacketOut(ctx context.Context, p *p4v1.PacketOut) error

	// SubscribePacketIn registers fn to receive packets the pipeline sends to
	// the controller; the returned function unsubscribes.
	SubscribePacketIn(fn func(*p4v1.PacketIn)) (unsubscribe func())
}
