/* SPDX-License-Identifier: GPL-2.0 */
/* Frame layout (Ethernet II, option-less IPv4, UDP, the p4ctl header) and
 * the byte-level helpers of the pass (docs/PIPELINE.md step 1, step 12). */
#ifndef P4CTL_FRAME_H
#define P4CTL_FRAME_H

#include <linux/types.h>
#include <bpf/bpf_endian.h>

#define ETH_LEN 14
#define IP_OFF ETH_LEN
#define IP_LEN 20
#define UDP_OFF (IP_OFF + IP_LEN)
#define UDP_LEN 8
#define HDR_OFF (UDP_OFF + UDP_LEN)
#define MIN_FRAME (HDR_OFF + P4CTL_HEADER_LEN)
#define MIN_UDP_LENGTH (UDP_LEN + P4CTL_HEADER_LEN)
#define ETHERTYPE_IPV4 0x0800
#define PROTO_UDP 17

/* p4ctl header offsets (docs/PROTOCOL.md). */
#define H_VERTYPE 0
#define H_FLAGS 1
#define H_SLA 2
#define H_EXEC_CLASS 4
#define H_HOLDS 5
#define H_SITE 6
#define H_REGION 8
#define H_SERVER 10
#define H_REQUEST_ID 12

/* Big-endian fields at any offset: one load or store and a byte swap.
 * The casts let clang emit single loads and stores; the fields are at
 * 2-byte offsets, which the verifier accepts where unaligned access is
 * efficient (x86, arm64: the XDP targets) and the program is not loaded
 * with BPF_F_STRICT_ALIGNMENT. */
static __always_inline __u16 be16_at(const __u8 *p)
{
	return bpf_ntohs(*(const __u16 *)p);
}

static __always_inline __u32 be32_at(const __u8 *p)
{
	return bpf_ntohl(*(const __u32 *)p);
}

static __always_inline __u64 be48_at(const __u8 *p)
{
	return (__u64)be16_at(p) << 32 | be32_at(p + 2);
}

static __always_inline void put16(__u8 *p, __u16 v)
{
	*(__u16 *)p = bpf_htons(v);
}

static __always_inline void put32(__u8 *p, __u32 v)
{
	*(__u32 *)p = bpf_htonl(v);
}

/* copy6 copies a MAC address (two loads, two stores). */
static __always_inline void copy6(__u8 *dst, const __u8 *src)
{
	__u32 a = *(const __u32 *)src;
	__u16 b = *(const __u16 *)(src + 4);

	*(__u32 *)dst = a;
	*(__u16 *)(dst + 4) = b;
}

/* Step 12 of a rewritten request (or a NACK): UDP checksum 0, the IPv4
 * header checksum recomputed. */
static __always_inline void finish_rewrite(__u8 *pkt)
{
	__u8 *ip = pkt + IP_OFF;
	__u32 sum = 0;

	pkt[UDP_OFF + 6] = 0;
	pkt[UDP_OFF + 7] = 0;
	ip[10] = 0;
	ip[11] = 0;
#pragma unroll
	for (int i = 0; i < IP_LEN; i += 2)
		sum += be16_at(ip + i);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	put16(ip + 10, ~sum);
}

#endif /* P4CTL_FRAME_H */
