package bpfobj

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/p4ctl/p4ctl/internal/testing/bpf2gocheck"
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

// Where the object's compiler is installed, regenerating gives the
// committed files byte for byte.
func TestRegenerateByteForByte(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the XDP program (-short)")
	}
	compiler, _ := buildInfo(t)
	bpf2gocheck.Regenerates(t, "bpfobj", compiler, "p4ctl_bpfel.o", "p4ctl_bpfel.go")
}
