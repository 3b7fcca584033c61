/*
 * p4ctl — the TNA (Tofino) program. UNCOMPILED: see README.md.
 *
 * Same tables, actions, match fields and action parameters (names, widths)
 * as the v1model program (pkg/pipeline), and the same decisions as
 * docs/PIPELINE.md, within Tofino's rules:
 *   - one access per register array per pass: per-server state is split
 *     into four arrays, one per candidate slot (server id mod 4), and a
 *     request takes two passes: a dispatch pass that reads the four
 *     candidates and decides, and a resubmitted bind pass that updates the
 *     chosen slot with one atomic RegisterAction (README.md);
 *   - one access per counter per pass: dispatch_events is split by the
 *     events that can co-occur in a pass (README.md);
 *   - holds recirculate through RECIRC_PORT, carrying the client's port in
 *     a two-byte bridge header.
 */
#include <core.p4>
#include <tna.p4>

#include "../shared/defines.p4"
#include "../shared/headers.p4"
#include "../shared/parser.p4"

/* Tofino 1, pipe 0 recirculation port. Deployment-specific. */
#define RECIRC_PORT 68
/* resubmit_type of the decide pass. */
#define RESUBMIT_DECIDE 1
/* Per-slot register arrays: slot j keeps server s (s mod 4 = j) at index
 * s & ~3, the id of its aligned group's first server: whole 16-bit fields
 * index the arrays (bf-p4c cannot allocate the id fields sliced at [9:2]),
 * at the price of MAX_SERVERS cells per array, 3/4 of them unused. */
#define SLOT_SIZE MAX_SERVERS
typedef bit<16> slot_index_t;   /* server id & ~3 */

/* Ingress -> egress and, for holds and binds, egress -> (recirculation)
 * -> ingress. */
header p4ctl_bridge_h {
    /* byte-sized flags: each is written on its own (one ALU source) */
    bit<8>      hold;        /* 1: held request, dispatch again         */
    bit<8>      bind;        /* 1: bind pass, bind hdr.p4ctl.server_id  */
    bit<8>      stale;       /* 1: the chosen server's credit had expired */
    bit<8>      forced;      /* 1: bind above the bound (on_full = FORCE) */
    bit<7>      pad;
    port_t      client_port; /* the port the request first arrived on   */
    bit<16>     bound;       /* bind: the bound to check atomically     */
    server_id_t cand_hi;     /* bind: the chosen server & ~3            */
    bit<16>     slot;        /* bind: the chosen server mod 4           */
}

/* The decide pass's resubmit data (64 bits on Tofino 1): what the select
 * pass computed. The resubmitted packet is the original one. */
header p4ctl_resub_h {
    region_id_t  region;     /* region chosen by the select pass        */
    bit<8>       flags;      /* p4ctl flags after the select pass       */
    server_id_t  cand_hi;    /* c_j & ~3: the aligned group's first id  */
    bit<16>      slot0;      /* c_0 mod 4 and c_1 mod 4 (16 bits: ALU   */
    bit<16>      slot1;      /* operands share the container size); c_2 */
                             /* and c_3 are these xor (size_mask & 2)   */
}

struct tna_headers_t {
    p4ctl_bridge_h bridge;
    headers_t      h;
}

struct tna_ingress_metadata_t {
    p4ctl_metadata_t d;
    p4ctl_resub_h    resub;        /* valid on the decide pass              */
    port_t           client_port;
    bit<8>           rb_bind;      /* from the bridge: this is a bind pass  */
    bit<8>           rb_stale;
    bit<8>           rb_forced;
    bit<16>          rb_bound;
    server_id_t      rb_cand_hi;
    bit<16>          rb_slot;
    region_set_t     region_bit;   /* 1 << region, from region_bit           */
    bit<32>          now;          /* global_tstamp >> 10 (~µs)              */
    /* select pass: candidate group steps (one ALU operation each, on
     * whole 16-bit fields: slices at different offsets cannot share an
     * ALU operation, and shifts would move the PHV container's padding) */
    bit<16>          h;            /* candidate hash, low 16 bits            */
    bit<16>          hm;           /* h & size_mask                          */
    bit<16>          hmh;          /* h & size_mask & ~3                     */
    bit<16>          m3;           /* size_mask & 3                          */
    bit<16>          b3;           /* base & 3                               */
    bit<16>          hs1;          /* h + 1                                  */
    bit<16>          ms0;          /* (h + j) & size_mask & 3                */
    bit<16>          ms1;
    server_id_t      cand_hi;      /* base + hmh (then copied to resub)      */
    bit<16>          sl0;          /* (base & 3) | ms_j (then copied)        */
    bit<16>          sl1;
    /* decide pass: slots of candidates 2 and 3 */
    bit<16>          x2;           /* size_mask & 2                          */
    bit<16>          slot2;        /* slot0 ^ x2                             */
    bit<16>          slot3;        /* slot1 ^ x2                             */
    /* reply pass: the server's register index and slot */
    bit<16>          ridx;         /* server & ~3                            */
    bit<16>          rslot;        /* server & 3                             */
    /* one count per counter per pass, at the end of ingress */
    bit<1>           ev_on;
    bit<4>           ev;           /* dispatch_events index                  */
    bit<1>           cause_on;
    bit<4>           cause;        /* dispatch_events_cause index            */
    bit<1>           routed;       /* region_routed.count(region)            */
}

struct tna_egress_headers_t {
    p4ctl_bridge_h bridge;
}

struct tna_egress_metadata_t { }

/* Tofino does not zero metadata by default; the program relies on zero as
 * every table's "missed" value (docs/PIPELINE.md), as BMv2 provides. */
@pa_auto_init_metadata

#include "parser.p4"
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
