package main

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/demo"
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
	e, err := demo.StartEmbedded(dataplane.Options{NoPipeline: true}, "127.0.0.1:0")
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
