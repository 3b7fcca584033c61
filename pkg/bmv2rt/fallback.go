package bmv2rt

import (
	"context"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

// Registers reads registers over P4Runtime and, where the switch's
// P4Runtime server does not implement register reads (BMv2's PI answers
// UNIMPLEMENTED), over BMv2's Thrift API.
type Registers struct {
	// P4 is the switch's P4Runtime client; its P4Info gives full names.
	P4 *p4rt.Client
	// Thrift dials BMv2's Thrift server when it is first needed; nil means
	// no fallback (the UNIMPLEMENTED error is returned as is).
	Thrift func(ctx context.Context) (*Client, error)

	th      *Client
	useThri bool
}

// Read returns register name's cells (index < 0: all of them), as
// p4rt.Client.ReadRegister does.
func (r *Registers) Read(ctx context.Context, name string, index int64) ([]p4rt.RegisterCell, error) {
	if !r.useThri {
		cells, err := r.P4.ReadRegister(ctx, name, index)
		if status.Code(err) != codes.Unimplemented || r.Thrift == nil {
			return cells, err
		}
		r.useThri = true
	}
	idx, err := r.P4.Index(ctx)
	if err != nil {
		return nil, err
	}
	reg, err := idx.Register(name)
	if err != nil {
		return nil, err
	}
	full := reg.GetPreamble().GetName()
	if r.th == nil {
		if r.th, err = r.Thrift(ctx); err != nil {
			return nil, fmt.Errorf("register %s: P4Runtime cannot read registers on this switch, and BMv2's Thrift API: %w", full, err)
		}
	}
	if index >= 0 {
		v, err := r.th.RegisterRead(ctx, full, int(index))
		if err != nil {
			return nil, err
		}
		return []p4rt.RegisterCell{{Register: full, Index: index, Value: v}}, nil
	}
	vals, err := r.th.RegisterReadAll(ctx, full)
	if err != nil {
		return nil, err
	}
	cells := make([]p4rt.RegisterCell, len(vals))
	for i, v := range vals {
		cells[i] = p4rt.RegisterCell{Register: full, Index: int64(i), Value: v}
	}
	return cells, nil
}

// Close closes the Thrift connection, if one was made.
func (r *Registers) Close() error {
	if r.th == nil {
		return nil
	}
	return r.th.Close()
}
