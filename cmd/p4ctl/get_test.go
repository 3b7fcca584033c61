package main

import (
	"strings"
	"testing"
)

// get refuses the flags a subcommand does not use (get latency read the
// controller and silently ignored --grpc-addr, --tls-ca and -c) and
// validates the addresses it takes (exit 2 before anything is dialled).
func TestGetRefusesUnusedAndBadFlags(t *testing.T) {
	ctl := []string{"get", "latency", "--controller", "127.0.0.1:1"}
	cases := []struct {
		args []string
		want string
	}{
		{append(ctl, "--grpc-addr", "10.9.9.9:1"), "--grpc-addr is not used here"},
		{append(ctl, "--tls-ca", "/nonexist"), "--tls-ca is not used here"},
		{append(ctl, "-c", "/nonexist"), "--config is not used here"},
		{append(ctl, "--thrift-addr", "127.0.0.1:9090"), "--thrift-addr is not used here"},
		{append(ctl, "--device-id", "3"), "--device-id is not used here"},
		{[]string{"get", "latency", "--controller", "bad"}, `--controller "bad": want host:port`},
		{[]string{"get", "latency", "--controller", "127.0.0.1:0"}, "--controller"},
		{[]string{"get", "regions", "--grpc-addr", "127.0.0.1:1", "--thrift-addr", "bad"}, `--thrift-addr "bad": want host:port`},
		{[]string{"get", "registers", "--grpc-addr", "127.0.0.1:1", "--thrift-addr", "127.0.0.1:99999"}, "--thrift-addr"},
		{[]string{"get", "entries", "--grpc-addr", "127.0.0.1:1", "--thrift-addr", "127.0.0.1:9090"}, "--thrift-addr is not used here"},
		{[]string{"get", "counters", "--grpc-addr", "127.0.0.1:1", "--thrift-addr", "127.0.0.1:9090"}, "--thrift-addr is not used here"},
		{[]string{"get", "entries", "--grpc-addr", "127.0.0.1:-1"}, "--grpc-addr"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			code, out, errs := p4ctl(t, c.args...)
			expect(t, strings.Join(c.args, " "), code, exitUsage, out, errs, c.want)
		})
	}
	// What get latency does use still works: --timeout, and the default
	// --grpc-addr is not "given".
	code, out, errs := p4ctl(t, "get", "latency", "--controller", deadAddr(t), "--timeout", "2s")
	expect(t, "get latency of a controller that is down", code, exitError, out, errs, "connection refused")
	// --election-id is accepted, unused, by every get (its help says so).
	code, out, errs = p4ctl(t, "get", "latency", "--controller", deadAddr(t), "--timeout", "2s", "--election-id", "1,0")
	expect(t, "get latency --election-id", code, exitError, out, errs, "connection refused")
}
