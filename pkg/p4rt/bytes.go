package p4rt

import (
	"encoding/binary"
	"fmt"
	"math/big"
	"net"
	"net/netip"
)

// Canonical returns the P4Runtime canonical form of the unsigned bytestring
// b: the shortest big-endian string with the same value, i.e. without leading
// zero bytes; the value 0 is the single byte 0x00 (P4Runtime spec §8.4
// "Bytestrings"). The result may share memory with b. An empty b stays empty
// (servers reject empty bytestrings; the caller decides).
func Canonical(b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	i := 0
	for i < len(b)-1 && b[i] == 0 {
		i++
	}
	return b[i:]
}

// BitLen is the number of significant bits of the unsigned big-endian value
// b (0 for the value 0).
func BitLen(b []byte) int {
	c := Canonical(b)
	if len(c) == 0 || (len(c) == 1 && c[0] == 0) {
		return 0
	}
	n := (len(c) - 1) * 8
	for v := c[0]; v != 0; v >>= 1 {
		n++
	}
	return n
}

// FitsWidth reports whether the unsigned big-endian value b is non-empty and
// fits in width bits, the check a P4Runtime receiver applies (leading zero
// bytes are allowed).
func FitsWidth(b []byte, width int) bool {
	return len(b) > 0 && BitLen(b) <= width
}

// EncodeUint returns the canonical bytestring of v for a field of width bits,
// or an error when v does not fit.
func EncodeUint(v uint64, width int) ([]byte, error) {
	if width <= 0 {
		return nil, fmt.Errorf("invalid bit width %d", width)
	}
	if width < 64 && v>>uint(width) != 0 {
		return nil, fmt.Errorf("value %d does not fit in %d bits (max %d)", v, width, uint64(1)<<uint(width)-1)
	}
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], v)
	return append([]byte(nil), Canonical(buf[:])...), nil
}

// Encode converts a Go value to the canonical P4Runtime bytestring for a
// field or parameter of width bits. Accepted values: unsigned and
// non-negative signed integers, *big.Int, net.IP and netip.Addr (IPv4 as 4
// bytes, IPv6 as 16), net.HardwareAddr, and []byte (big-endian). The value
// must fit in width bits; the result never has leading zero bytes.
func Encode(v any, width int) ([]byte, error) {
	if width <= 0 {
		return nil, fmt.Errorf("invalid bit width %d", width)
	}
	var raw []byte
	switch x := v.(type) {
	case uint64:
		return EncodeUint(x, width)
	case uint:
		return EncodeUint(uint64(x), width)
	case uint32:
		return EncodeUint(uint64(x), width)
	case uint16:
		return EncodeUint(uint64(x), width)
	case uint8:
		return EncodeUint(uint64(x), width)
	case int, int64, int32, int16, int8:
		i := toInt64(x)
		if i < 0 {
			return nil, fmt.Errorf("negative value %d for an unsigned %d-bit field", i, width)
		}
		return EncodeUint(uint64(i), width)
	case bool:
		if x {
			return EncodeUint(1, width)
		}
		return EncodeUint(0, width)
	case *big.Int:
		if x == nil || x.Sign() < 0 {
			return nil, fmt.Errorf("nil or negative big.Int for an unsigned %d-bit field", width)
		}
		raw = x.Bytes()
		if len(raw) == 0 {
			raw = []byte{0}
		}
	case net.IP:
		if v4 := x.To4(); v4 != nil {
			raw = v4
		} else if len(x) == net.IPv6len {
			raw = x
		} else {
			return nil, fmt.Errorf("invalid IP address %v", x)
		}
	case netip.Addr:
		if !x.IsValid() {
			return nil, fmt.Errorf("invalid IP address")
		}
		raw = x.Unmap().AsSlice()
	case net.HardwareAddr:
		raw = x
	case []byte:
		raw = x
	default:
		return nil, fmt.Errorf("cannot encode %T as a P4Runtime bytestring", v)
	}
	if len(raw) == 0 {
		return nil, fmt.Errorf("empty value for a %d-bit field", width)
	}
	if BitLen(raw) > width {
		return nil, fmt.Errorf("value 0x%x does not fit in %d bits", Canonical(raw), width)
	}
	return append([]byte(nil), Canonical(raw)...), nil
}

func toInt64(v any) int64 {
	switch x := v.(type) {
	case int:
		return int64(x)
	case int64:
		return x
	case int32:
		return int64(x)
	case int16:
		return int64(x)
	case int8:
		return int64(x)
	}
	return 0
}

// DecodeUint returns the value of the unsigned big-endian bytestring b, or an
// error when it is empty or wider than 64 bits.
func DecodeUint(b []byte) (uint64, error) {
	if len(b) == 0 {
		return 0, fmt.Errorf("empty bytestring")
	}
	c := Canonical(b)
	if len(c) > 8 {
		return 0, fmt.Errorf("bytestring 0x%x is wider than 64 bits", c)
	}
	var v uint64
	for _, x := range c {
		v = v<<8 | uint64(x)
	}
	return v, nil
}

// maskPrefix returns the canonical bytestring of value with every bit below
// the prefixLen most significant bits of a width-bit field cleared.
func maskPrefix(value []byte, width, prefixLen int) []byte {
	full := padTo(value, (width+7)/8)
	// Bit i (0 = most significant of the width-bit field) lives at offset
	// i + pad in the padded byte string, where pad is the unused high bits.
	pad := len(full)*8 - width
	for bit := pad + prefixLen; bit < len(full)*8; bit++ {
		full[bit/8] &^= 0x80 >> uint(bit%8)
	}
	return Canonical(full)
}

// prefixMask returns the canonical mask with the prefixLen most significant
// bits of a width-bit field set.
func prefixMask(width, prefixLen int) []byte {
	full := make([]byte, (width+7)/8)
	pad := len(full)*8 - width
	for bit := pad; bit < pad+prefixLen; bit++ {
		full[bit/8] |= 0x80 >> uint(bit%8)
	}
	return Canonical(full)
}

// andBytes returns the canonical a & b of two unsigned big-endian values.
func andBytes(a, b []byte) []byte {
	n := max(len(a), len(b))
	pa, pb := padTo(a, n), padTo(b, n)
	for i := range pa {
		pa[i] &= pb[i]
	}
	return Canonical(pa)
}

// allOnes reports whether b has every bit of a width-bit field set.
func allOnes(b []byte, width int) bool {
	return BitLen(b) == width && BitLen(addOne(b)) == width+1
}

// addOne returns b+1 as an unsigned big-endian value (one byte longer on
// overflow).
func addOne(b []byte) []byte {
	out := append([]byte{0}, b...)
	for i := len(out) - 1; i >= 0; i-- {
		out[i]++
		if out[i] != 0 {
			break
		}
	}
	return Canonical(out)
}

// padTo returns a fresh copy of the value b left-padded with zeros to n bytes
// (or its canonical form when that is longer than n).
func padTo(b []byte, n int) []byte {
	c := Canonical(b)
	if len(c) >= n {
		return append([]byte(nil), c...)
	}
	out := make([]byte, n)
	copy(out[n-len(c):], c)
	return out
}

// compareBytes compares two unsigned big-endian values: -1, 0 or +1.
func compareBytes(a, b []byte) int {
	ca, cb := Canonical(a), Canonical(b)
	if len(ca) != len(cb) {
		if len(ca) < len(cb) {
			return -1
		}
		return 1
	}
	for i := range ca {
		if ca[i] != cb[i] {
			if ca[i] < cb[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}
