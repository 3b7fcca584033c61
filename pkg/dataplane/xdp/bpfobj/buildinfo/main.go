// Command buildinfo records how the XDP object was built: the compiler's
// version, the bpf2go command and the SHA-256 of every source under
// -sources (bpf/), which pkg/dataplane/xdp/bpfobj's tests compare with the
// sources of the day.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/p4ctl/p4ctl/pkg/dataplane/xdp/bpfobj"
)

func main() {
	sources := flag.String("sources", "", "the C sources' directory (bpf/)")
	out := flag.String("o", "BUILDINFO", "output file")
	flag.Parse()
	if *sources == "" {
		fmt.Fprintln(os.Stderr, "buildinfo: -sources is required")
		os.Exit(2)
	}
	version, err := exec.Command(bpfobj.Compiler, "--version").Output()
	if err != nil {
		fmt.Fprintln(os.Stderr, "buildinfo:", bpfobj.Compiler, err)
		os.Exit(1)
	}
	sums, err := bpfobj.SourceSums(*sources)
	if err != nil {
		fmt.Fprintln(os.Stderr, "buildinfo:", err)
		os.Exit(1)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "compiler: %s\n", strings.TrimSpace(strings.SplitN(string(version), "\n", 2)[0]))
	fmt.Fprintf(&b, "command: go generate ./pkg/dataplane/xdp/bpfobj (bpf2go, doc.go)\n")
	for _, s := range sums {
		fmt.Fprintf(&b, "source: %s  %s\n", s.Sum, s.Path)
	}
	if err := os.WriteFile(*out, []byte(b.String()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "buildinfo:", err)
		os.Exit(1)
	}
}
