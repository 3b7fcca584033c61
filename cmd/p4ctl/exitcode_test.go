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
	// Found by the issue 27 campaign: TLS files and a P4Info of another
	// program exited 1 (found unusable only when dialling or starting),
	// serve's --log in a missing directory too.
	other := filepath.Join(dir, "other.p4info.txt")
	if err := os.WriteFile(other, []byte(`tables { preamble { id: 33554433 name: "MyIngress.ipv4_lpm" alias: "ipv4_lpm" }
  match_fields { id: 1 name: "hdr.ipv4.dstAddr" bitwidth: 32 match_type: LPM } size: 1024 }`), 0o600); err != nil {
		t.Fatal(err)
	}
	tlsTarget := filepath.Join(dir, "tls.yaml")
	if err := os.WriteFile(tlsTarget, []byte(strings.Replace(string(b), "    election_id: 1\n", "    election_id: 1\n    tls: {ca: "+file+"}\n", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
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
		{[]string{"apply", "-c", mumbai, "--grpc-addr", dead, "--tls-ca", missing}, "--tls-ca"},
		{[]string{"get", "entries", "--grpc-addr", dead, "--tls-ca", file}, "holds no PEM certificate"},
		{[]string{"diff", "-c", tlsTarget}, "target edge-1: tls: p4rt: CA file"},
		{[]string{"switch", "--grpc-addr", "127.0.0.1:0", "--p4info", other}, "does not match the p4ctl program"},
		{[]string{"switch", "--grpc-addr", "127.0.0.1:0", "--tls-cert", file, "--tls-key", file}, "--tls-cert"},
		{[]string{"serve", "--server-id", "1", "--addr", "127.0.0.1:0", "--log", filepath.Join(dir, "none", "x.log")}, "--log"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args[:2], " "), func(t *testing.T) {
			code, out, errs := p4ctl(t, c.args...)
			expect(t, strings.Join(c.args, " "), code, exitUsage, out, errs, c.want)
		})
	}
}

// Issue 27 item 10: sim micro --parallel -1 and --election-id 2^64 were
// accepted; tune jbsq --delay -1us said "delay -1 must be ≥ 0" (no flag,
// no unit). Each is a usage error naming the flag and the unit.
func TestFlagValuesNamed(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"sim", "micro", "e1", "--quick", "--parallel", "-1"}, "--parallel -1: want 0..4096"},
		{[]string{"sim", "micro", "run", "--quick", "--parallel", "100000"}, "--parallel 100000"},
		{[]string{"apply", "-c", mumbai, "--grpc-addr", "127.0.0.1:1", "--dry-run", "--election-id", "18446744073709551616"}, "one number is the low word, at most 18446744073709551615; for a high word write HIGH,LOW (this number is 1,0)"},
		{[]string{"push", "pipeline", "--grpc-addr", "127.0.0.1:1", "--election-id", "340282366920938463463374607431768211455"}, "one number is the low word"},
		{[]string{"tune", "jbsq", "--delay", "-1us"}, "--delay -1µs: want a duration ≥ 0"},
		{[]string{"tune", "jbsq", "--slo", "0s"}, "--slo 0s: want a duration > 0"},
		{[]string{"sim", "micro", "run", "--quick", "--service-mean", "-5us"}, "--service-mean -5µs"},
		// the campaign's four unclear messages: each names its flag
		{[]string{"get", "entries", "--grpc-addr", "127.0.0.1:1", "--device-id", "18446744073709551616"}, `"--device-id" flag: out of range for an unsigned integer`},
		{[]string{"sim", "serverless", "--quick", "--warmup", "1"}, "--warmup 1: want a share"},
		{[]string{"eval", "carbon", "--quick", "--no-plots", "--w", "2"}, "--w 2: want policy D's weight in [0, 1]"},
		{[]string{"sim", "micro", "run", "--quick", "--hosts", "0"}, "--hosts 0: want ≥ 1"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args[:2], " "), func(t *testing.T) {
			code, out, errs := p4ctl(t, c.args...)
			expect(t, strings.Join(c.args, " "), code, exitUsage, out, errs, c.want)
		})
	}
	// HIGH,LOW stays the way to give a high word.
	code, out, errs := p4ctl(t, "apply", "-c", mumbai, "--grpc-addr", "127.0.0.1:1", "--dry-run", "--election-id", "1,0")
	if code == exitUsage {
		t.Errorf("--election-id 1,0: usage error\n%s%s", out, errs)
	}
}

// Issue 27 item 5: apply, diff and run ignored --device-id when the
// targets came from the configuration; it is refused there, and still
// applies with --grpc-addr.
func TestDeviceIDWithConfiguredTargets(t *testing.T) {
	for _, cmd := range [][]string{
		{"apply", "-c", mumbai, "--device-id", "0", "--dry-run"},
		{"diff", "-c", mumbai, "--device-id", "0"},
		{"run", "-c", mumbai, "--device-id", "0", "--metrics-addr", ""},
	} {
		t.Run(cmd[0], func(t *testing.T) {
			code, out, errs := p4ctl(t, cmd...)
			expect(t, strings.Join(cmd, " "), code, exitUsage, out, errs, "--device-id applies to --grpc-addr only", "device_id")
		})
	}
	sw := embeddedSwitch(t)
	code, out, errs := p4ctl(t, "diff", "-c", mumbai, "--grpc-addr", sw.Addr(), "--device-id", "1")
	expect(t, "diff --grpc-addr --device-id 1", code, exitError, out, errs, "drift")
}
