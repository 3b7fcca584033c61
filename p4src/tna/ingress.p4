/*
 * p4ctl — TNA ingress: validation, the order of the controls, rewrites and
 * the per-pass counters. The same steps as p4src/v1model/ingress.p4
 * (docs/PIPELINE.md "Ingress, step by step"), with Tofino's forwarding
 * (ucast_egress_port, drop_ctl) and recirculation through RECIRC_PORT.
 *
 * Every table, action, register and counter keeps the P4Info name
 * "P4ctlIngress.<name>" (pkg/pipeline). Who writes what: tables — the
 * controller, except the constant tables of tna_tables.p4; registers — the
 * data plane (capacity.p4, dispatch.p4, probe.p4); counters — the data
 * plane, here, once per pass each.
 */
#ifndef P4CTL_TNA_INGRESS_P4
#define P4CTL_TNA_INGRESS_P4

control P4ctlIngress(inout tna_headers_t hdr,
                     inout tna_ingress_metadata_t meta,
                     in ingress_intrinsic_metadata_t ig_intr_md,
                     in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                     inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                     inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {

    /* Requests bound into (local) or forwarded to (remote) each region. */
    Counter<bit<32>, bit<5>>(MAX_REGIONS, CounterType_t.PACKETS_AND_BYTES) region_routed;
    /* Requests sent to their site's nearest region because carbon_rank
     * did not choose one. Index: the nearest region. */
    Counter<bit<32>, bit<5>>(MAX_REGIONS, CounterType_t.PACKETS_AND_BYTES) region_fallback;
    /* Requests bound to each server. */
    Counter<bit<32>, bit<10>>(MAX_SERVERS, CounterType_t.PACKETS_AND_BYTES) server_bound;
    /* dispatch_events, one counter per lane (pipeline.Lane), indexed by
     * pipeline.Event: an event's count is its lane's cell. */
    Counter<bit<32>, bit<4>>(NUM_EVENTS, CounterType_t.PACKETS_AND_BYTES) dispatch_events;
    Counter<bit<32>, bit<4>>(NUM_EVENTS, CounterType_t.PACKETS_AND_BYTES) dispatch_events_spill;
    Counter<bit<32>, bit<4>>(NUM_EVENTS, CounterType_t.PACKETS_AND_BYTES) dispatch_events_fallback;
    Counter<bit<32>, bit<4>>(NUM_EVENTS, CounterType_t.PACKETS_AND_BYTES) dispatch_events_cause;

    RegionSelect()   region_select;
    ExecClass()      exec_class;
    NextHop()        next_hop;
    RegionBit()      region_bit;
    RegionCapacity() capacity;
    ServerDispatch() dispatch;
    LatencyProbe()   latency_probe;
    /* The pass clock, meta.now = global_tstamp[41:10] (1.024 µs units),
     * moved into a container of its own by an identity hash (an ALU uses a
     * field only at its own alignment; the hash unit moves bits freely),
     * in a @hidden table of its own (an action carries at most 32 bits of
     * hash output). */
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) pass_clock;
    @hidden action take_pass_clock() { meta.now = pass_clock.get({ ig_prsr_md.global_tstamp[41:10] }); }
    @hidden table pass_clock_t {
        actions = { take_pass_clock; }
        const default_action = take_pass_clock();
        size = 1;
    }
    ServerEndpoint() server_endpoint;
    ReplySource()    reply_source;
    Forwarding()     forwarding;

    /* The request turned around to its client (docs/PIPELINE.md step 5). */
    @hidden action rewrite_nack() {
        mac_addr_t mac = hdr.h.ethernet.dst_addr;
        hdr.h.ethernet.dst_addr = hdr.h.ethernet.src_addr;
        hdr.h.ethernet.src_addr = mac;
        ipv4_addr_t addr = hdr.h.ipv4.dst_addr;
        hdr.h.ipv4.dst_addr = hdr.h.ipv4.src_addr;
        hdr.h.ipv4.src_addr = addr;
        bit<16> port = hdr.h.udp.dst_port;
        hdr.h.udp.dst_port = hdr.h.udp.src_port;
        hdr.h.udp.src_port = port;
        hdr.h.udp.checksum = 0;
        hdr.h.p4ctl.msg_type = MSG_NACK;
        meta.d.ipv4_rewritten = true;
    }

    @hidden action udp_room_of() { meta.udp_room = hdr.h.udp.length |-| (P4CTL_MIN_UDP_LENGTH - 1); }
    @hidden table udp_room_t {
        actions = { udp_room_of; }
        const default_action = udp_room_of();
        size = 1;
    }

    /* the feasible regions but this one (a spill's candidates) */
    @hidden action rest_of_feasible() { meta.rest = meta.d.cand & ~meta.region_bit; }
    @hidden table rest_t {
        actions = { rest_of_feasible; }
        const default_action = rest_of_feasible();
        size = 1;
    }

    @hidden action outcome(bit<4> e) {
        meta.d.ev_outcome_on = 1;
        meta.d.ev_outcome = e;
    }

    @hidden action send(port_t port) {
        ig_tm_md.ucast_egress_port = port;
        ig_dprsr_md.drop_ctl = 0;
    }

    apply {
        ig_dprsr_md.drop_ctl = 1;              /* dropped unless a step forwards */
        /* the pass clock: a slice of global_tstamp moved by the hash unit */
        pass_clock_t.apply();
        /* A first pass starts with an empty carry; a recirculated request
         * brings its own (parser.p4). */
        if (!hdr.carry.isValid()) {
            hdr.carry.setValid();
            hdr.carry.level = 0;
            hdr.carry.forced = 0;
            hdr.carry.region_held = 0;
            hdr.carry.spill = 0;
            hdr.carry.exhausted = 0;
            hdr.carry.nack_release = 0;
            hdr.carry.nearest = 0;
            hdr.carry.cand = 0;
            hdr.carry.pad = 0;
            hdr.carry.client_port = ig_intr_md.ingress_port;
        }

        udp_room_t.apply();
        bool apply_fwd = false;  /* l2/l3 forwarding is applied once, at the end */
        bool l2 = false;

        if (ig_prsr_md.parser_err != PARSER_ERROR_OK) {
            /* step 1 */
            outcome(EVENT_MALFORMED);
        } else if (!hdr.h.ipv4.isValid()) {
            /* step 2 */
            apply_fwd = true;
            l2 = true;
        } else if (!hdr.h.p4ctl.isValid()) {
            /* step 2: plain IPv4, not modified */
            apply_fwd = true;
        } else if (meta.udp_room == 0) {
            /* step 3: udp.length < 24 (udp_room = length |-| 23, computed in
             * a stage of its own: a gateway sees 4 bytes + 12 bits of PHV) */
            outcome(EVENT_MALFORMED);
        } else if (hdr.h.p4ctl.version != P4CTL_VERSION
                   || hdr.h.p4ctl.msg_type < MSG_REQUEST
                   || hdr.h.p4ctl.msg_type > MSG_NACK) {
            /* step 3 */
            outcome(EVENT_MALFORMED);
        } else if (hdr.h.p4ctl.msg_type == MSG_NACK) {
            /* step 3 */
            apply_fwd = true;
        } else {
            bool is_request = hdr.h.p4ctl.msg_type == MSG_REQUEST;
            bool nack_pass = is_request && hdr.carry.nack_release == 1;
            bool valid_reply = false;
            bool local = false;

            /* step 4 */
            exec_class.apply(hdr.h, meta.d);

            if (!is_request) {
                /* step 11: a reply names its region and server */
                meta.d.region = hdr.h.p4ctl.region_id;
                meta.d.server = hdr.h.p4ctl.server_id;
                if (hdr.h.p4ctl.server_id == NO_SERVER) {
                    apply_fwd = true;  /* a remote region's reply */
                    meta.d.probe_reply = true;
                } else {
                    /* only the server's own replies release */
                    reply_source.apply(meta.d);
                    if (!meta.d.reply_source_found || hdr.h.ipv4.src_addr != meta.d.reply_addr) {
                        outcome(EVENT_REPLY_REJECTED);
                    } else {
                        valid_reply = true;
                    }
                }
            } else if (nack_pass || hdr.carry.region_held == 1) {
                /* steps 5, 10: later passes keep the region */
                meta.d.region = hdr.h.p4ctl.region_id;
            } else {
                /* step 6 */
                region_select.apply(hdr.h, meta.d, hdr.carry);
            }

            /* step 7 */
            next_hop.apply(meta.d);
            region_bit.apply(meta.d.region, meta.region_bit);
            rest_t.apply();

            if (is_request && !nack_pass) {
                if (meta.d.next_hop == NEXT_HOP_REMOTE) {
                    /* step 8: remote region */
                    hdr.h.ethernet.dst_addr = meta.d.nh_dmac;
                    hdr.h.ipv4.dst_addr = meta.d.nh_addr;
                    send(meta.d.nh_port);
                    hdr.h.p4ctl.server_id = NO_SERVER;
                    hdr.h.udp.checksum = 0;
                    meta.d.ipv4_rewritten = true;
                    meta.d.count_routed = 1;
                    meta.d.probe_request = true;
                } else if (meta.d.next_hop != NEXT_HOP_LOCAL || !meta.d.pool_found) {
                    /* steps 8, 10: no next hop, no pool */
                    outcome(EVENT_UNREACHABLE);
                } else {
                    local = true;
                }
            }

            /* step 9: the region's capacity — acquired by a request's first
             * local pass, returned by the NACK pass and by valid replies */
            bool capacity_refused = false;
            if (nack_pass || valid_reply || (local && hdr.carry.region_held == 0)) {
                capacity.apply(meta.d, hdr.carry, nack_pass || valid_reply, capacity_refused);
            }

            if (nack_pass) {
                /* step 5 */
                rewrite_nack();
                send(hdr.carry.client_port);
                outcome(EVENT_NACK);
            } else if (capacity_refused) {
                /* spill: retry without the region that refused (rest was
                 * computed in a stage of its own: a gateway tests a field,
                 * not an expression of two) */
                region_set_t rest = meta.rest;
                hdr.carry.level = 0;
                hdr.carry.forced = 0;
                hdr.carry.nack_release = 0;
                hdr.carry.region_held = 0;
                if (rest == 0) {
                    hdr.carry.spill = 0;
                    hdr.carry.exhausted = 1;
                } else {
                    hdr.carry.spill = 1;
                    hdr.carry.exhausted = 0;
                    hdr.carry.cand = rest;
                    hdr.carry.nearest = meta.d.nearest;
                }
                meta.d.recirculate = true;
                outcome(EVENT_REGION_FULL);
            } else if (local || valid_reply) {
                if (local) {
                    hdr.carry.region_held = 1;
                    hdr.carry.spill = 0;
                    hdr.carry.exhausted = 0;
                }
                /* step 10 (requests), step 11 (replies) */
                dispatch.apply(hdr.h, meta, hdr.carry, valid_reply);
                if (valid_reply) {
                    outcome(EVENT_REPLY_RELEASED);
                    apply_fwd = true;
                    meta.d.probe_reply = true;
                } else if (meta.d.count_bound == 1) {
                    meta.d.probe_request = true;
                    /* 10.6 toward the server */
                    server_endpoint.apply(meta.d);
                    if (!meta.d.endpoint_found) {
                        outcome(EVENT_UNREACHABLE);
                    } else {
                        hdr.h.ethernet.dst_addr = meta.d.ep_dmac;
                        hdr.h.ipv4.dst_addr = meta.d.ep_addr;
                        send(meta.d.ep_port);
                        hdr.h.udp.checksum = 0;
                        meta.d.ipv4_rewritten = true;
                    }
                }
            }
        }

        /* latency probes: the request bound or forwarded, the reply */
        if (meta.d.probe_request || meta.d.probe_reply) {
            latency_probe.apply(hdr.h.p4ctl, meta, meta.d.probe_request, ig_dprsr_md);
        }

        if (apply_fwd) {
            forwarding.apply(hdr.h, meta.d, l2);
            if (meta.d.forward) {
                send(meta.d.out_port);
            }
        }

        if (meta.d.recirculate) {
            /* the carry rides through egress and back (egress.p4) */
            send(RECIRC_PORT);
        }

        /* one count per counter per pass */
        if (meta.d.ev_outcome_on == 1) {
            dispatch_events.count(meta.d.ev_outcome);
        }
        if (meta.d.ev_spill_on == 1) {
            dispatch_events_spill.count(EVENT_SPILLED);
        }
        if (meta.d.ev_fallback_on == 1) {
            dispatch_events_fallback.count(EVENT_FALLBACK);
        }
        if (meta.d.ev_cause_on == 1) {
            dispatch_events_cause.count(meta.d.ev_cause);
        }
        if (meta.d.count_routed == 1) {
            region_routed.count(meta.d.region[4:0]);
        }
        if (meta.d.count_fallback == 1) {
            region_fallback.count(meta.d.nearest[4:0]);
        }
        if (meta.d.count_bound == 1) {
            server_bound.count(meta.d.server[9:0]);
        }
    }
}

#endif /* P4CTL_TNA_INGRESS_P4 */
