package layout

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// module is the module path every package of the repository starts with.
const module = "github.com/p4ctl/p4ctl"

// pkgInfo is what `go list -json` says of one package.
type pkgInfo struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

// role names the folder a package of the module lives in.
type role string

// The roles of docs/decisions/layout.md.
const (
	product  role = "product (pkg/)"
	research role = "research (research/)"
	rig      role = "test rig (internal/testing/)"
	tool     role = "tool (internal/)"
	testbed  role = "testbed (testbed/)"
	other    role = "other"
)

// roleOf returns the role of a path relative to the module.
func roleOf(rel string) role {
	under := func(dir string) bool { return rel == dir || strings.HasPrefix(rel, dir+"/") }
	switch {
	case under("pkg"):
		return product
	case under("research"):
		return research
	case under("internal/testing"):
		return rig
	case under("internal"):
		return tool
	case under("testbed"):
		return testbed
	}
	return other
}

// mayImport lists, per role, the roles its non-test code may import.
var mayImport = map[role][]role{
	product:  {product},
	research: {product, research},
	testbed:  {product, testbed},
	rig:      {product, research, rig, testbed},
	tool:     {product, research, rig, tool},
}

// TestImportRules asserts the layout's one-way imports with `go list`: a
// product package never imports research, a test rig, a tool or anything
// outside pkg/ (tests included: product tests never import research);
// research imports only product and research; no command imports a test
// rig outside its tests.
func TestImportRules(t *testing.T) {
	pkgs := list(t)
	if len(pkgs) < 40 {
		t.Fatalf("go list found %d packages of %s: not the whole module", len(pkgs), module)
	}
	for _, p := range pkgs {
		from := roleOf(rel(p.ImportPath))
		for _, imp := range local(p.Imports) {
			to := roleOf(imp)
			allowed, ruled := mayImport[from]
			switch {
			case ruled && !slices.Contains(allowed, to):
				t.Errorf("%s (%s) imports %s (%s)", rel(p.ImportPath), from, imp, to)
			case !ruled && to == rig:
				t.Errorf("%s imports the test rig %s outside its tests", rel(p.ImportPath), imp)
			}
		}
		if from != product {
			continue
		}
		for _, imp := range local(slices.Concat(p.TestImports, p.XTestImports)) {
			if to := roleOf(imp); to == research || to == testbed {
				t.Errorf("%s (%s) imports %s (%s) in its tests", rel(p.ImportPath), from, imp, to)
			}
		}
	}
}

// TestRoleOf pins the classification the rules rest on.
func TestRoleOf(t *testing.T) {
	for rel, want := range map[string]role{
		"pkg/dataplane/xdp":             product,
		"pkg/regions/internal/gensynth": product,
		"research/sim/micro":            research,
		"internal/testing/p4rttest":     rig,
		"internal/bfreport":             tool,
		"testbed":                       testbed,
		"cmd/p4ctl":                     other,
		"pkgx":                          other,
	} {
		if got := roleOf(rel); got != want {
			t.Errorf("roleOf(%q) = %s, want %s", rel, got, want)
		}
	}
}

// list runs `go list -json` over the whole module.
func list(t *testing.T) []pkgInfo {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command on PATH: %v", err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(gobin, "list", "-e", "-json=ImportPath,Imports,TestImports,XTestImports", module+"/...")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	var pkgs []pkgInfo
	dec := json.NewDecoder(&stdout)
	for {
		var p pkgInfo
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			return pkgs
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
}

// rel is an import path relative to the module ("" for the module's root).
func rel(path string) string {
	return strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
}

// local keeps the imports of the module's own packages, relative to it.
func local(imports []string) []string {
	var out []string
	for _, imp := range imports {
		if imp == module || strings.HasPrefix(imp, module+"/") {
			out = append(out, rel(imp))
		}
	}
	return out
}
