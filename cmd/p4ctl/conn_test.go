package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/prototext"

	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/dataplane/p4rtserver"
)

// deadAddr is a loopback address where nothing listens (a port that was
// free a moment ago).
func deadAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// p4infoFile writes the embedded program's P4Info as text and returns its path.
func p4infoFile(t *testing.T) string {
	t.Helper()
	info := filepath.Join(t.TempDir(), "p4ctl.p4info.txtpb")
	b, err := prototext.Marshal(dataplane.DefaultP4Info())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(info, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return info
}

// Write paths fail as fast as reads when the switch is down, and name its
// address (issue 15 item 1).
func TestWritePathsFailFast(t *testing.T) {
	dead := deadAddr(t)
	info := p4infoFile(t)
	for _, args := range [][]string{
		{"apply", "-c", mumbai, "--grpc-addr", dead, "--timeout", "20s"},
		{"apply", "-c", mumbai, "--grpc-addr", dead, "--timeout", "20s", "--dry-run"},
		{"push", "pipeline", "--p4info", info, "--grpc-addr", dead, "--timeout", "20s"},
		{"diff", "-c", mumbai, "--grpc-addr", dead, "--timeout", "20s"},
		{"get", "entries", "--grpc-addr", dead, "--timeout", "20s"},
	} {
		t.Run(strings.Join(args[:2], " "), func(t *testing.T) {
			start := time.Now()
			code, out, errs := p4ctl(t, args...)
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("took %v: waited for the deadline instead of failing fast", took)
			}
			if code == exitOK || code == exitUsage {
				t.Fatalf("exit %d\n%s%s", code, out, errs)
			}
			for _, want := range []string{dead, "connection refused"} {
				if !strings.Contains(errs, want) {
					t.Errorf("stderr lacks %q: %s", want, errs)
				}
			}
		})
	}
}

// Plaintext beyond loopback is refused with the flags that allow it, not
// the Go options of pkg/p4rt (issue 15 item 10). Nothing is dialled.
func TestPlaintextRefusalNamesFlags(t *testing.T) {
	for _, args := range [][]string{
		{"apply", "-c", mumbai, "--grpc-addr", "192.0.2.1:9559"},
		{"diff", "-c", mumbai, "--grpc-addr", "192.0.2.1:9559"},
		{"get", "entries", "--grpc-addr", "192.0.2.1:9559"},
		{"push", "pipeline", "--p4info", "x.txtpb", "--grpc-addr", "192.0.2.1:9559"},
	} {
		code, out, errs := p4ctl(t, args...)
		expect(t, strings.Join(args, " "), code, exitUsage, out, errs, "--tls-ca", "--insecure", "192.0.2.1:9559")
		if strings.Contains(errs, "WithTLS") || strings.Contains(errs, "WithInsecure") {
			t.Errorf("%v: error names Go options: %s", args, errs)
		}
	}
}

// --election-id takes p4runtime-shell's HIGH,LOW form as well as one number
// (issue 15 item 2).
func TestElectionIDShellForm(t *testing.T) {
	sw := embeddedSwitch(t)
	code, out, errs := p4ctl(t, "get", "entries", "--grpc-addr", sw.Addr(), "--election-id", "1,0")
	expect(t, "get --election-id 1,0", code, exitOK, out, errs, "TABLE")
	code, out, errs = p4ctl(t, "apply", "-c", mumbai, "--grpc-addr", sw.Addr(), "--election-id", "1,0", "--grace", "0")
	expect(t, "apply --election-id 1,0", code, exitOK, out, errs, "epoch 0 → 1")
	code, out, errs = p4ctl(t, "apply", "-c", mumbai, "--grpc-addr", sw.Addr(), "--election-id", "2,0", "--grace", "0")
	expect(t, "apply --election-id 2,0", code, exitOK, out, errs, "nothing to do")
	code, out, errs = p4ctl(t, "apply", "-c", mumbai, "--grpc-addr", sw.Addr(), "--election-id", "1,x")
	expect(t, "apply --election-id 1,x", code, exitUsage, out, errs, "HIGH,LOW")
}

// Device id 0 (simple_switch_grpc's default) means device 0 on every
// command; a pipeline push to an id the switch does not serve says how to
// fix it (issue 15 item 15).
func TestDeviceIDZero(t *testing.T) {
	e, err := dataplane.Start(dataplane.Options{NoPipeline: true}, "127.0.0.1:0", p4rtserver.WithDeviceID(0))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Stop()
	info := p4infoFile(t)
	dev0 := []string{"--grpc-addr", e.Addr(), "--device-id", "0"}
	code, out, errs := p4ctl(t, "push", "pipeline", "--p4info", info, "--grpc-addr", e.Addr())
	expect(t, "push to device 1 of a device-0 switch", code, exitError, out, errs, "device id 1", "--device-id")
	code, out, errs = p4ctl(t, append([]string{"push", "pipeline", "--p4info", info}, dev0...)...)
	expect(t, "push --device-id 0", code, exitOK, out, errs, "pushed to device 0")
	code, out, errs = p4ctl(t, append([]string{"apply", "-c", mumbai, "--grace", "0"}, dev0...)...)
	expect(t, "apply --device-id 0", code, exitOK, out, errs, "epoch 0 → 1")
	code, out, errs = p4ctl(t, append([]string{"diff", "-c", mumbai}, dev0...)...)
	expect(t, "diff --device-id 0", code, exitOK, out, errs, "no drift")
	code, out, errs = p4ctl(t, append([]string{"get", "entries", "--table", "carbon_rank"}, dev0...)...)
	expect(t, "get --device-id 0", code, exitOK, out, errs, "carbon_rank")
}
