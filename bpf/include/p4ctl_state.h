/* SPDX-License-Identifier: GPL-2.0 */
/* The program's state steps: counters, the datapath's statistics, the
 * region capacity, the credit claim and release, the work register and the
 * latency probes — each one atomic read-decide-write of one cell, as
 * pkg/pipeline defines it (RegionAcquire, RegionRelease, Claim, Release,
 * ProbeTake, ProbeMatch) and Tofino's stateful ALU does it. The atomic
 * steps are global functions (STEP): the verifier checks each once, not at
 * every call site, and their compare-and-swap loops stay cheap to verify. */

#define STEP __attribute__((noinline))

/* One compare-and-swap: true when *p was old and is now next; a failure
 * (another CPU wrote the cell in between) is counted. */
#define CAS(p, old, next) cas_counted(__sync_val_compare_and_swap((p), (old), (next)) == (old))

static __always_inline void stat_add(__u32 k, __u64 v);

static __always_inline bool cas_counted(bool ok)
{
	if (!ok)
		stat_add(P4CTL_STAT_CAS_RETRIES, 1);
	return ok;
}
#ifndef P4CTL_STATE_H
#define P4CTL_STATE_H

#include "p4ctl_maps.h"
#include "p4ctl_dispatch.h"

static __always_inline void stat_add(__u32 k, __u64 v)
{
	__u64 *c = bpf_map_lookup_elem(&datapath_stats, &k);

	if (c)
		*c += v;
}

static __always_inline void count(void *map, __u32 idx, __u32 bytes)
{
	struct p4_count *c = bpf_map_lookup_elem(map, &idx);

	if (c) {
		c->packets++;
		c->bytes += bytes;
	}
}

/* An event's count: its lane's cell (pipeline.Lane). */
#define EVENT(name, bytes) \
	count(&dispatch_events, P4CTL_LANE_OF_##name * P4CTL_NUM_EVENTS + P4CTL_EVENT_##name, bytes)

/* pipeline.RegionAcquire on region_outstanding[r]: 1 when the request
 * now holds a region credit. */
STEP int region_acquire(__u32 r, __u32 capacity, __u32 force)
{
	struct line32 *l = bpf_map_lookup_elem(&region_outstanding, &r);
	__u32 *v;

	if (!l)
		return 0;
	v = &l->v;
	if (force || capacity == 0) {
		/* nothing to refuse: one atomic add, no retry */
		__sync_fetch_and_add(v, 1);
		return 1;
	}
	for (int i = 0; i < CAS_TRIES; i++) {
		__u32 old = *(volatile __u32 *)v;

		if (!(force || capacity == 0 || old < capacity))
			return 0;
		if (CAS(v, old, old + 1))
			return 1;
	}
	stat_add(P4CTL_STAT_CAS_EXHAUSTED, 1);
	return 0;
}

/* pipeline.RegionRelease. */
STEP int region_release(__u32 r)
{
	struct line32 *l = bpf_map_lookup_elem(&region_outstanding, &r);
	__u32 *v;

	if (!l)
		return 0;
	v = &l->v;
	for (int i = 0; i < CAS_TRIES; i++) {
		__u32 old = *(volatile __u32 *)v;

		if (old == 0)
			return 0;
		if (CAS(v, old, old - 1))
			return 0;
	}
	stat_add(P4CTL_STAT_CAS_EXHAUSTED, 1);
	return 0;
}

/* pipeline.Claim on server s's credit. It returns the count it refused at
 * (≥ threshold ≥ 1), or 0 when it took the request, with CLAIM_STALE set
 * when an expired credit with outstanding requests was reset. */
#define CLAIM_STALE (1ull << 32)
STEP __u64 claim(__u32 s, __u32 threshold, __u32 expiry, __u32 tick)
{
	__u32 idx = credit_index(s);
	struct line64 *l = bpf_map_lookup_elem(&server_credit, &idx);
	__u64 *cell;

	if (!l)
		return threshold;
	cell = &l->v;
	for (int i = 0; i < CAS_TRIES; i++) {
		__u64 old = *(volatile __u64 *)cell, next;
		__u32 out = cell_outstanding(old);

		if (expiry && expired(old, tick)) {
			next = make_cell(1, tick);
			if (CAS(cell, old, next))
				return out != 0 ? CLAIM_STALE : 0;
			continue;
		}
		if (out >= threshold)
			return out;
		next = make_cell(out + 1, tick);
		if (CAS(cell, old, next))
			return 0;
	}
	stat_add(P4CTL_STAT_CAS_EXHAUSTED, 1);
	return threshold;
}

/* pipeline.Release on server s's credit. */
STEP int credit_release(__u32 s, __u32 tick)
{
	__u32 idx = credit_index(s);
	struct line64 *l = bpf_map_lookup_elem(&server_credit, &idx);
	__u64 *cell;

	if (!l)
		return 0;
	cell = &l->v;
	for (int i = 0; i < CAS_TRIES; i++) {
		__u64 old = *(volatile __u64 *)cell;
		__u32 out = cell_outstanding(old);

		if (CAS(cell, old, make_cell(out ? out - 1 : 0, tick)))
			return 0;
	}
	stat_add(P4CTL_STAT_CAS_EXHAUSTED, 1);
	return 0;
}

/* server_work_us[s]: + cost on a bind (= cost after a stale reset), − cost
 * (never below 0) on a release. */
STEP int work_bind(__u32 s, __u32 cost, __u32 stale)
{
	__u32 idx = s & (P4CTL_MAX_SERVERS - 1);
	__u32 *w;

	if (cost == 0 && !stale)
		return 0;
	w = bpf_map_lookup_elem(&server_work_us, &idx);
	if (!w)
		return 0;
	if (!stale) {
		__sync_fetch_and_add(w, cost);
		return 0;
	}
	for (int i = 0; i < CAS_TRIES; i++) {
		__u32 old = *(volatile __u32 *)w;

		if (CAS(w, old, cost))
			return 0;
	}
	stat_add(P4CTL_STAT_CAS_EXHAUSTED, 1);
	return 0;
}

STEP int work_release(__u32 s, __u32 cost)
{
	__u32 idx = s & (P4CTL_MAX_SERVERS - 1);
	__u32 *w;

	if (cost == 0)
		return 0;
	w = bpf_map_lookup_elem(&server_work_us, &idx);
	if (!w)
		return 0;
	for (int i = 0; i < CAS_TRIES; i++) {
		__u32 old = *(volatile __u32 *)w;

		if (CAS(w, old, old - (old < cost ? old : cost)))
			return 0;
	}
	stat_add(P4CTL_STAT_CAS_EXHAUSTED, 1);
	return 0;
}

/* The work register and the credit of a server, read for p2c (an expired
 * credit counts as idle). */
static __always_inline void load(__u16 s, bool expiry, __u32 tick, __u32 *out, __u32 *work)
{
	__u32 idx = credit_index(s), widx = s & (P4CTL_MAX_SERVERS - 1);
	struct line64 *cell = bpf_map_lookup_elem(&server_credit, &idx);
	__u32 *w = bpf_map_lookup_elem(&server_work_us, &widx);
	__u64 v = cell ? *(volatile __u64 *)&cell->v : 0;

	*out = 0;
	*work = 0;
	if (!expiry || !expired(v, tick)) {
		*out = cell_outstanding(v);
		*work = w ? *(volatile __u32 *)w : 0;
	}
}

static __always_inline void digest(__u32 on, __u16 site, __u8 region, __u8 lost, __u32 rtt)
{
	struct latency_sample s = {.rtt = rtt, .site = site, .region = region, .lost = lost};

	if (!on)
		return;
	if (bpf_ringbuf_output(&digests, &s, sizeof(s), 0))
		stat_add(P4CTL_STAT_DIGEST_LOST, 1);
}

/* pipeline.ProbeIndex. */
static __always_inline __u32 probe_index(__u16 site, __u8 region, __u32 id)
{
	return ((__u32)site & ((1 << P4CTL_PROBE_SITE_BITS) - 1)) << (P4CTL_PROBE_WAY_BITS + 5) |
	       (id & ((1 << P4CTL_PROBE_WAY_BITS) - 1)) << 5 | (region & (P4CTL_MAX_REGIONS - 1));
}

/* A request's probe step (pipeline.ProbeTake): a lost sample when it
 * replaces a probe whose reply never came. */
STEP int probe_take(__u32 digests_on, __u32 site, __u32 region, __u32 id, __u32 t)
{
	__u32 idx = probe_index(site, region, id);
	__u64 *cell = bpf_map_lookup_elem(&latency_probe, &idx);

	if (!cell)
		return 0;
	for (int i = 0; i < CAS_TRIES; i++) {
		__u64 old = *(volatile __u64 *)cell;
		__u32 sent = (__u32)old;

		if (sent != 0 && (__s32)(sent - t) >= -(__s32)P4CTL_PROBE_TIMEOUT)
			return 0; /* busy */
		if (CAS(cell, old, (__u64)id << 32 | t)) {
			if (sent != 0)
				digest(digests_on, site, region, 1, t - sent);
			return 0;
		}
	}
	stat_add(P4CTL_STAT_CAS_EXHAUSTED, 1);
	return 0;
}

/* A reply's probe step (pipeline.ProbeMatch): the round trip of the
 * request its probe timed. */
STEP int probe_match(__u32 digests_on, __u32 site, __u32 region, __u32 id, __u32 t)
{
	__u32 idx = probe_index(site, region, id);
	__u64 *cell = bpf_map_lookup_elem(&latency_probe, &idx);

	if (!cell)
		return 0;
	for (int i = 0; i < CAS_TRIES; i++) {
		__u64 old = *(volatile __u64 *)cell;
		__u32 sent = (__u32)old;

		if (sent == 0 || (__u32)(old >> 32) != id)
			return 0;
		if (CAS(cell, old, 0)) {
			digest(digests_on, site, region, 0, t - sent);
			return 0;
		}
	}
	stat_add(P4CTL_STAT_CAS_EXHAUSTED, 1);
	return 0;
}

#endif /* P4CTL_STATE_H */
