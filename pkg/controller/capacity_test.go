package controller_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/p4ctl/p4ctl/internal/testing/p4rttest"
	"github.com/p4ctl/p4ctl/pkg/compiler"
	"github.com/p4ctl/p4ctl/pkg/controller"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// A switch whose P4Info gives a table fewer entries than the plan needs is
// refused before anything is written: the error names the switch, the
// table, the need and the limit, and the switch stays empty.
func TestSyncRefusesWhatTheSwitchCannotHold(t *testing.T) {
	cfg := loadConfig(t)
	p := plans(t, cfg, start, 1, nil)[0]
	info := p4rttest.ProgramP4Info()
	const limit = 8
	for _, tb := range info.GetTables() {
		if tb.GetPreamble().GetName() == pipeline.TableSLAFeasibility {
			tb.Size = limit
		}
	}
	c, _ := p4rttest.New(t, p4rttest.WithP4Info(info))
	d := controller.NewDriverWithClient(controller.Target{Name: "small"}, c, controller.DriverOptions{Grace: -1, Log: testLog(t)})
	if err := d.Connect(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	rep, err := d.Sync(ctxT(t), p)
	var oe *compiler.OverflowError
	if !errors.As(err, &oe) {
		t.Fatalf("sync: %v, want an overflow", err)
	}
	if len(oe.Overflows) != 1 || oe.Overflows[0].Table != pipeline.TableSLAFeasibility || oe.Overflows[0].Limit != limit {
		t.Errorf("overflows %+v", oe.Overflows)
	}
	for _, want := range []string{"target small", "the switch's P4Info", "sla_feasibility needs", "holds 8"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if rep.Writes != 0 {
		t.Errorf("%d writes before the refusal", rep.Writes)
	}
	st, err := d.ReadState(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	var held []string
	for _, x := range st.Entries {
		if !x.Default {
			held = append(held, x.String())
		}
	}
	if len(held) > 0 {
		t.Errorf("the switch holds %d entries after the refusal: %v", len(held), held[:min(3, len(held))])
	}
	// The same plan fits the program's own sizes.
	c2, _ := p4rttest.New(t)
	d2 := controller.NewDriverWithClient(controller.Target{Name: "full"}, c2, controller.DriverOptions{Grace: -1, Log: testLog(t)})
	if err := d2.Connect(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := d2.Sync(ctxT(t), p); err != nil {
		t.Fatalf("program-sized switch: %v", err)
	}
}
