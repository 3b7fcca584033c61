package p4rt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ReadError is a Read whose requests partly failed: the server streamed the
// entities of the good requests, then returned one p4.v1.Error per request.
type ReadError struct {
	Device uint64
	Failed []*UpdateError // Index is the request's position; Op is UNSPECIFIED
}

// Error implements error, listing every failed request.
func (e *ReadError) Error() string {
	parts := make([]string, len(e.Failed))
	for i, f := range e.Failed {
		parts[i] = fmt.Sprintf("read request %d (%s): %s: %s", f.Index, f.Entity, codeName(f.Code), f.Message)
	}
	return fmt.Sprintf("read from device %d: %s", e.Device, strings.Join(parts, "; "))
}

// Unwrap returns the failed requests for errors.Is.
func (e *ReadError) Unwrap() []error {
	out := make([]error, len(e.Failed))
	for i, f := range e.Failed {
		out[i] = f
	}
	return out
}

// Read sends one ReadRequest for entities (each may be a wildcard) and calls
// fn for every entity the switch streams back.
func (c *Client) Read(ctx context.Context, entities []*p4v1.Entity, fn func(*p4v1.Entity) error) error {
	ctx, cancel := c.callCtx(ctx)
	defer cancel()
	stream, err := c.rpc.Read(ctx, &p4v1.ReadRequest{DeviceId: c.opts.deviceID, Role: c.opts.role, Entities: entities})
	if err != nil {
		return c.rpcError("Read", err)
	}
	for {
		r, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return c.readError(err, entities)
		}
		for _, e := range r.GetEntities() {
			if err := fn(e); err != nil {
				return err
			}
		}
	}
}

func (c *Client) readError(err error, entities []*p4v1.Entity) error {
	// UNKNOWN with one detail per request entity; a server may give a
	// single entity's failure its own code (the embedded target does),
	// with the detail kept.
	st, ok := status.FromError(err)
	if !ok || st.Code() == codes.OK || len(st.Proto().GetDetails()) != len(entities) {
		return c.rpcError("Read", err)
	}
	re := &ReadError{Device: c.opts.deviceID}
	for i, a := range st.Proto().GetDetails() {
		pe := &p4v1.Error{}
		if a.UnmarshalTo(pe) != nil {
			return c.rpcError("Read", err)
		}
		if codes.Code(pe.CanonicalCode) == codes.OK {
			continue
		}
		re.Failed = append(re.Failed, &UpdateError{Index: i, Entity: c.describe(entities[i]),
			Code: codes.Code(pe.CanonicalCode), Message: pe.Message, Space: pe.Space, VendorCode: pe.Code})
	}
	return re
}

// ReadAll is Read collecting the entities.
func (c *Client) ReadAll(ctx context.Context, entities ...*p4v1.Entity) ([]*p4v1.Entity, error) {
	var out []*p4v1.Entity
	err := c.Read(ctx, entities, func(e *p4v1.Entity) error {
		out = append(out, e)
		return nil
	})
	return out, err
}

// ReadTableEntries reads all (non-default) entries of the named tables, or
// of every table when no name is given (a table_id 0 wildcard).
func (c *Client) ReadTableEntries(ctx context.Context, tables ...string) ([]*p4v1.TableEntry, error) {
	var req []*p4v1.Entity
	if len(tables) == 0 {
		req = []*p4v1.Entity{TableEntity(&p4v1.TableEntry{})}
	} else {
		idx, err := c.Index(ctx)
		if err != nil {
			return nil, err
		}
		for _, t := range tables {
			id, err := idx.TableID(t)
			if err != nil {
				return nil, err
			}
			req = append(req, TableEntity(&p4v1.TableEntry{TableId: id}))
		}
	}
	return c.readTableEntries(ctx, req)
}

func (c *Client) readTableEntries(ctx context.Context, req []*p4v1.Entity) ([]*p4v1.TableEntry, error) {
	var out []*p4v1.TableEntry
	err := c.Read(ctx, req, func(e *p4v1.Entity) error {
		if te := e.GetTableEntry(); te != nil {
			out = append(out, te)
		}
		return nil
	})
	return out, err
}

// ReadDefaultEntry reads the default entry of the named table.
func (c *Client) ReadDefaultEntry(ctx context.Context, table string) (*p4v1.TableEntry, error) {
	idx, err := c.Index(ctx)
	if err != nil {
		return nil, err
	}
	id, err := idx.TableID(table)
	if err != nil {
		return nil, err
	}
	got, err := c.readTableEntries(ctx, []*p4v1.Entity{TableEntity(&p4v1.TableEntry{TableId: id, IsDefaultAction: true})})
	if err != nil {
		return nil, err
	}
	if len(got) != 1 {
		return nil, fmt.Errorf("read default entry of %s: got %d entries", table, len(got))
	}
	return got[0], nil
}

// ReadEntry reads back one entry by its key (table, match, priority);
// it returns an error wrapping ErrNotFound when the switch does not hold it.
func (c *Client) ReadEntry(ctx context.Context, key *p4v1.TableEntry) (*p4v1.TableEntry, error) {
	q := &p4v1.TableEntry{TableId: key.GetTableId(), Match: key.GetMatch(), Priority: key.GetPriority(), IsDefaultAction: key.GetIsDefaultAction()}
	if len(q.Match) == 0 && !q.IsDefaultAction {
		return nil, errors.New("ReadEntry needs a match key (an empty match is a wildcard read)")
	}
	got, err := c.readTableEntries(ctx, []*p4v1.Entity{TableEntity(q)})
	if err != nil {
		var re *ReadError
		if errors.As(err, &re) && len(re.Failed) == 1 && re.Failed[0].Code == codes.NotFound {
			return nil, fmt.Errorf("%s: %w", c.describe(TableEntity(key)), ErrNotFound)
		}
		return nil, err
	}
	for _, e := range got {
		if EntryKey(e) == EntryKey(key) {
			return e, nil
		}
	}
	return nil, fmt.Errorf("%s: %w", c.describe(TableEntity(key)), ErrNotFound)
}

// ReadCounter reads cells of the named indirect counter: one cell, or all
// of them when index < 0.
func (c *Client) ReadCounter(ctx context.Context, name string, index int64) ([]CounterCell, error) {
	idx, err := c.Index(ctx)
	if err != nil {
		return nil, err
	}
	ent, err := idx.CounterEntry(name, index)
	if err != nil {
		return nil, err
	}
	var out []CounterCell
	err = c.Read(ctx, []*p4v1.Entity{ent}, func(e *p4v1.Entity) error {
		if ce := e.GetCounterEntry(); ce != nil {
			out = append(out, idx.DecodeCounter(ce))
		}
		return nil
	})
	return out, err
}

// ReadDirectCounters reads the direct counter of every entry of the named
// table (entry = nil) or of one entry.
func (c *Client) ReadDirectCounters(ctx context.Context, table string, entry *p4v1.TableEntry) ([]*p4v1.DirectCounterEntry, error) {
	idx, err := c.Index(ctx)
	if err != nil {
		return nil, err
	}
	id, err := idx.TableID(table)
	if err != nil {
		return nil, err
	}
	if _, ok := idx.DirectCounterOf(id); !ok {
		return nil, fmt.Errorf("%w: table %s has no direct counter", ErrUnknownName, idx.Name(id))
	}
	q := &p4v1.TableEntry{TableId: id}
	if entry != nil {
		q = &p4v1.TableEntry{TableId: id, Match: entry.GetMatch(), Priority: entry.GetPriority(), IsDefaultAction: entry.GetIsDefaultAction()}
	}
	var out []*p4v1.DirectCounterEntry
	err = c.Read(ctx, []*p4v1.Entity{DirectCounterEntry(q)}, func(e *p4v1.Entity) error {
		if d := e.GetDirectCounterEntry(); d != nil {
			out = append(out, d)
		}
		return nil
	})
	return out, err
}

// ReadRegister reads cells of the named register: one cell, or all of them
// when index < 0. BMv2's P4Runtime server (PI) answers UNIMPLEMENTED to
// register reads and writes; the embedded target supports both.
func (c *Client) ReadRegister(ctx context.Context, name string, index int64) ([]RegisterCell, error) {
	idx, err := c.Index(ctx)
	if err != nil {
		return nil, err
	}
	ent, err := idx.RegisterEntry(name, index)
	if err != nil {
		return nil, err
	}
	var out []RegisterCell
	var errs []error
	err = c.Read(ctx, []*p4v1.Entity{ent}, func(e *p4v1.Entity) error {
		if re := e.GetRegisterEntry(); re != nil {
			cell, err := idx.DecodeRegister(re)
			if err != nil {
				errs = append(errs, err)
			}
			out = append(out, cell)
		}
		return nil
	})
	if err != nil {
		return out, err
	}
	return out, errors.Join(errs...)
}

// WriteRegister sets register name[index] = value (primary only).
func (c *Client) WriteRegister(ctx context.Context, name string, index int64, value any) error {
	idx, err := c.Index(ctx)
	if err != nil {
		return err
	}
	u, err := idx.RegisterWrite(name, index, value)
	if err != nil {
		return err
	}
	return c.Write(ctx, []*p4v1.Update{u})
}

// DigestConfig is the switch-side batching of a digest (DigestEntry.Config).
type DigestConfig struct {
	MaxTimeoutNs int64 // max time the switch holds a digest before sending a list
	MaxListSize  int32 // max digests per list (0: no limit)
	AckTimeoutNs int64 // time to wait for an ack before resending
}

// ConfigureDigest enables the named digest with cfg (INSERT; MODIFY if it
// is already configured).
func (c *Client) ConfigureDigest(ctx context.Context, name string, cfg DigestConfig) error {
	idx, err := c.Index(ctx)
	if err != nil {
		return err
	}
	id, err := idx.DigestID(name)
	if err != nil {
		return err
	}
	ent := &p4v1.Entity{Entity: &p4v1.Entity_DigestEntry{DigestEntry: &p4v1.DigestEntry{DigestId: id,
		Config: &p4v1.DigestEntry_Config{MaxTimeoutNs: cfg.MaxTimeoutNs, MaxListSize: cfg.MaxListSize, AckTimeoutNs: cfg.AckTimeoutNs}}}}
	return c.ApplyRetrySafe(ctx, []*p4v1.Update{{Type: p4v1.Update_INSERT, Entity: ent}})
}
