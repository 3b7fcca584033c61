// Command gen writes the XDP program's contract header (contract.Header) to
// the file named by its argument.
package main

import (
	"fmt"
	"os"

	"github.com/p4ctl/p4ctl/pkg/dataplane/xdp/contract"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gen OUTPUT.h")
		os.Exit(2)
	}
	if err := os.WriteFile(os.Args[1], contract.Header(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
