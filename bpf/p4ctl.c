// SPDX-License-Identifier: GPL-2.0
/* The p4ctl program for the Linux XDP data path: a translation of
 * docs/PIPELINE.md and pkg/pipeline, as the Go model
 * (pkg/dataplane/program/pass.go) and the P4 programs (p4src/) are, behind
 * the same P4Info. Step numbers below are PIPELINE.md's "Ingress, step by
 * step". docs/XDP.md: how it is loaded, its maps, its limits.
 *
 * Entry points:
 *   p4ctl_port    attached to every data-plane interface: a frame's first
 *                 pass;
 *   p4ctl_recirc  attached to the receiving end of the recirculation veth:
 *                 a held request's next pass, its carry in the XDP metadata
 *                 (the recirculation port of TNA);
 *   p4ctl_inject  run by BPF_PROG_RUN only: PacketOut, and the tests, which
 *                 give the ingress port, the clock and the carry in the
 *                 metadata and read the outcome back from it. */

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "include/p4ctl_maps.h"
#include "include/p4ctl_frame.h"
#include "include/p4ctl_dispatch.h"
#include "include/p4ctl_state.h"
#include "include/p4ctl_tables.h"

char LICENSE[] SEC("license") = "GPL";

/* One pass: its inputs (clock, ports, carry) and its outcome. */
struct pass {
	__u64 now;            /* the pass clock, µs, low TIMESTAMP_BITS */
	__u32 n;              /* the frame's length: what counters count as bytes */
	__u16 in_port;        /* the port the request first arrived on */
	__u16 passes;         /* passes made before this one */
	/* the carry */
	__u32 level;
	__u32 cand;
	__u8 nearest;
	__u8 carry;
	/* the outcome */
	__u8 outcome;
	__u8 reason;
	__u16 out_port;
};

static __always_inline int drop(struct pass *ps, __u8 reason)
{
	ps->outcome = P4CTL_OUT_DROP;
	ps->reason = reason;
	return 0;
}

static __always_inline int forward(struct pass *ps, __u16 port)
{
	if (port == P4CTL_DROP_PORT)
		return drop(ps, P4CTL_REASON_DROP_PORT);
	ps->outcome = P4CTL_OUT_FORWARD;
	ps->out_port = port;
	return 0;
}

static __always_inline int recirculate(struct pass *ps)
{
	ps->outcome = P4CTL_OUT_RECIRCULATE;
	return 0;
}

static __always_inline int malformed(struct pass *ps)
{
	EVENT(MALFORMED, ps->n);
	return drop(ps, P4CTL_REASON_MALFORMED);
}

/* Step 2 and replies, nacks: l3_forward. */
static __always_inline int l3(__u8 *pkt, struct pass *ps)
{
	const struct p4_action *a = lpm_v4(&l3_forward, pkt + IP_OFF + 16, P4CTL_TABLE_L3_FORWARD);

	if (a->code == P4CTL_ACT_L3_FORWARD_FORWARD)
		return forward(ps, a->port);
	return drop(ps, P4CTL_REASON_L3_DROP);
}

static __always_inline void rewrite_toward(__u8 *pkt, const struct p4_action *a)
{
	copy6(pkt, a->dmac);
	put32(pkt + IP_OFF + 16, a->addr);
}

/* Step 5: the NACK pass, the request turned around to the client. */
static __always_inline int nack(__u8 *pkt, struct pass *ps)
{
	__u8 *hdr = pkt + HDR_OFF;
	__u8 mac[6];
	__u32 addr = *(__u32 *)(pkt + IP_OFF + 12);
	__u16 port = *(__u16 *)(pkt + UDP_OFF);

	copy6(mac, pkt);
	copy6(pkt, pkt + 6);
	copy6(pkt + 6, mac);
	*(__u32 *)(pkt + IP_OFF + 12) = *(__u32 *)(pkt + IP_OFF + 16);
	*(__u32 *)(pkt + IP_OFF + 16) = addr;
	*(__u16 *)(pkt + UDP_OFF) = *(__u16 *)(pkt + UDP_OFF + 2);
	*(__u16 *)(pkt + UDP_OFF + 2) = port;
	hdr[H_VERTYPE] = (hdr[H_VERTYPE] & 0xf0) | P4CTL_MSG_NACK;
	finish_rewrite(pkt);
	EVENT(NACK, ps->n);
	if (ps->in_port == P4CTL_DROP_PORT)
		return drop(ps, P4CTL_REASON_DROP_PORT);
	ps->outcome = P4CTL_OUT_NACK;
	ps->out_port = ps->in_port;
	return 0;
}

/* Step 11: a reply releases its server's credit and its region's. */
static __always_inline int reply(__u8 *pkt, struct pass *ps, const struct p4_config *cfg, __u32 cost)
{
	__u8 *hdr = pkt + HDR_OFF;
	__u8 region = hdr[H_REGION];
	__u16 server = be16_at(hdr + H_SERVER), site = be16_at(hdr + H_SITE);
	__u32 id = be32_at(hdr + H_REQUEST_ID);
	const struct p4_action *a;
	__u8 tick = 0;

	if (server == P4CTL_NO_SERVER) {
		probe_match(cfg->digests, site, region, id, (__u32)ps->now);
		return l3(pkt, ps); /* a remote region's reply */
	}
	a = EXACT(reply_source, server, P4CTL_TABLE_REPLY_SOURCE);
	if (a->code != P4CTL_ACT_REPLY_SOURCE_SET_REPLY_SOURCE || be32_at(pkt + IP_OFF + 12) != a->addr) {
		EVENT(REPLY_REJECTED, ps->n);
		return drop(ps, P4CTL_REASON_REPLY_REJECTED);
	}
	region_release(region & (P4CTL_MAX_REGIONS - 1));
	a = EXACT(server_pool, region, P4CTL_TABLE_SERVER_POOL);
	if (a->code == P4CTL_ACT_SERVER_POOL_SET_POOL)
		tick = a->credit_tick;
	credit_release(server, now_tick(ps->now, tick));
	work_release(server, cost);
	EVENT(REPLY_RELEASED, ps->n);
	probe_match(cfg->digests, site, region, id, (__u32)ps->now);
	return l3(pkt, ps);
}

/* Step 10: the candidate chain of one pass and what follows it. */
static __always_inline int dispatch(__u8 *pkt, struct pass *ps, const struct p4_config *cfg, const struct pool *pool,
				    __u32 cost, bool is_long, __u32 region_idx)
{
	__u8 *hdr = pkt + HDR_OFF;
	__u8 holds = hdr[H_HOLDS];
	bool expiry = pool->credit_tick != 0, forced = ps->carry & P4CTL_CARRY_FORCED;
	__u32 tick = now_tick(ps->now, pool->credit_tick);
	__u16 cands[P4CTL_CANDIDATES] = {};
	__u8 tried = candidate_servers(pool, candidate_hash(pkt), cands);
	__u32 threshold, min_refused = P4CTL_UNBOUNDED, next_level = 0;
	const struct p4_action *ep;

	if (pool->policy == P4CTL_POLICY_P2C || pool->policy == P4CTL_POLICY_P2C_WORK) {
		/* 10.2 (v1model): compare the two candidates' loads, expired
		 * credits counting as idle, and try the lighter one. */
		__u32 out0, work0, out1, work1;

		load(cands[0], expiry, tick, &out0, &work0);
		load(cands[1], expiry, tick, &out1, &work1);
		if ((pool->policy == P4CTL_POLICY_P2C && out1 < out0) ||
		    (pool->policy == P4CTL_POLICY_P2C_WORK && (work1 < work0 || (work1 == work0 && out1 < out0))))
			cands[0] = cands[1];
		tried = 1;
	}

	/* 10.3 the chain: each candidate in order, one atomic claim each,
	 * until one takes the request. */
	threshold = pool_threshold(pool, ps->level, forced, is_long, holds);
	if (threshold != 0) {
#pragma unroll
		for (int j = 0; j < P4CTL_CANDIDATES; j++) {
			__u16 s = cands[j];
			__u64 r;
			bool stale;

			if (!(tried & (1 << j)))
				continue;
			r = claim(s, threshold, expiry, tick);
			if ((__u32)r != 0) {
				if ((__u32)r < min_refused)
					min_refused = r;
				continue;
			}
			stale = r & CLAIM_STALE;
			/* 10.5 bound. */
			if (stale)
				EVENT(STALE_RESET, ps->n);
			work_bind(s, cost, stale);
			if (forced) {
				hdr[H_FLAGS] |= P4CTL_FLAG_FORCED;
				EVENT(FORCED, ps->n);
			}
			count(&server_bound, s & (P4CTL_MAX_SERVERS - 1), ps->n);
			count(&region_routed, region_idx, ps->n);
			put16(hdr + H_SERVER, s);
			probe_take(cfg->digests, be16_at(hdr + H_SITE), hdr[H_REGION], be32_at(hdr + H_REQUEST_ID), (__u32)ps->now);
			/* 10.6 toward the server. */
			ep = EXACT(server_endpoint, s, P4CTL_TABLE_SERVER_ENDPOINT);
			if (ep->code != P4CTL_ACT_SERVER_ENDPOINT_SET_SERVER_ENDPOINT) {
				EVENT(UNREACHABLE, ps->n);
				return drop(ps, P4CTL_REASON_UNREACHABLE);
			}
			rewrite_toward(pkt, ep);
			finish_rewrite(pkt);
			return forward(ps, ep->port);
		}
	}

	/* 10.4 every candidate refused. */
	switch (after_refusal(pool, ps->level, forced, min_refused, is_long, holds, &next_level)) {
	case STEP_LEVEL:
		ps->level = next_level;
		ps->carry &= ~P4CTL_CARRY_FORCED;
		EVENT(LEVEL_ROUND, ps->n);
		break;
	case STEP_FORCE:
		ps->level = next_level;
		ps->carry |= P4CTL_CARRY_FORCED;
		EVENT(LEVEL_ROUND, ps->n);
		break;
	case STEP_LONG_DEFERRED:
		hdr[H_FLAGS] |= P4CTL_FLAG_LONG_DEFERRED;
		EVENT(LONG_DEFERRED, ps->n);
		/* fall through */
	case STEP_HOLD:
		hdr[H_HOLDS]++;
		hdr[H_FLAGS] |= P4CTL_FLAG_HELD;
		EVENT(HOLD, ps->n);
		ps->level = 0;
		ps->carry &= ~P4CTL_CARRY_FORCED;
		break;
	case STEP_NACK:
		ps->carry |= P4CTL_CARRY_NACK_RELEASE;
		break;
	}
	return recirculate(ps);
}

/* One pass of the ingress control. */
static __always_inline int run(struct xdp_md *ctx, struct pass *ps, const struct p4_config *cfg)
{
	__u8 *pkt = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	__u8 *hdr;
	__u8 version, type, region;
	__u32 cost = 0, cand = 0, region_idx;
	__u8 nearest = 0;
	bool is_long = false, fallback = false;
	const struct p4_action *a, *nh, *pa;
	struct pool pool;

	ps->n = end - (void *)pkt;

	/* Step 1: the parser; an extraction past the frame's end is an error. */
	if ((void *)(pkt + ETH_LEN) > end)
		return malformed(ps);
	if (be16_at(pkt + 12) != ETHERTYPE_IPV4) {
		/* Step 2: not IPv4. */
		__u64 mac = be48_at(pkt);

		a = or_default(bpf_map_lookup_elem(&l2_forward, &mac), P4CTL_TABLE_L2_FORWARD);
		if (a->code == P4CTL_ACT_L2_FORWARD_FORWARD)
			return forward(ps, a->port);
		return drop(ps, P4CTL_REASON_L2_DROP);
	}
	if ((void *)(pkt + UDP_OFF) > end)
		return malformed(ps);
	if ((pkt[IP_OFF] & 0x0f) != 5 || pkt[IP_OFF + 9] != PROTO_UDP)
		return l3(pkt, ps); /* step 2: IPv4 without a p4ctl header */
	if ((void *)(pkt + HDR_OFF) > end)
		return malformed(ps);
	if (be16_at(pkt + UDP_OFF) != P4CTL_UDP_PORT && be16_at(pkt + UDP_OFF + 2) != P4CTL_UDP_PORT)
		return l3(pkt, ps);
	if ((void *)(pkt + MIN_FRAME) > end)
		return malformed(ps);
	hdr = pkt + HDR_OFF;

	/* Step 3. */
	version = hdr[H_VERTYPE] >> 4;
	type = hdr[H_VERTYPE] & 0x0f;
	if (be16_at(pkt + UDP_OFF + 4) < MIN_UDP_LENGTH || version != P4CTL_VERSION ||
	    type < P4CTL_MSG_REQUEST || type > P4CTL_MSG_NACK)
		return malformed(ps);
	if (type == P4CTL_MSG_NACK)
		return l3(pkt, ps);

	/* Step 4. */
	a = EXACT(exec_class_cost, hdr[H_EXEC_CLASS], P4CTL_TABLE_EXEC_CLASS_COST);
	if (a->code == P4CTL_ACT_EXEC_CLASS_COST_SET_EXEC_COST) {
		cost = a->cost_us;
		is_long = a->is_long;
	}
	if (type == P4CTL_MSG_REPLY)
		return reply(pkt, ps, cfg, cost);

	/* Step 5: the NACK pass of a request that holds a region credit. */
	region = hdr[H_REGION];
	if (ps->carry & P4CTL_CARRY_NACK_RELEASE) {
		region_release(region & (P4CTL_MAX_REGIONS - 1));
		return nack(pkt, ps);
	}

	/* Step 6: region selection (skipped while the request holds its region). */
	if (!(ps->carry & P4CTL_CARRY_REGION_HELD)) {
		__u16 site = 0;
		__u8 epoch = 0;

		site = site_lookup(be32_at(pkt + IP_OFF + 12));
		put16(hdr + H_SITE, site);
		if (ps->carry & P4CTL_CARRY_SPILL) {
			cand = ps->cand;
			nearest = ps->nearest;
			hdr[H_FLAGS] |= P4CTL_FLAG_SPILLED;
			EVENT(SPILLED, ps->n);
		} else {
			sla_lookup(site, be16_at(hdr + H_SLA), &cand, &nearest);
		}
		a = table_default(P4CTL_TABLE_ACTIVE_EPOCH);
		if (a->code == P4CTL_ACT_ACTIVE_EPOCH_SET_ACTIVE_EPOCH)
			epoch = a->epoch;
		if (!rank_lookup(epoch, site, cand, &region)) {
			region = nearest;
			fallback = true;
			hdr[H_FLAGS] |= P4CTL_FLAG_FALLBACK;
			EVENT(FALLBACK, ps->n);
			count(&region_fallback, nearest & (P4CTL_MAX_REGIONS - 1), ps->n);
		}
		hdr[H_REGION] = region;
	}
	region_idx = region & (P4CTL_MAX_REGIONS - 1);

	/* Step 7. */
	nh = EXACT(region_next_hop, region, P4CTL_TABLE_REGION_NEXT_HOP);
	if (nh->code == P4CTL_ACT_REGION_NEXT_HOP_FORWARD_REMOTE) {
		/* Step 8: a remote region. */
		rewrite_toward(pkt, nh);
		put16(hdr + H_SERVER, P4CTL_NO_SERVER);
		count(&region_routed, region_idx, ps->n);
		probe_take(cfg->digests, be16_at(hdr + H_SITE), region, be32_at(hdr + H_REQUEST_ID), (__u32)ps->now);
		finish_rewrite(pkt);
		return forward(ps, nh->port);
	}
	if (nh->code != P4CTL_ACT_REGION_NEXT_HOP_DISPATCH_LOCAL) {
		EVENT(UNREACHABLE, ps->n);
		return drop(ps, P4CTL_REASON_UNREACHABLE);
	}
	pa = EXACT(server_pool, region, P4CTL_TABLE_SERVER_POOL);
	if (pa->code != P4CTL_ACT_SERVER_POOL_SET_POOL) {
		EVENT(UNREACHABLE, ps->n);
		return drop(ps, P4CTL_REASON_UNREACHABLE);
	}
	pool = (struct pool){
		.base = pa->base, .size_mask = pa->size_mask, .bound = pa->bound, .long_reserve = pa->long_reserve,
		.policy = pa->policy, .max_holds = pa->max_holds, .on_full = pa->on_full,
		.credit_tick = pa->credit_tick, .long_max_holds = pa->long_max_holds,
	};

	/* Step 9: the region's capacity, one atomic acquire. */
	if (!(ps->carry & P4CTL_CARRY_REGION_HELD)) {
		if (!region_acquire(region_idx, nh->capacity, (ps->carry & P4CTL_CARRY_EXHAUSTED) || fallback)) {
			__u32 bit = region < P4CTL_MAX_REGIONS ? 1u << region : 0, rest = cand & ~bit;

			ps->level = 0;
			ps->cand = 0;
			ps->nearest = 0;
			if (rest) {
				ps->carry = P4CTL_CARRY_SPILL;
				ps->cand = rest;
				ps->nearest = nearest;
			} else {
				ps->carry = P4CTL_CARRY_EXHAUSTED;
			}
			EVENT(REGION_FULL, ps->n);
			return recirculate(ps);
		}
		ps->carry = P4CTL_CARRY_REGION_HELD;
		ps->level = 0;
		ps->cand = 0;
		ps->nearest = 0;
	}

	/* Step 10: server dispatch. */
	return dispatch(pkt, ps, cfg, &pool, cost, is_long, region_idx);
}

static __always_inline const struct p4_config *config_of(void)
{
	__u32 k = 0;

	return bpf_map_lookup_elem(&config, &k);
}

/* The pass clock: µs since the switch started (BMv2's
 * ingress_global_timestamp), low TIMESTAMP_BITS. */
static __always_inline __u64 pass_clock(const struct p4_config *cfg)
{
	return ((bpf_ktime_get_ns() - cfg->start_ns) / 1000) & ((1ull << P4CTL_TIMESTAMP_BITS) - 1);
}

/* Runs one pass, with the checks every entry point shares. */
static __always_inline void run_pass(struct xdp_md *ctx, struct pass *ps, const struct p4_config *cfg)
{
	stat_add(P4CTL_STAT_PASSES, 1);
	if (!cfg->pipeline) {
		drop(ps, P4CTL_REASON_NO_PIPELINE);
		return;
	}
	if (ps->passes >= P4CTL_MAX_PASSES) {
		stat_add(P4CTL_STAT_MAX_PASSES, 1);
		drop(ps, P4CTL_REASON_NO_PIPELINE); /* a guard, as the Go model's */
		return;
	}
	run(ctx, ps, cfg);
}

/* Sends what a pass decided: out of a port (the CPU port: to packet_in),
 * or around the recirculation queue with the carry in the metadata. */
static __always_inline int send(struct xdp_md *ctx, struct pass *ps, const struct p4_config *cfg)
{
	struct p4_meta *m;
	void *data;
	int ret;

	switch (ps->outcome) {
	case P4CTL_OUT_FORWARD:
	case P4CTL_OUT_NACK:
		data = (void *)(long)ctx->data;
		if ((void *)(long)ctx->data_meta < data)
			bpf_xdp_adjust_meta(ctx, data - (void *)(long)ctx->data_meta); /* the carry never leaves */
		if (ps->out_port == cfg->cpu_port) {
			struct packet_in_frame *pi = bpf_ringbuf_reserve(&packet_in, sizeof(*pi), 0);
			__u32 len = ctx->data_end - ctx->data;

			if (!pi) {
				stat_add(P4CTL_STAT_PACKET_IN_LOST, 1);
				return XDP_DROP;
			}
			if (len < ETH_LEN || len > P4CTL_PACKET_IN_MAX || bpf_xdp_load_bytes(ctx, 0, pi->data, len & 2047)) {
				bpf_ringbuf_discard(pi, 0);
				stat_add(P4CTL_STAT_PACKET_IN_LOST, 1);
				return XDP_DROP;
			}
			pi->len = len;
			pi->port = ps->in_port;
			bpf_ringbuf_submit(pi, 0);
			return XDP_DROP;
		}
		ret = bpf_redirect_map(&tx_ports, ps->out_port, XDP_DROP);
		if (ret != XDP_REDIRECT)
			stat_add(P4CTL_STAT_TX_NO_PORT, 1);
		return ret;
	case P4CTL_OUT_RECIRCULATE:
		stat_add(P4CTL_STAT_RECIRCULATED, 1);
		data = (void *)(long)ctx->data;
		m = (void *)(long)ctx->data_meta;
		if ((void *)(m + 1) > data) {
			if (bpf_xdp_adjust_meta(ctx, -(int)sizeof(*m))) {
				stat_add(P4CTL_STAT_META_FAILED, 1);
				return XDP_DROP;
			}
			data = (void *)(long)ctx->data;
			m = (void *)(long)ctx->data_meta;
			if ((void *)(m + 1) > data)
				return XDP_DROP;
		}
		*m = (struct p4_meta){
			.magic = P4CTL_META_MAGIC, .in_port = ps->in_port, .passes = ps->passes + 1,
			.level = ps->level, .cand = ps->cand, .nearest = ps->nearest, .carry = ps->carry,
		};
		ret = bpf_redirect_map(&recirc_port, 0, XDP_DROP);
		if (ret != XDP_REDIRECT)
			stat_add(P4CTL_STAT_RECIRC_FAILED, 1);
		return ret;
	}
	return XDP_DROP;
}

/* Reads the carry from the metadata of a frame that the recirculation veth
 * or BPF_PROG_RUN brings; false when there is none. */
static __always_inline bool take_meta(struct xdp_md *ctx, struct pass *ps, struct p4_meta **mp)
{
	struct p4_meta *m = (void *)(long)ctx->data_meta;

	if ((void *)(m + 1) > (void *)(long)ctx->data || m->magic != P4CTL_META_MAGIC)
		return false;
	ps->in_port = m->in_port;
	ps->passes = m->passes;
	ps->level = m->level;
	ps->cand = m->cand;
	ps->nearest = m->nearest;
	ps->carry = m->carry;
	*mp = m;
	return true;
}

SEC("xdp")
int p4ctl_port(struct xdp_md *ctx)
{
	const struct p4_config *cfg = config_of();
	__u32 ifindex = ctx->ingress_ifindex;
	const __u32 *port = bpf_map_lookup_elem(&port_of_ifindex, &ifindex);
	struct pass ps = {};

	if (!cfg)
		return XDP_DROP;
	/* A frame's first pass. Metadata it brings from outside is never a
	 * carry: only p4ctl_recirc and p4ctl_inject read one. */
	if (!port || !*port) {
		stat_add(P4CTL_STAT_NOT_A_PORT, 1);
		return XDP_DROP;
	}
	ps.in_port = *port - 1;
	ps.now = pass_clock(cfg);
	run_pass(ctx, &ps, cfg);
	return send(ctx, &ps, cfg);
}

/* A held request's next pass: attached to the receiving end of the
 * recirculation veth (the recirculation port of TNA), which nothing but
 * the program sends into; the carry rides in the frame's metadata. */
SEC("xdp")
int p4ctl_recirc(struct xdp_md *ctx)
{
	const struct p4_config *cfg = config_of();
	struct pass ps = {};
	struct p4_meta *m;

	if (!cfg || !take_meta(ctx, &ps, &m))
		return XDP_DROP;
	ps.now = pass_clock(cfg);
	run_pass(ctx, &ps, cfg);
	return send(ctx, &ps, cfg);
}

SEC("xdp")
int p4ctl_inject(struct xdp_md *ctx)
{
	const struct p4_config *cfg = config_of();
	struct p4_meta *m;
	struct pass ps = {};
	__u16 mode;

	if (!cfg || !take_meta(ctx, &ps, &m))
		return XDP_ABORTED;
	mode = m->mode;
	ps.now = mode & P4CTL_INJECT_CLOCK ? m->now & ((1ull << P4CTL_TIMESTAMP_BITS) - 1) : pass_clock(cfg);
	run_pass(ctx, &ps, cfg);
	if (!(mode & P4CTL_INJECT_REPORT))
		return send(ctx, &ps, cfg);
	if (mode & P4CTL_INJECT_KEEP)
		return XDP_PASS; /* a benchmark repeating the same pass */
	/* Report: the outcome and the next pass's carry, in the metadata. */
	m = (void *)(long)ctx->data_meta;
	if ((void *)(m + 1) > (void *)(long)ctx->data)
		return XDP_ABORTED;
	m->passes = ps.passes + 1;
	m->level = ps.level;
	m->cand = ps.cand;
	m->nearest = ps.nearest;
	m->carry = ps.carry;
	m->outcome = ps.outcome;
	m->reason = ps.reason;
	m->out_port = ps.out_port;
	return XDP_PASS;
}
