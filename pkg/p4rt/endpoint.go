package p4rt

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// DefaultAddress is the P4Runtime address p4ctl commands use by default
// (the embedded switch's default listen address).
const DefaultAddress = "127.0.0.1:9559"

// Endpoint is what a command needs to reach a switch, in flag-friendly
// form (`p4ctl get --switch ADDR --device-id N --election-id N --ca ...`).
type Endpoint struct {
	Address    string        // host:port; default DefaultAddress
	DeviceID   uint64        // sent as is: 0 is a valid id (simple_switch_grpc's default)
	ElectionID ElectionID    // zero: read-only backup
	Role       string        // default role when empty
	TLS        *TLSOptions   // nil: plaintext (loopback only unless Insecure)
	Insecure   bool          // allow plaintext to a non-loopback address
	Timeout    time.Duration // per-call deadline; default DefaultCallTimeout
}

// Options returns the client options of the endpoint (without Address).
func (e Endpoint) Options() []Option {
	opts := []Option{WithDeviceID(e.DeviceID)}
	if !e.ElectionID.IsZero() {
		opts = append(opts, WithElectionID(e.ElectionID))
	}
	if e.Role != "" {
		opts = append(opts, WithRole(e.Role))
	}
	if e.TLS != nil {
		opts = append(opts, WithTLS(*e.TLS))
	}
	if e.Insecure {
		opts = append(opts, WithInsecure())
	}
	if e.Timeout > 0 {
		opts = append(opts, WithCallTimeout(e.Timeout))
	}
	return opts
}

// Dial connects to the endpoint; extra options are applied last.
func (e Endpoint) Dial(extra ...Option) (*Client, error) {
	addr := e.Address
	if addr == "" {
		addr = DefaultAddress
	}
	return Dial(addr, append(e.Options(), extra...)...)
}

// ParseElectionID parses an election id: decimal (up to 2^128-1, so a
// number below 2^64 is the low word), 0x-hex, or "HIGH,LOW" (as
// p4runtime-shell spells it; its default 1,0 is high word 1) or "HIGH:LOW"
// with two 64-bit numbers. "" and "0" are the unset id.
func ParseElectionID(s string) (ElectionID, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return ElectionID{}, nil
	}
	if i := strings.IndexAny(s, ",:"); i >= 0 {
		hi, lo := strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+1:])
		h, err1 := strconv.ParseUint(hi, 0, 64)
		l, err2 := strconv.ParseUint(lo, 0, 64)
		if err1 != nil || err2 != nil {
			return ElectionID{}, fmt.Errorf("election id %q: want HIGH,LOW with two 64-bit numbers (p4runtime-shell's form), or one number", s)
		}
		return ElectionID{High: h, Low: l}, nil
	}
	v, ok := new(big.Int).SetString(s, 0)
	if !ok || v.Sign() < 0 || v.BitLen() > 128 {
		return ElectionID{}, fmt.Errorf("election id %q: want a number in 0..2^128-1", s)
	}
	mask := new(big.Int).SetUint64(^uint64(0))
	return ElectionID{High: new(big.Int).Rsh(v, 64).Uint64(), Low: new(big.Int).And(v, mask).Uint64()}, nil
}
