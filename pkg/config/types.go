package config

import (
	"fmt"
	"math"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Duration is a time.Duration written as a Go duration string ("500us",
// "2h").
type Duration struct{ time.Duration }

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("bad duration %q (want e.g. 500us, 30s, 2h)", b)
	}
	if v < 0 {
		return fmt.Errorf("negative duration %q", b)
	}
	d.Duration = v
	return nil
}

// MarshalText writes the duration string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.Duration.String()), nil }

// MAC is a 48-bit Ethernet address written as "02:00:00:00:00:01".
type MAC uint64

// UnmarshalText parses a colon- or dash-separated 48-bit MAC address.
func (m *MAC) UnmarshalText(b []byte) error {
	hw, err := net.ParseMAC(string(b))
	if err != nil || len(hw) != 6 {
		return fmt.Errorf("bad MAC address %q (want 6 bytes, e.g. 02:00:00:00:00:01)", b)
	}
	var v uint64
	for _, x := range hw {
		v = v<<8 | uint64(x)
	}
	*m = MAC(v)
	return nil
}

// MarshalText writes the address as six colon-separated hex bytes.
func (m MAC) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// String returns the address as six colon-separated hex bytes.
func (m MAC) String() string {
	v := uint64(m)
	return fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x",
		byte(v>>40), byte(v>>32), byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}

// IPv4 is an IPv4 address written in dotted-quad notation.
type IPv4 struct{ netip.Addr }

// UnmarshalText parses a dotted-quad IPv4 address.
func (a *IPv4) UnmarshalText(b []byte) error {
	v, err := netip.ParseAddr(string(b))
	if err != nil || !v.Is4() {
		return fmt.Errorf("bad IPv4 address %q", b)
	}
	a.Addr = v
	return nil
}

// MarshalText writes the dotted quad.
func (a IPv4) MarshalText() ([]byte, error) { return []byte(a.Addr.String()), nil }

// Uint32 returns the address as a big-endian integer (0 when unset).
func (a IPv4) Uint32() uint32 {
	if !a.Addr.Is4() {
		return 0
	}
	b := a.As4()
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// Prefix is a canonical IPv4 prefix ("10.1.0.0/16"; host bits must be 0).
type Prefix struct{ netip.Prefix }

// UnmarshalText parses a canonical IPv4 CIDR prefix.
func (p *Prefix) UnmarshalText(b []byte) error {
	v, err := netip.ParsePrefix(string(b))
	if err != nil || !v.Addr().Is4() {
		return fmt.Errorf("bad IPv4 prefix %q (want e.g. 10.1.0.0/16)", b)
	}
	if v.Masked() != v {
		return fmt.Errorf("prefix %q has host bits set (did you mean %s?)", b, v.Masked())
	}
	p.Prefix = v
	return nil
}

// MarshalText writes the CIDR prefix.
func (p Prefix) MarshalText() ([]byte, error) { return []byte(p.Prefix.String()), nil }

// Uint32 returns the prefix's network address as a big-endian integer.
func (p Prefix) Uint32() uint32 { return IPv4{p.Addr()}.Uint32() }

// ElectionID is a target's P4Runtime election id (128 bits): a number,
// the low 64 bits (election_id: 5), or HIGH,LOW as p4runtime-shell writes
// it (election_id: 1,0 — its default, high word 1). The zero value is
// unset.
type ElectionID struct{ High, Low uint64 }

// IsZero reports whether the id is unset (0).
func (e ElectionID) IsZero() bool { return e.High == 0 && e.Low == 0 }

// String writes the id as the configuration does: the low word alone when
// the high word is 0, else HIGH,LOW.
func (e ElectionID) String() string {
	if e.High == 0 {
		return strconv.FormatUint(e.Low, 10)
	}
	return strconv.FormatUint(e.High, 10) + "," + strconv.FormatUint(e.Low, 10)
}

// ParseElectionID parses a decimal number (the low word) or HIGH,LOW.
func ParseElectionID(s string) (ElectionID, error) {
	hi, lo, pair := strings.Cut(strings.TrimSpace(s), ",")
	if !pair {
		v, err := strconv.ParseUint(hi, 10, 64)
		if err != nil {
			return ElectionID{}, fmt.Errorf("election id %q: want a decimal number 0..%d (the low 64 bits) or HIGH,LOW (p4runtime-shell's form, e.g. 1,0)", s, uint64(math.MaxUint64))
		}
		return ElectionID{Low: v}, nil
	}
	h, err1 := strconv.ParseUint(strings.TrimSpace(hi), 10, 64)
	l, err2 := strconv.ParseUint(strings.TrimSpace(lo), 10, 64)
	if err1 != nil || err2 != nil {
		return ElectionID{}, fmt.Errorf("election id %q: want HIGH,LOW with two decimal 64-bit numbers (p4runtime-shell's form, e.g. 1,0) or one number", s)
	}
	return ElectionID{High: h, Low: l}, nil
}

// UnmarshalJSON accepts a number (the low word) or a string "HIGH,LOW".
func (e *ElectionID) UnmarshalJSON(b []byte) error {
	s := string(b)
	if u, err := strconv.Unquote(s); err == nil {
		s = u
	}
	v, err := ParseElectionID(s)
	if err != nil {
		return err
	}
	*e = v
	return nil
}

// MarshalJSON writes a number when the high word is 0, else "HIGH,LOW".
func (e ElectionID) MarshalJSON() ([]byte, error) {
	if e.High == 0 {
		return []byte(strconv.FormatUint(e.Low, 10)), nil
	}
	return []byte(strconv.Quote(e.String())), nil
}
