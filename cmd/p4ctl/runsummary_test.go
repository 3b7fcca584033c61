package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// configWithTargets writes examples/mumbai.yaml with its targets replaced
// by targets (YAML list items) and returns the file's path.
func configWithTargets(t *testing.T, targets string) string {
	t.Helper()
	b, err := os.ReadFile(mumbai)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	const old = "targets:\n  - name: edge-1\n    grpc_addr: 127.0.0.1:9559\n    device_id: 1\n    election_id: 1\n"
	if !strings.Contains(s, old) {
		t.Fatal("examples/mumbai.yaml's targets block changed")
	}
	s = strings.Replace(s, old, "targets:\n"+targets, 1)
	p := filepath.Join(t.TempDir(), "cfg.yaml")
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	// Relative paths in the example resolve against its directory.
	return p
}

// Issue 27 item 2: a replay that never reached a switch exited 0 after
// "replay finished"; it now exits 1 naming the target, and every run ends
// with one summary line per target (hours pushed, failures).
func TestRunReplaySummary(t *testing.T) {
	sw := embeddedSwitch(t)
	replay := []string{"--metrics-addr", "", "--replay", "2022-01-10T00", "--speed", "max", "--hours", "3", "--grace", "1ms"}

	code, out, errs := p4ctl(t, append([]string{"run", "-c", mumbai, "--grpc-addr", sw.Addr()}, replay...)...)
	expect(t, "run against a live switch", code, exitOK, out, errs, "replay finished", "target summary", "pushed_hours=3", "failures=0")

	code, out, errs = p4ctl(t, append([]string{"run", "-c", mumbai, "--grpc-addr", "127.0.0.1:1"}, replay...)...)
	expect(t, "run against a closed port", code, exitError, out, errs, "target summary", "pushed_hours=0", "nothing was pushed to", "127.0.0.1:1")
	if strings.Contains(errs, "level=INFO msg=\"replay finished\"") {
		t.Errorf("a replay that pushed nothing is logged as finished at INFO:\n%s", errs)
	}

	cfg := configWithTargets(t, "  - {name: good, grpc_addr: "+sw.Addr()+", device_id: 1, election_id: 5}\n  - {name: gone, grpc_addr: 127.0.0.1:1, device_id: 1, election_id: 5}\n")
	code, out, errs = p4ctl(t, append([]string{"run", "-c", cfg}, replay...)...)
	expect(t, "run with one target unreachable", code, exitError, out, errs, "target=good", "target=gone", "nothing was pushed to target gone")
	if strings.Contains(errs, "nothing was pushed to target good") {
		t.Errorf("the reachable target is blamed:\n%s", errs)
	}
}

// Issue 27 item 12: starting the daemon with --p4info (p4c's P4Info of the
// program) against an embedded switch that already runs it and holds the
// plan pushed the pipeline again — every entry deleted and rewritten —
// because the built-in P4Info lists three tables in another order. It is
// now recognised as the same program: nothing pushed, nothing written.
func TestRunP4InfoSameProgramLeavesSwitch(t *testing.T) {
	sw := embeddedSwitch(t)
	code, out, errs := p4ctl(t, "apply", "-c", mumbai, "--grpc-addr", sw.Addr(), "--hour", "0", "--grace", "1ms")
	expect(t, "apply", code, exitOK, out, errs)
	code, out, errs = p4ctl(t, "run", "-c", mumbai, "--grpc-addr", sw.Addr(), "--metrics-addr", "", "--replay", "2022-01-10T00",
		"--speed", "max", "--hours", "1", "--p4info", "../../p4src/build/v1model/p4ctl.p4info.txtpb")
	expect(t, "run --p4info", code, exitOK, out, errs)
	if strings.Contains(errs, "pushed the pipeline") || strings.Contains(errs, "msg=pushed") {
		t.Fatalf("the daemon pushed the pipeline again (or rewrote entries) on a switch running the same program:\n%s", errs)
	}
}
