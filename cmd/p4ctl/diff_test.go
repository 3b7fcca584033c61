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
