package main

import "github.com/spf13/cobra"

func newSimServerlessCmd(_ *streams) *cobra.Command {
	return notYet("serverless", "Simulate serverless bounded preemption", "6")
}
