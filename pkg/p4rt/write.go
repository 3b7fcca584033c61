package p4rt

import (
	"context"
	"fmt"
	"strings"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
)

// WriteOption adjusts one Write.
type WriteOption func(*writeOptions)

type writeOptions struct {
	batch     int
	atomicity p4v1.WriteRequest_Atomicity
}

// WriteBatchSize overrides the client's batch size for one Write.
func WriteBatchSize(n int) WriteOption { return func(o *writeOptions) { o.batch = n } }

// WriteAtomicity sets the atomicity of every batch (default
// CONTINUE_ON_ERROR). Atomicity holds per batch: to make a whole Write
// all-or-nothing, also pass WriteBatchSize(len(updates)).
func WriteAtomicity(a p4v1.WriteRequest_Atomicity) WriteOption {
	return func(o *writeOptions) { o.atomicity = a }
}

func (c *Client) writeOpts(opts []WriteOption) writeOptions {
	o := writeOptions{batch: c.opts.batchSize}
	for _, f := range opts {
		f(&o)
	}
	if o.batch <= 0 {
		o.batch = c.opts.batchSize
	}
	return o
}

// WriteRequests splits updates into the WriteRequests Write would send,
// without sending them (for dry runs).
func (c *Client) WriteRequests(updates []*p4v1.Update, opts ...WriteOption) []*p4v1.WriteRequest {
	o := c.writeOpts(opts)
	var out []*p4v1.WriteRequest
	for start := 0; start < len(updates); start += o.batch {
		end := min(start+o.batch, len(updates))
		out = append(out, &p4v1.WriteRequest{DeviceId: c.opts.deviceID, Role: c.opts.role,
			ElectionId: c.ElectionID().proto(), Updates: updates[start:end], Atomicity: o.atomicity})
	}
	return out
}

// Write sends updates in batches, in order, each batch waiting for the
// previous one (the spec lets a server reorder updates inside a batch, so
// dependent updates belong in different Write calls). With
// CONTINUE_ON_ERROR every batch is sent and all failures are collected;
// with ROLLBACK_ON_ERROR or DATAPLANE_ATOMIC Write stops at the first
// failed batch. Failures are a *WriteError naming each failed update by its
// index in updates, its operation, entity and canonical code;
// errors.Is(err, ErrAlreadyExists) etc. hold when any update failed so.
func (c *Client) Write(ctx context.Context, updates []*p4v1.Update, opts ...WriteOption) error {
	o := c.writeOpts(opts)
	var werr *WriteError
	for b, req := range c.WriteRequests(updates, opts...) {
		offset := b * o.batch
		err := c.writeOne(ctx, req)
		if err == nil {
			continue
		}
		st, _ := status.FromError(err)
		failed, perUpdate := c.decodeDetails(st, req.Updates, offset)
		if werr == nil {
			werr = &WriteError{Batch: b, Total: len(updates), Status: st, Device: c.opts.deviceID, ElectionID: c.ElectionID(), Role: c.opts.role}
		}
		if !perUpdate {
			if len(werr.Failed) == 0 {
				werr.Status = st
			}
			werr.NotAttempted = len(updates) - offset
			if len(werr.Failed) > 0 {
				// earlier batches had per-update failures: report this one as an update error per update
				for i, u := range req.Updates {
					werr.Failed = append(werr.Failed, c.updateError(offset+i, u, st.Code(), st.Message()))
				}
				werr.NotAttempted = len(updates) - offset - len(req.Updates)
			}
			return werr
		}
		werr.Failed = append(werr.Failed, failed...)
		if o.atomicity != p4v1.WriteRequest_CONTINUE_ON_ERROR {
			werr.NotAttempted = len(updates) - offset - len(req.Updates)
			return werr
		}
	}
	if werr != nil {
		return werr
	}
	return nil
}

func (c *Client) writeOne(ctx context.Context, req *p4v1.WriteRequest) error {
	ctx, cancel := c.callCtx(ctx)
	defer cancel()
	_, err := c.rpc.Write(ctx, req)
	if err != nil {
		if _, ok := status.FromError(err); !ok {
			return status.FromContextError(err).Err()
		}
	}
	return err
}

// decodeDetails turns the p4.v1.Error details of a batch status into
// UpdateErrors. perUpdate is false when the status is RPC-wide (no details
// or a count that does not match the batch).
func (c *Client) decodeDetails(st *status.Status, updates []*p4v1.Update, offset int) ([]*UpdateError, bool) {
	details := st.Proto().GetDetails()
	if st.Code() != codes.Unknown || len(details) != len(updates) {
		return nil, false
	}
	var out []*UpdateError
	for i, a := range details {
		pe := &p4v1.Error{}
		if err := a.UnmarshalTo(pe); err != nil {
			return nil, false
		}
		if codes.Code(pe.CanonicalCode) == codes.OK {
			continue
		}
		ue := c.updateError(offset+i, updates[i], codes.Code(pe.CanonicalCode), pe.Message)
		ue.Space, ue.VendorCode = pe.Space, pe.Code
		out = append(out, ue)
	}
	return out, true
}

func (c *Client) updateError(index int, u *p4v1.Update, code codes.Code, msg string) *UpdateError {
	return &UpdateError{Index: index, Op: u.GetType(), Entity: c.describe(u.GetEntity()), Code: code, Message: msg, Update: u}
}

// describe names an entity for error messages, by P4Info names when the
// client has an index.
func (c *Client) describe(e *p4v1.Entity) string {
	return DescribeEntity(c.cachedIndex(), e)
}

// DescribeEntity renders an entity on one line, by name when idx is not nil.
func DescribeEntity(idx *Index, e *p4v1.Entity) string {
	name := func(id uint32) string {
		if idx != nil {
			return idx.Name(id)
		}
		return fmt.Sprintf("id 0x%08x", id)
	}
	switch x := e.GetEntity().(type) {
	case *p4v1.Entity_TableEntry:
		if idx != nil {
			if d, err := idx.DecodeTableEntry(x.TableEntry); err == nil {
				return "table entry " + d.String()
			}
		}
		return "table entry " + name(x.TableEntry.GetTableId()) + " " + compactText(x.TableEntry)
	case *p4v1.Entity_CounterEntry:
		return fmt.Sprintf("counter %s[%s]", name(x.CounterEntry.GetCounterId()), indexString(x.CounterEntry.GetIndex()))
	case *p4v1.Entity_RegisterEntry:
		return fmt.Sprintf("register %s[%s]", name(x.RegisterEntry.GetRegisterId()), indexString(x.RegisterEntry.GetIndex()))
	case *p4v1.Entity_DirectCounterEntry:
		return "direct counter of " + DescribeEntity(idx, TableEntity(x.DirectCounterEntry.GetTableEntry()))
	case *p4v1.Entity_DigestEntry:
		return "digest " + name(x.DigestEntry.GetDigestId())
	case nil:
		return "(no entity)"
	}
	return compactText(e)
}

func indexString(i *p4v1.Index) string {
	if i == nil {
		return "*"
	}
	return fmt.Sprint(i.GetIndex())
}

func compactText(m proto.Message) string {
	return strings.Join(strings.Fields(prototext.MarshalOptions{}.Format(m)), " ")
}

// FormatWriteRequests renders requests as protobuf text, one "# batch i"
// block per request (the dry-run output of Reconcile / p4ctl apply).
func FormatWriteRequests(reqs []*p4v1.WriteRequest) string {
	var b strings.Builder
	for i, r := range reqs {
		fmt.Fprintf(&b, "# WriteRequest %d of %d (%d updates)\n", i+1, len(reqs), len(r.GetUpdates()))
		b.WriteString(prototext.MarshalOptions{Multiline: true, Indent: "  "}.Format(r))
		b.WriteString("\n")
	}
	return b.String()
}
