package output

import (
	"bytes"
	"strings"
	"testing"
)

type rows struct{ Name string }

func (r rows) TableHeaders() []string { return []string{"name", "len"} }
func (r rows) TableRows() [][]string  { return [][]string{{r.Name, "3"}} }

func TestPrint(t *testing.T) {
	cases := []struct {
		f    Format
		v    any
		want string
	}{
		{Table, rows{"abc"}, "NAME  LEN\nabc   3\n"},
		{JSON, rows{"abc"}, "{\n  \"Name\": \"abc\"\n}\n"},
		{YAML, rows{"abc"}, "Name: abc\n"},
	}
	for _, c := range cases {
		var b bytes.Buffer
		if err := Print(&b, c.f, c.v); err != nil {
			t.Fatalf("%s: %v", c.f, err)
		}
		if b.String() != c.want {
			t.Errorf("%s: got %q want %q", c.f, b.String(), c.want)
		}
	}
	if err := Print(&bytes.Buffer{}, Table, 42); err == nil || !strings.Contains(err.Error(), "no table rendering") {
		t.Errorf("untabular value: err = %v", err)
	}
	var f Format
	if err := f.Set("xml"); err == nil {
		t.Error("Set(xml) accepted")
	}
}
