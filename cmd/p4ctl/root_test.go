package main

import (
	"strings"
	"testing"
)

func TestExitCodes(t *testing.T) {
	cases := []struct {
		args    []string
		code    int
		wantOut string
		wantErr string
	}{
		{[]string{"version"}, exitOK, "VERSION", ""},
		{[]string{"version", "-o", "json"}, exitOK, `"go_version"`, ""},
		{[]string{"version", "-o", "xml"}, exitUsage, "", "unknown output format"},
		{[]string{"no-such-command"}, exitUsage, "", "unknown command"},
		{[]string{"version", "--no-such-flag"}, exitUsage, "", "unknown flag"},
		{[]string{"version", "extra"}, exitUsage, "", "unknown command"},
		// Groups: a missing or unknown subcommand is a usage error.
		{[]string{"sim"}, exitUsage, "", "p4ctl sim what? micro, serverless"},
		{[]string{"sim", "bogus"}, exitUsage, "", `unknown command "bogus" for "p4ctl sim"`},
		{[]string{"eval"}, exitUsage, "", "p4ctl eval what? carbon"},
		{[]string{"tune", "bogus"}, exitUsage, "", "unknown command"},
		{[]string{"get"}, exitUsage, "", "p4ctl get what? counters, entries, regions, registers"},
		{[]string{"push"}, exitUsage, "", "p4ctl push what? pipeline"},
		{[]string{"sim", "--help"}, exitOK, "Available Commands", ""},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			code, out, errb := p4ctl(t, c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d (stderr %q)", code, c.code, errb)
			}
			if !strings.Contains(out, c.wantOut) || !strings.Contains(errb, c.wantErr) {
				t.Fatalf("stdout %q stderr %q", out, errb)
			}
		})
	}
}
