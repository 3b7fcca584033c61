package main

import (
	"strings"
	"testing"

	"github.com/p4ctl/p4ctl/pkg/cmdutil"
)

// cmdutil.ParseSpeed takes a finite factor or max; NaN and infinities are usage
// errors as a negative factor is (NaN made p4ctl run wait for ever).
func TestParseSpeed(t *testing.T) {
	cases := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"3600x", 3600, true},
		{"3600", 3600, true},
		{"max", 0, true},
		{"0x", 0, false}, // as the configuration's speed: 0 (issue 27 item 9)
		{"0", 0, false},
		{"-5x", 0, false},
		{"NaNx", 0, false},
		{"nan", 0, false},
		{"Infx", 0, false},
		{"+Inf", 0, false},
		{"-Infx", 0, false},
		{"1e10x", 0, false},
		{"", 0, false},
		{"fast", 0, false},
	}
	for _, c := range cases {
		v, err := cmdutil.ParseSpeed(c.in)
		if (err == nil) != c.ok || (c.ok && v != c.want) {
			t.Errorf("cmdutil.ParseSpeed(%q) = %v, %v; want %v (ok %v)", c.in, v, err, c.want, c.ok)
		}
	}
}

func TestCheckHostPort(t *testing.T) {
	cases := []struct {
		addr   string
		listen bool
		ok     bool
	}{
		{"127.0.0.1:9559", false, true},
		{"[::1]:9559", false, true},
		{"localhost:1", false, true},
		{"127.0.0.1:0", true, true},
		{":9800", true, true},
		{":9800", false, false},
		{"127.0.0.1:0", false, false},
		{"127.0.0.1:-1", true, false},
		{"127.0.0.1:65536", true, false},
		{"127.0.0.1:http", false, false},
		{"nohost", true, false},
		{"bad", false, false},
	}
	for _, c := range cases {
		err := cmdutil.CheckHostPort("--x", c.addr, c.listen)
		if (err == nil) != c.ok {
			t.Errorf("cmdutil.CheckHostPort(%q, listen %v) = %v, want ok %v", c.addr, c.listen, err, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "--x") {
			t.Errorf("%q: %v does not name the flag", c.addr, err)
		}
	}
}

// A flag given explicitly with an empty value is refused (exit 2, naming
// it), never taken for the flag left out.
func TestEmptyFlagValuesRefused(t *testing.T) {
	dead := "127.0.0.1:1"
	cases := [][]string{
		{"plan", "-c", mumbai, "--policy", ""},
		{"plan", "-c", mumbai, "--at", ""},
		{"plan", "-c", mumbai, "--table", ""},
		{"plan", "-c", mumbai, "--target", ""},
		{"gen", "config", "--policy", ""},
		{"gen", "config", "--file", ""},
		{"diff", "-c", mumbai, "--grpc-addr", ""},
		{"diff", "-c", mumbai, "--grpc-addr", dead, "--at", ""},
		{"apply", "-c", mumbai, "--grpc-addr", ""},
		{"apply", "-c", mumbai, "--grpc-addr", dead, "--tls-ca", ""},
		{"run", "-c", mumbai, "--grpc-addr", ""},
		{"run", "-c", mumbai, "--grpc-addr", dead, "--replay", "2022-01-01T00", "--speed", ""},
		{"run", "-c", mumbai, "--grpc-addr", dead, "--replay", ""},
		{"demo", "--quick", "-c", ""},
		{"demo", "--quick", "--start", ""},
		{"demo", "--quick", "--grpc-addr", ""},
		{"fleet", "--no-plots", "-c", ""},
		{"get", "entries", "--grpc-addr", dead, "--thrift-addr", ""},
		{"get", "regions", "--grpc-addr", dead, "-c", ""},
		{"get", "latency", "--controller", ""},
	}
	for _, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			flag := ""
			for i, a := range args {
				if i+1 < len(args) && args[i+1] == "" {
					flag = a
				}
			}
			if flag == "-c" {
				flag = "--config"
			}
			code, out, errs := p4ctl(t, args...)
			expect(t, strings.Join(args, " "), code, exitUsage, out, errs, flag+": empty value")
		})
	}
}

// --energy-per-request-wh must be finite, > 0 and not absurd (NaN printed
// "NaN g" and broke -o json; 1e308 overflowed to +Inf), in demo and run.
func TestEnergyPerRequestBounded(t *testing.T) {
	for _, v := range []string{"NaN", "Inf", "-Inf", "1e308", "0", "-1", "1001"} {
		for _, args := range [][]string{
			{"demo", "--quick", "--out-dir", "", "--energy-per-request-wh", v},
			{"run", "-c", mumbai, "--grpc-addr", "127.0.0.1:1", "--energy-per-request-wh", v},
		} {
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				code, out, errs := p4ctl(t, args...)
				expect(t, strings.Join(args, " "), code, exitUsage, out, errs, "--energy-per-request-wh")
			})
		}
	}
}
