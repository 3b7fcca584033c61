package main

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

func TestSwitchUsage(t *testing.T) {
	for _, args := range [][]string{
		{"switch", "--grpc-addr", "nonsense"},
		{"switch", "--grpc-addr", "127.0.0.1:-1"}, // exited 1 when the listen failed
		{"switch", "--grpc-addr", "127.0.0.1:65536"},
		{"switch", "--cpu-port", "600"},
		{"switch", "--tls-cert", "x.pem"},
		{"switch", "-i", "veth1"},
		{"switch", "-i", "600@veth1"},
		{"switch", "-i", "510@veth1"},
		{"switch", "-i", "1@veth1", "--interface", "1@veth2"},
		{"switch", "--datapath", "ebpf"},
		{"switch", "--xdp-generic"},                  // without --datapath xdp
		{"switch", "--p4info", "/dev/zero"},          // read without bound once: capped now
		{"switch", "--p4info", "/nonexistent.txtpb"}, // an input file: exit 2
	} {
		if code, _, errb := p4ctl(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d (%s), want %d", args, code, errb, exitUsage)
		}
	}
}

// `p4ctl switch` serves the embedded target over P4Runtime on loopback.
func TestSwitchServes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrc := make(chan net.Addr, 1)
	o := &switchOptions{GRPCAddr: "127.0.0.1:0", DeviceID: 7, CPUPort: 510, ready: func(a net.Addr) { addrc <- a }}
	var errb bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- o.Run(ctx, &streams{Out: &bytes.Buffer{}, Err: &errb}) }()
	var addr net.Addr
	select {
	case addr = <-addrc:
	case err := <-done:
		t.Fatalf("switch exited: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("switch did not start")
	}
	conn, err := grpc.NewClient(addr.String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rpc := p4v1.NewP4RuntimeClient(conn)
	cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
	defer ccancel()
	resp, err := rpc.GetForwardingPipelineConfig(cctx, &p4v1.GetForwardingPipelineConfigRequest{DeviceId: 7})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tb := range resp.GetConfig().GetP4Info().GetTables() {
		found = found || tb.GetPreamble().GetName() == pipeline.TableCarbonRank
	}
	if !found {
		t.Fatalf("pipeline has no %s", pipeline.TableCarbonRank)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("switch did not stop")
	}
	// Issue 27: stopped by Ctrl-C, it says what it leaves (nothing: its
	// state was in memory); it said nothing.
	if !strings.Contains(errb.String(), "P4Runtime on 127.0.0.1:") || !strings.Contains(errb.String(), "p4ctl switch: stopped: the pipeline, 0 table entries") {
		t.Fatalf("stderr %q", errb.String())
	}
}

// TLS files that cannot be read fail before the switch announces itself
// (issue 15 item 11).
func TestSwitchTLSFlagsCheckedFirst(t *testing.T) {
	for _, args := range [][]string{
		{"switch", "--grpc-addr", "127.0.0.1:0", "--tls-cert", "/nope.pem", "--tls-key", "/nope.pem"},
		{"switch", "--grpc-addr", "127.0.0.1:0", "--tls-cert", "/nope.pem", "--tls-key", "/nope.pem", "--tls-client-ca", "/nope-ca.pem"},
	} {
		code, out, errs := p4ctl(t, args...)
		if code == exitOK || !strings.Contains(errs, "/nope.pem") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs)
		}
		if strings.Contains(out+errs, "P4Runtime on") || strings.Contains(out+errs, "program loaded") {
			t.Errorf("%v: announced before failing: %q", args, errs)
		}
	}
}
