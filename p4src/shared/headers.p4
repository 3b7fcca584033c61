/*
 * p4ctl — packet headers and the architecture-neutral decision metadata.
 *
 * Wire format: docs/PROTOCOL.md (byte diagram) and pkg/wire (Go codec). The
 * p4ctl header follows UDP when the UDP source or destination port is
 * P4CTL_UDP_PORT.
 */
#ifndef P4CTL_HEADERS_P4
#define P4CTL_HEADERS_P4

#include "defines.p4"

typedef bit<48> mac_addr_t;
typedef bit<32> ipv4_addr_t;
typedef bit<9>  port_t;        /* pipeline.WidthPort                         */
typedef bit<16> site_id_t;     /* pipeline.WidthSite                         */
typedef bit<8>  epoch_t;       /* pipeline.WidthEpoch                        */
typedef bit<8>  region_id_t;   /* pipeline.WidthRegion                       */
typedef bit<32> region_set_t;  /* pipeline.WidthBitmap: bit r = region r     */
typedef bit<16> server_id_t;   /* pipeline.WidthServer                       */
typedef bit<32> micros_t;      /* pipeline.WidthMicros                       */

header ethernet_h {
    mac_addr_t dst_addr;
    mac_addr_t src_addr;
    bit<16>    ether_type;
}

header ipv4_h {
    bit<4>      version;
    bit<4>      ihl;
    bit<8>      diffserv;
    bit<16>     total_len;
    bit<16>     identification;
    bit<3>      flags;
    bit<13>     frag_offset;
    bit<8>      ttl;
    bit<8>      protocol;
    bit<16>     hdr_checksum;
    ipv4_addr_t src_addr;
    ipv4_addr_t dst_addr;
}

header udp_h {
    bit<16> src_port;
    bit<16> dst_port;
    bit<16> length;
    bit<16> checksum;
}

/* The 16-byte p4ctl header (docs/PROTOCOL.md "Header"). */
header p4ctl_h {
    bit<4>      version;     /* always P4CTL_VERSION                         */
    bit<4>      msg_type;    /* MSG_REQUEST, MSG_REPLY, MSG_NACK             */
    bit<8>      flags;       /* FLAG_*, set by the switch (ORed in)          */
    bit<16>     sla_ms;      /* client's latency budget                      */
    bit<8>      exec_class;  /* key of exec_class_cost                       */
    bit<8>      hold_count;  /* holds (recirculations) so far                */
    site_id_t   site_id;     /* written by the switch: client_site result    */
    region_id_t region_id;   /* written by the switch; echoed in the reply   */
    bit<8>      reserved;    /* 0 on send, ignored                           */
    server_id_t server_id;   /* chosen server; NO_SERVER = remote region     */
    bit<32>     request_id;  /* client's id, echoed                          */
}

struct headers_t {
    ethernet_h ethernet;
    ipv4_h     ipv4;
    udp_h      udp;
    p4ctl_h    p4ctl;
}

/*
 * What a recirculated request carries into its next pass
 * (docs/PIPELINE.md "Recirculation"): the dispatch round and the region
 * state. TNA sends it as a bridge header through the recirculation port;
 * v1model keeps the same fields in @field_list metadata; the Go model in a
 * struct (pkg/dataplane/program carry). All zero on a request's first pass.
 * selected and fallback are TNA's alone: its selection pass hands them, and
 * cand and nearest, to the dispatch pass that follows (p4src/tna/README.md
 * "Stages").
 */
header p4ctl_carry_h {
    bit<32>      level;        /* next pass's chain threshold; 0 = new attempt */
    bit<8>       forced;       /* 1: a forced round (on_full = force)          */
    bit<8>       region_held;  /* 1: holds a credit of hdr.region_id           */
    bit<8>       spill;        /* 1: select among cand only (others refused)   */
    bit<8>       exhausted;    /* 1: every feasible region refused             */
    bit<8>       nack_release; /* 1: return the region credit, send the NACK   */
    region_id_t  nearest;      /* spill: the site's nearest region             */
    region_set_t cand;         /* spill: feasible regions not yet refused      */
    bit<1>       selected;     /* TNA: hdr.region_id is selected, not yet held */
    bit<1>       fallback;     /* TNA: ... and a fallback (a forced acquire)   */
    bit<5>       pad;
    port_t       client_port;  /* the port the request first arrived on       */
}

/*
 * What the ingress tables' actions hand to the apply blocks. Every table
 * action only writes these fields; the controls' apply blocks read them and
 * act (docs/PIPELINE.md "Tables"). Zero is each field's "table missed" value.
 * The counters are counted once per pass at the end of ingress from the
 * ev_* and count_* fields (one access per counter per pass, as Tofino
 * requires).
 */
struct p4ctl_metadata_t {
    /* client_site */
    site_id_t    site;
    /* sla_feasibility (or the spill pass's carry): carbon_rank's key */
    region_set_t cand;
    region_id_t  nearest;
    /* active_epoch */
    epoch_t      epoch;
    /* carbon_rank */
    bool         ranked;       /* route_to_region ran                       */
    region_id_t  region;
    /* region_next_hop */
    bit<8>       next_hop;     /* NEXT_HOP_NONE / _LOCAL / _REMOTE          */
    bit<32>      capacity;     /* region's outstanding bound; 0 = unlimited */
    port_t       nh_port;
    mac_addr_t   nh_dmac;
    ipv4_addr_t  nh_addr;
    /* server_pool */
    bool         pool_found;
    server_id_t  pool_base;
    server_id_t  pool_size_mask;
    bit<8>       pool_policy;
    bit<16>      pool_bound;
    bit<8>       pool_max_holds;
    bit<8>       pool_on_full;
    bit<8>       pool_credit_tick;
    bit<16>      pool_long_reserve;
    bit<8>       pool_long_max_holds;
    /* exec_class_cost */
    micros_t     cost_us;
    bit<1>       is_long;
    /* server_endpoint (key: server; value: port, MAC, address) */
    server_id_t  server;
    bool         endpoint_found;
    port_t       ep_port;
    mac_addr_t   ep_dmac;
    ipv4_addr_t  ep_addr;
    /* reply_source (key: server) */
    bool         reply_source_found;
    ipv4_addr_t  reply_addr;
    /* l2_forward / l3_forward */
    bool         forward;      /* forward() ran                             */
    port_t       out_port;
    /* one count per counter per pass (pipeline.Lane) */
    bit<1>       ev_outcome_on;
    bit<4>       ev_outcome;
    bit<1>       ev_spill_on;
    bit<1>       ev_fallback_on;
    bit<1>       ev_cause_on;
    bit<4>       ev_cause;
    bit<1>       count_routed;    /* region_routed.count(region)             */
    bit<1>       count_fallback;  /* region_fallback.count(nearest)          */
    bit<1>       count_bound;     /* server_bound.count(server)              */
    /* decisions handed to egress and the deparser */
    bool         recirculate;     /* run another pass (carry)                */
    bool         ipv4_rewritten;  /* recompute the IPv4 header checksum      */
    /* latency probes (docs/PIPELINE.md "Latency probes") */
    bool         probe_request;   /* a request leaves toward its region      */
    bool         probe_reply;     /* a reply the probe may have timed        */
}

/*
 * The latency_sample digest (P4Runtime DigestList, docs/PIPELINE.md
 * "Latency probes"; pipeline.LatencySample): one round trip of a request of
 * site_id to region_id, in pass-clock units (v1model µs, TNA 1.024 µs), or a
 * lost one (lost = 1: the probe waited rtt ≥ PROBE_TIMEOUT for a reply that
 * did not come). The controller learns latency from these (pkg/latency).
 */
struct latency_sample_t {
    site_id_t   site_id;
    region_id_t region_id;
    bit<8>      lost;
    bit<32>     rtt;
}

#endif /* P4CTL_HEADERS_P4 */
