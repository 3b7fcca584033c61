package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/p4ctl/p4ctl/pkg/dataplane"
)

// A controller configuration given where p4runtime-shell's --config
// P4INFO[,DEVICE_CONFIG] is meant is recognised, -c included, with what to
// give instead (issue 15 item 8).
func TestControllerYAMLAsPipelineConfig(t *testing.T) {
	for _, args := range [][]string{
		{"get", "regions", "--config", mumbai},
		{"get", "regions", "-c", mumbai},
		{"get", "entries", "-c", mumbai + ",x.json"},
		{"push", "pipeline", "--config", mumbai},
		{"push", "pipeline", "-c", mumbai},
		{"push", "pipeline", "--p4info", mumbai},
	} {
		code, out, errs := p4ctl(t, args...)
		expect(t, strings.Join(args, " "), code, exitUsage, out, errs, "is a controller configuration", "P4INFO[,DEVICE_CONFIG]", "--grpc-addr 127.0.0.1:9559")
	}
}

// An empty P4Info is refused before anything is sent; a push that would
// delete the entries a switch holds asks for --force, and says what it
// deleted (issue 15 item 9).
func TestPushPipelineSafety(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.txtpb")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := p4ctl(t, "push", "pipeline", "--p4info", empty, "--grpc-addr", deadAddr(t))
	expect(t, "push of an empty P4Info", code, exitUsage, out, errs, empty, "empty P4Info")
	if strings.Contains(errs, "connection refused") {
		t.Errorf("the empty P4Info reached the network: %s", errs)
	}

	e, err := dataplane.Start(dataplane.Options{}, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer e.Stop()
	info := p4infoFile(t)
	conn := []string{"--grpc-addr", e.Addr()}
	code, out, errs = p4ctl(t, append([]string{"push", "pipeline", "--p4info", info}, conn...)...)
	expect(t, "push onto an empty switch", code, exitOK, out, errs, "pushed to device 1")
	if strings.Contains(out, "deleted") {
		t.Errorf("nothing was deleted: %s", out)
	}
	code, out, errs = p4ctl(t, append([]string{"apply", "-c", mumbai, "--grace", "0"}, conn...)...)
	expect(t, "apply", code, exitOK, out, errs, "74 writes")
	code, out, errs = p4ctl(t, append([]string{"push", "pipeline", "--p4info", info}, conn...)...)
	expect(t, "push over entries", code, exitError, out, errs, "holds 73 table entries", "--force")
	code, out, errs = p4ctl(t, append([]string{"diff", "-c", mumbai}, conn...)...)
	expect(t, "diff after the refused push", code, exitOK, out, errs, "no drift")
	code, out, errs = p4ctl(t, append([]string{"push", "pipeline", "--p4info", info, "--action", "verify"}, conn...)...)
	expect(t, "verify over entries", code, exitOK, out, errs, "VERIFY")
	code, out, errs = p4ctl(t, append([]string{"push", "pipeline", "--p4info", info, "--force"}, conn...)...)
	expect(t, "push --force", code, exitOK, out, errs, "the 73 table entries the device held are deleted")
}
