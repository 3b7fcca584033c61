package main

import "github.com/spf13/cobra"

func newTuneCmd(_ *streams) *cobra.Command {
	return notYet("tune", "Choose dispatch parameters from simulation", "6")
}
