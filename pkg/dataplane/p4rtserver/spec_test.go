package p4rtserver_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/dataplane/p4rtserver"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// embedded serves the embedded switch on loopback and returns a primary
// client (election id 1) of it.
func embedded(t *testing.T) *p4rt.Client {
	t.Helper()
	sw, err := dataplane.New(dataplane.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := p4rtserver.New(sw)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	c, err := p4rt.Dial(lis.Addr().String(), p4rt.WithElectionID(p4rt.Election(1)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Arbitrate(ctx); err != nil {
		t.Fatal(err)
	}
	return c
}

// detailCodes returns the canonical code of each p4.v1.Error detail of err.
func detailCodes(t *testing.T, err error) []codes.Code {
	t.Helper()
	st, _ := status.FromError(err)
	var out []codes.Code
	for _, a := range st.Proto().GetDetails() {
		pe := &p4v1.Error{}
		if err := a.UnmarshalTo(pe); err != nil {
			t.Fatal(err)
		}
		out = append(out, codes.Code(pe.CanonicalCode))
	}
	return out
}

// Issue 27 item 14, as p4runtime-shell saw the embedded target: a
// too-wide or empty bytestring got INVALID_ARGUMENT where the P4Runtime
// spec ("Bytestrings") says OUT_OF_RANGE, and a failed read arrived as
// UNKNOWN with the real code only in the details.
func TestSpecCodes(t *testing.T) {
	c := embedded(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	idx, err := c.Index(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tid, _ := idx.TableID(pipeline.TableClientSite)
	aid, _ := idx.ActionID(pipeline.Control + ".set_client_site")
	entry := func(addr []byte, site []byte) *p4v1.Update {
		return &p4v1.Update{Type: p4v1.Update_INSERT, Entity: p4rt.TableEntity(&p4v1.TableEntry{TableId: tid,
			Match:  []*p4v1.FieldMatch{{FieldId: 1, FieldMatchType: &p4v1.FieldMatch_Lpm{Lpm: &p4v1.FieldMatch_LPM{Value: addr, PrefixLen: 8}}}},
			Action: &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: &p4v1.Action{ActionId: aid, Params: []*p4v1.Action_Param{{ParamId: 1, Value: site}}}}}})}
	}
	cases := []struct {
		name string
		up   *p4v1.Update
		want codes.Code
	}{
		{"key wider than 32 bits", entry([]byte{1, 10, 0, 0, 0}, []byte{1}), codes.OutOfRange},
		{"empty key", entry([]byte{}, []byte{1}), codes.OutOfRange},
		{"param wider than 16 bits", entry([]byte{10, 0, 0, 0}, []byte{1, 0, 0}), codes.OutOfRange},
		{"empty param", entry([]byte{10, 0, 0, 0}, []byte{}), codes.OutOfRange},
		{"zero-padded key (accepted)", entry([]byte{0, 10, 0, 0, 0}, []byte{1}), codes.OK},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.RPC().Write(ctx, &p4v1.WriteRequest{DeviceId: 1, ElectionId: &p4v1.Uint128{Low: 1}, Updates: []*p4v1.Update{tc.up}})
			if tc.want == codes.OK {
				if err != nil {
					t.Fatalf("Write: %v", err)
				}
				return
			}
			if got := detailCodes(t, err); len(got) != 1 || got[0] != tc.want {
				t.Fatalf("Write: %v: detail codes %v, want [%v]", err, got, tc.want)
			}
		})
	}
	// A read of one entity that fails: its own code, with the detail kept.
	rs, err := c.RPC().Read(ctx, &p4v1.ReadRequest{DeviceId: 1, Entities: []*p4v1.Entity{p4rt.TableEntity(&p4v1.TableEntry{TableId: tid,
		Match: []*p4v1.FieldMatch{{FieldId: 1, FieldMatchType: &p4v1.FieldMatch_Lpm{Lpm: &p4v1.FieldMatch_LPM{Value: []byte{1, 2, 3, 4, 5}, PrefixLen: 8}}}}})}})
	if err == nil {
		_, err = rs.Recv()
	}
	if st, _ := status.FromError(err); st.Code() != codes.OutOfRange || len(detailCodes(t, err)) != 1 {
		t.Fatalf("Read of a too-wide key: %v (details %v), want OUT_OF_RANGE with its detail", err, detailCodes(t, err))
	}
	// The Go client still sees a per-request ReadError.
	_, err = c.ReadEntry(ctx, &p4v1.TableEntry{TableId: 0x02999999, Match: []*p4v1.FieldMatch{{FieldId: 1}}})
	var re *p4rt.ReadError
	if !errors.As(err, &re) {
		t.Fatalf("ReadEntry of an unknown table: %T %v, want *p4rt.ReadError", err, err)
	}
}
