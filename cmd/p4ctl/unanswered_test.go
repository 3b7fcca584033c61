package main

import (
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// silentServer listens on loopback, accepts every connection and never
// answers (a hung switch, or another service); it returns its address.
func silentServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return l.Addr().String()
}

// Issue 27 item 8: a socket that accepts and never answers was reported
// as "not reachable" (switch commands) and made get latency wait its whole
// 30 s --timeout. Both now say "connected, but no … answer" within the
// switch commands' connect timeout (5 s).
func TestAcceptAndHang(t *testing.T) {
	addr := silentServer(t)
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
