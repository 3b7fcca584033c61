package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 27 item 9: one exit-code rule for inputs. --speed 0x was accepted
// on the command line and refused in the configuration; a missing -c file
// exited 1 where the README says configuration errors exit 2; a missing
// trace directory exited 2 but a file given as --traces 1. Now any input
// that cannot be used as given (missing, unreadable, a directory, not the
// expected format) exits 2, before anything is contacted.
func TestInputExitCodeRule(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.csv")
	if err := os.WriteFile(file, []byte("timestamp_utc,zone,gco2_per_kwh\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	badTraces := filepath.Join(dir, "bad")
	if err := os.Mkdir(badTraces, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(badTraces, "x.csv"), []byte("timestamp_utc;zone;gco2_per_kwh\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(mumbai)
	if err != nil {
		t.Fatal(err)
	}
	zeroSpeed := filepath.Join(dir, "zero.yaml")
	if err := os.WriteFile(zeroSpeed, []byte(strings.Replace(string(b), "speed: 3600 ", "speed: 0    ", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.yaml")
	dead := "127.0.0.1:1"
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"plan", "-c", missing}, "no such file"},
		{[]string{"plan", "-c", dir}, "is a directory"},
		{[]string{"apply", "-c", missing, "--grpc-addr", dead}, "no such file"},
		{[]string{"diff", "-c", missing, "--grpc-addr", dead}, "no such file"},
		{[]string{"run", "-c", missing, "--grpc-addr", dead}, "no such file"},
		{[]string{"eval", "stability", "-c", missing, "--quick"}, "no such file"},
		{[]string{"eval", "carbon", "--traces", filepath.Join(dir, "none"), "--no-plots"}, "does not exist"},
		{[]string{"eval", "carbon", "--traces", file, "--no-plots"}, "is a file, not a directory"},
		{[]string{"eval", "carbon", "--traces", badTraces, "--no-plots"}, "fields separated by ';'"},
		{[]string{"eval", "carbon", "--sites", missing, "--site", "x", "--no-plots"}, "no such file"},
		{[]string{"push", "pipeline", "--grpc-addr", dead, "--p4info", missing}, "no such file"},
		{[]string{"run", "-c", mumbai, "--grpc-addr", dead, "--metrics-addr", "", "--p4info", missing}, "no such file"},
		{[]string{"run", "-c", mumbai, "--grpc-addr", dead, "--metrics-addr", "", "--replay", "2022-01-10T00", "--speed", "0x"}, "want a factor > 0"},
		{[]string{"run", "-c", zeroSpeed, "--metrics-addr", ""}, "speed must be > 0"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args[:2], " "), func(t *testing.T) {
			code, out, errs := p4ctl(t, c.args...)
			expect(t, strings.Join(c.args, " "), code, exitUsage, out, errs, c.want)
		})
	}
}
