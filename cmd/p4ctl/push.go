package main

import "github.com/spf13/cobra"

func newPushCmd(_ *streams) *cobra.Command {
	return notYet("push", "Push a pipeline config to a switch", "5")
}
