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
/* resubmit_type of the bind pass. */
#define RESUBMIT_BIND 1
/* Per-slot register arrays: MAX_SERVERS / CANDIDATES cells each. */
#define SLOT_SIZE 256
typedef bit<8> slot_index_t;   /* server id >> 2 */

/* Ingress -> egress and, for holds, egress -> (recirculation) -> ingress. */
header p4ctl_bridge_h {
    bit<1> hold;         /* recirculate: egress keeps this header      */
    bit<6> pad;
    port_t client_port;  /* the port the request first arrived on      */
}

/* The bind pass's resubmit data (64 bits on Tofino 1). */
header p4ctl_bind_h {
    server_id_t server;  /* chosen candidate c_p                       */
    region_id_t region;  /* region chosen in the dispatch pass         */
    bit<8>      flags;   /* p4ctl flags accumulated in the dispatch pass */
    bit<1>      stale;   /* c_p's credit had expired                   */
    bit<1>      forced;  /* bind above the bound (on_full = FORCE)     */
    bit<6>      pad;
    bit<16>     pad2;
}

struct tna_headers_t {
    p4ctl_bridge_h bridge;
    headers_t      h;
}

struct tna_ingress_metadata_t {
    p4ctl_metadata_t d;
    p4ctl_bind_h     bind;         /* valid on the bind pass                 */
    port_t           client_port;
    region_set_t     region_bit;   /* 1 << region, from region_bit           */
    bit<32>          now;          /* global_tstamp >> 10 (~µs)              */
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
