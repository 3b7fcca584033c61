package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/p4ctl/p4ctl/research/sim/verdict"
)

func newSimCmd(s *streams) *cobra.Command {
	return groupCmd("sim", "Run the late-binding (µs) and serverless (ms) simulators",
		newSimMicroCmd(s), newSimServerlessCmd(s))
}

// writeMarkdown writes a figures table as Markdown to path ("" writes
// nothing).
func writeMarkdown(path, source string, figs []verdict.Figure) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--markdown: %w", err)
	}
	if err := verdict.WriteMarkdown(f, source, figs); err != nil {
		f.Close()
		return fmt.Errorf("--markdown %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--markdown %s: %w", path, err)
	}
	return nil
}
