package layout

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// keptFile lists the functions deadcode finds unreachable from the mains and
// the reason each is kept.
const keptFile = "testdata/deadcode.txt"

// kept is one line of keptFile: a function (file:Name) or every function
// under a folder (dir/), and why it stays.
type kept struct {
	key, reason string
	line        int
}

// deadLine matches one line of deadcode's text output.
var deadLine = regexp.MustCompile(`^(\S+?):\d+:\d+: unreachable func: (\S+)$`)

// TestDeadcodeKeptForAReason runs golang.org/x/tools/cmd/deadcode (a tool of
// go.mod) from every main of the module and fails on an unreachable function
// testdata/deadcode.txt does not keep with a reason, and on an entry that
// keeps a function deadcode no longer reports (remove the line).
func TestDeadcodeKeptForAReason(t *testing.T) {
	if testing.Short() {
		t.Skip("deadcode analyses the whole module (~1 min): skipped with -short")
	}
	keep, err := readKept(keptFile)
	if err != nil {
		t.Fatal(err)
	}
	dead := deadcode(t)
	if len(dead) == 0 {
		t.Fatal("deadcode reported nothing: the run did not analyse the module")
	}
	used := map[string]bool{}
	for _, d := range dead {
		k := coveredBy(keep, d)
		if k == nil {
			t.Errorf("%s is unreachable from every main: delete it, or keep it in %s with the reason", d, keptFile)
			continue
		}
		used[k.key] = true
	}
	for _, k := range keep {
		if !used[k.key] {
			t.Errorf("%s:%d keeps %s, which deadcode does not report: remove the line", keptFile, k.line, k.key)
		}
	}
}

// TestReadKept pins the list's format: a reason on every line, no repeats.
func TestReadKept(t *testing.T) {
	for _, tc := range []struct {
		name, text, err string
	}{
		{"ok", "# c\n\npkg/a/a.go:F | a test of the public API needs it\ninternal/testing/ | test rigs\n", ""},
		{"no reason", "pkg/a/a.go:F\n", "x:1: want \"file:Func | reason\" or \"dir/ | reason\""},
		{"empty reason", "pkg/a/a.go:F |  \n", "x:1: want \"file:Func | reason\" or \"dir/ | reason\""},
		{"repeat", "pkg/a/a.go:F | r\npkg/a/a.go:F | r\n", "x:2: pkg/a/a.go:F is kept twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "x")
			if err := os.WriteFile(p, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := readKept(p)
			got := ""
			if err != nil {
				got = strings.ReplaceAll(err.Error(), p, "x")
			}
			if got != tc.err {
				t.Errorf("readKept: %q, want %q", got, tc.err)
			}
		})
	}
}

// readKept parses the list of kept functions.
func readKept(path string) ([]kept, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("kept functions: %w", err)
	}
	defer f.Close()
	var out []kept
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, reason, ok := strings.Cut(line, "|")
		key, reason = strings.TrimSpace(key), strings.TrimSpace(reason)
		if !ok || reason == "" || key == "" || (!strings.HasSuffix(key, "/") && !strings.Contains(key, ".go:")) {
			return nil, fmt.Errorf("%s:%d: want \"file:Func | reason\" or \"dir/ | reason\"", path, n)
		}
		if slices.ContainsFunc(out, func(k kept) bool { return k.key == key }) {
			return nil, fmt.Errorf("%s:%d: %s is kept twice", path, n, key)
		}
		out = append(out, kept{key: key, reason: reason, line: n})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// coveredBy returns the entry that keeps d ("file:Func"), or nil.
func coveredBy(keep []kept, d string) *kept {
	for i, k := range keep {
		if k.key == d || (strings.HasSuffix(k.key, "/") && strings.HasPrefix(d, k.key)) {
			return &keep[i]
		}
	}
	return nil
}

// deadcode runs `go tool deadcode` over the module's mains from its root
// and returns the unreachable functions as "file:Func", file relative to the
// root.
func deadcode(t *testing.T) []string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command on PATH: %v", err)
	}
	root := moduleRoot(t)
	mains := strings.Fields(goOut(t, gobin, root, "list", "-f", `{{if eq .Name "main"}}{{.ImportPath}}{{end}}`, module+"/..."))
	if len(mains) == 0 {
		t.Fatal("go list found no main package")
	}
	out := goOut(t, gobin, root, append([]string{"tool", "deadcode"}, mains...)...)
	var dead []string
	for line := range strings.Lines(out) {
		m := deadLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			t.Fatalf("deadcode printed a line this test does not read: %q", line)
		}
		dead = append(dead, filepath.ToSlash(m[1])+":"+m[2])
	}
	return dead
}

// goOut runs the go command in dir and returns its standard output.
func goOut(t *testing.T, gobin, dir string, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(gobin, args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return stdout.String()
}
