package controller

import (
	"slices"
	"testing"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/protobuf/proto"

	"github.com/p4ctl/p4ctl/internal/testing/p4rttest"
)

// Issue 27 item 12: samePipeline compared P4Infos with proto.Equal, so the
// same program listed in another order (the embedded target's built-in
// P4Info against p4c's) read as another program, and run --p4info wiped
// the switch. The comparison is canonical; a real difference still counts.
func TestSamePipelineIgnoresOrder(t *testing.T) {
	info := p4rttest.ProgramP4Info()
	shuffled := proto.Clone(info).(*p4configv1.P4Info)
	slices.Reverse(shuffled.Tables)
	slices.Reverse(shuffled.Actions)
	slices.Reverse(shuffled.Registers)
	slices.Reverse(shuffled.Counters)
	for _, tb := range shuffled.Tables {
		slices.Reverse(tb.ActionRefs)
	}
	cur := &p4v1.ForwardingPipelineConfig{P4Info: shuffled}
	want := withCookie(&p4v1.ForwardingPipelineConfig{P4Info: info})
	if !samePipeline(cur, want) {
		t.Fatal("the same program listed in another order is taken for another program")
	}
	other := proto.Clone(shuffled).(*p4configv1.P4Info)
	other.Tables[0].Size++
	if samePipeline(&p4v1.ForwardingPipelineConfig{P4Info: other}, want) {
		t.Fatal("a program with another table size is taken for the same")
	}
	keys := proto.Clone(info).(*p4configv1.P4Info)
	for _, tb := range keys.Tables {
		if len(tb.MatchFields) > 1 {
			slices.Reverse(tb.MatchFields) // a key's field order is its layout
			break
		}
	}
	if samePipeline(&p4v1.ForwardingPipelineConfig{P4Info: keys}, want) {
		t.Fatal("a table key with its fields in another order is taken for the same")
	}
}
