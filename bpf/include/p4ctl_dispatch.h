/* SPDX-License-Identifier: GPL-2.0 */
/* The dispatch algorithm of pkg/pipeline/dispatch.go, step for step
 * (docs/PIPELINE.md step 10): the candidate hash and servers, the credit
 * clock, the cap and the threshold, the claim — one compare-and-swap on a
 * 64-bit credit cell, as Tofino's stateful ALU decides in one step — and
 * what follows a pass whose every candidate refused. */
#ifndef P4CTL_DISPATCH_H
#define P4CTL_DISPATCH_H

#include "p4ctl_maps.h"

/* How many times an atomic step retries its compare-and-swap before it
 * gives up (P4CTL_STAT_CAS_EXHAUSTED): a claim that gives up refuses, a release
 * or a probe step is skipped. Two CPUs hammering one cell need a handful. */
#define CAS_TRIES 64

/* The IEEE CRC-32 table (reflected, as zlib and v1model's crc32). */
static const __u32 crc32_table[256] = P4CTL_CRC32_TABLE;

/* pipeline.CandidateHash: the low 16 bits of the CRC-32 of src address,
 * UDP source port, request id and hold count (11 bytes, big-endian). */
static __always_inline __u32 crc32_byte(__u32 crc, __u8 b)
{
	return crc32_table[(crc ^ b) & 0xff] ^ (crc >> 8);
}

static __always_inline __u16 candidate_hash(const __u8 *pkt)
{
	const __u8 *hdr = pkt + HDR_OFF;
	__u32 src = be32_at(pkt + IP_OFF + 12), id = be32_at(hdr + H_REQUEST_ID);
	__u16 port = be16_at(pkt + UDP_OFF);
	__u32 crc = 0xffffffff;

#pragma unroll
	for (int i = 24; i >= 0; i -= 8)
		crc = crc32_byte(crc, src >> i);
	crc = crc32_byte(crc, port >> 8);
	crc = crc32_byte(crc, port);
#pragma unroll
	for (int i = 24; i >= 0; i -= 8)
		crc = crc32_byte(crc, id >> i);
	crc = crc32_byte(crc, hdr[H_HOLDS]);
	return ~crc;
}

struct pool {
	__u16 base, size_mask, bound, long_reserve;
	__u8 policy, max_holds, on_full, credit_tick, long_max_holds;
};

/* pipeline.CandidateServers: the servers a pass tries, in the order it
 * tries them, as the slots s[j] whose bit j of the returned mask is set
 * (jbsq, jiq: the group's servers that lie in the pool; random: s[0];
 * p2c, p2c-work: s[0] and s[1], compared before the claim). */
static __always_inline __u8 candidate_servers(const struct pool *p, __u16 h, __u16 s[P4CTL_CANDIDATES])
{
	__u8 mask = 0;

	switch (p->policy) {
	case P4CTL_POLICY_JBSQ:
	case P4CTL_POLICY_JIQ: {
		__u16 g = p->base + (h & p->size_mask & ~(P4CTL_CANDIDATES - 1));
#pragma unroll
		for (__u16 j = 0; j < P4CTL_CANDIDATES; j++) {
			s[j] = g + j;
			if ((j & ~p->size_mask) == 0)
				mask |= 1 << j;
		}
		return mask;
	}
	case P4CTL_POLICY_P2C:
	case P4CTL_POLICY_P2C_WORK: {
		__u16 g = h & ~(P4CTL_CANDIDATES - 1);
		s[0] = p->base + (h & p->size_mask);
		s[1] = p->base + ((g | ((h + 1) & (P4CTL_CANDIDATES - 1))) & p->size_mask);
		return 3;
	}
	}
	s[0] = p->base + (h & p->size_mask);
	return 1;
}

/* A server's credit cell: server_credit_<s mod 4>[s / 4] (pipeline.Slot). */
static __always_inline __u32 credit_index(__u16 s)
{
	s &= P4CTL_MAX_SERVERS - 1;
	return (__u32)(s & (P4CTL_CANDIDATES - 1)) * P4CTL_SLOT_CELLS + (s >> 2);
}

static __always_inline __u32 cell_outstanding(__u64 v) { return (__u32)v; }
static __always_inline __u32 cell_last_tick(__u64 v) { return (__u32)(v >> 32); }
static __always_inline __u64 make_cell(__u32 outstanding, __u32 last_tick)
{
	return (__u64)last_tick << 32 | outstanding;
}

/* pipeline.NowTick. */
static __always_inline __u32 now_tick(__u64 now, __u8 tick)
{
	if (tick == 0)
		return 0;
	if (tick > P4CTL_MAX_CREDIT_TICK)
		tick = P4CTL_MAX_CREDIT_TICK;
	return (__u32)((now & ((1ull << P4CTL_TIMESTAMP_BITS) - 1)) >> (tick - 1));
}

/* pipeline.Expired. */
static __always_inline bool expired(__u64 cell, __u32 now)
{
	return (__s32)(cell_last_tick(cell) - (now - P4CTL_CREDIT_TTL_TICKS)) < 0;
}

/* pipeline.Pool.Limit and Cap. */
static __always_inline __u32 pool_cap(const struct pool *p, bool is_long, __u8 holds, bool *long_cut)
{
	__u32 limit = p->policy == P4CTL_POLICY_JIQ ? 1 : p->bound;

	*long_cut = false;
	if (limit == 0)
		return P4CTL_UNBOUNDED;
	if (is_long && p->long_reserve != 0 && holds < p->long_max_holds) {
		*long_cut = true;
		if (p->long_reserve >= limit)
			return 0;
		return limit - p->long_reserve;
	}
	return limit;
}

/* pipeline.Pool.Threshold. */
static __always_inline __u32 pool_threshold(const struct pool *p, __u32 level, bool forced, bool is_long, __u8 holds)
{
	bool cut;
	__u32 c, t;

	if (forced)
		return level;
	c = pool_cap(p, is_long, holds, &cut);
	t = level;
	if (t == 0) {
		t = c;
		if (c == P4CTL_UNBOUNDED && (p->policy == P4CTL_POLICY_JBSQ || p->policy == P4CTL_POLICY_JIQ))
			t = 1;
	}
	return t < c ? t : c;
}

enum step_kind {
	STEP_LEVEL = 1,
	STEP_HOLD,
	STEP_LONG_DEFERRED,
	STEP_FORCE,
	STEP_NACK,
};

/* pipeline.Pool.AfterRefusal. */
static __always_inline int after_refusal(const struct pool *p, __u32 level, bool forced, __u32 min_refused,
					 bool is_long, __u8 holds, __u32 *next_level)
{
	bool cut;
	__u32 c;

	if (forced) {
		*next_level = P4CTL_UNBOUNDED;
		return STEP_FORCE;
	}
	c = pool_cap(p, is_long, holds, &cut);
	if (pool_threshold(p, level, forced, is_long, holds) != 0 && min_refused < c) {
		*next_level = min_refused + 1;
		return STEP_LEVEL;
	}
	if (cut)
		return STEP_LONG_DEFERRED;
	if (holds < p->max_holds)
		return STEP_HOLD;
	if (p->on_full == P4CTL_ON_FULL_FORCE) {
		*next_level = min_refused == P4CTL_UNBOUNDED ? min_refused : min_refused + 1;
		return STEP_FORCE;
	}
	return STEP_NACK;
}

#endif /* P4CTL_DISPATCH_H */
