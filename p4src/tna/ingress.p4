/*
 * p4ctl — TNA ingress: validation, the order of the controls, rewrites and
 * the per-pass counters. The same steps as p4src/v1model/ingress.p4
 * (docs/PIPELINE.md "Ingress, step by step"), with Tofino's forwarding
 * (ucast_egress_port, drop_ctl) and recirculation through RECIRC_PORT.
 *
 * To fit Tofino 1's 12 stages a request's pass of docs/PIPELINE.md is two
 * passes here (README.md "Stages"): the selection pass (step 6: region
 * selection) writes the region into hdr.region_id and recirculates; the
 * dispatch pass (steps 7-10) and every later pass of the request look up
 * next hop and pool by hdr.region_id in stage 0 and start the chain at
 * stage 3 (10 stages in all). The two kinds of pass are branches of one
 * if, so their stages
 * overlap.
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
    CandidateHash()  candidate_hash;
    DispatchStage1() dispatch_stage1;
    DispatchStage2() dispatch_stage2;
    DispatchStage3() dispatch_stage3;
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

    /* the carried candidates but this region (a spill's candidates) */
    @hidden action rest_of_feasible() { meta.rest = hdr.carry.cand & ~meta.region_bit; }
    @hidden table rest_t {
        actions = { rest_of_feasible; }
        const default_action = rest_of_feasible();
        size = 1;
    }

    /* the server a reply names, reply_source's key (a bound request's is
     * set by ServerDispatch) */
    @hidden action take_reply_server() { meta.d.server = hdr.h.p4ctl.server_id; }
    @hidden table reply_server_t {
        actions = { take_reply_server; }
        const default_action = take_reply_server();
        size = 1;
    }

    /* what the selection pass hands its dispatch pass (the region itself
     * rides in hdr.region_id); the flags are action constants because they
     * share a container with client_port (an action writes a container
     * from one source besides constants) */
    @hidden action carry_selection(bit<1> fallback) {
        hdr.carry.selected = 1;
        hdr.carry.fallback = fallback;
        hdr.carry.cand = meta.d.cand;
        hdr.carry.nearest = meta.d.nearest;
    }

    @hidden action outcome(bit<4> e) {
        meta.d.ev_outcome_on = 1;
        meta.d.ev_outcome = e;
    }

    /* the reply branch's leaves, one action each */
    @hidden action reply_remote() {
        meta.d.probe_reply = true;
        meta.reply_fwd = 1;
    }
    @hidden action reply_valid() {
        meta.valid_reply = 1;
        meta.d.ev_outcome_on = 1;
        meta.d.ev_outcome = EVENT_REPLY_RELEASED;
        meta.d.probe_reply = true;
        meta.reply_fwd = 1;
    }
    /* step 8: toward a remote region */
    @hidden action to_remote() {
        hdr.h.ethernet.dst_addr = meta.d.nh_dmac;
        hdr.h.ipv4.dst_addr = meta.d.nh_addr;
        ig_tm_md.ucast_egress_port = meta.d.nh_port;
        ig_dprsr_md.drop_ctl = 0;
        hdr.h.p4ctl.server_id = NO_SERVER;
        hdr.h.udp.checksum = 0;
        meta.d.ipv4_rewritten = true;
        meta.d.count_routed = 1;
        meta.d.probe_request = true;
    }

    @hidden action send(port_t port) {
        ig_tm_md.ucast_egress_port = port;
        ig_dprsr_md.drop_ctl = 0;
    }

    /* the latency_probe cell of the header's site, request and region
     * (pipeline.ProbeIndex), computed in stage 0 */
    @hidden action probe_cell_of() {
        meta.probe_cell = hdr.h.p4ctl.site_id[5:0] ++ hdr.h.p4ctl.request_id[1:0] ++ hdr.h.p4ctl.region_id[4:0];
    }
    @hidden table probe_cell_t {
        actions = { probe_cell_of; }
        const default_action = probe_cell_of();
        size = 1;
    }

    apply {
        ig_dprsr_md.drop_ctl = 1;              /* dropped unless a step forwards */
        /* the pass clock: a slice of global_tstamp moved by the hash unit */
        pass_clock_t.apply();
        /* A first pass starts with an empty carry, a recirculated
         * request brings its own (parser.p4). */

        /* What every packet looks up and computes in stage 0 (l3_forward:
         * 0-1), whether or not a later step uses it (these only set
         * metadata), keyed on what the parser read: the exec class (step
         * 4), the header region's next hop and pool (step 7 of a dispatch
         * pass) and bit, the reply's server and its reply_source (step
         * 11, by the header's server_id), the probe cell, the candidate
         * hash, l2/l3 forwarding (steps 2, 3, 11). */
        exec_class.apply(hdr.h, meta.d);
        next_hop.apply(hdr.h.p4ctl.region_id, meta.d);
        region_bit.apply(hdr.h.p4ctl.region_id, meta.region_bit);
        reply_server_t.apply();
        reply_source.apply(hdr.h.p4ctl.server_id, meta.d);
        probe_cell_t.apply();
        candidate_hash.apply(hdr.h, meta);
        forwarding.apply(hdr.h, meta.d, !hdr.h.ipv4.isValid());

        if (ig_prsr_md.parser_err != PARSER_ERROR_OK) {
            /* step 1 */
            outcome(EVENT_MALFORMED);
        } else if (!hdr.h.ipv4.isValid() || !hdr.h.p4ctl.isValid()) {
            /* step 2: l2 (not IPv4) or l3 (IPv4 without p4ctl header),
             * not modified */
            if (meta.d.forward) {
                send(meta.d.out_port);
            }
        } else if (hdr.h.udp.length[15:5] == 0 && hdr.h.udp.length[4:3] != 3) {
            /* step 3: udp.length < 24 = 0b11000, as bit tests (a gateway
             * compares with constants; this needs no computed field) */
            outcome(EVENT_MALFORMED);
        } else if (hdr.h.p4ctl.version != P4CTL_VERSION
                   || hdr.h.p4ctl.msg_type < MSG_REQUEST
                   || hdr.h.p4ctl.msg_type > MSG_NACK) {
            /* step 3 */
            outcome(EVENT_MALFORMED);
        } else if (hdr.h.p4ctl.msg_type == MSG_NACK) {
            /* step 3 */
            if (meta.d.forward) {
                send(meta.d.out_port);
            }
        } else if (hdr.h.p4ctl.msg_type == MSG_REQUEST
                   && hdr.carry.nack_release == 0
                   && hdr.carry.region_held == 0
                   && hdr.carry.selected == 0) {
            /* The selection pass (a request's first pass, a spill pass, or
             * the pass after every region refused): step 6, then the
             * region is in hdr.region_id, the candidates and whether the
             * region is a fallback in the carry, and the request
             * recirculates to its dispatch pass (docs/PIPELINE.md "Passes
             * per request"). */
            region_select.apply(hdr.h, meta.d, hdr.carry);
            if (meta.d.count_fallback == 1) {
                carry_selection(1);
            } else {
                carry_selection(0);
            }
            send(RECIRC_PORT);
            /* the selection pass's counts (only it counts these) */
            if (meta.d.ev_spill_on == 1) {
                dispatch_events_spill.count(EVENT_SPILLED);
            }
            if (meta.d.ev_fallback_on == 1) {
                dispatch_events_fallback.count(EVENT_FALLBACK);
            }
            if (meta.d.count_fallback == 1) {
                region_fallback.count(meta.d.nearest[4:0]);
            }
        } else {
            /* A dispatch pass (a request whose region, hdr.region_id, is
             * selected or held; its NACK pass) or a reply: steps 5 and
             * 7-11, from the stage-0 lookups. */
            bool is_request = hdr.h.p4ctl.msg_type == MSG_REQUEST;
            bool nack_pass = is_request && hdr.carry.nack_release == 1;

            /* Stage 1: the pass's kind, each leaf one action (a stage
             * holds 16 logical tables). What the chain needs is applied
             * stage by stage beside these steps (DispatchStage1..3: a
             * control's tables run in sequence order, dispatch.p4). */
            dispatch_stage1.apply(hdr.h, meta, hdr.carry);
            rest_t.apply();
            if (!is_request) {
                /* step 11: a reply names its region and server (its
                 * forwarding, by l3_forward, which spans stages 0-1, is
                 * done at the end of the pass: reply_fwd) */
                if (hdr.h.p4ctl.server_id == NO_SERVER) {
                    /* a remote region's reply */
                    reply_remote();
                } else if (!meta.d.reply_source_found || hdr.h.ipv4.src_addr != meta.d.reply_addr) {
                    /* only the server's own replies release */
                    outcome(EVENT_REPLY_REJECTED);
                } else {
                    /* a valid reply: it releases (steps 9, 11 below) */
                    reply_valid();
                }
            } else if (!nack_pass) {
                /* step 7: the next hop of hdr.region_id */
                if (meta.d.next_hop == NEXT_HOP_REMOTE) {
                    /* step 8: remote region */
                    to_remote();
                } else if (meta.d.next_hop != NEXT_HOP_LOCAL || !meta.d.pool_found) {
                    /* steps 8, 10: no next hop, no pool */
                    outcome(EVENT_UNREACHABLE);
                } else {
                    meta.local = 1;
                }
            }

            /* Stage 2. Step 9: the region's capacity — acquired by a
             * request's first local pass, returned by the NACK pass and by
             * valid replies; region_full != 0: the acquire was refused
             * (beside the cap, threshold and slots, so that the chain's
             * slot 0 follows in stage 3) */
            dispatch_stage2.apply(meta, hdr.carry);
            if (nack_pass || meta.valid_reply == 1 || (meta.local == 1 && hdr.carry.region_held == 0)) {
                capacity.apply(hdr.h.p4ctl.region_id, meta.d, hdr.carry, nack_pass || meta.valid_reply == 1, meta.region_full);
            }

            /* Stage 3 on: steps 5, 9 (a refused acquire), 10 (the chain
             * from stage 3), 11 */
            dispatch_stage3.apply(meta);

            if (nack_pass) {
                /* step 5 */
                rewrite_nack();
                send(hdr.carry.client_port);
                outcome(EVENT_NACK);
            } else if (meta.region_full != 0) {
                /* spill: select again without the region that refused
                 * (rest was computed in a stage of its own: a gateway tests
                 * a field, not an expression of two); the carry keeps the
                 * site's nearest region */
                region_set_t rest = meta.rest;
                hdr.carry.level = 0;
                hdr.carry.forced = 0;
                hdr.carry.nack_release = 0;
                hdr.carry.region_held = 0;
                hdr.carry.selected = 0;
                hdr.carry.fallback = 0;
                if (rest == 0) {
                    hdr.carry.spill = 0;
                    hdr.carry.exhausted = 1;
                } else {
                    hdr.carry.spill = 1;
                    hdr.carry.exhausted = 0;
                    hdr.carry.cand = rest;
                }
                send(RECIRC_PORT);
                outcome(EVENT_REGION_FULL);
            } else if (meta.local == 1 || meta.valid_reply == 1) {
                if (meta.local == 1) {
                    hdr.carry.region_held = 1;
                    hdr.carry.spill = 0;
                    hdr.carry.exhausted = 0;
                    hdr.carry.selected = 0;
                    hdr.carry.fallback = 0;
                }
                /* step 10 (requests: toward the server or around again),
                 * step 11 (replies) */
                dispatch.apply(hdr.h, meta, hdr.carry, meta.valid_reply == 1, ig_dprsr_md, ig_tm_md);
            }
        }

        /* a reply's forwarding (l3_forward), decided in its branch */
        if (meta.reply_fwd == 1 && meta.d.forward) {
            send(meta.d.out_port);
        }

        /* latency probes: the request bound or forwarded, the reply */
        if (meta.d.probe_request || meta.d.probe_reply) {
            latency_probe.apply(hdr.h.p4ctl, meta, meta.probe_cell, meta.d.probe_request, ig_dprsr_md);
        }

        /* One count per counter per pass (the selection pass's three are
         * counted in its branch above). A counter counts the bytes of the
         * packet as it entered the pass: these three count only in
         * dispatch passes, which always came around with the carry in
         * front, so they leave its bytes out and count the request's
         * frame, as v1model does. */
        if (meta.d.ev_outcome_on == 1) {
            dispatch_events.count(meta.d.ev_outcome);
        }
        if (meta.d.ev_cause_on == 1) {
            dispatch_events_cause.count(meta.d.ev_cause, CARRY_BYTES);
        }
        if (meta.d.count_routed == 1) {
            region_routed.count(hdr.h.p4ctl.region_id[4:0], CARRY_BYTES);
        }
        if (meta.d.count_bound == 1) {
            server_bound.count(meta.d.server[9:0], CARRY_BYTES);
        }
    }
}

#endif /* P4CTL_TNA_INGRESS_P4 */
