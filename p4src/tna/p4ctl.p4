/*
 * p4ctl — the TNA (Tofino 1) program: the same decisions as the v1model
 * program and the Go model (docs/PIPELINE.md; pkg/pipeline holds the
 * names and the dispatch algorithm), in one pass per decision, every
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
    /* TNA dispatch temporaries (dispatch.p4) */
    bit<16>      hash;          /* candidate hash, low 16 bits           */
    bit<16>      hashed;        /* hash & size_mask                      */
    bit<16>      offset;        /* hashed & ~3: the group's offset       */
    server_id_t  group;         /* base + offset                         */
    bit<8>       group_idx;     /* group >> 2: the cell in every slot    */
    server_id_t  group_mask;    /* size_mask & ~3                        */
    server_id_t  group_base;    /* group & ~3: slot k's server is | k    */
    bit<4>       slots;         /* the slots the chain tries             */
    bit<1>       chain;         /* jbsq or jiq                           */
    bit<32>      limit;
    bit<32>      cap;
    bit<1>       long_cut;
    bit<32>      threshold;
    bit<32>      now_tick;      /* the pool's credit clock               */
    bit<32>      stale_before;  /* now_tick - CREDIT_TTL_TICKS           */
    bit<32>      refused0;      /* claim outputs: 0 = taken, else count  */
    bit<32>      refused1;
    bit<32>      refused2;
    bit<32>      refused3;
    bit<32>      min_refused;
    bit<32>      level_room;    /* cap |-| min_refused                   */
    bit<8>       hold_room;     /* max_holds |-| hold_count              */
    bit<8>       hold_room_long; /* long_max_holds |-| hold_count        */
    bit<1>       taken;
    region_set_t region_bit;    /* 1 << region (region_bit)              */
    region_set_t rest;          /* cand & ~region_bit                    */
    bit<16>      udp_room;      /* udp.length |-| 23: 0 = too short      */
    /* latency probes (probe.p4) */
    bit<32>      now;           /* global_tstamp[41:10] (1.024 µs units) */
    bit<8>       sample_lost;   /* latency_sample digest data            */
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
