package main

import "github.com/spf13/cobra"

func newPlanCmd(_ *streams) *cobra.Command {
	return notYet("plan", "Compile policy into desired switch state", "5")
}
