package output

import (
	"bytes"
	"errors"
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

// failAfter accepts n writes, then fails.
type failAfter struct{ n int }

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errors.New("disk full")
	}
	f.n--
	return len(p), nil
}

// A Report keeps its first error and writes nothing after it.
func TestReportKeepsFirstError(t *testing.T) {
	var b bytes.Buffer
	r := NewReport(&b)
	r.Printf("a %d\n", 1)
	r.Table([]string{"x"}, [][]string{{"1"}})
	if r.Err() != nil || !strings.Contains(b.String(), "a 1") || !strings.Contains(b.String(), "X") {
		t.Fatalf("report %q, err %v", b.String(), r.Err())
	}
	f := &failAfter{n: 1}
	r = NewReport(f)
	r.Printf("ok\n")
	r.Printf("lost\n")
	r.Printf("skipped\n")
	if r.Err() == nil || r.Err().Error() != "disk full" || f.n != 0 {
		t.Errorf("err %v after a failed write", r.Err())
	}
}
