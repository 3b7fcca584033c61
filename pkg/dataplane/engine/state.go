package engine

import (
	"sync/atomic"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
)

// Counter is an indirect counter array (packets and bytes per index). Count
// is safe to call concurrently with control-plane reads.
type Counter struct {
	ID    uint32
	Name  string
	Size  int
	Unit  p4configv1.CounterSpec_Unit
	cells []uint64 // 2*i: packets, 2*i+1: bytes
}

// Count adds one packet of the given length at index i. Out-of-range indices
// are ignored (BMv2 logs and ignores them).
func (c *Counter) Count(i uint64, packetBytes int) {
	if i >= uint64(c.Size) {
		return
	}
	atomic.AddUint64(&c.cells[2*i], 1)
	atomic.AddUint64(&c.cells[2*i+1], uint64(packetBytes))
}

// Get returns the packets and bytes at index i (0, 0 when out of range).
func (c *Counter) Get(i uint64) (packets, bytes uint64) {
	if i >= uint64(c.Size) {
		return 0, 0
	}
	return atomic.LoadUint64(&c.cells[2*i]), atomic.LoadUint64(&c.cells[2*i+1])
}

func (c *Counter) set(i uint64, packets, bytes uint64) {
	atomic.StoreUint64(&c.cells[2*i], packets)
	atomic.StoreUint64(&c.cells[2*i+1], bytes)
}

// Register is a register array of bit<Width> cells. Read and Write are
// atomic per cell; a read-modify-write sequence must be serialised by the
// caller (the program model runs one pass at a time).
type Register struct {
	ID    uint32
	Name  string
	Width int
	Size  int
	mask  uint64
	cells []uint64
}

// Read returns cell i; out-of-range indices read as 0.
func (r *Register) Read(i uint64) uint64 {
	if i >= uint64(r.Size) {
		return 0
	}
	return atomic.LoadUint64(&r.cells[i])
}

// Write stores v (truncated to the cell width) at i; out-of-range indices are
// ignored.
func (r *Register) Write(i uint64, v uint64) {
	if i >= uint64(r.Size) {
		return
	}
	atomic.StoreUint64(&r.cells[i], v&r.mask)
}
