package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/internal/testing/testnet"
)

// syncBuffer is a bytes.Buffer safe for a command writing while the test
// reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runUntil runs p4ctl with args, interrupts it (cancels its context) wait
// after stderr holds after, and returns the exit code and output; the command
// must end within a second of the interrupt.
func runUntil(t *testing.T, after string, wait time.Duration, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, args, &out, &errb) }()
	deadline := time.After(30 * time.Second)
	for !strings.Contains(errb.String(), after) {
		select {
		case code := <-done:
			t.Fatalf("%v ended (exit %d) before %q\n%s%s", args, code, after, out.String(), errb.String())
		case <-deadline:
			t.Fatalf("%v: no %q within 30 s\n%s", args, after, errb.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	time.Sleep(wait) // into the --grace wait
	cancel()
	select {
	case code := <-done:
		return code, out.String(), errb.String()
	case <-time.After(time.Second):
		t.Fatalf("%v: still running 1 s after the interrupt\n%s", args, errb.String())
	}
	return 0, "", ""
}

// Issue 27 item 3: Ctrl-C during run's --grace left a flipped epoch with
// the old generation in place and said nothing; during apply --grace it
// said only "context canceled". Both now say what each switch holds and
// what cleans it up.
func TestInterruptDuringGrace(t *testing.T) {
	sw := embeddedSwitch(t)
	addr := sw.Addr()

	// run: hour 0 fills the empty switch, hour 1 flips and waits --grace.
	code, _, errs := runUntil(t, "hour=2022-01-10T01:00:00Z", 300*time.Millisecond, "run", "-c", mumbai, "--grpc-addr", addr, "--metrics-addr", "",
		"--replay", "2022-01-10T00", "--speed", "max", "--hours", "2", "--grace", "20s")
	expect(t, "run interrupted in --grace", code, exitOK, "", errs, `msg="interrupted: switch state"`, "flipped=true", "leftover_epoch=1",
		"the flip to epoch 2", "is still installed", "cleanup=\"p4ctl apply -c "+mumbai+" --grpc-addr "+addr+" --at 2022-01-10T01:00:00Z")

	// apply: the switch holds hour 1 at epoch 2 plus epoch 1's leftovers;
	// apply hour 5 flips to epoch 1 (its own first stage replaces them).
	code, out, errs := runUntil(t, "", 1500*time.Millisecond, "apply", "-c", mumbai, "--grpc-addr", addr, "--hour", "5", "--grace", "20s")
	_ = out
	if code == exitOK || !strings.Contains(errs, "interrupted") || !strings.Contains(errs, "happened") ||
		!strings.Contains(errs, "run the same apply again") {
		t.Fatalf("apply interrupted in --grace: exit %d, stderr %q: want an error saying the flip happened and how to clean up", code, errs)
	}
	code, out, errs = p4ctl(t, "apply", "-c", mumbai, "--grpc-addr", addr, "--hour", "5", "--grace", "1ms")
	expect(t, "apply again", code, exitOK, out, errs, "cleanup")
	code, out, errs = p4ctl(t, "diff", "-c", mumbai, "--grpc-addr", addr, "--hour", "5")
	expect(t, "diff after the cleanup", code, exitOK, out, errs, "no drift")
}

// Issue 27: Ctrl-C while a one-shot command connected to a switch that
// accepts and never answers said "not reachable" (of a switch that may be
// fine); it says it stopped while connecting and left nothing.
func TestInterruptWhileConnecting(t *testing.T) {
	addr := testnet.SilentListener(t)
	for _, args := range [][]string{
		{"get", "entries", "--grpc-addr", addr},
		{"apply", "-c", mumbai, "--grpc-addr", addr},
		{"diff", "-c", mumbai, "--grpc-addr", addr},
		{"push", "pipeline", "--grpc-addr", addr, "--p4info", "../../p4src/build/v1model/p4ctl.p4info.txtpb"},
	} {
		_, _, errs := runUntil(t, "", 300*time.Millisecond, args...)
		if !strings.Contains(errs, "stopped while connecting, nothing read or written") || strings.Contains(errs, "not reachable") {
			t.Errorf("%v interrupted while connecting: %q", args, errs)
		}
	}
}

// Issue 27: an experiment stopped by Ctrl-C said only "context canceled"
// (sim micro: a line per run in flight); each says, on one line, that it
// leaves nothing (no result printed, no plot written).
func TestInterruptExperimentsLeaveNothing(t *testing.T) {
	for _, args := range [][]string{
		{"eval", "carbon", "--no-plots", "--runs", "10000"},
		{"eval", "stability", "--no-plots"},
		{"eval", "scale", "--no-plots"},
		{"sim", "micro", "e1", "--no-plots"},
		{"sim", "serverless", "--no-plots"},
		{"sim", "serverless", "ratios"},
		{"sim", "serverless", "figures"},
		{"tune", "jbsq", "--no-plots"},
	} {
		code, out, errs := runUntil(t, "", 400*time.Millisecond, args...)
		if code != exitError || out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 ||
			!strings.Contains(errs, "interrupted: ") || !strings.Contains(errs, "nothing printed or written") {
			t.Errorf("%v interrupted: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
}

// Issue 27: an interrupted demo said "interrupted: context canceled"; it
// says after how many hours, and that the totals printed cover them.
func TestInterruptDemo(t *testing.T) {
	code, out, errs := runUntil(t, "", 1200*time.Millisecond, "demo", "--out-dir", "", "--hours", "24", "--requests", "200", "--speed", "7200x")
	if code != exitError || !strings.Contains(errs, "error: interrupted: demo: stopped after ") || !strings.Contains(errs, "the totals above cover those hours") ||
		!strings.Contains(out, "the totals below cover the hours above only") {
		t.Errorf("demo interrupted: exit %d\n%s\n%s", code, out, errs)
	}
}
