// Package p4rt is p4ctl's P4Runtime client (p4lang/p4runtime v1.5 protos
// over gRPC). It knows nothing of carbon or routing: it speaks P4Runtime to
// BMv2, Tofino or the embedded target, by P4Info names.
//
// Connecting and arbitration:
//
//	c, err := p4rt.Dial("127.0.0.1:9559", p4rt.WithElectionID(p4rt.Election(1)))
//	st, err := c.Arbitrate(ctx)          // opens the StreamChannel; st.Primary
//	for st := range c.StateChanges() {}  // EventLostPrimary, EventReconnected, ...
//
// Plaintext is allowed only to loopback; use WithTLS (CA, client cert/key
// for mTLS, server name) otherwise. Every call gets a deadline
// (WithCallTimeout) when its context has none. A broken stream is re-opened
// with backoff, re-arbitrated, and WithResync's hook runs. A duplicate
// election id is an *ArbitrationError that says so.
//
// Names and encoding: an Index (NewIndex, Client.Index) resolves full or
// short names to ids and never returns id 0 for an unknown name; an
// EntryBuilder encodes match fields and action parameters from Go values
// (integers, net.IP, net.HardwareAddr, []byte) into canonical bytestrings
// with width checks:
//
//	e, err := idx.TableEntry("carbon_rank").Exact("epoch", 1).
//		Ternary("feasible", uint32(8), uint32(8)).Priority(30).
//		Action("route_to_region", p4rt.Param("region", 3)).Build()
//
// DecodeTableEntry turns entries back into names (Entry, with JSON tags).
//
// Writing: Client.Write splits updates into batches (DefaultBatchSize 500;
// see the constant for the figure) sent in order, with an atomicity option;
// failures are a *WriteError listing each failed update by index, operation,
// entity and canonical code; errors.Is(err, p4rt.ErrAlreadyExists) and
// p4rt.Code(err) work on it. ApplyRetrySafe re-applies after a restart
// without failing on ALREADY_EXISTS (→ MODIFY) or NOT_FOUND on DELETE.
// Reconcile / PlanReconcile read the switch back and compute the minimal
// INSERT → MODIFY → DELETE Plan; PlanRequests + FormatWriteRequests print
// it as a dry run.
//
// Reading: ReadTableEntries (one table, or all), ReadEntry, ReadDefaultEntry,
// ReadCounter, ReadDirectCounters, ReadRegister (and WriteRegister, where
// the target supports it), GetPipeline / SetPipeline (VERIFY,
// VERIFY_AND_COMMIT, RECONCILE_AND_COMMIT, COMMIT), Capabilities.
// Stream: PacketIns, SendPacketOut (BuildPacketOut by metadata names),
// Digests + AckDigest, StreamErrors.
//
// Tests use p4rttest (an in-process switch over bufconn) and the
// conformance suite checks any switch against the specification.
package p4rt
