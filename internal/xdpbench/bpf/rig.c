// SPDX-License-Identifier: GPL-2.0
/* The benchmark rig's helper programs (internal/xdpbench): a traffic
 * generator run in live-frame mode, a sink that counts and timestamps what
 * reaches it, the bare-redirect baseline, and a server that turns requests
 * into their replies. They are test equipment, not the product. */

#include <stdbool.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "../../../bpf/gen/contract.h"

char LICENSE[] SEC("license") = "GPL";

#define ETH_LEN 14
#define IP_OFF ETH_LEN
#define UDP_OFF (IP_OFF + 20)
#define HDR_OFF (UDP_OFF + 8)
#define PAYLOAD_OFF (HDR_OFF + P4CTL_HEADER_LEN)
#define MIN_FRAME (PAYLOAD_OFF + 8)

/* What the generator sends: the template's headers, rewritten into every
 * frame (the pages of a live-frame run come back recycled with what the
 * switch and the servers wrote into them: a reply, a rewritten request);
 * then what it varies per frame: the request id, the client (source
 * address base + i * stride, i < sources), the UDP source port and the
 * SLA; and a timestamp in the payload, which the sink reads. */
struct gen_config {
	__u32 base;           /* first source address, host order */
	__u32 sources;        /* how many */
	__u32 stride;         /* between two sources' addresses */
	__u32 slas;           /* sla_ms varies over 1..slas */
	__u64 head[(PAYLOAD_OFF + 7) / 8]; /* the template's headers, in words */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gen_config);
} gen_conf SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} gen_seq SEC(".maps");

/* The sink's counts and latencies (per CPU): cell 0 frames, 1 bytes, 2
 * the frames that are p4ctl replies (the closed loop's measure), then
 * LAT_BUCKETS buckets of generator-to-sink latency, log-linear: LAT_LINEAR
 * buckets of LAT_STEP ns (0–32 µs), then eight a doubling up to ~2.1 s (the
 * last one: beyond). xdpbench's Counts.Quantile reads the same layout. */
#define LAT_STEP 250
#define LAT_LINEAR 128
#define LAT_BUCKETS 256
#define LAT_FIRST 3
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LAT_FIRST + LAT_BUCKETS);
	__type(key, __u32);
	__type(value, __u64);
} sink_counts SEC(".maps");

/* The bare redirect's way out, by the interface a frame came in on (sw1 →
 * sw2 for requests, sw2 → sw1 for the closed loop's replies). */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct bpf_devmap_val);
} bare_out SEC(".maps");

static __always_inline void put16(__u8 *p, __u16 v) { p[0] = v >> 8; p[1] = v; }
static __always_inline void put32(__u8 *p, __u32 v) { p[0] = v >> 24; p[1] = v >> 16; p[2] = v >> 8; p[3] = v; }

/* gen: run with BPF_PROG_RUN, live frames, on the client-side interface:
 * stamps the frame and sends it out of that interface (XDP_TX). */
SEC("xdp")
int gen(struct xdp_md *ctx)
{
	__u8 *pkt = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	__u32 k = 0;
	struct gen_config *cfg = bpf_map_lookup_elem(&gen_conf, &k);
	__u64 *seq = bpf_map_lookup_elem(&gen_seq, &k);
	__u64 n, now;

	if (!cfg || !seq || (void *)(pkt + MIN_FRAME) > end)
		return XDP_ABORTED;
	/* in words: a byte copy is as many loads and stores as bytes */
#pragma unroll
	for (int i = 0; i < PAYLOAD_OFF / 8; i++)
		((__u64 *)pkt)[i] = cfg->head[i];
	__builtin_memcpy(pkt + PAYLOAD_OFF / 8 * 8, (__u8 *)cfg->head + PAYLOAD_OFF / 8 * 8, PAYLOAD_OFF % 8);
	n = (*seq)++;
	n = n * 2 + bpf_get_smp_processor_id(); /* distinct across two CPUs */
	put32(pkt + HDR_OFF + 12, (__u32)n);
	if (cfg->sources > 1)
		put32(pkt + IP_OFF + 12, cfg->base + (__u32)(n % cfg->sources) * cfg->stride);
	put16(pkt + UDP_OFF, 40000 + (__u16)(n & 0x3ff));
	if (cfg->slas > 1)
		put16(pkt + HDR_OFF + 2, 1 + (__u16)(n % cfg->slas));
	pkt[HDR_OFF + 1] = 0; /* flags */
	pkt[HDR_OFF + 5] = 0; /* hold count */
	now = bpf_ktime_get_ns();
	__builtin_memcpy(pkt + PAYLOAD_OFF, &now, 8);
	return XDP_TX;
}

static __always_inline void bump(__u32 k, __u64 v)
{
	__u64 *c = bpf_map_lookup_elem(&sink_counts, &k);

	if (c)
		*c += v;
}

/* The bucket of a latency of v steps: v below LAT_LINEAR, else 8 buckets
 * per doubling, split by the 3 bits under the leading one. */
static __always_inline __u32 lat_bucket(__u64 v)
{
	__u32 msb = 7, b;

	if (v < LAT_LINEAR)
		return v;
#pragma unroll
	for (int i = 8; i < 40; i++)
		if (v >> i)
			msb = i;
	b = LAT_LINEAR + (msb - 7) * 8 + ((v >> (msb - 3)) & 7);
	return b < LAT_BUCKETS ? b : LAT_BUCKETS - 1;
}

/* sink: counts frames and bytes, and the latency since gen stamped them. */
SEC("xdp")
int sink(struct xdp_md *ctx)
{
	__u8 *pkt = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	__u64 sent, lat;
	__u32 b;

	bump(0, 1);
	bump(1, end - (void *)pkt);
	if ((void *)(pkt + MIN_FRAME) > end)
		return XDP_DROP;
	if ((pkt[HDR_OFF] & 0x0f) == P4CTL_MSG_REPLY)
		bump(2, 1);
	__builtin_memcpy(&sent, pkt + PAYLOAD_OFF, 8);
	lat = bpf_ktime_get_ns() - sent;
	b = lat_bucket(lat / LAT_STEP);
	bump(LAT_FIRST + b, 1);
	return XDP_DROP;
}

/* bare: the ceiling, every frame redirected out of the other port. */
SEC("xdp")
int bare(struct xdp_md *ctx)
{
	return bpf_redirect_map(&bare_out, ctx->ingress_ifindex, XDP_DROP);
}

/* pass: attached, for a switch that reads its ports with AF_PACKET, to the
 * port the servers answer into: a veth takes frames sent by XDP (the
 * servers' XDP_TX) only when its peer runs XDP; this one hands every frame
 * to the kernel as it would have. */
SEC("xdp")
int pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}

/* server: a bound request becomes its server's reply, sent back
 * (XDP_TX); anything else is counted by the sink's logic and dropped. */
SEC("xdp")
int server(struct xdp_md *ctx)
{
	__u8 *pkt = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	__u8 mac[6], addr[4], port[2];

	if ((void *)(pkt + MIN_FRAME) > end || (pkt[HDR_OFF] & 0x0f) != P4CTL_MSG_REQUEST)
		return sink(ctx);
	__builtin_memcpy(mac, pkt, 6);
	__builtin_memcpy(pkt, pkt + 6, 6);
	__builtin_memcpy(pkt + 6, mac, 6);
	__builtin_memcpy(addr, pkt + IP_OFF + 12, 4);
	__builtin_memcpy(pkt + IP_OFF + 12, pkt + IP_OFF + 16, 4);
	__builtin_memcpy(pkt + IP_OFF + 16, addr, 4);
	__builtin_memcpy(port, pkt + UDP_OFF, 2);
	__builtin_memcpy(pkt + UDP_OFF, pkt + UDP_OFF + 2, 2);
	__builtin_memcpy(pkt + UDP_OFF + 2, port, 2);
	pkt[HDR_OFF] = (pkt[HDR_OFF] & 0xf0) | P4CTL_MSG_REPLY;
	return XDP_TX;
}
