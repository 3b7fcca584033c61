package main

import "github.com/spf13/cobra"

func newGetCmd(_ *streams) *cobra.Command {
	return notYet("get", "Read entries, counters and registers from a switch", "5")
}
