package main

import "github.com/spf13/cobra"

func newSwitchCmd(_ *streams) *cobra.Command {
	return notYet("switch", "Run the embedded P4Runtime target", "4")
}
