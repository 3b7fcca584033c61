/*
 * p4ctl — ingress (v1model / BMv2): validation, the order of the controls,
 * rewrites and the per-pass counters. docs/PIPELINE.md "Ingress, step by
 * step" is the normative text; the step numbers below refer to it.
 *
 * Every table, action, register and counter keeps the P4Info name
 * "P4ctlIngress.<name>" (pkg/pipeline): those of the sub-controls by an
 * absolute @name. Who writes what:
 *   tables     — the controller (P4Runtime), see each table's comment;
 *   registers  — the data plane only (capacity.p4, dispatch.p4, probe.p4);
 *   counters   — the data plane only, here, once per pass each.
 */
#ifndef P4CTL_V1MODEL_INGRESS_P4
#define P4CTL_V1MODEL_INGRESS_P4

control P4ctlIngress(inout headers_t hdr,
                     inout v1_metadata_t meta,
                     inout standard_metadata_t std) {

    /* Requests bound into (local) or forwarded to (remote) each region. */
    counter(MAX_REGIONS, CounterType.packets_and_bytes) region_routed;
    /* Requests sent to their site's nearest region because carbon_rank
     * did not choose one. Index: the nearest region. */
    counter(MAX_REGIONS, CounterType.packets_and_bytes) region_fallback;
    /* Requests bound to each server. */
    counter(MAX_SERVERS, CounterType.packets_and_bytes) server_bound;
    /* dispatch_events, one counter per lane (pipeline.Lane), indexed by
     * pipeline.Event: an event's count is its lane's cell. */
    counter(NUM_EVENTS, CounterType.packets_and_bytes) dispatch_events;
    counter(NUM_EVENTS, CounterType.packets_and_bytes) dispatch_events_spill;
    counter(NUM_EVENTS, CounterType.packets_and_bytes) dispatch_events_fallback;
    counter(NUM_EVENTS, CounterType.packets_and_bytes) dispatch_events_cause;

    RegionSelect()   region_select;
    ExecClass()      exec_class;
    NextHop()        next_hop;
    RegionCapacity() capacity;
    ServerDispatch() dispatch;
    LatencyProbe()   latency_probe;
    ServerEndpoint() server_endpoint;
    ReplySource()    reply_source;
    Forwarding()     forwarding;

    /* The request turned around to its client (docs/PIPELINE.md step 5). */
    @hidden action rewrite_nack() {
        mac_addr_t mac = hdr.ethernet.dst_addr;
        hdr.ethernet.dst_addr = hdr.ethernet.src_addr;
        hdr.ethernet.src_addr = mac;
        ipv4_addr_t addr = hdr.ipv4.dst_addr;
        hdr.ipv4.dst_addr = hdr.ipv4.src_addr;
        hdr.ipv4.src_addr = addr;
        bit<16> port = hdr.udp.dst_port;
        hdr.udp.dst_port = hdr.udp.src_port;
        hdr.udp.src_port = port;
        hdr.udp.checksum = 0;
        hdr.p4ctl.msg_type = MSG_NACK;
        meta.d.ipv4_rewritten = true;
    }

    @hidden action outcome(bit<4> e) {
        meta.d.ev_outcome_on = 1;
        meta.d.ev_outcome = e;
    }

    apply {
        /* A packet that no step sends anywhere is dropped. */
        mark_to_drop(std);

        /* BMv2 resets standard metadata on recirculation: the carry, the
         * client's port and the time travel in @field_list metadata. */
        bit<48> now = std.ingress_global_timestamp;
        p4ctl_carry_h carry;
        carry.setValid();
        if (std.instance_type == PKT_INSTANCE_TYPE_RECIRC) {
            now = meta.recirc_now;
            carry.level = meta.c_level;
            carry.forced = meta.c_forced;
            carry.region_held = meta.c_region_held;
            carry.spill = meta.c_spill;
            carry.exhausted = meta.c_exhausted;
            carry.nack_release = meta.c_nack_release;
            carry.nearest = meta.c_nearest;
            carry.cand = meta.c_cand;
        } else {
            meta.client_port = std.ingress_port;
            carry.level = 0;
            carry.forced = 0;
            carry.region_held = 0;
            carry.spill = 0;
            carry.exhausted = 0;
            carry.nack_release = 0;
            carry.nearest = 0;
            carry.cand = 0;
        }
        carry.selected = 0;   /* TNA's selection pass only */
        carry.fallback = 0;
        carry.pad = 0;
        carry.client_port = meta.client_port;

        bool apply_fwd = false;  /* l2/l3 forwarding is applied once, at the end */
        bool l2 = false;

        if (std.parser_error != error.NoError) {
            /* step 1 */
            outcome(EVENT_MALFORMED);
        } else if (!hdr.ipv4.isValid()) {
            /* step 2 */
            apply_fwd = true;
            l2 = true;
        } else if (!hdr.p4ctl.isValid()) {
            /* step 2: plain IPv4, not modified */
            apply_fwd = true;
        } else if (hdr.udp.length < P4CTL_MIN_UDP_LENGTH
                   || hdr.p4ctl.version != P4CTL_VERSION
                   || hdr.p4ctl.msg_type < MSG_REQUEST
                   || hdr.p4ctl.msg_type > MSG_NACK) {
            /* step 3 */
            outcome(EVENT_MALFORMED);
        } else if (hdr.p4ctl.msg_type == MSG_NACK) {
            /* step 3 */
            apply_fwd = true;
        } else {
            bool is_request = hdr.p4ctl.msg_type == MSG_REQUEST;
            bool nack_pass = is_request && carry.nack_release == 1;
            bool valid_reply = false;
            bool local = false;

            /* step 4 */
            exec_class.apply(hdr, meta.d);

            if (!is_request) {
                /* step 11: a reply names its region and server */
                meta.d.region = hdr.p4ctl.region_id;
                meta.d.server = hdr.p4ctl.server_id;
                if (hdr.p4ctl.server_id == NO_SERVER) {
                    apply_fwd = true;  /* a remote region's reply */
                    meta.d.probe_reply = true;
                } else {
                    /* only the server's own replies release */
                    reply_source.apply(meta.d.server, meta.d);
                    if (!meta.d.reply_source_found || hdr.ipv4.src_addr != meta.d.reply_addr) {
                        outcome(EVENT_REPLY_REJECTED);
                    } else {
                        valid_reply = true;
                    }
                }
            } else if (nack_pass || carry.region_held == 1) {
                /* steps 5, 10: later passes keep the region */
                meta.d.region = hdr.p4ctl.region_id;
            } else {
                /* step 6 */
                region_select.apply(hdr, meta.d, carry);
            }

            /* step 7 */
            next_hop.apply(meta.d.region, meta.d);

            if (is_request && !nack_pass) {
                if (meta.d.next_hop == NEXT_HOP_REMOTE) {
                    /* step 8: remote region */
                    hdr.ethernet.dst_addr = meta.d.nh_dmac;
                    hdr.ipv4.dst_addr = meta.d.nh_addr;
                    std.egress_spec = meta.d.nh_port;
                    hdr.p4ctl.server_id = NO_SERVER;
                    hdr.udp.checksum = 0;
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
            if (nack_pass || valid_reply || (local && carry.region_held == 0)) {
                capacity.apply(meta.d, carry, nack_pass || valid_reply, capacity_refused);
            }

            if (nack_pass) {
                /* step 5 */
                rewrite_nack();
                std.egress_spec = meta.client_port;
                outcome(EVENT_NACK);
            } else if (capacity_refused) {
                /* spill: retry without the region that refused */
                region_set_t rest = meta.d.cand & ~((bit<32>)1 << meta.d.region);
                carry.level = 0;
                carry.forced = 0;
                carry.nack_release = 0;
                carry.region_held = 0;
                if (rest == 0) {
                    carry.spill = 0;
                    carry.exhausted = 1;
                } else {
                    carry.spill = 1;
                    carry.exhausted = 0;
                    carry.cand = rest;
                    carry.nearest = meta.d.nearest;
                }
                meta.d.recirculate = true;
                outcome(EVENT_REGION_FULL);
            } else if (local || valid_reply) {
                if (local) {
                    carry.region_held = 1;
                    carry.spill = 0;
                    carry.exhausted = 0;
                }
                /* step 10 (requests), step 11 (replies) */
                dispatch.apply(hdr, meta.d, carry, now, valid_reply);
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
                        hdr.ethernet.dst_addr = meta.d.ep_dmac;
                        hdr.ipv4.dst_addr = meta.d.ep_addr;
                        std.egress_spec = meta.d.ep_port;
                        hdr.udp.checksum = 0;
                        meta.d.ipv4_rewritten = true;
                    }
                }
            }
        }

        /* latency probes: the request that leaves, the reply that passes */
        if (meta.d.probe_request || meta.d.probe_reply) {
            latency_probe.apply(hdr.p4ctl, now, meta.d.probe_request);
        }

        if (apply_fwd) {
            forwarding.apply(hdr, meta.d, l2);
            if (meta.d.forward) {
                std.egress_spec = meta.d.out_port;
            }
        }

        if (meta.d.recirculate) {
            /* to egress, which recirculates: the carry rides along */
            std.egress_spec = meta.client_port;
            meta.c_level = carry.level;
            meta.c_forced = carry.forced;
            meta.c_region_held = carry.region_held;
            meta.c_spill = carry.spill;
            meta.c_exhausted = carry.exhausted;
            meta.c_nack_release = carry.nack_release;
            meta.c_nearest = carry.nearest;
            meta.c_cand = carry.cand;
        }

        /* one count per counter per pass */
        if (meta.d.ev_outcome_on == 1) {
            dispatch_events.count((bit<32>)meta.d.ev_outcome);
        }
        if (meta.d.ev_spill_on == 1) {
            dispatch_events_spill.count(EVENT_SPILLED);
        }
        if (meta.d.ev_fallback_on == 1) {
            dispatch_events_fallback.count(EVENT_FALLBACK);
        }
        if (meta.d.ev_cause_on == 1) {
            dispatch_events_cause.count((bit<32>)meta.d.ev_cause);
        }
        if (meta.d.count_routed == 1) {
            region_routed.count((bit<32>)(meta.d.region & REGION_INDEX_MASK));
        }
        if (meta.d.count_fallback == 1) {
            region_fallback.count((bit<32>)(meta.d.nearest & REGION_INDEX_MASK));
        }
        if (meta.d.count_bound == 1) {
            server_bound.count((bit<32>)(meta.d.server & SERVER_INDEX_MASK));
        }
    }
}

#endif /* P4CTL_V1MODEL_INGRESS_P4 */
