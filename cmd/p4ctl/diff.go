package main

import "github.com/spf13/cobra"

func newDiffCmd(_ *streams) *cobra.Command {
	return notYet("diff", "Show drift between desired and actual switch state", "5")
}
