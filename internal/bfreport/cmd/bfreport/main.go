// Command bfreport prints the resource report of a Tofino build directory
// (bf-p4c's resources.json and metrics.json) as Markdown: `make p4-tna`
// writes it to p4src/build/tna/RESOURCES.md.
//
//	go run ./internal/bfreport/cmd/bfreport -dir p4src/build/tna
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/p4ctl/p4ctl/internal/bfreport"
)

func main() {
	dir := flag.String("dir", "p4src/build/tna", "directory holding bf-p4c's resources.json (and metrics.json)")
	check := flag.Bool("check-fits", false, "print nothing; exit 1 when the placement needs more MAU stages than the target has")
	phv := flag.String("summarize-phv", "", "print the phv_usage.json digest of this bf-p4c phv.json instead of the report")
	flag.Parse()
	if *phv != "" {
		u, err := bfreport.SummarizePHV(*phv)
		if err == nil {
			enc := json.NewEncoder(os.Stdout)
			enc.SetIndent("", "  ")
			err = enc.Encode(u)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bfreport:", err)
			os.Exit(1)
		}
		return
	}
	r, err := bfreport.Load(*dir)
	if err == nil && *check {
		if !r.Fits() {
			fmt.Fprintf(os.Stderr, "bfreport: %d MAU stages used, %d available\n", r.StagesUsed(), r.StagesAvailable)
			os.Exit(1)
		}
		return
	}
	if err == nil {
		err = r.Write(os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bfreport:", err)
		os.Exit(1)
	}
}
