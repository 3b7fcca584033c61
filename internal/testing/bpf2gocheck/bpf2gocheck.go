// Package bpf2gocheck checks that a package's committed bpf2go outputs are
// what its go:generate line gives today, byte for byte, where the compiler
// they were built with (Debian 12's clang-14) is installed.
package bpf2gocheck

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Compiler is the clang the committed objects are built with.
const Compiler = "clang-14"

// Args returns bpf2go's arguments from the go:generate line of the file
// doc (the package's doc.go), so that the check runs what go generate runs.
func Args(t testing.TB, doc string) []string {
	t.Helper()
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "//go:generate go tool bpf2go "); ok {
			return SplitQuoted(rest)
		}
	}
	t.Fatalf("%s has no go:generate line for bpf2go", doc)
	return nil
}

// SplitQuoted splits on spaces, keeping "quoted strings" whole.
func SplitQuoted(s string) []string {
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

// Regenerates runs bpf2go as the current directory's doc.go says, into a
// temporary directory, and fails t when a file of files differs from the
// committed one. It skips when clang-14, llvm-strip-14 or go is missing,
// or when want (the compiler's first --version line the objects were built
// with, "" for any) is not the installed one.
func Regenerates(t *testing.T, pkg, want string, files ...string) {
	t.Helper()
	for _, tool := range []string{Compiler, "llvm-strip-14", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: the object's bytes are checked where it is", tool)
		}
	}
	v, err := exec.Command(Compiler, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if have := strings.TrimSpace(strings.SplitN(string(v), "\n", 2)[0]); want != "" && have != want {
		t.Skipf("%s is %q, the object was built with %q: its bytes are checked with that compiler", Compiler, have, want)
	}
	out := t.TempDir()
	args := append([]string{"tool", "bpf2go", "-output-dir", out}, Args(t, "doc.go")...)
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), "GOPACKAGE="+pkg)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	for _, f := range files {
		committed, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, committed) {
			t.Errorf("%s regenerated differs from the committed one (%d bytes vs %d): run go generate", f, len(got), len(committed))
		}
	}
}
