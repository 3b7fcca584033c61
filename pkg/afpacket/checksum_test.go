package afpacket

import (
	"bytes"
	"net"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

// frame serialises layers with correct checksums.
func frame(t *testing.T, ls ...gopacket.SerializableLayer) []byte {
	t.Helper()
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// A checksum field holding anything (as offload leaves it: the
// pseudo-header sum) is replaced by the checksum of the segment, for UDP
// and TCP over IPv4 and IPv6, behind a VLAN tag too; other frames are left
// as they are.
func TestCompleteChecksum(t *testing.T) {
	mac := net.HardwareAddr{2, 0, 0, 0, 0, 1}
	eth := func(typ layers.EthernetType) *layers.Ethernet {
		return &layers.Ethernet{SrcMAC: mac, DstMAC: mac, EthernetType: typ}
	}
	v4 := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, SrcIP: net.IPv4(10, 0, 0, 1), DstIP: net.IPv4(10, 0, 0, 2)}
	v6 := &layers.IPv6{Version: 6, HopLimit: 64, SrcIP: net.ParseIP("fd00::1"), DstIP: net.ParseIP("fd00::2")}
	udp := func(ip gopacket.NetworkLayer) *layers.UDP {
		u := &layers.UDP{SrcPort: 40000, DstPort: 9800}
		_ = u.SetNetworkLayerForChecksum(ip)
		return u
	}
	tcp := func(ip gopacket.NetworkLayer) *layers.TCP {
		tc := &layers.TCP{SrcPort: 40000, DstPort: 80, Seq: 7, SYN: true, Window: 1000}
		_ = tc.SetNetworkLayerForChecksum(ip)
		return tc
	}
	pay := gopacket.Payload("odd-length payload")
	v4u, v4t, v6u := *v4, *v4, *v6
	v4u.Protocol, v4t.Protocol, v6u.NextHeader = layers.IPProtocolUDP, layers.IPProtocolTCP, layers.IPProtocolUDP
	v4v := v4u
	cases := []struct {
		name  string
		frame []byte
		csum  int // offset of the checksum field
	}{
		{"udp/ipv4", frame(t, eth(layers.EthernetTypeIPv4), &v4u, udp(&v4u), pay), 14 + 20 + 6},
		{"tcp/ipv4", frame(t, eth(layers.EthernetTypeIPv4), &v4t, tcp(&v4t), pay), 14 + 20 + 16},
		{"udp/ipv6", frame(t, eth(layers.EthernetTypeIPv6), &v6u, udp(&v6u), pay), 14 + 40 + 6},
		{"udp/ipv4/vlan", frame(t, eth(layers.EthernetTypeDot1Q), &layers.Dot1Q{VLANIdentifier: 7, Type: layers.EthernetTypeIPv4},
			&v4v, udp(&v4v), pay), 18 + 20 + 6},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := append([]byte(nil), c.frame...)
			got[c.csum], got[c.csum+1] = 0x12, 0x34
			if !CompleteChecksum(got) {
				t.Fatal("not recognised")
			}
			if !bytes.Equal(got, c.frame) {
				t.Fatalf("checksum % x, want % x", got[c.csum:c.csum+2], c.frame[c.csum:c.csum+2])
			}
		})
	}
	arp := frame(t, eth(layers.EthernetTypeARP), pay)
	frag := append([]byte(nil), cases[0].frame...)
	frag[14+6] = 0x20 // more fragments
	short := cases[0].frame[:30]
	for name, f := range map[string][]byte{"arp": arp, "fragment": frag, "truncated": short} {
		before := append([]byte(nil), f...)
		if CompleteChecksum(f) || !bytes.Equal(f, before) {
			t.Errorf("%s: changed", name)
		}
	}
}
