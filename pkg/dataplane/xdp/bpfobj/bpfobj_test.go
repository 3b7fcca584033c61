package bpfobj

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const sources = "../../../../bpf"

// buildInfo reads BUILDINFO: the compiler line and the sources' sums.
func buildInfo(t *testing.T) (compiler string, sums map[string]string) {
	t.Helper()
	f, err := os.Open("BUILDINFO")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sums = map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "compiler: "):
			compiler = strings.TrimPrefix(line, "compiler: ")
		case strings.HasPrefix(line, "source: "):
			f := strings.Fields(strings.TrimPrefix(line, "source: "))
			if len(f) == 2 {
				sums[f[1]] = f[0]
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return compiler, sums
}

// The committed object was built from today's sources: a change to bpf/
// must regenerate it (go generate ./pkg/dataplane/xdp/bpfobj).
func TestObjectBuiltFromTheseSources(t *testing.T) {
	_, want := buildInfo(t)
	got, err := SourceSums(sources)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, s := range got {
		seen[s.Path] = true
		switch w, ok := want[s.Path]; {
		case !ok:
			t.Errorf("bpf/%s is not in BUILDINFO: regenerate the object", s.Path)
		case w != s.Sum:
			t.Errorf("bpf/%s changed since the object was built: regenerate it (go generate ./pkg/dataplane/xdp/bpfobj)", s.Path)
		}
	}
	for p := range want {
		if !seen[p] {
			t.Errorf("bpf/%s is in BUILDINFO but no more in bpf/: regenerate the object", p)
		}
	}
}

// generateArgs returns bpf2go's arguments from doc.go's go:generate line,
// so that this test runs exactly what go generate runs.
func generateArgs(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "//go:generate go tool bpf2go "); ok {
			return splitQuoted(rest)
		}
	}
	t.Fatal("doc.go has no go:generate line for bpf2go")
	return nil
}

// splitQuoted splits on spaces, keeping "quoted strings" whole.
func splitQuoted(s string) []string {
	var out []string
	var cur strings.Builder
	quoted := false
	for _, r := range s {
		switch {
		case r == '"':
			quoted = !quoted
		case r == ' ' && !quoted:
			if cur.Len() > 0 {
				out = append(out, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
		}
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

// Where the object's compiler is installed, regenerating gives the
// committed files byte for byte.
func TestRegenerateByteForByte(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the XDP program (-short)")
	}
	compiler, _ := buildInfo(t)
	for _, tool := range []string{Compiler, "llvm-strip-14", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: the object's bytes are checked where it is (its sources' hashes are checked here)", tool)
		}
	}
	v, err := exec.Command(Compiler, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if have := strings.TrimSpace(strings.SplitN(string(v), "\n", 2)[0]); have != compiler {
		t.Skipf("%s is %q, the object was built with %q: its bytes are checked with that compiler", Compiler, have, compiler)
	}
	out := t.TempDir()
	args := append([]string{"tool", "bpf2go", "-output-dir", out}, generateArgs(t)...)
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), "GOPACKAGE=bpfobj")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	for _, f := range []string{"p4ctl_bpfel.o", "p4ctl_bpfel.go"} {
		want, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s regenerated differs from the committed one (%d bytes vs %d): run go generate ./pkg/dataplane/xdp/bpfobj", f, len(got), len(want))
		}
	}
}
