package program

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// The allocation-free hash of the packet path is the contract's
// pipeline.CandidateHash.
func TestCandidateHashMatchesContract(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	pkt := make([]byte, minFrame)
	for i := 0; i < 1000; i++ {
		for j := range pkt {
			pkt[j] = byte(r.Uint32())
		}
		hdr := pkt[hdrOff:]
		var src [4]byte
		copy(src[:], pkt[ipOff+12:])
		want := pipeline.CandidateHash(src, binary.BigEndian.Uint16(pkt[udpOff:]), binary.BigEndian.Uint32(hdr[12:]), hdr[5])
		if got := candidateHash(pkt, hdr); got != want {
			t.Fatalf("hash % x = %#x, want %#x", pkt, got, want)
		}
	}
}

// The IPv4 checksum of a rewritten header verifies (sums to 0xffff).
func TestFinishRewriteChecksum(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	pkt := make([]byte, minFrame)
	for i := 0; i < 100; i++ {
		for j := range pkt {
			pkt[j] = byte(r.Uint32())
		}
		finishRewrite(pkt)
		var sum uint32
		for j := ipOff; j < ipOff+ipLen; j += 2 {
			sum += uint32(binary.BigEndian.Uint16(pkt[j:]))
		}
		for sum > 0xffff {
			sum = sum&0xffff + sum>>16
		}
		if sum != 0xffff || pkt[udpOff+6] != 0 || pkt[udpOff+7] != 0 {
			t.Fatalf("checksum sum %#x, udp checksum % x", sum, pkt[udpOff+6:udpOff+8])
		}
	}
}
