package main

import "testing"

// diff exits 1 on drift only: an unreachable switch is an error (3, as
// kubectl diff's > 1), a bad flag a usage error (2) (issue 15 item 4).
func TestDiffExitCodes(t *testing.T) {
	code, out, errs := p4ctl(t, "diff", "-c", mumbai, "--grpc-addr", deadAddr(t))
	expect(t, "diff of a switch that is down", code, 3, out, errs, "connection refused")
	code, out, errs = p4ctl(t, "diff", "-c", mumbai, "--grpc-addr", "nohost")
	expect(t, "diff with a bad address", code, exitUsage, out, errs, "want host:port")
	sw := embeddedSwitch(t)
	code, out, errs = p4ctl(t, "diff", "-c", mumbai, "--grpc-addr", sw.Addr())
	expect(t, "diff of an empty switch", code, exitError, out, errs, "drift:")
}

// A configuration diff cannot read (no such file, a directory) is never 1,
// which means drift alone: like an invalid configuration, it is a usage
// error (2), the rule of every command (issue 27 item 9; it was 3).
func TestDiffConfigErrorsAreNotDrift(t *testing.T) {
	dead := deadAddr(t)
	cases := []struct {
		name   string
		config string
		code   int
		want   string
	}{
		{"missing file", "/nonexist.yaml", exitUsage, "no such file"},
		{"directory", t.TempDir() + "/", exitUsage, "is a directory"},
		{"empty path", "", exitUsage, "--config is required"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := p4ctl(t, "diff", "-c", c.config, "--grpc-addr", dead)
			expect(t, "diff -c "+c.config, code, c.code, out, errs, c.want)
		})
	}
}
