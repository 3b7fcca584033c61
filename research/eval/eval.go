// Package eval holds what the evaluation commands (eval carbon, eval
// stability) share: the rules of their --fill and --latency-sigma flags.
// Each evaluation is a package below it (carbon, stability, scale).
package eval

import (
	"github.com/p4ctl/p4ctl/pkg/cmdutil"
	"github.com/p4ctl/p4ctl/pkg/regions"
)

// ParseFill parses --fill s (none, previous or linear), with or without
// --traces; given without --traces, which it applies to, it is refused.
func ParseFill(s string, given bool, traces string) (regions.FillPolicy, error) {
	f, err := regions.ParseFill(s)
	if err != nil {
		return f, cmdutil.Usagef("--fill: %w", err)
	}
	if traces == "" && given {
		return f, cmdutil.Usagef("--fill %s: it fills gaps in --traces; give --traces with it", s)
	}
	return f, nil
}

// CheckLatencySigma checks --latency-sigma: 0 < σ < 3.
func CheckLatencySigma(v float64) error {
	if !(v > 0 && v < 3) {
		return cmdutil.Usagef("--latency-sigma %v: want 0 < sigma < 3", v)
	}
	return nil
}
