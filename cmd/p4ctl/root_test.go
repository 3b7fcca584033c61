package main

import (
	"io"
	"strings"
	"testing"

	"github.com/p4ctl/p4ctl/pkg/cmdutil"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
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
		{[]string{"eval"}, exitUsage, "", "p4ctl eval what? carbon, scale, stability"},
		{[]string{"tune", "bogus"}, exitUsage, "", "unknown command"},
		{[]string{"get"}, exitUsage, "", "p4ctl get what? counters, entries, latency, regions, registers"},
		{[]string{"push"}, exitUsage, "", "p4ctl push what? pipeline"},
		{[]string{"sim", "--help"}, exitOK, "Available Commands", ""},
		// completion and help: an unknown shell or topic is a usage error
		// (both printed help and exited 0).
		{[]string{"completion", "bogus"}, exitUsage, "", `unknown command "bogus" for "p4ctl completion"`},
		{[]string{"completion"}, exitUsage, "", "p4ctl completion what? bash, fish, powershell, zsh"},
		{[]string{"completion", "bash"}, exitOK, "bash completion", ""},
		{[]string{"help", "nosuch"}, exitUsage, "", `unknown help topic "nosuch"`},
		{[]string{"help", "sim", "bogus"}, exitUsage, "", `unknown help topic "sim bogus"`},
		{[]string{"help", "sim"}, exitOK, "Available Commands", ""},
		{[]string{"help"}, exitOK, "Available Commands", ""},
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

// The flags mean one thing across commands: --config is the controller
// YAML, except where it is p4runtime-shell's P4INFO[,DEVICE_CONFIG] (and
// the help says so); plots go to --out-dir; concurrency is --parallel; no
// help shows a sentinel default such as -1.
func TestFlagConsistency(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sc := range c.Commands() {
			walk(sc)
		}
		c.Flags().VisitAll(func(f *pflag.Flag) {
			where := c.CommandPath() + " --" + f.Name
			switch f.Name {
			case "config":
				if !strings.Contains(f.Usage, "controller configuration file (YAML") && !strings.Contains(f.Usage, "as in p4runtime-shell") {
					t.Errorf("%s: %q says neither controller YAML nor p4runtime-shell", where, f.Usage)
				}
			case "out", "workers":
				if f.Annotations[cmdutil.AliasOf] == nil {
					t.Errorf("%s: use --out-dir / --parallel", where)
				}
			}
			if f.DefValue == "-1" {
				t.Errorf("%s: help shows the sentinel default -1", where)
			}
		})
	}
	walk(newRootCmd(&streams{Out: io.Discard, Err: io.Discard}))
}
