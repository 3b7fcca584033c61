package p4rttest_test

import (
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/p4ctl/p4ctl/internal/testing/p4rttest"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

func TestNewIsPrimaryWithProgramP4Info(t *testing.T) {
	c, sw := p4rttest.New(t)
	if !c.State().Primary {
		t.Fatalf("New's client is not primary: %v", c.State())
	}
	if sw.Engine == nil || !proto.Equal(sw.Target.P4Info(), p4rttest.ProgramP4Info()) {
		t.Fatal("default target is not the engine with the p4ctl P4Info")
	}
	if _, err := c.ReadCounter(context.Background(), "region_routed", -1); err != nil {
		t.Fatal(err)
	}
}

func TestTCP(t *testing.T) {
	sw := p4rttest.Start(t, p4rttest.WithTCP())
	host, _, err := net.SplitHostPort(sw.Addr())
	if err != nil || !net.ParseIP(host).IsLoopback() {
		t.Fatalf("Addr %q", sw.Addr())
	}
	c, err := p4rt.Dial(sw.Addr(), p4rt.WithCallTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Capabilities(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestWithoutArbitrationAndPipeline(t *testing.T) {
	c, sw := p4rttest.New(t, p4rttest.WithoutArbitration(), p4rttest.WithoutPipeline())
	if c.State().Connected || sw.Target.P4Info() != nil {
		t.Fatalf("state %v, P4Info %v", c.State(), sw.Target.P4Info())
	}
}
