package bmv2rt

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/internal/testing/bmv2fake"
)

func TestRegisterCalls(t *testing.T) {
	f, err := bmv2fake.New(map[string][]uint64{"P4ctlIngress.server_credit_0": {1, 1<<40 | 7, 0}, "x": {5}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx := context.Background()
	c, err := Dial(ctx, f.Addr(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	all, err := c.RegisterReadAll(ctx, "P4ctlIngress.server_credit_0")
	if err != nil || len(all) != 3 || all[1] != 1<<40|7 {
		t.Fatalf("read all: %v %v", all, err)
	}
	v, err := c.RegisterRead(ctx, "P4ctlIngress.server_credit_0", 1)
	if err != nil || v != 1<<40|7 {
		t.Fatalf("read one: %v %v", v, err)
	}
	// Errors name the register and keep BMv2's code; the connection stays usable.
	if _, err := c.RegisterRead(ctx, "nope", 0); !errors.Is(err, ErrUnknownRegister) || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("unknown register: %v", err)
	}
	var re *RegisterError
	if _, err := c.RegisterRead(ctx, "x", 9); !errors.As(err, &re) || re.Code != 2 {
		t.Fatalf("index out of range: %v", err)
	}
	if err := c.RegisterReset(ctx, "P4ctlIngress.server_credit_0"); err != nil {
		t.Fatal(err)
	}
	if got := f.Get("P4ctlIngress.server_credit_0"); got[0] != 0 || got[1] != 0 {
		t.Fatalf("after reset: %v", got)
	}
	if v, err := c.RegisterRead(ctx, "x", 0); err != nil || v != 5 {
		t.Fatalf("after errors: %v %v", v, err)
	}
}

func TestDialErrors(t *testing.T) {
	ctx := context.Background()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	if _, err := Dial(ctx, addr, Options{}); err == nil || !strings.Contains(err.Error(), addr) {
		t.Fatalf("dial a closed port: %v", err)
	}
	// A server that accepts and never answers: the call times out, naming
	// the address and the call.
	ln, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			time.Sleep(2 * time.Second)
			c.Close()
		}
	}()
	c, err := Dial(ctx, ln.Addr().String(), Options{Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	if _, err := c.RegisterReadAll(ctx, "x"); err == nil || !strings.Contains(err.Error(), "bm_register_read_all(x)") {
		t.Fatalf("silent server: %v", err)
	}
	if time.Since(start) > 1500*time.Millisecond {
		t.Errorf("the call took %v, timeout 200ms", time.Since(start))
	}
}
