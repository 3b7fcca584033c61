package p4rtserver_test

import (
	"context"
	"testing"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/protobuf/proto"

	"github.com/p4ctl/p4ctl/internal/testing/p4rttest"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

// FuzzWrite sends arbitrary bytes, decoded as a WriteRequest (and as a
// ReadRequest), through the server over bufconn into the engine loaded with
// the p4ctl P4Info: the server must never panic. Each input is sent twice:
// as decoded, and with the device id and election id of the primary so that
// it reaches the engine.
func FuzzWrite(f *testing.F) {
	c, _ := p4rttest.New(f)
	idx, err := c.Index(context.Background())
	if err != nil {
		f.Fatal(err)
	}
	seed := func(b *p4rt.EntryBuilder, op p4v1.Update_Type) {
		u, err := b.Update(op)
		if err != nil {
			f.Fatal(err)
		}
		data, _ := proto.Marshal(&p4v1.WriteRequest{DeviceId: 1, ElectionId: &p4v1.Uint128{Low: 1}, Updates: []*p4v1.Update{u}})
		f.Add(data)
	}
	seed(idx.TableEntry("carbon_rank").Exact("epoch", 1).Ternary("feasible", 8, 8).Priority(3).Action("route_to_region", p4rt.Param("region", 3)), p4v1.Update_INSERT)
	seed(idx.TableEntry("sla_feasibility").Exact("site", 1).Range("sla_ms", 0, 300).Priority(1).Action("set_feasible", p4rt.Param("feasible", 3), p4rt.Param("nearest", 1)), p4v1.Update_MODIFY)
	seed(idx.TableEntry("client_site").LPM("src_addr", uint32(0x0a000000), 8).Action("set_client_site", p4rt.Param("site", 1)), p4v1.Update_DELETE)
	seed(idx.TableEntry("active_epoch").Default().Action("set_active_epoch", p4rt.Param("epoch", 1)), p4v1.Update_MODIFY)
	reg, _ := idx.RegisterWrite("server_credit_1", 1, 1)
	data, _ := proto.Marshal(&p4v1.WriteRequest{DeviceId: 1, ElectionId: &p4v1.Uint128{Low: 1}, Updates: []*p4v1.Update{reg}})
	f.Add(data)
	f.Add([]byte{})
	rpc := c.RPC()
	f.Fuzz(func(t *testing.T, data []byte) {
		req := &p4v1.WriteRequest{}
		if proto.Unmarshal(data, req) != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		rpc.Write(ctx, req)
		req.DeviceId, req.ElectionId, req.Role = 1, &p4v1.Uint128{Low: 1}, ""
		rpc.Write(ctx, req)
		rr := &p4v1.ReadRequest{}
		if proto.Unmarshal(data, rr) == nil {
			rr.DeviceId, rr.Role = 1, ""
			if s, err := rpc.Read(ctx, rr); err == nil {
				for {
					if _, err := s.Recv(); err != nil {
						break // io.EOF or the request's error: both fine
					}
				}
			}
		}
		if _, err := rpc.Capabilities(ctx, &p4v1.CapabilitiesRequest{}); err != nil {
			t.Fatalf("server stopped answering: %v", err)
		}
	})
}
