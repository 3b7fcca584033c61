/* SPDX-License-Identifier: GPL-2.0 */
/* Table lookups. Each returns the action that runs: the hit entry's, or
 * on a miss the table's default action (table_defaults); the caller
 * decides by the action's code, never by hit or miss (docs/PIPELINE.md
 * "Tables"). */
#ifndef P4CTL_TABLES_H
#define P4CTL_TABLES_H

#include "p4ctl_maps.h"

/* An empty action: what a lookup returns if even table_defaults misses
 * (it cannot: it is an array). */
static const struct p4_action no_action = {};

/* The live slot of a slotted array's cell (struct p4_slots), or NULL. */
static __always_inline const struct p4_action *slotted(void *slots, void *live, __u32 key)
{
	const struct p4_slots *s = bpf_map_lookup_elem(slots, &key);
	const __u32 *l = bpf_map_lookup_elem(live, &key);

	if (!s || !l)
		return 0;
	return &s->a[*l & 1];
}

static __always_inline const struct p4_action *table_default(__u32 t)
{
	const struct p4_action *a = slotted(&table_defaults, &table_defaults_live, t);

	return a ? a : &no_action;
}

static __always_inline const struct p4_action *or_default(const struct p4_action *a, __u32 t)
{
	return a && a->code ? a : table_default(t);
}

/* An exact table held in a slotted array (key < its size). */
#define EXACT(table, key, code) or_default(slotted(&table, &table##_live, (key)), (code))

static __always_inline const struct p4_action *lpm_v4(void *map, const __u8 *addr, __u32 t)
{
	struct lpm_v4_key k = {.prefixlen = 32};

	__builtin_memcpy(k.addr, addr, 4);
	return or_default(bpf_map_lookup_elem(map, &k), t);
}

/* client_site(src): the site of the interval holding src, by binary
 * search; 0 when the default runs (a miss) or the entry's action is
 * NoAction. */
static __always_inline __u16 site_lookup(__u32 src)
{
	__u32 k = 0, i = 0;
	const struct site_table *tbl = bpf_map_lookup_elem(&client_site, &k);
	const __u32 *live = bpf_map_lookup_elem(&client_site_live, &k);
	const struct site_set *set;
	const struct p4_action *a;
	__u32 v;

	if (!tbl || !live)
		return 0;
	set = &tbl->set[*live & 1];
#pragma unroll
	for (__u32 step = P4CTL_SITE_INTERVALS / 2; step > 0; step >>= 1) {
		__u32 j = (i + step) & (P4CTL_SITE_INTERVALS - 1);
		if (set->start[j] <= src)
			i = j;
	}
	v = set->site[i & (P4CTL_SITE_INTERVALS - 1)];
	switch (v >> 16) {
	case P4CTL_ACT_CLIENT_SITE_SET_CLIENT_SITE:
		return (__u16)v;
	case 0: /* a miss: the default action */
		a = table_default(P4CTL_TABLE_CLIENT_SITE);
		return a->code == P4CTL_ACT_CLIENT_SITE_SET_CLIENT_SITE ? a->site : 0;
	}
	return 0;
}

/* sla_feasibility(site, sla_ms): the interval of site's ranges holding
 * sla_ms; *code 0 when no entry covers it (then the default runs). */
static __always_inline void sla_lookup(__u16 site, __u16 sla, __u32 *feasible, __u8 *nearest)
{
	__u32 key = site;
	const struct sla_ranges *r = bpf_map_lookup_elem(&sla_feasibility, &key);
	const struct p4_action *a;
	__u32 i = 0;

	*feasible = 0;
	*nearest = 0;
	if (r) {
#pragma unroll
		for (__u32 step = P4CTL_SLA_INTERVALS / 2; step > 0; step >>= 1) {
			__u32 j = (i + step) & (P4CTL_SLA_INTERVALS - 1);
			if (r->start[j] <= sla)
				i = j;
		}
		i &= P4CTL_SLA_INTERVALS - 1;
		if (r->iv[i].code == P4CTL_ACT_SLA_FEASIBILITY_SET_FEASIBLE) {
			*feasible = r->iv[i].feasible;
			*nearest = r->iv[i].nearest;
			return;
		}
		if (r->iv[i].code)
			return; /* an entry with NoAction */
	}
	a = table_default(P4CTL_TABLE_SLA_FEASIBILITY);
	if (a->code == P4CTL_ACT_SLA_FEASIBILITY_SET_FEASIBLE) {
		*feasible = a->feasible;
		*nearest = a->nearest;
	}
}

/* The first rule of a carbon_rank group matching (site, cand). */
struct rank_scan {
	const struct rank_group *g;
	__u32 cand;
	__u16 site;
	__u16 from;
	int found;
};

/* Rules of a group tried inline before the rest go to bpf_loop: most groups
 * are short, and a callback costs an indirect call per rule. */
#define P4CTL_RANK_INLINE 8

static long rank_scan_step(__u64 i, void *arg)
{
	struct rank_scan *s = arg;
	const struct rank_rule *r;

	i += s->from;
	if (i >= P4CTL_RANK_RULES)
		return 1;
	r = &s->g->r[i];
	if ((s->cand & r->fmask) == r->fval && (s->site & r->smask) == r->sval) {
		s->found = i;
		return 1;
	}
	return 0;
}

/* The best of a carbon_rank group's first match and *best: the earlier
 * precedence (higher priority, then the earlier insertion). */
static __always_inline void rank_group_match(__u8 epoch, __u8 kind, __u16 key_site, __u16 site, __u32 cand,
					     const struct rank_rule **best)
{
	struct rank_key k = {.epoch = epoch, .kind = kind, .site = key_site};
	struct rank_scan s = {.cand = cand, .site = site, .found = -1};
	const struct rank_rule *r;
	__u32 n;

	s.g = bpf_map_lookup_elem(&carbon_rank, &k);
	if (!s.g)
		return;
	n = s.g->n;
	if (n > P4CTL_RANK_RULES)
		n = P4CTL_RANK_RULES;
#pragma unroll
	for (int i = 0; i < P4CTL_RANK_INLINE; i++) {
		if (i >= n)
			break;
		r = &s.g->r[i];
		if ((cand & r->fmask) == r->fval && (site & r->smask) == r->sval) {
			s.found = i;
			break;
		}
	}
	if (s.found < 0 && n > P4CTL_RANK_INLINE) {
		s.from = P4CTL_RANK_INLINE;
		bpf_loop(n - P4CTL_RANK_INLINE, rank_scan_step, &s, 0);
	}
	if (s.found < 0 || s.found >= P4CTL_RANK_RULES)
		return;
	r = &s.g->r[s.found];
	if (!*best || r->prio > (*best)->prio || (r->prio == (*best)->prio && r->seq < (*best)->seq))
		*best = r;
}

/* carbon_rank(epoch, site, feasible): whether route_to_region ran, and its
 * region. */
static __always_inline bool rank_lookup(__u8 epoch, __u16 site, __u32 cand, __u8 *region)
{
	__u32 e = epoch;
	const __u32 *kinds = bpf_map_lookup_elem(&carbon_rank_kinds, &e);
	const struct rank_rule *best = 0;
	const struct p4_action *a;

	if (kinds && *kinds) {
		if (*kinds & (1 << P4CTL_RANK_SITE))
			rank_group_match(epoch, P4CTL_RANK_SITE, site, site, cand, &best);
		if (*kinds & (1 << P4CTL_RANK_ANY))
			rank_group_match(epoch, P4CTL_RANK_ANY, 0, site, cand, &best);
		if (*kinds & (1 << P4CTL_RANK_MASKED))
			rank_group_match(epoch, P4CTL_RANK_MASKED, 0, site, cand, &best);
	}
	if (best) {
		*region = best->region;
		return best->code == P4CTL_ACT_CARBON_RANK_ROUTE_TO_REGION;
	}
	a = table_default(P4CTL_TABLE_CARBON_RANK);
	*region = a->region;
	return a->code == P4CTL_ACT_CARBON_RANK_ROUTE_TO_REGION;
}

#endif /* P4CTL_TABLES_H */
