package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// fleet's range errors name the flag at fault; --target-sites with more
// switches than the configuration has targets is a usage error too.
func TestFleetUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--switches", "0"}, "--switches 0: want 1..1000"},
		{[]string{"--switches", "1001"}, "--switches 1001"},
		{[]string{"--unreachable", "-1"}, "--unreachable -1"},
		{[]string{"--unreachable", "100000"}, "--unreachable 100000: want 0..1000"}, // issue 27: ran for minutes
		{[]string{"--hours", "0"}, "--hours 0"},
		{[]string{"--target-sites"}, "--target-sites with --switches 100: the configuration has 1 targets"},
		{[]string{"-c", "/nonexist.yaml"}, "nonexist"},
	}
	for _, c := range cases {
		args := append([]string{"fleet", "--no-plots"}, c.args...)
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, out, errs := p4ctl(t, args...)
			expect(t, strings.Join(args, " "), code, exitUsage, out, errs, c.want)
		})
	}
}

// Without -c, fleet runs the built-in example from any directory, and its
// help says so instead of "required".
func TestFleetDefaultConfig(t *testing.T) {
	t.Chdir(t.TempDir())
	code, out, errs := p4ctl(t, "fleet", "--help")
	expect(t, "fleet --help", code, exitOK, out, errs, "default: the built-in examples/mumbai.yaml")
	if strings.Contains(out, "required") {
		t.Errorf("fleet --help still calls a flag required:\n%s", out)
	}
	code, out, errs = p4ctl(t, "fleet", "--no-plots", "--switches", "1", "--unreachable", "0", "--hours", "2")
	expect(t, "fleet in an empty directory", code, exitOK, out, errs, "final diff clean on 1 of 1")
}

// Interrupted, fleet prints its partial report and exits non-zero, as demo
// and sim do (it exited 0 with "CANCELLED" in the report).
func TestFleetInterruptedExitsNonZero(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	var out, errb bytes.Buffer
	code := run(ctx, []string{"fleet", "-c", mumbai, "--no-plots", "--switches", "1", "--hours", "100000"}, &out, &errb)
	expect(t, "fleet interrupted", code, exitError, out.String(), errb.String(),
		"fleet: 1 embedded switches", "interrupted after", "of 100000 hours", "partial")
}
