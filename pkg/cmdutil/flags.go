package cmdutil

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
)

// Flags are the command line's flags as a command's Options see them, so
// that Validate can tell a flag given explicitly (with an empty value,
// say) from one left out. cmd/p4ctl sets Set in Complete; a command built
// without cobra (tests) has none, and then no flag counts as given.
type Flags struct{ Set *pflag.FlagSet }

// Given reports whether the flag name (or a deprecated alias) was set on
// the command line.
func (g Flags) Given(name string) bool {
	return g.Set != nil && g.Set.Lookup(name) != nil && Changed(g.Set, name)
}

// RefuseEmpty returns a usage error naming the first of the flags given on
// the command line with an empty value (--policy "", --table ""): that is
// not the same as leaving the flag out, and it is never silently taken for
// the default.
func (g Flags) RefuseEmpty(names ...string) error {
	for _, n := range names {
		if !g.Given(n) {
			continue
		}
		f := g.Set.Lookup(n)
		empty := strings.TrimSpace(f.Value.String()) == ""
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			vs := sv.GetSlice()
			empty = len(vs) == 0
			for _, v := range vs {
				empty = empty || strings.TrimSpace(v) == ""
			}
		}
		if empty {
			return Usagef("--%s: empty value; give a value or leave the flag out", n)
		}
	}
	return nil
}

// RefuseGiven returns a usage error naming the first of the flags given on
// the command line, which the command does not use (why says what it uses
// instead).
func (g Flags) RefuseGiven(why string, names ...string) error {
	for _, n := range names {
		if g.Given(n) {
			return Usagef("--%s is not used here: %s", n, why)
		}
	}
	return nil
}

// AliasOf annotates a deprecated flag spelling with its current name.
const AliasOf = "p4ctl/alias-of"

// DeprecatedAlias registers old as a hidden, deprecated spelling of the
// flag name: both set the same value, and WarnDeprecated warns on stderr
// when old is used (pflag's own MarkDeprecated would print on stdout, into
// -o json).
func DeprecatedAlias(fs *pflag.FlagSet, old, name string) {
	f := fs.Lookup(name)
	fs.AddFlag(&pflag.Flag{Name: old, Usage: f.Usage, Value: f.Value, DefValue: f.DefValue, Hidden: true,
		Annotations: map[string][]string{AliasOf: {name}}})
}

// WarnDeprecated prints a note on w for every deprecated spelling used.
func WarnDeprecated(fs *pflag.FlagSet, w io.Writer) {
	fs.Visit(func(f *pflag.Flag) {
		if n := f.Annotations[AliasOf]; len(n) == 1 {
			fmt.Fprintf(w, "warning: --%s is deprecated, use --%s\n", f.Name, n[0])
		}
	})
}

// Changed reports whether the flag name, or a deprecated alias of it, was
// set on the command line.
func Changed(fs *pflag.FlagSet, name string) bool {
	found := fs.Changed(name)
	fs.Visit(func(f *pflag.Flag) {
		if n := f.Annotations[AliasOf]; len(n) == 1 && n[0] == name {
			found = true
		}
	})
	return found
}
