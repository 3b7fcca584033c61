package engine

import (
	"fmt"
	"math/bits"
)

// MaxWidth is the widest bit<W> value (match field, action parameter,
// register cell) the engine supports. Every width of the p4ctl program fits;
// a P4Info with a wider value is rejected by SetPipeline.
const MaxWidth = 64

// mask returns the all-ones value of a bit<width> field.
func mask(width int) uint64 {
	if width >= 64 {
		return ^uint64(0)
	}
	return 1<<uint(width) - 1
}

// prefixMask returns the mask of the first plen bits of a width-bit field.
func prefixMask(width, plen int) uint64 {
	if plen <= 0 {
		return 0
	}
	return mask(width) &^ mask(width-plen)
}

// decodeBits parses a P4Runtime bytestring (big-endian) that must hold a
// bit<width> value. Per the P4Runtime spec ("Bytestrings") an empty string
// is rejected, zero-padded strings are accepted unless strict, and the value
// must fit in width bits.
func decodeBits(b []byte, width int, strict bool) (uint64, error) {
	if len(b) == 0 {
		return 0, fmt.Errorf("empty bytestring")
	}
	i := 0
	for i < len(b)-1 && b[i] == 0 {
		i++
	}
	if strict && i > 0 {
		return 0, fmt.Errorf("bytestring %x is not canonical (leading zero bytes; want %x)", b, b[i:])
	}
	rest := b[i:]
	if len(rest) > 8 {
		return 0, fmt.Errorf("bytestring %x does not fit in %d bits", b, width)
	}
	var v uint64
	for _, c := range rest {
		v = v<<8 | uint64(c)
	}
	if width < 64 && v>>uint(width) != 0 {
		return 0, fmt.Errorf("value %#x (bytestring %x) does not fit in %d bits", v, b, width)
	}
	return v, nil
}

// EncodeBits returns the canonical P4Runtime bytestring of v: the shortest
// big-endian string, "\x00" for zero. It is the one encoder of the embedded
// target, its digests and the packet cases (p4rt.EncodeUint is the client's,
// with a width check).
func EncodeBits(v uint64) []byte {
	n := (bits.Len64(v) + 7) / 8
	if n == 0 {
		n = 1
	}
	b := make([]byte, n)
	for i := n - 1; i >= 0; i-- {
		b[i] = byte(v)
		v >>= 8
	}
	return b
}
