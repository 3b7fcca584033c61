package main

import "github.com/spf13/cobra"

func newSimMicroCmd(_ *streams) *cobra.Command {
	return notYet("micro", "Simulate µs-scale late binding", "6")
}
