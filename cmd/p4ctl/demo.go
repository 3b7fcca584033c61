package main

import "github.com/spf13/cobra"

func newDemoCmd(_ *streams) *cobra.Command {
	return notYet("demo", "Run the end-to-end demo on the embedded target", "5")
}
