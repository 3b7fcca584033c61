package p4rt

import (
	"errors"
	"fmt"
	"strings"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// CodeError is a sentinel for a gRPC/P4Runtime canonical code, for use with
// errors.Is: errors.Is(err, p4rt.ErrAlreadyExists) holds for an UpdateError
// with that code, for a WriteError holding such an update, and for a plain
// gRPC status error with that code.
type CodeError struct{ Code codes.Code }

// Error implements error.
func (e *CodeError) Error() string { return "p4runtime: " + codeName(e.Code) }

// Sentinels for the codes P4Runtime servers return.
var (
	ErrAlreadyExists      = &CodeError{codes.AlreadyExists}
	ErrNotFound           = &CodeError{codes.NotFound}
	ErrInvalidArgument    = &CodeError{codes.InvalidArgument}
	ErrOutOfRange         = &CodeError{codes.OutOfRange}
	ErrPermissionDenied   = &CodeError{codes.PermissionDenied}
	ErrResourceExhausted  = &CodeError{codes.ResourceExhausted}
	ErrFailedPrecondition = &CodeError{codes.FailedPrecondition}
	ErrUnimplemented      = &CodeError{codes.Unimplemented}
	ErrAborted            = &CodeError{codes.Aborted}
	ErrUnavailable        = &CodeError{codes.Unavailable}
)

// Is makes a plain gRPC status error match the sentinel with its code.
func (e *CodeError) Is(target error) bool {
	t, ok := target.(*CodeError)
	return ok && t.Code == e.Code
}

// Code returns the canonical code of err: the code of an UpdateError, the
// common code of a WriteError's failed updates (Unknown when they differ),
// or the gRPC status code; OK for nil.
func Code(err error) codes.Code {
	if err == nil {
		return codes.OK
	}
	var ue *UpdateError
	var we *WriteError
	var ce *CodeError
	switch {
	case errors.As(err, &we):
		c := codes.OK
		for _, u := range we.Failed {
			if c == codes.OK {
				c = u.Code
			} else if c != u.Code {
				return codes.Unknown
			}
		}
		if c == codes.OK {
			return status.Code(we.Status.Err())
		}
		return c
	case errors.As(err, &ue):
		return ue.Code
	case errors.As(err, &ce):
		return ce.Code
	}
	if s, ok := status.FromError(err); ok {
		return s.Code()
	}
	var gs interface{ GRPCStatus() *status.Status }
	if errors.As(err, &gs) {
		return gs.GRPCStatus().Code()
	}
	return codes.Unknown
}

// UpdateError is the failure of one update of a Write, decoded from the
// p4.v1.Error the server returned for it.
type UpdateError struct {
	Index      int              // position in the slice passed to Client.Write
	Op         p4v1.Update_Type // INSERT, MODIFY or DELETE
	Entity     string           // "P4ctlIngress.carbon_rank epoch=1 ..." (decoded when a P4Info is known)
	Code       codes.Code       // canonical code
	Message    string           // the server's message
	Space      string           // vendor error space, if any
	VendorCode int32            // vendor error code, if any
	Update     *p4v1.Update     // the update that failed
}

// Error implements error: the update's position, operation, entity and status.
func (e *UpdateError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = "(no message)"
	}
	return fmt.Sprintf("update %d (%s %s): %s: %s", e.Index, e.Op, e.Entity, codeName(e.Code), msg)
}

// Is matches the CodeError sentinel of the update's code.
func (e *UpdateError) Is(target error) bool {
	t, ok := target.(*CodeError)
	return ok && t.Code == e.Code
}

// GRPCStatus lets status.Code(err) see the update's code.
func (e *UpdateError) GRPCStatus() *status.Status { return status.New(e.Code, e.Error()) }

// WriteError is a failed Write: either per-update failures (Failed, decoded
// from the google.rpc.Status details of a code-UNKNOWN reply as the
// P4Runtime spec §12 prescribes) or an RPC-wide failure (Status without
// details, e.g. PERMISSION_DENIED for a backup controller).
type WriteError struct {
	Batch        int            // which batch (0-based) failed first
	Total        int            // number of updates passed to Write
	Failed       []*UpdateError // failed updates, in order
	NotAttempted int            // updates in later batches that were not sent
	Status       *status.Status // the RPC status of the (first) failed batch
	Device       uint64
	ElectionID   ElectionID // the election id the requests carried
	Role         string
}

// Error implements error, summarising every failed update.
func (e *WriteError) Error() string {
	if len(e.Failed) == 0 {
		s := fmt.Sprintf("write to device %d failed at batch %d: %s: %s", e.Device, e.Batch, codeName(e.Status.Code()), e.Status.Message())
		if e.Status.Code() == codes.PermissionDenied {
			s += fmt.Sprintf(" (this client, election id %s role %q, is not primary: arbitrate with an election id above the switch's highest)", e.ElectionID, e.Role)
		}
		if e.NotAttempted > 0 {
			s += fmt.Sprintf(" (%d updates not applied)", e.NotAttempted)
		}
		return s
	}
	var b strings.Builder
	fmt.Fprintf(&b, "write to device %d: %d of %d updates failed", e.Device, len(e.Failed), e.Total)
	if e.NotAttempted > 0 {
		fmt.Fprintf(&b, ", %d not sent", e.NotAttempted)
	}
	const show = 5
	for i, u := range e.Failed {
		if i == show {
			fmt.Fprintf(&b, "; ... %d more", len(e.Failed)-show)
			break
		}
		b.WriteString("; ")
		b.WriteString(u.Error())
	}
	return b.String()
}

// Unwrap returns the failed updates (so errors.Is(err, ErrAlreadyExists)
// holds when any update failed with ALREADY_EXISTS) or, for an RPC-wide
// failure, the status error.
func (e *WriteError) Unwrap() []error {
	if len(e.Failed) == 0 {
		return []error{&CodeError{e.Status.Code()}, e.Status.Err()}
	}
	out := make([]error, len(e.Failed))
	for i, u := range e.Failed {
		out[i] = u
	}
	return out
}

// ArbitrationError explains a rejected MasterArbitrationUpdate.
type ArbitrationError struct {
	Device     uint64
	Role       string
	ElectionID ElectionID
	Status     *status.Status
}

// Error implements error.
func (e *ArbitrationError) Error() string {
	role := ""
	if e.Role != "" {
		role = fmt.Sprintf(" role %q", e.Role)
	}
	switch e.Status.Code() {
	case codes.InvalidArgument:
		if strings.Contains(strings.ToLower(e.Status.Message()), "election") {
			return fmt.Sprintf("arbitration rejected: another controller already uses election id %s for device %d%s; give each controller replica a distinct election id (%s)",
				e.ElectionID, e.Device, role, e.Status.Message())
		}
	case codes.NotFound:
		return fmt.Sprintf("arbitration rejected: the switch does not know device id %d (%s)", e.Device, e.Status.Message())
	case codes.FailedPrecondition:
		return fmt.Sprintf("arbitration rejected: device id or role changed on a live stream (%s)", e.Status.Message())
	}
	return fmt.Sprintf("arbitration for device %d%s election id %s failed: %s: %s", e.Device, role, e.ElectionID, codeName(e.Status.Code()), e.Status.Message())
}

// Unwrap exposes the code sentinel and the status error.
func (e *ArbitrationError) Unwrap() []error {
	return []error{&CodeError{e.Status.Code()}, e.Status.Err()}
}

// codeName renders a code the way the P4Runtime spec writes it.
func codeName(c codes.Code) string {
	switch c {
	case codes.OK:
		return "OK"
	case codes.Canceled:
		return "CANCELLED"
	case codes.Unknown:
		return "UNKNOWN"
	case codes.InvalidArgument:
		return "INVALID_ARGUMENT"
	case codes.DeadlineExceeded:
		return "DEADLINE_EXCEEDED"
	case codes.NotFound:
		return "NOT_FOUND"
	case codes.AlreadyExists:
		return "ALREADY_EXISTS"
	case codes.PermissionDenied:
		return "PERMISSION_DENIED"
	case codes.ResourceExhausted:
		return "RESOURCE_EXHAUSTED"
	case codes.FailedPrecondition:
		return "FAILED_PRECONDITION"
	case codes.Aborted:
		return "ABORTED"
	case codes.OutOfRange:
		return "OUT_OF_RANGE"
	case codes.Unimplemented:
		return "UNIMPLEMENTED"
	case codes.Internal:
		return "INTERNAL"
	case codes.Unavailable:
		return "UNAVAILABLE"
	case codes.DataLoss:
		return "DATA_LOSS"
	case codes.Unauthenticated:
		return "UNAUTHENTICATED"
	}
	return c.String()
}
