package pipeline

import (
	"encoding/binary"
	"hash/crc32"
)

// CandidateHash is the dispatch hash of docs/PIPELINE.md step 9.2: the low 16
// bits of the IEEE CRC-32 (reflected, as zlib and v1model's
// HashAlgorithm.crc32 on BMv2) of the 11 bytes src address, UDP source port,
// request id and hold count, big-endian. A held request hashes differently on
// each pass because its hold count changed.
func CandidateHash(src [4]byte, srcPort uint16, requestID uint32, holdCount uint8) uint16 {
	var b [11]byte
	copy(b[:4], src[:])
	binary.BigEndian.PutUint16(b[4:6], srcPort)
	binary.BigEndian.PutUint32(b[6:10], requestID)
	b[10] = holdCount
	return uint16(crc32.ChecksumIEEE(b[:]))
}

// CandidateServers returns the server ids a pool (set_pool base and
// size_mask) samples for hash h, candidate 0 first: the aligned group of four
// around h, starting at h's own position in the group,
// c_j = base + ((h&^3 | (h+j)&3) & sizeMask), all arithmetic 16-bit.
// Candidates repeat in pools of fewer than four servers.
func CandidateServers(base, sizeMask, h uint16) [Candidates]uint16 {
	var c [Candidates]uint16
	g := h &^ (Candidates - 1)
	for j := range c {
		c[j] = base + ((g | (h+uint16(j))&(Candidates-1)) & sizeMask)
	}
	return c
}
