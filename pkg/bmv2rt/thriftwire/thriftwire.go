// Package thriftwire holds the few Thrift encoding steps BMv2's Standard
// service needs, shared by the client (pkg/bmv2rt) and the test fake that
// answers like BMv2 (internal/testing/bmv2fake).
package thriftwire

import (
	"context"

	"github.com/apache/thrift/lib/go/thrift"
)

// Service is the multiplexed service name of BMv2's Standard interface.
const Service = "standard"

// ReadStruct reads one struct, handing each field to field, which reads it
// and reports true, or reports false to have it skipped.
func ReadStruct(ctx context.Context, p thrift.TProtocol, field func(id int16, ft thrift.TType) (bool, error)) error {
	if _, err := p.ReadStructBegin(ctx); err != nil {
		return err
	}
	for {
		_, ft, id, err := p.ReadFieldBegin(ctx)
		if err != nil {
			return err
		}
		if ft == thrift.STOP {
			break
		}
		done, err := field(id, ft)
		if err != nil {
			return err
		}
		if !done {
			if err := p.Skip(ctx, ft); err != nil {
				return err
			}
		}
		if err := p.ReadFieldEnd(ctx); err != nil {
			return err
		}
	}
	return p.ReadStructEnd(ctx)
}

// WriteI32 writes field id as an i32.
func WriteI32(ctx context.Context, p thrift.TProtocol, id int16, v int32) error {
	if err := p.WriteFieldBegin(ctx, "", thrift.I32, id); err != nil {
		return err
	}
	if err := p.WriteI32(ctx, v); err != nil {
		return err
	}
	return p.WriteFieldEnd(ctx)
}
