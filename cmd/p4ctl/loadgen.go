package main

import "github.com/spf13/cobra"

func newLoadgenCmd(_ *streams) *cobra.Command {
	return notYet("loadgen", "Generate request load", "7")
}
