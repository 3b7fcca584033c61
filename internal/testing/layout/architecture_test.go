package layout

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// maxArchitectureLines is the length docs/ARCHITECTURE.md stays under: a
// map a newcomer reads in ten minutes (issue 26).
const maxArchitectureLines = 300

// TestArchitectureIsAMap checks docs/ARCHITECTURE.md against the module:
// at most maxArchitectureLines lines, and a line starting with the path of
// every package `go list` finds, so a new package cannot land unmapped.
func TestArchitectureIsAMap(t *testing.T) {
	root := moduleRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if n := strings.Count(text, "\n"); n > maxArchitectureLines {
		t.Errorf("docs/ARCHITECTURE.md has %d lines, more than %d: move detail to docs/decisions/", n, maxArchitectureLines)
	}
	lines := map[string]string{} // first field → the line
	for line := range strings.Lines(text) {
		if f := strings.Fields(line); len(f) > 0 {
			lines[f[0]] = line
		}
	}
	for _, p := range list(t) {
		if r := rel(p.ImportPath); r != "" && !mapped(lines, r) {
			t.Errorf("docs/ARCHITECTURE.md has no line for the package %s (a line starting with its path, or its parent's line naming it)", r)
		}
	}
}

// mapped reports whether lines (keyed by their first field) have a line
// for the package path r, or a line for one of its parents that names the
// rest of r (pkg/a's line saying "b/c" maps pkg/a/b/c).
func mapped(lines map[string]string, r string) bool {
	if _, ok := lines[r]; ok {
		return true
	}
	for i := strings.LastIndex(r, "/"); i > 0; i = strings.LastIndex(r[:i], "/") {
		line, ok := lines[r[:i]]
		if !ok {
			continue
		}
		word := regexp.MustCompile(`(^|[^\w/])` + regexp.QuoteMeta(r[i+1:]) + `($|[^\w/])`)
		if word.MatchString(line) {
			return true
		}
	}
	return false
}

// moduleRoot is the folder of the module's go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Skipf("go env GOMOD: %v", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

// fileRef matches a backquoted path of the repository in a decision.
var fileRef = regexp.MustCompile("`((?:pkg|research|internal|cmd|bpf|p4src|testbed|mininet|docs|deploy|examples|bmv2-tests)/[^` ]+)`")

// TestDecisionsNameTheirFiles checks that every docs/decisions/*.md names
// at least one file or folder of the repository and that every path it
// names in backquotes exists.
func TestDecisionsNameTheirFiles(t *testing.T) {
	root := moduleRoot(t)
	docs, err := filepath.Glob(filepath.Join(root, "docs", "decisions", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs/decisions/*.md (%v)", err)
	}
	for _, d := range docs {
		b, err := os.ReadFile(d)
		if err != nil {
			t.Fatal(err)
		}
		refs := fileRef.FindAllStringSubmatch(string(b), -1)
		if len(refs) == 0 {
			t.Errorf("%s names no file of the repository", filepath.Base(d))
		}
		for _, m := range refs {
			path := strings.TrimSuffix(m[1], "/")
			if strings.ContainsAny(path, "*<>{}") {
				continue // a pattern, not one path
			}
			if !exists(root, path) {
				t.Errorf("%s names %s, which does not exist", filepath.Base(d), m[1])
			}
		}
	}
}

// exists reports whether path (relative to root) is a file or folder, or
// names an identifier of one (research/tuning.Load: the package
// research/tuning).
func exists(root, path string) bool {
	if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(path))); err == nil {
		return true
	}
	dir, file := filepath.Split(path)
	if i := strings.Index(file, "."); i > 0 && !strings.HasSuffix(file, ".go") {
		_, err := os.Stat(filepath.Join(root, filepath.FromSlash(dir+file[:i])))
		return err == nil
	}
	return false
}
