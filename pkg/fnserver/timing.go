package fnserver

import (
	"encoding/binary"
	"math"
	"time"
)

// TimingLen is the length of a Timing record in a reply's payload.
const TimingLen = 20

// timingMagic starts a Timing record: "P4TM".
var timingMagic = [4]byte{'P', '4', 'T', 'M'}

// Timing is what a server measured for one request. With Config.Timing set
// it is the first TimingLen bytes of the reply's payload (before the echoed
// request payload), so a client can separate the time the server spent —
// the part of the round trip an emulation models — from what the network
// and hosts added:
//
//	offset  0  "P4TM"
//	offset  4  queue µs  (uint32, big endian): waiting for a worker
//	offset  8  exec µs:  measured execution (sleep or spin)
//	offset 12  drawn µs: execution time drawn from the exec class
//	offset 16  delay µs: measured --delay sleep for the request's site
//
// Values saturate at 2³²−1 µs.
type Timing struct {
	Queue, Exec, Drawn, Delay time.Duration
}

// Append appends the record's TimingLen bytes to b.
func (t Timing) Append(b []byte) []byte {
	b = append(b, timingMagic[:]...)
	for _, d := range []time.Duration{t.Queue, t.Exec, t.Drawn, t.Delay} {
		us := d.Microseconds()
		switch {
		case us < 0:
			us = 0
		case us > math.MaxUint32:
			us = math.MaxUint32
		}
		b = binary.BigEndian.AppendUint32(b, uint32(us))
	}
	return b
}

// ParseTiming reads a Timing record at the start of a reply's payload; ok
// is false when the payload does not start with one.
func ParseTiming(payload []byte) (t Timing, ok bool) {
	if len(payload) < TimingLen || [4]byte(payload[:4]) != timingMagic {
		return Timing{}, false
	}
	us := func(off int) time.Duration {
		return time.Duration(binary.BigEndian.Uint32(payload[off:])) * time.Microsecond
	}
	return Timing{Queue: us(4), Exec: us(8), Drawn: us(12), Delay: us(16)}, true
}
