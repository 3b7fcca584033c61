package wire

import (
	"bytes"
	"errors"
	"net"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

func TestHeaderRoundTrip(t *testing.T) {
	h := Header{Version: Version, Type: MsgReply, Flags: FlagFallback | FlagHeld, SLAms: 800,
		ExecClass: 3, HoldCount: 2, Site: 0x0102, Region: 7, Server: 0x0304, RequestID: 0xdeadbeef}
	b := h.Marshal()
	want := []byte{0x12, 0x05, 0x03, 0x20, 3, 2, 0x01, 0x02, 7, 0, 0x03, 0x04, 0xde, 0xad, 0xbe, 0xef}
	if !bytes.Equal(b, want) {
		t.Fatalf("Marshal = % x, want % x", b, want)
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if got != h {
		t.Fatalf("Decode = %+v, want %+v", got, h)
	}
}

func TestDecodeMalformed(t *testing.T) {
	good := NewRequest(1, 300, 0).Marshal()
	cases := []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, ErrTruncated},
		{"15 bytes", good[:15], ErrTruncated},
		{"version 0", append([]byte{0x01}, good[1:]...), ErrBadVersion},
		{"version 2", append([]byte{0x21}, good[1:]...), ErrBadVersion},
		{"type 0", append([]byte{0x10}, good[1:]...), ErrBadType},
		{"type 4", append([]byte{0x14}, good[1:]...), ErrBadType},
		{"type 15", append([]byte{0x1f}, good[1:]...), ErrBadType},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Decode(c.b); !errors.Is(err, c.want) {
				t.Fatalf("Decode err = %v, want %v", err, c.want)
			}
		})
	}
}

func TestFlagsString(t *testing.T) {
	for f, want := range map[Flags]string{0: "-", FlagFallback: "fallback", FlagSpilled | FlagForced: "spilled|forced", 0x80 | FlagHeld: "held|0x80"} {
		if got := f.String(); got != want {
			t.Errorf("Flags(%#x).String() = %q, want %q", uint8(f), got, want)
		}
	}
}

func TestFrameBuildParse(t *testing.T) {
	f := Frame{
		SrcMAC: net.HardwareAddr{0, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{0, 0, 0, 0, 0, 2},
		SrcIP: net.IPv4(10, 0, 1, 1), DstIP: net.IPv4(10, 255, 0, 1), SrcPort: 40000, DstPort: UDPPort,
		Header: NewRequest(42, 500, 1), Payload: []byte("hi"),
	}
	b, err := f.Build()
	if err != nil {
		t.Fatal(err)
	}
	// The frame must decode with gopacket's own layers and carry valid checksums.
	pkt := gopacket.NewPacket(b, layers.LayerTypeEthernet, gopacket.Default)
	ip := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
	if int(ip.Length) != 20+8+HeaderLen+2 {
		t.Fatalf("IPv4 length %d", ip.Length)
	}
	got, ok, err := ParseFrame(b)
	if err != nil || !ok {
		t.Fatalf("ParseFrame ok=%v err=%v", ok, err)
	}
	if got.Header != f.Header || !bytes.Equal(got.Payload, f.Payload) || !got.DstIP.Equal(f.DstIP) {
		t.Fatalf("ParseFrame = %+v", got)
	}
	// Non-p4ctl UDP is reported as such, without error.
	f.DstPort = 53
	b, _ = f.Build()
	if _, ok, err := ParseFrame(b); ok || err != nil {
		t.Fatalf("plain UDP: ok=%v err=%v", ok, err)
	}
}

func TestLayerDecodesFromUDPPayload(t *testing.T) {
	h := NewRequest(7, 1000, 2)
	pkt := gopacket.NewPacket(h.Marshal(), LayerTypeP4ctl, gopacket.Default)
	l, ok := pkt.Layer(LayerTypeP4ctl).(*Layer)
	if !ok || l.Header != h {
		t.Fatalf("layer = %+v", pkt)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(NewRequest(1, 300, 0).Marshal())
	f.Add([]byte{0x12})
	f.Add(bytes.Repeat([]byte{0xff}, 20))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := Decode(b)
		if err != nil {
			return
		}
		// Whatever decodes must re-encode to the same bytes.
		if got := h.Marshal(); !bytes.Equal(got, b[:HeaderLen]) {
			t.Fatalf("re-encode % x != % x", got, b[:HeaderLen])
		}
	})
}

func FuzzParseFrame(f *testing.F) {
	good, _ := Frame{SrcMAC: make(net.HardwareAddr, 6), DstMAC: make(net.HardwareAddr, 6),
		SrcIP: net.IPv4(1, 2, 3, 4), DstIP: net.IPv4(5, 6, 7, 8), SrcPort: 1, DstPort: UDPPort,
		Header: NewRequest(1, 1, 1)}.Build()
	f.Add(good)
	f.Add(good[:40])
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _, _ = ParseFrame(b) // must not panic
	})
}
