package main

import (
	"strings"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/internal/testing/testnet"
)

// Issue 27 item 8: a socket that accepts and never answers was reported
// as "not reachable" (switch commands) and made get latency wait its whole
// 30 s --timeout. Both now say "connected, but no … answer" within the
// switch commands' connect timeout (5 s).
func TestAcceptAndHang(t *testing.T) {
	addr := testnet.SilentListener(t)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"get", "entries", "--grpc-addr", addr}, "connected, but no P4Runtime answer within 5s"},
		{[]string{"apply", "-c", mumbai, "--grpc-addr", addr}, "connected, but no P4Runtime answer within 5s"},
		{[]string{"get", "latency", "--controller", addr}, "connected, but no HTTP answer within 5s"},
		{[]string{"run", "-c", mumbai, "--grpc-addr", addr, "--metrics-addr", "", "--replay", "2022-01-10T00", "--speed", "max", "--hours", "1"},
			"connected, but no P4Runtime answer"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args[:2], " "), func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			code, out, errs := p4ctl(t, c.args...)
			expect(t, strings.Join(c.args, " "), code, exitError, out, errs, c.want)
			if d := time.Since(start); d > 15*time.Second {
				t.Errorf("took %v, want about the 5 s connect timeout", d)
			}
		})
	}
}
