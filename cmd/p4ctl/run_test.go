package main

import (
	"strings"
	"testing"
)

// run's usage errors: --speed NaNx hung (the replay clock never reached
// the next hour), --speed "" and --shards 0 were taken as not given.
func TestRunUsageErrors(t *testing.T) {
	base := []string{"run", "-c", mumbai, "--grpc-addr", "127.0.0.1:1", "--metrics-addr", "", "--replay", "2022-01-10T00", "--hours", "2"}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--speed", "NaNx"}, `--speed "NaNx"`},
		{[]string{"--speed", "Infx"}, `--speed "Infx"`},
		{[]string{"--speed", "-5x"}, "--speed"},
		{[]string{"--speed", ""}, "--speed: empty value"},
		{[]string{"--shards", "0"}, "--shards 0: want ≥ 1"},
		{[]string{"--shards", "-2"}, "--shards -2"},
		{[]string{"--grace", "-1s"}, "--grace -1s"},
		{[]string{"--poll", "-1s"}, "--poll -1s"},
	}
	for _, c := range cases {
		args := append(append([]string{}, base...), c.args...)
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			code, out, errs := p4ctl(t, args...)
			expect(t, strings.Join(args, " "), code, exitUsage, out, errs, c.want)
		})
	}
	code, out, errs := p4ctl(t, "run", "-c", mumbai, "--grpc-addr", "127.0.0.1:1", "--metrics-addr", "127.0.0.1:-1")
	expect(t, "run --metrics-addr 127.0.0.1:-1", code, exitUsage, out, errs, "--metrics-addr")
}
