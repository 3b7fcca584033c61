package main

import "github.com/spf13/cobra"

func newSimCmd(s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Run the late-binding (µs) and serverless (ms) simulators",
	}
	cmd.AddCommand(newSimMicroCmd(s), newSimServerlessCmd(s))
	return cmd
}
