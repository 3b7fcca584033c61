package controller_test

import (
	"encoding/json"
	"testing"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/protobuf/proto"

	"github.com/p4ctl/p4ctl/pkg/compiler"
	"github.com/p4ctl/p4ctl/pkg/controller"
	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

// FuzzTranslatorEntry feeds arbitrary table entries — what a switch may
// send back on a read — to the decoder: it must never panic, and whatever
// it accepts must encode back to an entry that decodes to the same thing.
func FuzzTranslatorEntry(f *testing.F) {
	cfg := loadConfig(f)
	idx := p4rt.MustIndex(dataplane.DefaultP4Info())
	tr, err := controller.NewTranslator(idx)
	if err != nil {
		f.Fatal(err)
	}
	st, err := plans(f, cfg, start, 1, nil)[0].Compile(1)
	if err != nil {
		f.Fatal(err)
	}
	for i := range st.Entries {
		te, err := tr.TableEntry(&st.Entries[i])
		if err != nil {
			f.Fatal(err)
		}
		b, _ := proto.Marshal(te)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var te p4v1.TableEntry
		if proto.Unmarshal(data, &te) != nil {
			return
		}
		e, err := tr.Entry(&te)
		if err != nil {
			return
		}
		again, err := tr.TableEntry(&e)
		if err != nil {
			t.Fatalf("decoded %s but cannot encode it: %v", e.String(), err)
		}
		e2, err := tr.Entry(again)
		if err != nil || compiler.Compare(&e, &e2) != 0 || e.String() != e2.String() {
			a, _ := json.Marshal(e)
			b, _ := json.Marshal(e2)
			t.Fatalf("round trip: %s → %s (%v)", a, b, err)
		}
	})
}
