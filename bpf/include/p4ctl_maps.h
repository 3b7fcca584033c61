/* SPDX-License-Identifier: GPL-2.0 */
/* The p4ctl XDP program's maps: every table, register and counter of the
 * P4Info (docs/PIPELINE.md) as a BPF map, and the datapath's own maps
 * (ports, recirculation, ring buffers, configuration, statistics).
 * Who writes what: the controller's P4Runtime writes reach the tables
 * through pkg/dataplane/xdp (the Go side of this program); the registers
 * and counters are written by the program and read by the Go side, which
 * also resets them when the controller writes them. docs/XDP.md has the
 * translation rules. */
#ifndef P4CTL_MAPS_H
#define P4CTL_MAPS_H

#include <stdbool.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "../gen/contract.h"

/* A table's action and its parameters, one field per parameter name of the
 * contract (an action's parameters land in the fields named as they are).
 * code says which of the table's actions it is (P4CTL_ACT_<TABLE>_<ACTION>);
 * 0 is an empty slot, i.e. a miss, after which the table's default action
 * (table_defaults) runs. */
struct p4_action {
	__u32 feasible;       /* set_feasible */
	__u32 capacity;       /* dispatch_local, forward_remote */
	__u32 addr;           /* forward_remote, set_server_endpoint, set_reply_source; host order */
	__u32 cost_us;        /* set_exec_cost */
	__u16 site;           /* set_client_site */
	__u16 port;           /* forward_remote, set_server_endpoint, forward */
	__u16 base;           /* set_pool ... */
	__u16 size_mask;
	__u16 bound;
	__u16 long_reserve;
	__u8 code;
	__u8 nearest;         /* set_feasible */
	__u8 epoch;           /* set_active_epoch */
	__u8 region;          /* route_to_region */
	__u8 policy;          /* set_pool ... */
	__u8 max_holds;
	__u8 on_full;
	__u8 credit_tick;
	__u8 long_max_holds;
	__u8 is_long;         /* set_exec_cost */
	__u8 dmac[6];         /* forward_remote, set_server_endpoint; wire order */
};

/* An exact table with a small key, as an array: each cell holds two
 * slots, and the table's _live array says which one packets read. The Go
 * side changes an entry by writing the other slot (the live one is
 * rewritten with the bytes it already has) and then flipping the cell's
 * live index, one 4-byte write: a packet sees the old action or the new
 * one, never a mix, as with a hash map's replace, at an array's cost. */
struct p4_slots {
	struct p4_action a[2];
};

/* LPM key of l3_forward: the address in wire order, as the
 * trie compares it (most significant bit first). */
struct lpm_v4_key {
	__u32 prefixlen;
	__u8 addr[4];
};

/* client_site: its prefixes resolved, longest first, into the disjoint
 * address intervals they cover, sorted by start (start[0] = 0), each with
 * the site and the action's code of the prefix that wins it (code 0: no
 * prefix, a miss). The unused tail starts at 0xFFFFFFFF with the last
 * interval's value, so that the search needs no count. A lookup is a
 * binary search of P4CTL_SITE_SEARCH steps in 16 KiB of starts that stay
 * in cache, where a trie walk chases a pointer per level. The whole table
 * is one value of two sets; client_site_live says which set packets read,
 * so a change flips it whole (struct p4_slots' discipline). */
#define P4CTL_SITE_SEARCH 12
#define P4CTL_SITE_INTERVALS (1 << P4CTL_SITE_SEARCH)
struct site_set {
	__u32 start[P4CTL_SITE_INTERVALS];
	__u32 site[P4CTL_SITE_INTERVALS];   /* code << 16 | site */
};
struct site_table {
	struct site_set set[2];
};

/* sla_feasibility: one value per site, its entries' ranges resolved by
 * priority into disjoint intervals sorted by start (start[0] = 0; the
 * unused tail has start = 0xFFFF and the last interval's value, so that
 * the search needs no count). A request's sla_ms falls in the last
 * interval whose start is ≤ it: a binary search of log2(P4CTL_SLA_INTERVALS)
 * steps over the 256 bytes of starts, then one read of the interval's
 * value. code 0: no entry covers it (a miss). */
#define P4CTL_SLA_INTERVALS 128
struct sla_interval {
	__u32 feasible;
	__u8 nearest;
	__u8 code;
	__u16 pad;
};
struct sla_ranges {
	__u16 start[P4CTL_SLA_INTERVALS];
	struct sla_interval iv[P4CTL_SLA_INTERVALS];
};

/* carbon_rank: the entries of an epoch in three kinds of groups, each
 * sorted by precedence (priority, then insertion order): those whose site
 * is exact (one group per site), those that do not match on site, and any
 * other site mask. A lookup takes the first matching rule of each group of
 * the epoch and the one that precedes the others. Kinds: P4CTL_RANK_SITE
 * (site mask all ones: key (epoch, kind, site)), P4CTL_RANK_ANY (site
 * omitted: key (epoch, kind, 0)), P4CTL_RANK_MASKED (any other site mask:
 * key (epoch, kind, 0)). */
#define P4CTL_RANK_RULES 64
struct rank_key {
	__u8 epoch;
	__u8 kind;
	__u16 site;
};
struct rank_rule {
	__u32 fval, fmask;    /* feasible ternary (fmask 0: omitted) */
	__u32 prio;
	__u32 seq;            /* insertion order: the earlier wins a tie */
	__u16 sval, smask;    /* site ternary */
	__u8 region;
	__u8 code;
	__u16 pad;
};
struct rank_group {
	__u32 n;
	__u32 pad;
	struct rank_rule r[P4CTL_RANK_RULES];
};

/* Register cells that CPUs update at once, one cache line each, so that
 * two regions' or two servers' cells never share a line. */
struct line32 {
	__u32 v;
	__u8 pad[60];
};
struct line64 {
	__u64 v;
	__u8 pad[56];
};

/* A counter cell. */
struct p4_count {
	__u64 packets;
	__u64 bytes;
};

/* The carry: what a recirculated request takes into its next pass, in the
 * frame's XDP metadata (TNA's bridge header, v1model's @field_list), which
 * a veth keeps across the redirect into it. It is read only by p4ctl_recirc,
 * attached to the recirculation veth alone. An injected frame (p4ctl_inject,
 * BPF_PROG_RUN) carries it too, with the ingress port, the pass clock when
 * given, and room for the outcome. */
struct p4_meta {
	__u32 magic;
	__u16 in_port;        /* the port the request first arrived on */
	__u16 passes;         /* passes made before this one */
	__u32 level;          /* round.level */
	__u32 cand;           /* spill: the feasible regions left */
	__u8 nearest;         /* spill: the site's nearest region */
	__u8 carry;           /* P4CTL_CARRY_* */
	__u8 outcome;         /* reported: P4CTL_OUT_* */
	__u8 reason;          /* reported: P4CTL_REASON_* of a drop */
	__u16 out_port;       /* reported: the egress port */
	__u16 mode;           /* injected: P4CTL_INJECT_* */
	__u64 now;            /* injected with P4CTL_INJECT_CLOCK: the pass clock (µs) */
};

/* The datapath's configuration, written by the Go side. */
struct p4_config {
	__u64 start_ns;       /* bpf_ktime_get_ns() when the switch started: the pass clock is µs since */
	__u32 pipeline;       /* 1 when a pipeline is bound; else every packet is dropped */
	__u32 digests;        /* 1 when a controller enabled latency_sample_t */
	__u32 cpu_port;       /* frames sent to it go to packet_in */
	__u32 pad;
};

/* One latency_sample_t digest, to the Go side through the digests ring. */
struct latency_sample {
	__u32 rtt;
	__u16 site;
	__u8 region;
	__u8 lost;
};

/* A frame sent to the CPU port, to the Go side through the packet_in ring. */
#define P4CTL_PACKET_IN_MAX 1536
struct packet_in_frame {
	__u32 len;
	__u16 port;           /* the ingress port */
	__u16 pad;
	__u8 data[P4CTL_PACKET_IN_MAX];
};


#define ARRAY_MAP(name, n, vtype)                         \
	struct {                                              \
		__uint(type, BPF_MAP_TYPE_ARRAY);                 \
		__uint(max_entries, n);                           \
		__type(key, __u32);                               \
		__type(value, vtype);                             \
	} name SEC(".maps")
#define PERCPU_MAP(name, n, vtype)                        \
	struct {                                              \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);          \
		__uint(max_entries, n);                           \
		__type(key, __u32);                               \
		__type(value, vtype);                             \
	} name SEC(".maps")
#define HASH_MAP(name, n, ktype, vtype)                   \
	struct {                                              \
		__uint(type, BPF_MAP_TYPE_HASH);                  \
		__uint(max_entries, n);                           \
		__type(key, ktype);                               \
		__type(value, vtype);                             \
	} name SEC(".maps") /* preallocated: an update allocates nothing */
#define SLOTTED_MAP(name, n)                              \
	ARRAY_MAP(name, n, struct p4_slots);                  \
	ARRAY_MAP(name##_live, n, __u32)
#define LPM_MAP(name, n)                                  \
	struct {                                              \
		__uint(type, BPF_MAP_TYPE_LPM_TRIE);              \
		__uint(max_entries, n);                           \
		__uint(map_flags, BPF_F_NO_PREALLOC);             \
		__type(key, struct lpm_v4_key);                   \
		__type(value, struct p4_action);                  \
	} name SEC(".maps")

/* Tables (written by the controller through pkg/dataplane/xdp). Every
 * entry changes as a whole: a hash or LPM map's replace, a slotted array's
 * flip (struct p4_slots). Exact tables with keys of 8 or 16 bits are
 * slotted arrays indexed by the key. */
ARRAY_MAP(client_site, 1, struct site_table);
ARRAY_MAP(client_site_live, 1, __u32);
HASH_MAP(sla_feasibility, P4CTL_SIZE_SLA_FEASIBILITY, __u32, struct sla_ranges);
HASH_MAP(carbon_rank, P4CTL_SIZE_CARBON_RANK, struct rank_key, struct rank_group);
ARRAY_MAP(carbon_rank_kinds, 256, __u32);      /* per epoch: bit k set when a group of kind k exists */
SLOTTED_MAP(region_next_hop, 1 << 8);
SLOTTED_MAP(server_pool, 1 << 8);
SLOTTED_MAP(exec_class_cost, 1 << 8);
SLOTTED_MAP(server_endpoint, 1 << 16);
SLOTTED_MAP(reply_source, 1 << 16);
LPM_MAP(l3_forward, P4CTL_SIZE_L3_FORWARD);
HASH_MAP(l2_forward, P4CTL_SIZE_L2_FORWARD, __u64, struct p4_action);
/* Every table's default action, slotted; active_epoch, keyless, is its
 * cell alone, so the hitless flip stays one write (of its live index). */
SLOTTED_MAP(table_defaults, P4CTL_NUM_TABLES);

/* Registers (written by the program, one atomic step per cell). */
ARRAY_MAP(server_credit, P4CTL_MAX_SERVERS, struct line64); /* server_credit_<k>[i] at k * SLOT_CELLS + i */
ARRAY_MAP(server_work_us, P4CTL_MAX_SERVERS, __u32);
ARRAY_MAP(region_outstanding, P4CTL_MAX_REGIONS, struct line32);
ARRAY_MAP(latency_probe, P4CTL_SIZE_LATENCY_PROBE, __u64);

/* Counters (per CPU; the Go side sums them). */
PERCPU_MAP(region_routed, P4CTL_MAX_REGIONS, struct p4_count);
PERCPU_MAP(region_fallback, P4CTL_MAX_REGIONS, struct p4_count);
PERCPU_MAP(server_bound, P4CTL_MAX_SERVERS, struct p4_count);
PERCPU_MAP(dispatch_events, P4CTL_NUM_LANES * P4CTL_NUM_EVENTS, struct p4_count); /* lane * NUM_EVENTS + event */

/* The datapath. */
ARRAY_MAP(config, 1, struct p4_config);
PERCPU_MAP(datapath_stats, P4CTL_STAT_COUNT, __u64); /* P4CTL_STAT_* */
ARRAY_MAP(port_of_ifindex, 1 << 16, __u32);            /* an attached interface's port + 1 (0: none) */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 512);
	__type(key, __u32);
	__type(value, struct bpf_devmap_val);
} tx_ports SEC(".maps");                                /* port -> interface */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bpf_devmap_val);
} recirc_port SEC(".maps");                             /* the recirculation veth's sending end */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} digests SEC(".maps");
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1024 * 1024);
} packet_in SEC(".maps");

/* The ring buffers' records are no map's key or value: these keep their
 * types in the BTF, for the Go bindings (bpf2go -type). */
const struct latency_sample *unused_latency_sample __attribute__((unused));
const struct packet_in_frame *unused_packet_in_frame __attribute__((unused));
const struct p4_meta *unused_p4_meta __attribute__((unused));
const struct rank_rule *unused_rank_rule __attribute__((unused));
const struct sla_interval *unused_sla_interval __attribute__((unused));

#endif /* P4CTL_MAPS_H */
