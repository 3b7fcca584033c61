package pipeline

import (
	"hash/crc32"
	"testing"
)

func TestCandidateHash(t *testing.T) {
	// Known value: CRC-32/IEEE of 10.0.1.10, port 40000, request 10, hold 0
	// (cross-checked against zlib.crc32).
	src := [4]byte{10, 0, 1, 10}
	if got, want := CandidateHash(src, 40000, 10, 0), uint16(0x1f4d); got != want {
		t.Errorf("CandidateHash = %#04x, want %#04x", got, want)
	}
	b := []byte{10, 0, 1, 10, 0x12, 0x34, 0xde, 0xad, 0xbe, 0xef, 7}
	if got, want := CandidateHash(src, 0x1234, 0xdeadbeef, 7), uint16(crc32.ChecksumIEEE(b)); got != want {
		t.Errorf("byte order: got %#04x, want %#04x", got, want)
	}
	if CandidateHash(src, 40000, 10, 0) == CandidateHash(src, 40000, 10, 1) {
		t.Error("hold count does not change the hash")
	}
}

func TestCandidateServers(t *testing.T) {
	cases := []struct {
		name          string
		base, mask, h uint16
		want          [Candidates]uint16
	}{
		{"pool of 4, h at 0", 4, 3, 0x1230, [4]uint16{4, 5, 6, 7}},
		{"pool of 4, h at 2", 4, 3, 0x1232, [4]uint16{6, 7, 4, 5}},
		{"pool of 256", 256, 255, 0xABCD, [4]uint16{256 + 0xCD, 256 + 0xCE, 256 + 0xCF, 256 + 0xCC}},
		{"pool of 2", 8, 1, 0x0003, [4]uint16{9, 8, 9, 8}},
		{"pool of 1", 9, 0, 0xFFFF, [4]uint16{9, 9, 9, 9}},
	}
	for _, c := range cases {
		if got := CandidateServers(c.base, c.mask, c.h); got != c.want {
			t.Errorf("%s: CandidateServers(%d, %d, %#x) = %v, want %v", c.name, c.base, c.mask, c.h, got, c.want)
		}
	}
	// Every server of a pool is candidate 0 for some hash, and the four
	// candidates always share one aligned group of four (TNA reads each
	// slot array once).
	seen := map[uint16]bool{}
	for h := 0; h < 1<<16; h++ {
		c := CandidateServers(64, 15, uint16(h))
		seen[c[0]] = true
		for _, s := range c {
			if s>>2 != c[0]>>2 || s < 64 || s > 79 {
				t.Fatalf("h=%#x: candidates %v leave the group or pool", h, c)
			}
		}
	}
	if len(seen) != 16 {
		t.Errorf("candidate 0 covers %d of 16 servers", len(seen))
	}
}
