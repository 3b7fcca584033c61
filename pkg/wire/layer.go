package wire

import (
	"fmt"
	"net"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

// LayerTypeP4ctl is the gopacket layer type of the request header. The
// number is taken from gopacket's range for user layers (>= 2000).
var LayerTypeP4ctl = gopacket.RegisterLayerType(2980, gopacket.LayerTypeMetadata{
	Name:    "P4ctl",
	Decoder: gopacket.DecodeFunc(decodeLayer),
})

// Layer is the request header as a gopacket layer. It implements
// gopacket.DecodingLayer and gopacket.SerializableLayer.
type Layer struct {
	layers.BaseLayer
	Header
}

// LayerType returns LayerTypeP4ctl.
func (l *Layer) LayerType() gopacket.LayerType { return LayerTypeP4ctl }

// CanDecode returns LayerTypeP4ctl.
func (l *Layer) CanDecode() gopacket.LayerClass { return LayerTypeP4ctl }

// NextLayerType returns the payload layer type.
func (l *Layer) NextLayerType() gopacket.LayerType { return gopacket.LayerTypePayload }

// DecodeFromBytes decodes the header and keeps the rest as payload.
func (l *Layer) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	h, err := Decode(data)
	if err != nil {
		df.SetTruncated()
		return err
	}
	l.Header = h
	l.BaseLayer = layers.BaseLayer{Contents: data[:HeaderLen], Payload: data[HeaderLen:]}
	return nil
}

// SerializeTo writes the header in front of the current buffer contents.
func (l *Layer) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	bytes, err := b.PrependBytes(HeaderLen)
	if err != nil {
		return fmt.Errorf("serialize p4ctl header: %w", err)
	}
	l.Header.Put(bytes)
	return nil
}

func decodeLayer(data []byte, p gopacket.PacketBuilder) error {
	l := &Layer{}
	if err := l.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(l)
	return p.NextDecoder(l.NextLayerType())
}

// Frame describes an Ethernet/IPv4/UDP/p4ctl frame, the unit the switch and
// the test harnesses exchange.
type Frame struct {
	SrcMAC, DstMAC   net.HardwareAddr
	SrcIP, DstIP     net.IP
	SrcPort, DstPort uint16
	TTL              uint8
	Header           Header
	Payload          []byte
}

// Build serializes f with correct IPv4 and UDP lengths and checksums.
func (f Frame) Build() ([]byte, error) {
	ttl := f.TTL
	if ttl == 0 {
		ttl = 64
	}
	eth := &layers.Ethernet{SrcMAC: f.SrcMAC, DstMAC: f.DstMAC, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, IHL: 5, TTL: ttl, Protocol: layers.IPProtocolUDP, SrcIP: f.SrcIP.To4(), DstIP: f.DstIP.To4()}
	udp := &layers.UDP{SrcPort: layers.UDPPort(f.SrcPort), DstPort: layers.UDPPort(f.DstPort)}
	if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
		return nil, fmt.Errorf("build frame: %w", err)
	}
	hdr := &Layer{Header: f.Header}
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	if err := gopacket.SerializeLayers(buf, opts, eth, ip, udp, hdr, gopacket.Payload(f.Payload)); err != nil {
		return nil, fmt.Errorf("build frame: %w", err)
	}
	return buf.Bytes(), nil
}

// ParseFrame decodes an Ethernet/IPv4/UDP frame and, when either UDP port is
// UDPPort, its p4ctl header. ok reports whether a p4ctl header was present and
// valid; err is set when the frame is p4ctl traffic but the header is
// malformed, or when the frame is not Ethernet/IPv4/UDP.
func ParseFrame(data []byte) (f Frame, ok bool, err error) {
	var (
		eth     layers.Ethernet
		ip      layers.IPv4
		udp     layers.UDP
		payload gopacket.Payload
	)
	parser := gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &eth, &ip, &udp, &payload)
	parser.IgnoreUnsupported = true
	var decoded []gopacket.LayerType
	if err := parser.DecodeLayers(data, &decoded); err != nil {
		return f, false, fmt.Errorf("parse frame: %w", err)
	}
	var haveUDP bool
	for _, t := range decoded {
		if t == layers.LayerTypeUDP {
			haveUDP = true
		}
	}
	if !haveUDP {
		return f, false, fmt.Errorf("parse frame: not Ethernet/IPv4/UDP")
	}
	f = Frame{SrcMAC: eth.SrcMAC, DstMAC: eth.DstMAC, SrcIP: ip.SrcIP, DstIP: ip.DstIP,
		SrcPort: uint16(udp.SrcPort), DstPort: uint16(udp.DstPort), TTL: ip.TTL}
	if f.SrcPort != UDPPort && f.DstPort != UDPPort {
		f.Payload = udp.Payload
		return f, false, nil
	}
	h, err := Decode(udp.Payload)
	if err != nil {
		return f, false, fmt.Errorf("parse frame: %w", err)
	}
	f.Header = h
	f.Payload = udp.Payload[HeaderLen:]
	return f, true, nil
}
