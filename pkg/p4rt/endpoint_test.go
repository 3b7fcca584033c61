package p4rt_test

import (
	"context"
	"testing"

	"github.com/p4ctl/p4ctl/pkg/p4rt"
	"github.com/p4ctl/p4ctl/pkg/p4rt/p4rttest"
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
