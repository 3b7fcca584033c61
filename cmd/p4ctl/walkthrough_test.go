package main

import (
	"bufio"
	"context"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/pkg/dataplane"
)

// walkthroughCommands returns the p4ctl command lines of a doc's sh blocks
// (the words after "bin/p4ctl"), with the exit code a trailing "# exit N"
// comment gives (0 without one).
func walkthroughCommands(t *testing.T, path string) (cmds [][]string, codes []int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	exit := regexp.MustCompile(`#\s*exit (\d+)`)
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			in = strings.TrimPrefix(line, "```") == "sh"
			continue
		}
		_, rest, ok := strings.Cut(line, "bin/p4ctl ")
		if !in || !ok {
			continue
		}
		code := 0
		if m := exit.FindStringSubmatch(rest); m != nil {
			code, _ = strconv.Atoi(m[1])
		}
		rest, _, _ = strings.Cut(rest, "#")
		cmds, codes = append(cmds, strings.Fields(rest)), append(codes, code)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cmds, codes
}

// The BMv2 walkthrough (docs/BMV2.md, issue 15 item 18) holds: every p4ctl
// command on it runs, in order and with the exit code it states, against
// the embedded target started as `simple_switch_grpc --no-p4 --device-id 1`
// is (no pipeline, device 1), at the address the walkthrough uses replaced
// by the embedded switch's.
func TestBMv2Walkthrough(t *testing.T) {
	doc := filepath.Join("..", "..", "docs", "BMV2.md")
	cmds, codes := walkthroughCommands(t, doc)
	if len(cmds) < 10 {
		t.Fatalf("%s: %d p4ctl commands", doc, len(cmds))
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil || !strings.Contains(string(readme), "docs/BMV2.md") {
		t.Errorf("README does not point to docs/BMV2.md (%v)", err)
	}
	e, err := dataplane.Start(dataplane.Options{NoPipeline: true}, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer e.Stop()
	seen := map[string]bool{}
	for i, args := range cmds {
		for j, a := range args {
			switch {
			case a == "127.0.0.1:9559":
				args[j] = e.Addr()
			case strings.HasPrefix(a, "examples/") || strings.HasPrefix(a, "p4src/"):
				args[j] = filepath.Join("..", "..", a)
			}
		}
		seen[args[0]] = true
		code, out, errs := p4ctl(t, args...)
		expect(t, strings.Join(args, " "), code, codes[i], out, errs)
	}
	for _, c := range []string{"push", "apply", "get", "diff"} {
		if !seen[c] {
			t.Errorf("the walkthrough never runs p4ctl %s", c)
		}
	}
}

// readmeBlock returns the lines of the first sh block after heading in
// README.md.
func readmeBlock(t *testing.T, heading string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), heading+"\n")
	if !ok {
		t.Fatalf("README has no %q", heading)
	}
	_, rest, _ = strings.Cut(rest, "```sh\n")
	block, _, _ := strings.Cut(rest, "```")
	return strings.Split(strings.TrimSpace(block), "\n")
}

// Issue 27 item 15: the README walk-through, run as written against the
// embedded switch: diff after apply --hour 3 reported drift (it compared
// another hour), get latency failed with the README's configuration,
// get counters printed an empty table without a word, the Scale section
// wrote p4ctl where the rest writes bin/p4ctl, and plan -o yaml printed
// prefixes as integers.
func TestREADMEWalkthrough(t *testing.T) {
	sw := embeddedSwitch(t)
	addr := sw.Addr()
	local := map[string]string{}
	for _, ex := range []string{"examples/mumbai.yaml", "examples/latency.yaml"} {
		b, err := os.ReadFile(filepath.Join("..", "..", ex))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), filepath.Base(ex))
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(string(b), "127.0.0.1:9559", addr)), 0o600); err != nil {
			t.Fatal(err)
		}
		local[ex] = p
	}
	exitRE := regexp.MustCompile(`\(exit (\d)\)`)
	ran := 0
	for _, line := range readmeBlock(t, "## Running the controller") {
		rest, ok := strings.CutPrefix(line, "bin/p4ctl ")
		if !ok {
			continue
		}
		cmdline, comment, _ := strings.Cut(rest, "#")
		args := strings.Fields(strings.TrimSuffix(strings.TrimSpace(cmdline), "&"))
		switch args[0] {
		case "switch":
			continue // the test's embedded switch
		case "run":
			// Checked below with its metrics address, and a short replay.
			if !strings.Contains(cmdline, "examples/latency.yaml") {
				t.Errorf("the walk-through's run does not use examples/latency.yaml, whose latency get latency reads: %s", line)
			}
			continue
		case "get":
			if args[1] == "latency" {
				continue // below
			}
			args = append(args, "--grpc-addr", addr)
		}
		for i, a := range args {
			if p, ok := local[a]; ok {
				args[i] = p
			}
		}
		want := 0
		if m := exitRE.FindStringSubmatch(comment); m != nil {
			want, _ = strconv.Atoi(m[1])
		}
		code, out, errs := p4ctl(t, args...)
		expect(t, line, code, want, out, errs)
		if args[0] == "get" && args[1] == "entries" && !strings.Contains(out, "carbon_rank") {
			t.Errorf("%s: no entries\n%s", line, out)
		}
		ran++
	}
	if ran < 6 {
		t.Fatalf("ran %d commands of the walk-through", ran)
	}
	// diff without --hour after apply --hour 3 says why it drifts.
	code, out, errs := p4ctl(t, "diff", "-c", local["examples/mumbai.yaml"])
	expect(t, "diff without --hour after apply --hour 3", code, exitError, out, errs, "note: compared with the plan for 2022-01-10T00:00:00Z", "give diff the same --hour")
	// get counters on a switch without traffic says what it hides.
	code, out, errs = p4ctl(t, "get", "counters", "--grpc-addr", addr)
	expect(t, "get counters", code, exitOK, out, errs, "cells are zero and not shown", "--all shows them")

	// The daemon with examples/latency.yaml serves what get latency reads.
	var errb syncBuffer
	ready := make(chan string, 1)
	o := &runOptions{hostname: os.Hostname, ready: func(a net.Addr) { ready <- a.String() }}
	cmd := newRunCmdFor(&streams{Out: &errb, Err: &errb}, o)
	cmd.SetArgs([]string{"-c", local["examples/latency.yaml"], "--replay", "2022-01-10T00", "--speed", "1x", "--hours", "0", "--metrics-addr", "127.0.0.1:0"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	var metrics string
	select {
	case metrics = <-ready:
	case err := <-done:
		t.Fatalf("run ended: %v\n%s", err, errb.String())
	case <-time.After(30 * time.Second):
		t.Fatal("run: no metrics address within 30 s")
	}
	code, out, errs = p4ctl(t, "get", "latency", "--controller", metrics)
	cancel()
	<-done
	expect(t, "get latency from a run of examples/latency.yaml", code, exitOK, out, errs, "ap-south-1")

	// The Scale section writes bin/p4ctl as the rest of the README does.
	for _, line := range readmeBlock(t, "## Scale") {
		if strings.HasPrefix(line, "p4ctl ") {
			t.Errorf("README Scale: %q, want bin/p4ctl", line)
		}
	}
	// plan -o yaml prints client prefixes in CIDR notation.
	code, out, errs = p4ctl(t, "plan", "-c", local["examples/mumbai.yaml"], "-o", "yaml", "--table", "client_site")
	expect(t, "plan -o yaml", code, exitOK, out, errs, "cidr: 10.10.0.0/16")
}

// examples/latency.yaml is examples/mumbai.yaml with a latency block.
func TestLatencyExampleFollowsMumbai(t *testing.T) {
	m, err := os.ReadFile(filepath.Join("..", "..", "examples", "mumbai.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := os.ReadFile(filepath.Join("..", "..", "examples", "latency.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	body := strings.TrimRight(string(m), "\n")
	if !strings.Contains(string(l), body+"\n\nlatency:\n  source: blend") {
		t.Fatal("examples/latency.yaml is no longer examples/mumbai.yaml plus latency: {source: blend}")
	}
}
