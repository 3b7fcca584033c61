package main

import "github.com/spf13/cobra"

func newApplyCmd(_ *streams) *cobra.Command {
	return notYet("apply", "Push desired state to switches", "5")
}
