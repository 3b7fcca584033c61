package pipeline

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxIngressApplyLines bounds the top-level apply block of each
// architecture's P4ctlIngress (issue 26): a short sequence of named controls,
// the steps themselves in controls of their own (p4src/<arch>/passes.p4).
const maxIngressApplyLines = 60

// stripComments blanks P4's comments out of src, keeping its newlines.
func stripComments(src string) string {
	var b strings.Builder
	for i := 0; i < len(src); i++ {
		switch {
		case strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				end = len(src) - i - 2
			}
			b.WriteString(strings.Repeat("\n", strings.Count(src[i:i+2+end], "\n")))
			i += end + 3
		case strings.HasPrefix(src[i:], "//"):
			end := strings.IndexByte(src[i:], '\n')
			if end < 0 {
				return b.String()
			}
			i += end - 1
		default:
			b.WriteByte(src[i])
		}
	}
	return b.String()
}

// applyBlockLines counts the lines of control name's own apply block in src,
// from "apply {" to its closing brace, both included.
func applyBlockLines(src, name string) (int, error) {
	start := strings.Index(src, "control "+name+"(")
	if start < 0 {
		return 0, fmt.Errorf("control %s not found", name)
	}
	lines := strings.Split(stripComments(src[start:]), "\n")
	depth, first := 0, -1
	for i, code := range lines {
		if first < 0 && depth == 1 && strings.HasPrefix(strings.TrimSpace(code), "apply {") {
			first = i
		}
		depth += strings.Count(code, "{") - strings.Count(code, "}")
		if first >= 0 && depth == 1 {
			return i - first + 1, nil
		}
		if depth < 0 {
			break
		}
	}
	return 0, fmt.Errorf("control %s: no apply block, or it is not closed", name)
}

// TestIngressApplyBlocksShort: the top-level apply block of P4ctlIngress in
// p4src/v1model/ingress.p4 and p4src/tna/ingress.p4 stays under
// maxIngressApplyLines lines.
func TestIngressApplyBlocksShort(t *testing.T) {
	for _, arch := range []string{"v1model", "tna"} {
		path := filepath.Join(repoRoot, "p4src", arch, "ingress.p4")
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		n, err := applyBlockLines(string(b), "P4ctlIngress")
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if n >= maxIngressApplyLines {
			t.Errorf("%s: P4ctlIngress's apply block is %d lines, want under %d: move steps into named controls (passes.p4)", path, n, maxIngressApplyLines)
		} else {
			t.Logf("%s: P4ctlIngress's apply block is %d lines", arch, n)
		}
	}
}

func TestApplyBlockLines(t *testing.T) {
	src := "control C(inout h_t h) {\n    table t { key = { h.a : exact; } }\n    apply {\n        if (x) { t.apply(); }\n        /* } {\n         { */ // }\n    }\n}\n"
	if n, err := applyBlockLines(src, "C"); err != nil || n != 5 {
		t.Errorf("applyBlockLines = %d, %v; want 5", n, err)
	}
	if _, err := applyBlockLines(src, "D"); err == nil {
		t.Error("applyBlockLines found a missing control")
	}
}
