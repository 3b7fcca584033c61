package cmdutil

import (
	"errors"
	"testing"
)

// Issue 27's campaign: a number out of range for its flag said
// "strconv.ParseUint: parsing …: value out of range".
func TestFlagError(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`invalid argument "18446744073709551616" for "--device-id" flag: strconv.ParseUint: parsing "18446744073709551616": value out of range`,
			`invalid argument "18446744073709551616" for "--device-id" flag: out of range for an unsigned integer of its width (see 'p4ctl get --help')`},
		{`invalid argument "x" for "--seeds" flag: strconv.ParseInt: parsing "x": invalid syntax`,
			`invalid argument "x" for "--seeds" flag: want an integer (see 'p4ctl get --help')`},
		{`invalid argument "y" for "--load" flag: strconv.ParseFloat: parsing "y": invalid syntax`,
			`invalid argument "y" for "--load" flag: want a number (see 'p4ctl get --help')`},
		{`unknown flag: --nope`, `unknown flag: --nope (see 'p4ctl get --help')`},
	} {
		err := FlagError(errors.New(c.in), "p4ctl get")
		if err.Error() != c.want {
			t.Errorf("FlagError(%q)\n = %q\nwant %q", c.in, err, c.want)
		}
		if !IsUsage(err) {
			t.Errorf("FlagError(%q) is not a usage error", c.in)
		}
	}
}
