// Package output renders command results as a human table, JSON or YAML. It
// is the one implementation of p4ctl's `-o table|json|yaml` flag: commands
// build a result value and hand it to Print.
package output

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"
)

// Format is an output format.
type Format string

// Supported formats.
const (
	Table Format = "table"
	JSON  Format = "json"
	YAML  Format = "yaml"
)

// Formats lists the accepted values of -o.
func Formats() []Format { return []Format{Table, JSON, YAML} }

// Set implements pflag.Value.
func (f *Format) Set(s string) error {
	for _, ok := range Formats() {
		if Format(s) == ok {
			*f = ok
			return nil
		}
	}
	return fmt.Errorf("unknown output format %q (want table, json or yaml)", s)
}

// String implements pflag.Value.
func (f *Format) String() string { return string(*f) }

// Type implements pflag.Value.
func (f *Format) Type() string { return "format" }

// AddFlag registers -o/--output on fs, defaulting to table.
func AddFlag(fs *pflag.FlagSet, f *Format) {
	if *f == "" {
		*f = Table
	}
	fs.VarP(f, "output", "o", "output format: table, json or yaml")
}

// Tabular is implemented by results that render as rows under headers.
type Tabular interface {
	TableHeaders() []string
	TableRows() [][]string
}

// TextWriter is implemented by results with a free-form human rendering
// (several tables, notes, sections). It takes precedence over Tabular.
type TextWriter interface {
	WriteText(w io.Writer) error
}

// Print writes v to w in format f. JSON and YAML marshal v; table uses v's
// TextWriter or Tabular implementation.
func Print(w io.Writer, f Format, v any) error {
	switch f {
	case JSON:
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return fmt.Errorf("encode json: %w", err)
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	case YAML:
		b, err := yaml.Marshal(v)
		if err != nil {
			return fmt.Errorf("encode yaml: %w", err)
		}
		_, err = w.Write(b)
		return err
	case Table, "":
		switch t := v.(type) {
		case TextWriter:
			return t.WriteText(w)
		case Tabular:
			return WriteTable(w, t.TableHeaders(), t.TableRows())
		default:
			return fmt.Errorf("output: %T has no table rendering; use -o json or -o yaml", v)
		}
	default:
		return fmt.Errorf("unknown output format %q", string(f))
	}
}

// WriteTable writes rows under upper-cased headers, columns aligned.
func WriteTable(w io.Writer, headers []string, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	up := make([]string, len(headers))
	for i, h := range headers {
		up[i] = strings.ToUpper(h)
	}
	fmt.Fprintln(tw, strings.Join(up, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// Report writes a text report in pieces and keeps the first error, so that
// a renderer checks it once at the end (Err): after an error every further
// piece is skipped.
type Report struct {
	w   io.Writer
	err error
}

// NewReport returns a Report writing to w.
func NewReport(w io.Writer) *Report { return &Report{w: w} }

// Printf writes a formatted piece.
func (r *Report) Printf(format string, a ...any) {
	if r.err == nil {
		_, r.err = fmt.Fprintf(r.w, format, a...)
	}
}

// Table writes rows under headers (WriteTable).
func (r *Report) Table(headers []string, rows [][]string) {
	if r.err == nil {
		r.err = WriteTable(r.w, headers, rows)
	}
}

// Err is the first error met, or nil.
func (r *Report) Err() error { return r.err }
