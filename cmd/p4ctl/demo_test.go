package main

import (
	"os"
	"strings"
	"testing"
)

// demo validates --hours before what depends on it (--hours -1 reported
// "--drift-after 0: want 0..--hours (-1)"), and --speed like run.
func TestDemoUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--hours", "-1"}, "--hours -1: want 1..8784"},
		{[]string{"--hours", "0", "--drift-after", "3"}, "--hours 0"},
		{[]string{"--hours", "4", "--drift-after", "5"}, "--drift-after 5"},
		{[]string{"--speed", "NaNx"}, `--speed "NaNx"`},
		{[]string{"--speed", "Inf"}, `--speed "Inf"`},
		{[]string{"--grpc-addr", "127.0.0.1:-1"}, "--grpc-addr"},
	}
	for _, c := range cases {
		args := append([]string{"demo", "--quick", "--out-dir", ""}, c.args...)
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			code, out, errs := p4ctl(t, args...)
			expect(t, strings.Join(args, " "), code, exitUsage, out, errs, c.want)
		})
	}
}

// The demo's help and the README describe the drift episode by its parts
// (a latency window, 2.5 s of drift, four windows to recover), not as
// "about 15 s", which its printed moments (seconds since the episode
// began, within its first seven or so) seemed to contradict.
func TestDemoDriftEpisodeText(t *testing.T) {
	code, out, errs := p4ctl(t, "demo", "--help")
	expect(t, "demo --help", code, exitOK, out, errs, "seconds since the episode began", "four windows")
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string]string{"demo --help": out, "README.md": string(readme)} {
		flat := strings.Join(strings.Fields(text), " ")
		if strings.Contains(flat, "15 s") {
			t.Errorf("%s still gives the drift episode a hard-coded duration (15 s)", what)
		}
	}
	if !strings.Contains(strings.Join(strings.Fields(string(readme)), " "), "seconds since the episode began") {
		t.Error("README.md does not say what the printed moments' times are")
	}
}
