package main

import (
	"context"
	"net"
	"testing"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/p4ctl/p4ctl/internal/testing/bmv2fake"
	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/dataplane/p4rtserver"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// piTarget answers register reads as BMv2's PI P4Runtime server does:
// UNIMPLEMENTED.
type piTarget struct{ *dataplane.Switch }

func (p piTarget) Read(ctx context.Context, e *p4v1.Entity, emit func(*p4v1.Entity) error) error {
	if e.GetRegisterEntry() != nil {
		return status.Error(codes.Unimplemented, "Register reads are not supported yet")
	}
	return p.Switch.Read(ctx, e, emit)
}

// On a switch whose P4Runtime server cannot read registers (BMv2), get
// registers and get regions read them over BMv2's Thrift API.
func TestGetRegistersOverThrift(t *testing.T) {
	sw, err := dataplane.New(dataplane.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := p4rtserver.New(piTarget{sw})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()
	credit := make([]uint64, pipeline.SlotCells)
	credit[1] = pipeline.Credit{Outstanding: 3, LastTick: 9}.Cell() // server 4·1 + 2 = 6
	regions := make([]uint64, pipeline.MaxRegions)
	regions[0] = 4
	fake, err := bmv2fake.New(map[string][]uint64{
		pipeline.RegisterServerCredit(2):   credit,
		pipeline.RegisterRegionOutstanding: regions,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()

	conn := []string{"--grpc-addr", lis.Addr().String(), "--thrift-addr", fake.Addr()}
	code, out, errs := p4ctl(t, append([]string{"get", "registers", "--name", "server_credit_2"}, conn...)...)
	expect(t, "get registers over thrift", code, exitOK, out, errs, "server 6: 3 outstanding, last tick 9", "38654705667") // 9<<32 | 3
	code, out, errs = p4ctl(t, append([]string{"get", "registers", "--name", "region_outstanding"}, conn...)...)
	expect(t, "get registers region_outstanding", code, exitOK, out, errs, "region_outstanding")

	// Without a Thrift server the error says what to set.
	code, out, errs = p4ctl(t, "get", "registers", "--grpc-addr", lis.Addr().String(), "--thrift-addr", "127.0.0.1:1")
	expect(t, "no thrift server", code, exitError, out, errs, "--thrift-addr")
}
