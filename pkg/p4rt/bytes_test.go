package p4rt

import (
	"bytes"
	"math/big"
	"net"
	"net/netip"
	"testing"
)

func TestEncode(t *testing.T) {
	for _, tc := range []struct {
		name  string
		v     any
		width int
		want  []byte
		err   bool
	}{
		{"zero", uint64(0), 8, []byte{0}, false},
		{"one byte", uint64(0x63), 16, []byte{0x63}, false},
		{"two bytes", uint64(0x3064), 16, []byte{0x30, 0x64}, false},
		{"12-bit max", uint64(0xfff), 12, []byte{0x0f, 0xff}, false},
		{"12-bit overflow", uint64(0x1000), 12, nil, true},
		{"9-bit port 511", 511, 9, []byte{0x01, 0xff}, false},
		{"9-bit port 512", 512, 9, nil, true},
		{"64-bit max", ^uint64(0), 64, bytes.Repeat([]byte{0xff}, 8), false},
		{"negative", -1, 8, nil, true},
		{"bool", true, 1, []byte{1}, false},
		{"ipv4", net.ParseIP("10.0.0.1"), 32, []byte{10, 0, 0, 1}, false},
		{"ipv4 leading zero", net.IPv4(0, 0, 1, 2), 32, []byte{1, 2}, false},
		{"netip", netip.MustParseAddr("192.168.1.1"), 32, []byte{192, 168, 1, 1}, false},
		{"ipv6 in 32 bits", net.ParseIP("2001:db8::1"), 32, nil, true},
		{"mac", net.HardwareAddr{0, 0, 0, 0, 0xab, 0xcd}, 48, []byte{0xab, 0xcd}, false},
		{"padded bytes", []byte{0, 0, 5}, 8, []byte{5}, false},
		{"bytes too wide", []byte{1, 0}, 8, nil, true},
		{"empty bytes", []byte{}, 8, nil, true},
		{"big", new(big.Int).Lsh(big.NewInt(1), 70), 71, append([]byte{0x40}, make([]byte, 8)...), false},
		{"big overflow", new(big.Int).Lsh(big.NewInt(1), 70), 70, nil, true},
		{"unsupported", "x", 8, nil, true},
		{"bad width", 1, 0, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Encode(tc.v, tc.width)
			if (err != nil) != tc.err {
				t.Fatalf("Encode(%v, %d) error %v, want error %v", tc.v, tc.width, err, tc.err)
			}
			if !tc.err && !bytes.Equal(got, tc.want) {
				t.Fatalf("Encode(%v, %d) = %x, want %x", tc.v, tc.width, got, tc.want)
			}
		})
	}
}

func TestFitsWidthAndMasks(t *testing.T) {
	// The examples of P4Runtime spec §8.4 (valid and invalid bytestrings).
	for _, tc := range []struct {
		b     []byte
		width int
		ok    bool
	}{
		{[]byte{0x63}, 8, true}, {[]byte{0, 0x63}, 16, true}, {[]byte{0x30, 0x64}, 16, true},
		{[]byte{0, 0x30, 0x64}, 16, true}, {[]byte{0, 0x63}, 12, true}, {[]byte{0, 0, 0x63}, 12, true},
		{[]byte{1, 0x63}, 8, false}, {nil, 8, false}, {[]byte{1, 0, 0x63}, 16, false},
		{[]byte{0x10, 0x63}, 12, false}, {[]byte{1, 0, 0x63}, 12, false}, {[]byte{0, 0x40, 0x63}, 12, false},
	} {
		if got := FitsWidth(tc.b, tc.width); got != tc.ok {
			t.Errorf("FitsWidth(%x, %d) = %v, want %v", tc.b, tc.width, got, tc.ok)
		}
	}
	if got := maskPrefix([]byte{10, 1, 2, 3}, 32, 8); !bytes.Equal(got, []byte{10, 0, 0, 0}) {
		t.Errorf("maskPrefix /8 = %x", got)
	}
	if got := maskPrefix([]byte{0x01, 0xff}, 9, 1); !bytes.Equal(got, []byte{0x01, 0x00}) {
		t.Errorf("maskPrefix 9-bit /1 = %x", got)
	}
	if got := prefixMask(9, 1); !bytes.Equal(got, []byte{0x01, 0x00}) {
		t.Errorf("prefixMask(9,1) = %x", got)
	}
	if got := andBytes([]byte{0xff, 0x0f}, []byte{0xf0}); !bytes.Equal(got, []byte{0}) {
		t.Errorf("andBytes = %x", got)
	}
	if !allOnes([]byte{0x01, 0xff}, 9) || allOnes([]byte{0xff}, 9) {
		t.Error("allOnes")
	}
	if v, err := DecodeUint([]byte{0, 0, 1, 2}); err != nil || v != 0x102 {
		t.Errorf("DecodeUint = %d, %v", v, err)
	}
	if _, err := DecodeUint(make([]byte, 9)); err != nil {
		t.Errorf("DecodeUint of nine zero bytes: %v", err)
	}
	if _, err := DecodeUint(append([]byte{1}, make([]byte, 8)...)); err == nil {
		t.Error("DecodeUint of a 65-bit value succeeded")
	}
}

// Encoding arbitrary bytes never panics and always yields a canonical
// string that fits the width.
func FuzzEncode(f *testing.F) {
	f.Add([]byte{0, 1}, 9)
	f.Add([]byte{}, 1)
	f.Add([]byte{0xff, 0xff, 0xff}, 17)
	f.Fuzz(func(t *testing.T, b []byte, width int) {
		got, err := Encode(b, width)
		if err != nil {
			return
		}
		if len(got) == 0 || (len(got) > 1 && got[0] == 0) || !FitsWidth(got, width) {
			t.Fatalf("Encode(%x, %d) = %x: not canonical or too wide", b, width, got)
		}
		if compareBytes(got, b) != 0 {
			t.Fatalf("Encode(%x) changed the value to %x", b, got)
		}
	})
}
