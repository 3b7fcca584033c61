package main

import "github.com/spf13/cobra"

func newServeCmd(_ *streams) *cobra.Command {
	return notYet("serve", "Run a function server for a region host", "7")
}
