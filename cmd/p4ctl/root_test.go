package main

import (
	"bytes"
	"context"
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
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), c.args, &out, &errb)
			if code != c.code {
				t.Fatalf("exit %d, want %d (stderr %q)", code, c.code, errb.String())
			}
			if !strings.Contains(out.String(), c.wantOut) || !strings.Contains(errb.String(), c.wantErr) {
				t.Fatalf("stdout %q stderr %q", out.String(), errb.String())
			}
		})
	}
}
