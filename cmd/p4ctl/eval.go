package main

import "github.com/spf13/cobra"

func newEvalCmd(_ *streams) *cobra.Command {
	return notYet("eval", "Run the research evaluations", "2")
}
