package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"

	"github.com/p4ctl/p4ctl/internal/testing/p4rttest"
)

// otherProgram writes the P4Info of another program: the p4ctl program's
// with every table renamed and renumbered.
func otherProgram(t *testing.T) string {
	t.Helper()
	info := p4rttest.ProgramP4Info()
	for _, tb := range info.Tables {
		tb.Preamble.Id++
		tb.Preamble.Name += "_v2"
		tb.Preamble.Alias += "_v2"
	}
	b, err := prototext.MarshalOptions{Multiline: true}.Marshal(info)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "other.p4info.txtpb")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Issue 27 item 11: with a P4Info of another program, get entries said
// "table id … is not in the P4Info", and run --p4info pushed it without a
// check (wiping the switch). get now says the file does not match the
// switch's program; run refuses it against the contract before pushing.
func TestP4InfoOfAnotherProgram(t *testing.T) {
	sw := embeddedSwitch(t)
	addr := sw.Addr()
	other := otherProgram(t)
	code, out, errs := p4ctl(t, "apply", "-c", mumbai, "--grpc-addr", addr, "--hour", "0", "--grace", "1ms")
	expect(t, "apply", code, exitOK, out, errs)

	code, out, errs = p4ctl(t, "get", "entries", "--grpc-addr", addr, "--config", other)
	expect(t, "get entries --config OTHER", code, exitError, out, errs, "does not match the program the switch runs", "leave out --config")
	if strings.Contains(errs, "is not in the P4Info") && !strings.Contains(errs, "does not match") {
		t.Errorf("the error blames an id, not the file:\n%s", errs)
	}
	code, out, errs = p4ctl(t, "get", "entries", "--grpc-addr", addr, "--config", "../../p4src/build/v1model/p4ctl.p4info.txtpb", "--table", "carbon_rank")
	expect(t, "get entries --config p4c's P4Info", code, exitOK, out, errs, "carbon_rank")

	code, out, errs = p4ctl(t, "run", "-c", mumbai, "--grpc-addr", addr, "--metrics-addr", "", "--replay", "2022-01-10T00", "--speed", "max",
		"--hours", "1", "--p4info", other)
	expect(t, "run --p4info OTHER", code, exitUsage, out, errs, "is not a P4Info of the p4ctl program", "nothing was pushed", "client_site")
	code, out, errs = p4ctl(t, "diff", "-c", mumbai, "--grpc-addr", addr, "--hour", "0")
	expect(t, "diff after the refused run", code, exitOK, out, errs, "no drift")
}

// Issue 27 item 14: get entries --table active_epoch showed nothing after
// another client had set the table's default action (a wildcard read
// returns no default entry); defaults that differ from the P4Info's
// initial one are read and shown.
func TestGetEntriesShowsChangedDefaults(t *testing.T) {
	sw := embeddedSwitch(t)
	addr := sw.Addr()
	code, out, errs := p4ctl(t, "get", "entries", "--grpc-addr", addr, "--table", "active_epoch")
	expect(t, "get entries on a fresh switch", code, exitOK, out, errs)
	if strings.Contains(out, "set_active_epoch") {
		t.Errorf("the initial default is shown as if changed:\n%s", out)
	}
	code, out, errs = p4ctl(t, "apply", "-c", mumbai, "--grpc-addr", addr, "--hour", "0", "--grace", "1ms")
	expect(t, "apply", code, exitOK, out, errs)
	code, out, errs = p4ctl(t, "get", "entries", "--grpc-addr", addr, "--table", "active_epoch")
	expect(t, "get entries --table active_epoch", code, exitOK, out, errs, "(default)", "set_active_epoch(epoch=1)")
	code, out, errs = p4ctl(t, "get", "entries", "--grpc-addr", addr)
	expect(t, "get entries (all tables)", code, exitOK, out, errs, "set_active_epoch(epoch=1)", "carbon_rank")
}
