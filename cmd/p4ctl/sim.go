package main

import (
	"github.com/spf13/cobra"
)

func newSimCmd(s *streams) *cobra.Command {
	return groupCmd("sim", "Run the late-binding (µs) and serverless (ms) simulators",
		newSimMicroCmd(s), newSimServerlessCmd(s))
}
