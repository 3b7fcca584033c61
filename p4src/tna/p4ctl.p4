/*
 * p4ctl — the TNA (Tofino 1) program: the same decisions as the v1model
 * program and the Go model (docs/PIPELINE.md; pkg/pipeline holds the
 * names and the dispatch algorithm), in one pass per decision (a request's
 * region selection in a pass of its own, README.md "Stages"), every
 * register touched once per pass by a RegisterAction that decides in the
 * stateful ALU. Build: `make p4-tna` (bf-p4c --target tofino --arch tna);
 * outputs, resource report and BUILDINFO in p4src/build/tna/. Design and
 * hardware constraints: README.md.
 *
 * Layout (as p4src/v1model/): the architecture-neutral controls come from
 * ../shared/ (region_select.p4, next_hop.p4, endpoints.p4, forwarding.p4);
 * the controls that hold registers (capacity.p4, dispatch.p4), the
 * constant tables Tofino needs (tna_tables.p4) and the glue (ingress.p4)
 * are this architecture's, with the same names.
 */
#include <core.p4>
#include <tna.p4>

#include "../shared/defines.p4"
#include "../shared/headers.p4"
#include "../shared/parser.p4"
#include "../shared/region_select.p4"
#include "../shared/next_hop.p4"
#include "../shared/endpoints.p4"
#include "../shared/forwarding.p4"

/* Tofino 1, pipe 0 recirculation port. Deployment-specific. */
#define RECIRC_PORT 68
/* The size of p4ctl_carry_h, in front of every recirculated packet. */
#define CARRY_BYTES 16

/* A request's carry rides in front of the Ethernet header from ingress to
 * egress, and on recirculated packets back into ingress (parser.p4). */
struct tna_headers_t {
    p4ctl_carry_h carry;
    headers_t     h;
}

/* A latency probe (probe.p4): the pair a stateful ALU updates atomically. */
struct probe_pair_t {
    bit<32> sent;
    bit<32> request_id;
}

/* One server's credit cell: the pair a stateful ALU updates atomically. */
struct credit_pair_t {
    bit<32> outstanding;
    bit<32> last_tick;
}

struct tna_ingress_metadata_t {
    p4ctl_metadata_t d;
    /* dispatch temporaries (dispatch.p4), by the stage that computes them */
    bit<16>      hash;            /* 0: the candidate hash, low 16 bits     */
    bit<16>      hash_group;      /* 0: hash & ~3                           */
    bit<1>       chain;           /* 1: jbsq or jiq (a group), else random  */
    bit<16>      offset;          /* 1: the candidates' offset in the pool  */
    bit<32>      limit;           /* 1: pipeline.Pool.Limit                 */
    bit<8>       hold_room;       /* 1: max_holds |-| hold_count            */
    bit<8>       hold_room_long;  /* 1: long_max_holds |-| hold_count       */
    bit<32>      now_tick;        /* 1: the pool's credit clock             */
    bit<32>      level_or_unbounded; /* 1: carry.level, UNBOUNDED if it is 0 */
    bit<16>      cut;             /* 1: limit |-| long_reserve              */
    server_id_t  group;           /* 2: base + offset                       */
    bit<32>      cap;             /* 2: pipeline.Pool.Cap                   */
    bit<1>       long_cut;        /* 2: bounded preemption lowered the cap  */
    bit<32>      stale_before;    /* 2: now_tick - CREDIT_TTL_TICKS         */
    bit<32>      threshold;       /* 2: pipeline.Pool.Threshold             */
    server_id_t  group_base;      /* 3: group & ~3: slot k's server is | k  */
    bit<4>       slots;           /* 2: the slots a jbsq or jiq pass tries  */
    /* 3-6: the chain after slot k: 0 = a slot <= k took the request, else
     * the refused count of the last slot tried (UNBOUNDED before any) */
    bit<32>      after_slot0;
    bit<32>      after_slot1;
    bit<32>      after_slot2;
    bit<32>      after_slot3;
    bit<32>      min_refused01;   /* 5: min(after_slot0, after_slot1)       */
    bit<32>      min_refused012;  /* 6: min(min_refused01, after_slot2)     */
    bit<32>      level_room012;   /* 7: cap |-| min_refused012              */
    bit<32>      level_room3;     /* 7: cap |-| after_slot3                 */
    bit<32>      min_refused;     /* 7: min(min_refused012, after_slot3)    */
    /* ingress.p4, capacity.p4 */
    region_set_t region_bit;      /* 0: 1 << hdr.region_id (region_bit)     */
    region_set_t rest;            /* 1: carry.cand & ~region_bit            */
    bit<1>       valid_reply;     /* 1: a reply of the server it names      */
    bit<1>       local;           /* 1: a request for a local region's pool */
    bit<1>       reply_fwd;       /* 1: a reply l3_forward forwards         */
    bit<32>      region_full;     /* 2: a refused acquire's count; 0 = held */
    bit<13>      probe_cell;      /* 0: the header's latency_probe cell     */
    /* latency probes (probe.p4) */
    bit<32>      now;             /* global_tstamp[41:10] (1.024 µs units)  */
    bit<8>       sample_lost;     /* latency_sample digest data             */
    bit<32>      sample_rtt;
}

struct tna_egress_headers_t {
    p4ctl_carry_h carry;
}

struct tna_egress_metadata_t { }

/* Tofino does not zero metadata by default; the program relies on zero as
 * every table's "missed" value (docs/PIPELINE.md), as BMv2 provides. */
@pa_auto_init_metadata

#include "parser.p4"
#include "tna_tables.p4"
#include "capacity.p4"
#include "dispatch.p4"
#include "probe.p4"
#include "ingress.p4"
#include "egress.p4"
#include "deparser.p4"

Pipeline(P4ctlIngressParser(),
         P4ctlIngress(),
         P4ctlIngressDeparser(),
         P4ctlEgressParser(),
         P4ctlEgress(),
         P4ctlEgressDeparser()) pipe;

Switch(pipe) main;
