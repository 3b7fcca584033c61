package main

import "testing"

// --hour is bounded by the carbon data (the offline model's 8760 hours):
// beyond it plan and apply exit 2 before anything is written, instead of
// wrapping into 1729 or compiling for 2113 (issue 15 item 3).
func TestHourBounded(t *testing.T) {
	code, out, errs := p4ctl(t, "plan", "-c", mumbai, "--hour", "2562048")
	expect(t, "plan --hour 2562048", code, exitUsage, out, errs, "--hour 2562048: want 0..8759")
	code, out, errs = p4ctl(t, "plan", "-c", mumbai, "--hour", "8759", "--table", "active_epoch")
	expect(t, "plan --hour 8759", code, exitOK, out, errs, "active_epoch")

	sw := embeddedSwitch(t)
	code, out, errs = p4ctl(t, "apply", "-c", mumbai, "--grpc-addr", sw.Addr(), "--hour", "1000000000")
	expect(t, "apply --hour 1000000000", code, exitUsage, out, errs, "want 0..8759")
	code, out, errs = p4ctl(t, "diff", "-c", mumbai, "--grpc-addr", sw.Addr(), "-o", "json")
	expect(t, "diff after the refused apply", code, exitError, out, errs, `"drift": true`)
}
