package p4rt_test

import (
	"context"
	"testing"

	"github.com/p4ctl/p4ctl/internal/testing/p4rttest"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

func TestParseElectionID(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want p4rt.ElectionID
		err  bool
	}{
		{"", p4rt.ElectionID{}, false},
		{"0", p4rt.ElectionID{}, false},
		{"7", p4rt.Election(7), false},
		{"0x10", p4rt.Election(16), false},
		{"1:2", p4rt.ElectionID{High: 1, Low: 2}, false},
		{"18446744073709551618", p4rt.ElectionID{High: 1, Low: 2}, false},
		{"340282366920938463463374607431768211455", p4rt.ElectionID{High: ^uint64(0), Low: ^uint64(0)}, false},
		{"340282366920938463463374607431768211456", p4rt.ElectionID{}, true},
		{"-1", p4rt.ElectionID{}, true},
		{"x:1", p4rt.ElectionID{}, true},
		{"abc", p4rt.ElectionID{}, true},
	} {
		got, err := p4rt.ParseElectionID(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseElectionID(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.err)
		}
		if err == nil && got.String() != "unset" && tc.in != "0x10" && tc.in != "1:2" && got.String() != tc.in {
			t.Errorf("String() of %q = %s", tc.in, got)
		}
	}
}

func TestEndpointDial(t *testing.T) {
	sw := p4rttest.Start(t, p4rttest.WithTCP())
	c, err := p4rt.Endpoint{Address: sw.Addr(), DeviceID: 1, ElectionID: p4rt.Election(4)}.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st, err := c.Arbitrate(context.Background())
	if err != nil || !st.Primary || c.ElectionID() != p4rt.Election(4) {
		t.Fatalf("arbitrate through an Endpoint: %v %v", st, err)
	}
	if _, err := (p4rt.Endpoint{Address: "192.0.2.1:9559"}).Dial(); err == nil {
		t.Fatal("plaintext Endpoint to a non-loopback address dialled")
	}
}

// p4runtime-shell spells election ids HIGH,LOW (its default is 1,0: high
// word 1); a plain number is the whole id, so a small one is the low word.
func TestParseElectionIDShellForm(t *testing.T) {
	for in, want := range map[string]p4rt.ElectionID{
		"1,0":     {High: 1},
		"0,1":     {Low: 1},
		" 2 , 3 ": {High: 2, Low: 3},
		"5":       {Low: 5},
	} {
		if got, err := p4rt.ParseElectionID(in); err != nil || got != want {
			t.Errorf("ParseElectionID(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"1,", ",1", "1,2,3", "a,b"} {
		if _, err := p4rt.ParseElectionID(in); err == nil {
			t.Errorf("ParseElectionID(%q) accepted", in)
		}
	}
}

// Device id 0 is a valid P4Runtime device id (simple_switch_grpc's
// default): a client and an Endpoint use it as given, never as "unset".
func TestDeviceIDZero(t *testing.T) {
	c, err := p4rt.Dial("127.0.0.1:1", p4rt.WithDeviceID(0))
	if err != nil {
		t.Fatalf("dial with device id 0: %v", err)
	}
	defer c.Close()
	if c.DeviceID() != 0 {
		t.Fatalf("device id %d, want 0", c.DeviceID())
	}
	c2, err := p4rt.Endpoint{Address: "127.0.0.1:1", DeviceID: 0}.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if c2.DeviceID() != 0 {
		t.Fatalf("Endpoint{DeviceID: 0} dialled device %d", c2.DeviceID())
	}
}
