package afpacket

import "encoding/binary"

// CompleteChecksum recomputes, in place, the TCP or UDP checksum of an
// Ethernet frame carrying IPv4 or IPv6 (behind up to two VLAN tags, no
// IPv6 extension headers, not a fragment). Linux hands a packet socket
// such frames with only the pseudo-header sum in the checksum field when
// the sender left the checksum to offload (TP_STATUS_CSUMNOTREADY), which
// is what a NIC would have completed on the wire. It reports whether it
// changed anything it recognised; other frames are left alone.
func CompleteChecksum(frame []byte) bool {
	off := 12
	et := uint16(0)
	for range 3 {
		if len(frame) < off+2 {
			return false
		}
		et = binary.BigEndian.Uint16(frame[off:])
		off += 2
		if et != 0x8100 && et != 0x88a8 {
			break
		}
		off += 2 // TCI
	}
	var (
		proto   byte
		l4      []byte
		pseudo  uint32
		payload int
	)
	switch et {
	case 0x0800:
		ip := frame[off:]
		if len(ip) < 20 || ip[0]>>4 != 4 {
			return false
		}
		ihl := int(ip[0]&0x0f) * 4
		total := int(binary.BigEndian.Uint16(ip[2:]))
		if ihl < 20 || total < ihl || total > len(ip) {
			return false
		}
		if binary.BigEndian.Uint16(ip[6:])&0x3fff != 0 {
			return false // a fragment: the checksum covers the whole datagram
		}
		proto = ip[9]
		l4 = ip[ihl:total]
		payload = len(l4)
		pseudo = sum16(ip[12:20], 0)
	case 0x86dd:
		ip := frame[off:]
		if len(ip) < 40 || ip[0]>>4 != 6 {
			return false
		}
		plen := int(binary.BigEndian.Uint16(ip[4:]))
		if 40+plen > len(ip) {
			return false
		}
		proto = ip[6]
		l4 = ip[40 : 40+plen]
		payload = plen
		pseudo = sum16(ip[8:40], 0)
	default:
		return false
	}
	var field int
	switch proto {
	case 17:
		field = 6
		if len(l4) < 8 {
			return false
		}
	case 6:
		field = 16
		if len(l4) < 20 {
			return false
		}
	default:
		return false
	}
	pseudo += uint32(proto) + uint32(payload)>>16 + uint32(payload)&0xffff
	l4[field], l4[field+1] = 0, 0
	c := ^fold(sum16(l4, pseudo))
	if proto == 17 && c == 0 {
		c = 0xffff // 0 means "no checksum" in UDP over IPv4 (and is invalid over IPv6)
	}
	binary.BigEndian.PutUint16(l4[field:], c)
	return true
}

// sum16 adds b as big-endian 16-bit words (odd length zero-padded) to acc.
func sum16(b []byte, acc uint32) uint32 {
	for len(b) >= 2 {
		acc += uint32(b[0])<<8 | uint32(b[1])
		b = b[2:]
		if acc > 0xffff0000 {
			acc = fold32(acc)
		}
	}
	if len(b) == 1 {
		acc += uint32(b[0]) << 8
	}
	return acc
}

func fold32(acc uint32) uint32 { return acc&0xffff + acc>>16 }

func fold(acc uint32) uint16 {
	for acc > 0xffff {
		acc = fold32(acc)
	}
	return uint16(acc)
}
