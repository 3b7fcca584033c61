package main

import (
	"github.com/p4ctl/p4ctl/pkg/output"
	"github.com/p4ctl/p4ctl/pkg/version"
	"github.com/spf13/cobra"
)

func newVersionCmd(s *streams) *cobra.Command {
	var format output.Format
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the p4ctl version, VCS revision and Go toolchain",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return output.Print(s.Out, format, version.Get())
		},
	}
	output.AddFlag(cmd.Flags(), &format)
	return cmd
}
