/*
 * p4ctl — TNA ingress: one pass of docs/PIPELINE.md "Ingress, step by step"
 * as the stage-0 lookups, then the selection pass or the dispatch pass
 * (passes.p4; README.md "Stages"), the latency probe and the counters.
 * Every table, action, register and counter keeps its P4Info name
 * "P4ctlIngress.<name>" (pkg/pipeline); instances are declared in P4Info
 * order (p4c lists entities in declaration order).
 */
#ifndef P4CTL_TNA_INGRESS_P4
#define P4CTL_TNA_INGRESS_P4

control P4ctlIngress(inout tna_headers_t hdr,
                     inout tna_ingress_metadata_t meta,
                     in ingress_intrinsic_metadata_t ig_intr_md,
                     in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                     inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                     inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    /* region_routed[r]: requests bound into (local) or forwarded to (remote) region r. */
    Counter<bit<32>, bit<5>>(MAX_REGIONS, CounterType_t.PACKETS_AND_BYTES) region_routed;
    /* region_fallback[r]: requests sent to nearest region r because carbon_rank chose none. */
    Counter<bit<32>, bit<5>>(MAX_REGIONS, CounterType_t.PACKETS_AND_BYTES) region_fallback;
    /* server_bound[s]: requests bound to server s. */
    Counter<bit<32>, bit<10>>(MAX_SERVERS, CounterType_t.PACKETS_AND_BYTES) server_bound;
    /* dispatch_events*: one counter per lane (pipeline.Lane), indexed by pipeline.Event. */
    Counter<bit<32>, bit<4>>(NUM_EVENTS, CounterType_t.PACKETS_AND_BYTES) dispatch_events;
    Counter<bit<32>, bit<4>>(NUM_EVENTS, CounterType_t.PACKETS_AND_BYTES) dispatch_events_spill;
    Counter<bit<32>, bit<4>>(NUM_EVENTS, CounterType_t.PACKETS_AND_BYTES) dispatch_events_fallback;
    Counter<bit<32>, bit<4>>(NUM_EVENTS, CounterType_t.PACKETS_AND_BYTES) dispatch_events_cause;

    SelectionPass(region_fallback, dispatch_events_spill, dispatch_events_fallback) selection_pass;
    ExecClass()      exec_class;
    NextHop()        next_hop;
    RegionBit()      region_bit;
    DispatchPass()   dispatch_pass;
    CandidateHash()  candidate_hash;
    LatencyProbe()   latency_probe;
    ReplySource()    reply_source;
    Forwarding()     forwarding;
    PassCounters(region_routed, server_bound, dispatch_events, dispatch_events_cause) pass_counters;

    /* the pass clock global_tstamp[41:10] moved by the hash unit (README "alignment") */
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) pass_clock;
    @hidden action take_pass_clock() { meta.now = pass_clock.get({ ig_prsr_md.global_tstamp[41:10] }); }
    @hidden table pass_clock_t {
        actions = { take_pass_clock; }
        const default_action = take_pass_clock();
        size = 1;
    }
    /* reply_source's key: the server a reply names (a bound request's is ServerDispatch's) */
    @hidden action take_reply_server() { meta.pass.server = hdr.h.p4ctl.server_id; }
    @hidden table reply_server_t {
        actions = { take_reply_server; }
        const default_action = take_reply_server();
        size = 1;
    }
    /* the header's latency_probe cell (pipeline.ProbeIndex) */
    @hidden action probe_cell_of() {
        meta.probe_cell = hdr.h.p4ctl.site_id[5:0] ++ hdr.h.p4ctl.request_id[1:0] ++ hdr.h.p4ctl.region_id[4:0];
    }
    @hidden table probe_cell_t {
        actions = { probe_cell_of; }
        const default_action = probe_cell_of();
        size = 1;
    }
    @hidden action outcome(bit<4> e) {
        meta.pass.ev_outcome_on = 1;
        meta.pass.ev_outcome = e;
    }
    @hidden action send(port_t port) {
        ig_tm_md.ucast_egress_port = port;
        ig_dprsr_md.drop_ctl = 0;
    }

    apply {
        ig_dprsr_md.drop_ctl = 1;  /* dropped unless a step forwards */
        pass_clock_t.apply();
        /* stage 0: keyed on what the parser read, for every packet (README "sequence") */
        exec_class.apply(hdr.h, meta.pass);
        next_hop.apply(hdr.h.p4ctl.region_id, meta.pass);
        region_bit.apply(hdr.h.p4ctl.region_id, meta.region_bit);
        reply_server_t.apply();
        reply_source.apply(hdr.h.p4ctl.server_id, meta.pass);
        probe_cell_t.apply();
        candidate_hash.apply(hdr.h, meta);
        forwarding.apply(hdr.h, meta.pass, !hdr.h.ipv4.isValid());

        if (ig_prsr_md.parser_err != PARSER_ERROR_OK) {
            outcome(EVENT_MALFORMED);  /* step 1 */
        } else if (!hdr.h.ipv4.isValid() || !hdr.h.p4ctl.isValid()) {
            if (meta.pass.forward) {  /* step 2: l2 or plain l3, not modified */
                send(meta.pass.out_port);
            }
        } else if (hdr.h.udp.length[15:5] == 0 && hdr.h.udp.length[4:3] != 3) {
            outcome(EVENT_MALFORMED);  /* step 3: udp.length < 24 as bit tests (README "gateway") */
        } else if (hdr.h.p4ctl.version != P4CTL_VERSION
                   || hdr.h.p4ctl.msg_type < MSG_REQUEST
                   || hdr.h.p4ctl.msg_type > MSG_NACK) {
            outcome(EVENT_MALFORMED);  /* step 3 */
        } else if (hdr.h.p4ctl.msg_type == MSG_NACK) {
            if (meta.pass.forward) {  /* step 3 */
                send(meta.pass.out_port);
            }
        } else if (hdr.h.p4ctl.msg_type == MSG_REQUEST
                   && hdr.carry.nack_release == 0
                   && hdr.carry.region_held == 0
                   && hdr.carry.selected == 0) {
            selection_pass.apply(hdr, meta, ig_dprsr_md, ig_tm_md);
        } else {
            dispatch_pass.apply(hdr, meta, ig_dprsr_md, ig_tm_md);
        }
        if (meta.forward_reply == 1 && meta.pass.forward) {
            send(meta.pass.out_port);  /* a reply's l3_forward, at the end (README "logical-tables") */
        }
        if (meta.pass.probe_request || meta.pass.probe_reply) {
            latency_probe.apply(hdr.h.p4ctl, meta, meta.probe_cell, meta.pass.probe_request, ig_dprsr_md);
        }
        pass_counters.apply(hdr.h.p4ctl, meta.pass);
    }
}

#endif /* P4CTL_TNA_INGRESS_P4 */
