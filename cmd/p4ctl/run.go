package main

import "github.com/spf13/cobra"

func newRunCmd(_ *streams) *cobra.Command {
	return notYet("run", "Run the controller daemon", "5")
}
