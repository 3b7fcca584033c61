// Package cmdutil is what every p4ctl command shares once cmd/p4ctl has
// bound its flags: the output streams, usage errors (exit 2) and input
// errors, checks of flag values and output paths made before the work
// starts, progress bars and the tail of an experiment command (progress,
// run, plots, print). The packages that own a command's logic (its Options,
// kubectl style: Complete, Validate, Run) use it to say "this is the
// command line's fault" without importing the command.
package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
)

// Streams are a command's output streams: the result on Out; notes,
// warnings, progress and the plot files written on Err, so that -o json
// stays parseable (tests pass buffers).
type Streams struct {
	Out io.Writer
	Err io.Writer
}

// UsageError marks an error as the command line's: p4ctl exits 2 on it,
// as on a bad flag.
type UsageError struct{ Err error }

// Error returns the wrapped error's message.
func (u UsageError) Error() string { return u.Err.Error() }

// Unwrap returns the wrapped error.
func (u UsageError) Unwrap() error { return u.Err }

// Usagef returns a usage error (bad flag values, missing arguments,
// flags that do not go together).
func Usagef(format string, a ...any) error {
	return UsageError{fmt.Errorf(format, a...)}
}

// IsUsage reports whether err is, or wraps, a usage error.
func IsUsage(err error) bool {
	var ue UsageError
	return errors.As(err, &ue)
}

// NothingLeft says, of an error that ended a command on Ctrl-C (its
// context cancelled) before it printed or wrote any result, that it
// leaves nothing behind: every interrupted command says what it leaves.
// Other errors are returned as they are.
func NothingLeft(err error) error {
	if err != nil && errors.Is(err, context.Canceled) {
		return fmt.Errorf("%w: stopped before any result, nothing printed or written", err)
	}
	return err
}

// InputError makes err, from reading or parsing an input file that the
// command line or the configuration names (configuration, traces, P4Info,
// sites), a usage error: exit 2, as for a bad flag. The rule (README "Exit
// codes"): what was given cannot be used as given — a missing, unreadable,
// oversized or malformed file — exits 2 before anything is contacted; a
// failure while running exits 1 (diff: 3). An interrupted read stays an
// interruption.
func InputError(err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || IsUsage(err) {
		return err
	}
	return UsageError{err}
}

// parseErr matches the strconv text pflag puts in a bad number's error.
var parseErr = regexp.MustCompile(`strconv\.Parse(Uint|Int|Float): parsing "[^"]*": (value out of range|invalid syntax)`)

// FlagError is the usage error of a flag value cobra could not parse: the
// strconv wording pflag passes through ("strconv.ParseUint: parsing …:
// value out of range") becomes what was wrong with the number, and the
// command's help is named.
func FlagError(err error, commandPath string) error {
	msg := parseErr.ReplaceAllStringFunc(err.Error(), func(m string) string {
		sub := parseErr.FindStringSubmatch(m)
		kind := map[string]string{"Uint": "an unsigned integer", "Int": "an integer", "Float": "a number"}[sub[1]]
		if sub[2] == "value out of range" {
			return "out of range for " + kind + " of its width"
		}
		return "want " + kind
	})
	return UsageError{Err: fmt.Errorf("%s (see '%s --help')", msg, commandPath)}
}
