package main

import "github.com/spf13/cobra"

func newSimCmd(_ *streams) *cobra.Command {
	return notYet("sim", "Run the late-binding and serverless simulators", "6")
}
