package dataplane

import (
	"context"
	"testing"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	"github.com/p4ctl/p4ctl/internal/testing/packetcases"
)

// install writes entries to sw, failing the test on any error.
func install(t *testing.T, sw *Switch, entries []packetcases.Entry) {
	t.Helper()
	ups, err := packetcases.Updates(sw.P4Info(), entries)
	if err != nil {
		t.Fatal(err)
	}
	for i, err := range sw.Write(context.Background(), ups, p4v1.WriteRequest_CONTINUE_ON_ERROR) {
		if err != nil {
			t.Fatalf("install %v: %v", entries[i], err)
		}
	}
}
