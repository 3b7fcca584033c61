package main

import (
	"context"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

// shellSession arbitrates at addr as p4runtime-shell does by default
// (device 1, election id high word 1, low 0), then disconnects.
func shellSession(t *testing.T, addr string) {
	t.Helper()
	c, err := p4rt.Dial(addr, p4rt.WithDeviceID(1), p4rt.WithElectionID(p4rt.ElectionID{High: 1, Low: 0}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if st, err := c.Arbitrate(ctx); err != nil || !st.Primary {
		t.Fatalf("shell-like client: %v %v", st, err)
	}
	c.Close()
}

// Issue 27 item 13: once a client used a high word (p4runtime-shell's
// default 1,0) the switch keeps that id, and p4ctl apply, whose
// configuration could set only the low word, was locked out until the
// switch restarted. The error now says which id to use, and the
// configuration takes HIGH,LOW as --election-id does.
func TestApplyAfterShellDefaultElectionID(t *testing.T) {
	sw := embeddedSwitch(t)
	addr := sw.Addr()
	shellSession(t, addr)

	code, out, errs := p4ctl(t, "apply", "-c", mumbai, "--grpc-addr", addr, "--grace", "1ms")
	expect(t, "apply after the shell", code, exitError, out, errs, "the switch has seen election id 1,0", "--election-id 1,1")
	code, out, errs = p4ctl(t, "apply", "-c", mumbai, "--grpc-addr", addr, "--grace", "1ms", "--election-id", "1,1")
	expect(t, "apply --election-id 1,1", code, exitOK, out, errs, "writes")

	sw2 := embeddedSwitch(t)
	shellSession(t, sw2.Addr())
	low := configWithTargets(t, "  - {name: edge, grpc_addr: "+sw2.Addr()+", device_id: 1, election_id: 1}\n")
	code, out, errs = p4ctl(t, "apply", "-c", low, "--grace", "1ms")
	expect(t, "apply -c (election_id: 1) after the shell", code, exitError, out, errs, "election_id: 1,1 for target edge in "+low)
	high := configWithTargets(t, "  - {name: edge, grpc_addr: "+sw2.Addr()+", device_id: 1, election_id: \"1,1\"}\n")
	code, out, errs = p4ctl(t, "apply", "-c", high, "--grace", "1ms")
	expect(t, "apply -c (election_id: 1,1)", code, exitOK, out, errs, "writes")
}
