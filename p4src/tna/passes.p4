/*
 * p4ctl — the two kinds of TNA pass (README.md "Stages"), applied by
 * ingress.p4 after the stage-0 lookups: the selection pass (step 6) and the
 * dispatch pass (steps 5 and 7-11), with the steps each is made of.
 */
#ifndef P4CTL_TNA_PASSES_P4
#define P4CTL_TNA_PASSES_P4

/* A request's first pass, a spill pass, or the pass after every region
 * refused: step 6, the region into hdr.region_id and the candidates into the
 * carry, then around again to its dispatch pass. */
control SelectionPass(inout tna_headers_t hdr,
                      inout tna_ingress_metadata_t meta,
                      inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                      inout ingress_intrinsic_metadata_for_tm_t ig_tm_md)
                     (Counter<bit<32>, bit<5>> region_fallback,
                      Counter<bit<32>, bit<4>> dispatch_events_spill,
                      Counter<bit<32>, bit<4>> dispatch_events_fallback) {
    RegionSelect() region_select;

    /* flags as action constants: they share client_port's container (README "action-sources") */
    @hidden action carry_selection(bit<1> fallback) {
        hdr.carry.selected = 1;
        hdr.carry.fallback = fallback;
        hdr.carry.cand = meta.pass.cand;
        hdr.carry.nearest = meta.pass.nearest;
    }
    @hidden action send(port_t port) {
        ig_tm_md.ucast_egress_port = port;
        ig_dprsr_md.drop_ctl = 0;
    }

    apply {
        region_select.apply(hdr.h, meta.pass, hdr.carry);
        if (meta.pass.count_fallback == 1) {
            carry_selection(1);
        } else {
            carry_selection(0);
        }
        send(RECIRC_PORT);
        /* only this pass counts these (README "statistics") */
        if (meta.pass.ev_spill_on == 1) {
            dispatch_events_spill.count(EVENT_SPILLED);
        }
        if (meta.pass.ev_fallback_on == 1) {
            dispatch_events_fallback.count(EVENT_FALLBACK);
        }
        if (meta.pass.count_fallback == 1) {
            region_fallback.count(meta.pass.nearest[4:0]);
        }
    }
}

/* Step 11 (stage 1): a remote region's reply is forwarded; a local server's
 * reply releases only if it comes from the server's own address. */
control ReplyCheck(in headers_t hdr, inout tna_ingress_metadata_t meta) {
    /* one action per leaf (README "logical-tables") */
    @hidden action reply_remote() {
        meta.pass.probe_reply = true;
        meta.forward_reply = 1;
    }
    @hidden action reply_valid() {
        meta.valid_reply = 1;
        meta.pass.ev_outcome_on = 1;
        meta.pass.ev_outcome = EVENT_REPLY_RELEASED;
        meta.pass.probe_reply = true;
        meta.forward_reply = 1;
    }
    @hidden action outcome(bit<4> e) {
        meta.pass.ev_outcome_on = 1;
        meta.pass.ev_outcome = e;
    }

    apply {
        if (hdr.p4ctl.server_id == NO_SERVER) {
            reply_remote();
        } else if (!meta.pass.reply_source_found || hdr.ipv4.src_addr != meta.pass.reply_addr) {
            outcome(EVENT_REPLY_REJECTED);
        } else {
            reply_valid();
        }
    }
}

/* Steps 7, 8 (stage 1): toward a remote region's gateway, unreachable (no
 * next hop, no pool), or local: dispatched to a server of the pool. */
control RouteToRegion(inout headers_t hdr,
                      inout tna_ingress_metadata_t meta,
                      inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                      inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    @hidden action to_remote() {
        hdr.ethernet.dst_addr = meta.pass.nh_dmac;
        hdr.ipv4.dst_addr = meta.pass.nh_addr;
        ig_tm_md.ucast_egress_port = meta.pass.nh_port;
        ig_dprsr_md.drop_ctl = 0;
        hdr.p4ctl.server_id = NO_SERVER;
        hdr.udp.checksum = 0;
        meta.pass.ipv4_rewritten = true;
        meta.pass.count_routed = 1;
        meta.pass.probe_request = true;
    }
    @hidden action outcome(bit<4> e) {
        meta.pass.ev_outcome_on = 1;
        meta.pass.ev_outcome = e;
    }

    apply {
        if (meta.pass.next_hop == NEXT_HOP_REMOTE) {
            to_remote();
        } else if (meta.pass.next_hop != NEXT_HOP_LOCAL || !meta.pass.pool_found) {
            outcome(EVENT_UNREACHABLE);
        } else {
            meta.local = 1;
        }
    }
}

/* Step 5: the NACK pass turns the request around to its client. */
control NackToClient(inout tna_headers_t hdr,
                     inout tna_ingress_metadata_t meta,
                     inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                     inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
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
        meta.pass.ipv4_rewritten = true;
    }
    @hidden action send(port_t port) {
        ig_tm_md.ucast_egress_port = port;
        ig_dprsr_md.drop_ctl = 0;
    }
    @hidden action outcome(bit<4> e) {
        meta.pass.ev_outcome_on = 1;
        meta.pass.ev_outcome = e;
    }

    apply {
        rewrite_nack();
        send(hdr.carry.client_port);
        outcome(EVENT_NACK);
    }
}

/* Step 9 refused: select again without the region that refused (its
 * untried_regions, computed in stage 1: README "gateway"); the carry keeps
 * the site's nearest region. */
control SpillCarry(inout tna_headers_t hdr,
                   inout tna_ingress_metadata_t meta,
                   inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                   inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    @hidden action send(port_t port) {
        ig_tm_md.ucast_egress_port = port;
        ig_dprsr_md.drop_ctl = 0;
    }
    @hidden action outcome(bit<4> e) {
        meta.pass.ev_outcome_on = 1;
        meta.pass.ev_outcome = e;
    }

    apply {
        region_set_t untried = meta.untried_regions;
        hdr.carry.level = 0;
        hdr.carry.forced = 0;
        hdr.carry.nack_release = 0;
        hdr.carry.region_held = 0;
        hdr.carry.selected = 0;
        hdr.carry.fallback = 0;
        if (untried == 0) {
            hdr.carry.spill = 0;
            hdr.carry.exhausted = 1;
        } else {
            hdr.carry.spill = 1;
            hdr.carry.exhausted = 0;
            hdr.carry.cand = untried;
        }
        send(RECIRC_PORT);
        outcome(EVENT_REGION_FULL);
    }
}

/* A request whose region (hdr.region_id) is selected or held, its NACK pass,
 * or a reply: steps 5 and 7-11 from the stage-0 lookups, with what the
 * chain needs applied stage by stage beside them (README "sequence"). */
control DispatchPass(inout tna_headers_t hdr,
                     inout tna_ingress_metadata_t meta,
                     inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                     inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    RegionCapacity() capacity;
    DispatchStage1() dispatch_stage1;
    DispatchStage2() dispatch_stage2;
    DispatchStage3() dispatch_stage3;
    ServerDispatch() dispatch;
    ReplyCheck()     reply_check;
    RouteToRegion()  route_to_region;
    NackToClient()   nack_to_client;
    SpillCarry()     spill_carry;

    /* the carried candidates but this region (a spill's) */
    @hidden action untried_regions_of() { meta.untried_regions = hdr.carry.cand & ~meta.region_bit; }
    @hidden table untried_regions_t {
        actions = { untried_regions_of; }
        const default_action = untried_regions_of();
        size = 1;
    }

    apply {
        bool is_request = hdr.h.p4ctl.msg_type == MSG_REQUEST;
        bool nack_pass = is_request && hdr.carry.nack_release == 1;
        /* stage 1: the pass's kind, one action a leaf */
        dispatch_stage1.apply(hdr.h, meta, hdr.carry);
        untried_regions_t.apply();
        if (!is_request) {
            reply_check.apply(hdr.h, meta);
        } else if (!nack_pass) {
            route_to_region.apply(hdr.h, meta, ig_dprsr_md, ig_tm_md);
        }
        /* stage 2: step 9, the region's capacity, beside the cap and threshold */
        dispatch_stage2.apply(meta, hdr.carry);
        if (nack_pass || meta.valid_reply == 1 || (meta.local == 1 && hdr.carry.region_held == 0)) {
            capacity.apply(hdr.h.p4ctl.region_id, meta.pass, hdr.carry, nack_pass || meta.valid_reply == 1, meta.region_full);
        }
        /* stage 3 on: steps 5, 9 refused, 10, 11 */
        dispatch_stage3.apply(meta);
        if (nack_pass) {
            nack_to_client.apply(hdr, meta, ig_dprsr_md, ig_tm_md);
        } else if (meta.region_full != 0) {
            spill_carry.apply(hdr, meta, ig_dprsr_md, ig_tm_md);
        } else if (meta.local == 1 || meta.valid_reply == 1) {
            if (meta.local == 1) {
                hdr.carry.region_held = 1;
                hdr.carry.spill = 0;
                hdr.carry.exhausted = 0;
                hdr.carry.selected = 0;
                hdr.carry.fallback = 0;
            }
            dispatch.apply(hdr.h, meta, hdr.carry, meta.valid_reply == 1, ig_dprsr_md, ig_tm_md);
        }
    }
}

/* The dispatch pass's counts, once per pass at the end of ingress; bytes
 * without the carry in front (README.md "Stages"). */
control PassCounters(in p4ctl_h p4h, in p4ctl_metadata_t pass)
                    (Counter<bit<32>, bit<5>> region_routed,
                     Counter<bit<32>, bit<10>> server_bound,
                     Counter<bit<32>, bit<4>> dispatch_events,
                     Counter<bit<32>, bit<4>> dispatch_events_cause) {
    apply {
        if (pass.ev_outcome_on == 1) {
            dispatch_events.count(pass.ev_outcome);
        }
        if (pass.ev_cause_on == 1) {
            dispatch_events_cause.count(pass.ev_cause, CARRY_BYTES);
        }
        if (pass.count_routed == 1) {
            region_routed.count(p4h.region_id[4:0], CARRY_BYTES);
        }
        if (pass.count_bound == 1) {
            server_bound.count(pass.server[9:0], CARRY_BYTES);
        }
    }
}

#endif /* P4CTL_TNA_PASSES_P4 */
