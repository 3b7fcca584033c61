package switchd_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/pkg/dataplane/ports"
	"github.com/p4ctl/p4ctl/pkg/dataplane/switchd"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

// A switch with no ports serves P4Runtime once Ready is called, answers a
// client, and Run returns nil soon after its context ends.
func TestRunServesUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	started := make(chan switchd.Started, 1)
	var left string
	done := make(chan error, 1)
	go func() {
		done <- switchd.Run(ctx, switchd.Options{Addr: "127.0.0.1:0", DeviceID: 3, CPUPort: 510,
			Ready:   func(st switchd.Started) { started <- st },
			Stopped: func(l string) { left = l }})
	}()
	var st switchd.Started
	select {
	case st = <-started:
	case err := <-done:
		t.Fatalf("Run returned before it listened: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("not listening after 10 s")
	}
	if st.Pipeline != "p4ctl program loaded" || st.Ports != "no data-plane ports" {
		t.Errorf("announced %+v", st)
	}
	c, err := p4rt.Dial(st.Listen.String(), p4rt.WithDeviceID(3))
	if err != nil {
		t.Fatalf("dial %s: %v", st.Listen, err)
	}
	if _, err := c.Capabilities(ctx); err != nil {
		t.Errorf("capabilities: %v", err)
	}
	c.Close()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run after cancel: %v", err)
		}
		if left == "" {
			t.Error("Stopped was not called with what the switch held")
		}
	case <-time.After(switchd.ShutdownTimeout + 5*time.Second):
		t.Fatal("Run did not return after its context ended")
	}
}

// An interface that does not exist fails Run before anything listens.
func TestRunMissingInterface(t *testing.T) {
	sp, err := ports.ParseSpec("1@p4nosuch0")
	if err != nil {
		t.Fatal(err)
	}
	called := false
	err = switchd.Run(t.Context(), switchd.Options{Addr: "127.0.0.1:0", CPUPort: 510, Ports: []ports.Spec{sp},
		Ready: func(switchd.Started) { called = true }})
	if err == nil || !strings.Contains(err.Error(), "p4nosuch0") {
		t.Errorf("Run with a missing interface: %v, want an error naming it", err)
	}
	if called {
		t.Error("Ready was called although an interface was missing")
	}
}
