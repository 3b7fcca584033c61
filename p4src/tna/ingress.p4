/*
 * p4ctl — TNA ingress. UNCOMPILED (README.md).
 *
 * Same tables, actions, keys and parameters as ../v1model/ingress.p4 and the
 * same decisions as docs/PIPELINE.md, rearranged for Tofino's one access per
 * register array (and per counter) per pass:
 *
 *   dispatch pass  (fresh or recirculated request): region selection, reads
 *                  the four candidate slots, decides hold / nack / bind; a
 *                  bind is requested by resubmitting with p4ctl_bind_h;
 *   bind pass      (resubmitted): updates the chosen slot with one atomic
 *                  check-and-increment RegisterAction, then rewrites toward
 *                  the server; if the server filled up between the passes
 *                  the request is held instead;
 *   reply pass:    releases the server's slot.
 *
 * Who writes what: tables — the controller; registers and counters — the
 * data plane (see ../v1model/ingress.p4 and docs/PIPELINE.md).
 */
#ifndef P4CTL_TNA_INGRESS_P4
#define P4CTL_TNA_INGRESS_P4

/* A 4-way mux: dst = (a0, a1, a2, a3)[k]. */
/* Candidate j's outstanding, work and last-seen: (o, w, l) = slot k's. */
#define P4CTL_MUX3(o, w, l, k) \
    if ((k) == 0) { o = v0; w = x0; l = y0; } \
    else if ((k) == 1) { o = v1; w = x1; l = y1; } \
    else if ((k) == 2) { o = v2; w = x2; l = y2; } \
    else { o = v3; w = x3; l = y3; }

/* Per-slot server state: slot J holds the servers with id mod 4 == J at
 * index id >> 2, and the RegisterActions that read, bind and release them.
 * Exactly one RegisterAction of each array runs in any pass. */
#define P4CTL_SLOT(J) \
    Register<bit<16>, slot_index_t>(SLOT_SIZE, 0) server_outstanding_##J; \
    Register<bit<32>, slot_index_t>(SLOT_SIZE, 0) server_work_us_##J; \
    Register<bit<32>, slot_index_t>(SLOT_SIZE, 0) server_last_seen_##J; \
    RegisterAction<bit<16>, slot_index_t, bit<16>>(server_outstanding_##J) read_outstanding_##J = { \
        void apply(inout bit<16> value, out bit<16> rv) { rv = value; } }; \
    RegisterAction<bit<16>, slot_index_t, bit<1>>(server_outstanding_##J) bind_outstanding_##J = { \
        void apply(inout bit<16> value, out bit<1> ok) { \
            if (meta.rb_stale == 1) { value = 1; ok = 1; } \
            else if (value < meta.rb_bound) { value = value + 1; ok = 1; } \
            else { ok = 0; } } }; \
    RegisterAction<bit<16>, slot_index_t, bit<16>>(server_outstanding_##J) release_outstanding_##J = { \
        void apply(inout bit<16> value) { if (value != 0) { value = value - 1; } } }; \
    RegisterAction<bit<32>, slot_index_t, bit<32>>(server_work_us_##J) read_work_##J = { \
        void apply(inout bit<32> value, out bit<32> rv) { rv = value; } }; \
    RegisterAction<bit<32>, slot_index_t, bit<32>>(server_work_us_##J) bind_work_##J = { \
        void apply(inout bit<32> value) { \
            if (meta.rb_stale == 1) { value = meta.d.cost_us; } \
            else { value = value + meta.d.cost_us; } } }; \
    RegisterAction<bit<32>, slot_index_t, bit<32>>(server_work_us_##J) release_work_##J = { \
        void apply(inout bit<32> value) { \
            if (value > meta.d.cost_us) { value = value - meta.d.cost_us; } else { value = 0; } } }; \
    RegisterAction<bit<32>, slot_index_t, bit<32>>(server_last_seen_##J) read_last_##J = { \
        void apply(inout bit<32> value, out bit<32> rv) { rv = value; } }; \
    RegisterAction<bit<32>, slot_index_t, bit<32>>(server_last_seen_##J) touch_last_##J = { \
        void apply(inout bit<32> value) { value = meta.now; } };

control P4ctlIngress(inout tna_headers_t hdr,
                     inout tna_ingress_metadata_t meta,
                     in ingress_intrinsic_metadata_t ig_intr_md,
                     in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                     inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                     inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {

    /* ---------------- registers (data plane) ---------------- */
    P4CTL_SLOT(0)
    P4CTL_SLOT(1)
    P4CTL_SLOT(2)
    P4CTL_SLOT(3)

    /* region_outstanding: local binds not yet released, per region. */
    Register<bit<32>, region_id_t>(MAX_REGIONS, 0) region_outstanding;
    RegisterAction<bit<32>, region_id_t, bit<32>>(region_outstanding) region_acquire = {
        void apply(inout bit<32> value, out bit<32> rv) { value = value + 1; rv = value; } };
    RegisterAction<bit<32>, region_id_t, bit<32>>(region_outstanding) region_release = {
        void apply(inout bit<32> value, out bit<32> rv) {
            if (value != 0) { value = value - 1; }
            rv = value; } };

    /* region_full: bit r set while region r is at its capacity. */
    Register<bit<32>, bit<1>>(1, 0) region_full;
    RegisterAction<bit<32>, bit<1>, bit<32>>(region_full) region_full_read = {
        void apply(inout bit<32> value, out bit<32> rv) { rv = value; } };
    RegisterAction<bit<32>, bit<1>, bit<32>>(region_full) region_full_set = {
        void apply(inout bit<32> value) { value = value | meta.region_bit; } };
    RegisterAction<bit<32>, bit<1>, bit<32>>(region_full) region_full_clear = {
        void apply(inout bit<32> value) { value = value & ~meta.region_bit; } };

    /* ---------------- counters (data plane) ---------------- */
    Counter<bit<32>, region_id_t>(MAX_REGIONS, CounterType_t.PACKETS_AND_BYTES) region_routed;
    Counter<bit<32>, region_id_t>(MAX_REGIONS, CounterType_t.PACKETS_AND_BYTES) region_fallback;
    Counter<bit<32>, server_id_t>(MAX_SERVERS, CounterType_t.PACKETS_AND_BYTES) server_bound;
    /* v1model's dispatch_events[e] = the sum of these four at index e. */
    Counter<bit<32>, bit<4>>(NUM_EVENTS, CounterType_t.PACKETS_AND_BYTES) dispatch_events;          /* the pass's outcome */
    Counter<bit<32>, bit<4>>(NUM_EVENTS, CounterType_t.PACKETS_AND_BYTES) dispatch_events_spill;    /* spilled */
    Counter<bit<32>, bit<4>>(NUM_EVENTS, CounterType_t.PACKETS_AND_BYTES) dispatch_events_fallback; /* fallback */
    Counter<bit<32>, bit<4>>(NUM_EVENTS, CounterType_t.PACKETS_AND_BYTES) dispatch_events_cause;    /* long-deferred, stale-reset */

    Hash<bit<32>>(HashAlgorithm_t.CRC32) candidate_hash;   /* reflected CRC-32, as zlib */

    /* ---------------- actions: as ../v1model/ingress.p4 ---------------- */
    action set_client_site(site_id_t site) { meta.d.site = site; }
    action set_feasible(region_set_t feasible, region_id_t nearest) {
        meta.d.feasible = feasible;
        meta.d.nearest = nearest;
    }
    action set_active_epoch(epoch_t epoch) { meta.d.epoch = epoch; }
    action route_to_region(region_id_t region) {
        meta.d.ranked = true;
        meta.d.region = region;
    }
    action dispatch_local(bit<32> capacity) {
        meta.d.next_hop = NEXT_HOP_LOCAL;
        meta.d.capacity = capacity;
    }
    action forward_remote(port_t port, mac_addr_t dmac, ipv4_addr_t addr, bit<32> capacity) {
        meta.d.next_hop = NEXT_HOP_REMOTE;
        meta.d.nh_port = port;
        meta.d.nh_dmac = dmac;
        meta.d.nh_addr = addr;
        meta.d.capacity = capacity;
    }
    action set_pool(server_id_t base, server_id_t size_mask, bit<8> policy,
                    bit<16> bound, bit<8> max_holds, bit<8> on_full,
                    micros_t credit_ttl_us, bit<16> long_reserve,
                    bit<8> long_max_holds) {
        meta.d.pool_found = true;
        meta.d.pool_base = base;
        meta.d.pool_size_mask = size_mask;
        meta.d.pool_policy = policy;
        meta.d.pool_bound = bound;
        meta.d.pool_max_holds = max_holds;
        meta.d.pool_on_full = on_full;
        meta.d.pool_credit_ttl_us = credit_ttl_us;
        meta.d.pool_long_reserve = long_reserve;
        meta.d.pool_long_max_holds = long_max_holds;
    }
    action set_exec_cost(micros_t cost_us, bit<1> is_long) {
        meta.d.cost_us = cost_us;
        meta.d.is_long = is_long;
    }
    action set_server_endpoint(port_t port, mac_addr_t dmac, ipv4_addr_t addr) {
        meta.d.endpoint_found = true;
        meta.d.ep_port = port;
        meta.d.ep_dmac = dmac;
        meta.d.ep_addr = addr;
    }
    action forward(port_t port) { ig_tm_md.ucast_egress_port = port; ig_dprsr_md.drop_ctl = 0; }
    action drop() { ig_dprsr_md.drop_ctl = 1; }

    /* Select pass: the candidates' group in single-operation steps, each
     * its own action so that bf-p4c places them in successive stages
     * (one ALU operation per destination per action). */
    @hidden action cand_hash() {
        bit<32> hv = candidate_hash.get({ hdr.h.ipv4.src_addr, hdr.h.udp.src_port,
                                          hdr.h.p4ctl.request_id, hdr.h.p4ctl.hold_count });
        meta.h = hv[15:0];
    }
    @hidden action cand_step1() {
        meta.hm = meta.h & meta.d.pool_size_mask;
        meta.m3 = meta.d.pool_size_mask & 3;
        meta.b3 = meta.d.pool_base & 3;
        meta.hs1 = meta.h + 1;
    }
    @hidden action cand_step2() {
        meta.hmh = meta.hm & 0xFFFC;
        meta.ms0 = meta.h & meta.m3;
        meta.ms1 = meta.hs1 & meta.m3;
    }
    @hidden action cand_step3() {
        meta.cand_hi = meta.d.pool_base + meta.hmh;
        meta.sl0 = meta.b3 | meta.ms0;
        meta.sl1 = meta.b3 | meta.ms1;
    }
    /* header fields share containers: written by moves only */
    @hidden action cand_resub() {
        meta.resub.setValid();
        meta.resub.cand_hi = meta.cand_hi;
        meta.resub.slot0 = meta.sl0;
        meta.resub.slot1 = meta.sl1;
        meta.resub.region = meta.d.region;
        meta.resub.flags = hdr.h.p4ctl.flags;
    }

    /* Decide pass: slots of candidates 2 and 3 ((h + 2) & 3 = (h & 3) ^ 2;
     * pools of one or two servers repeat candidates 0 and 1). */
    @hidden action cand_x2() { meta.x2 = meta.d.pool_size_mask & 2; }
    @hidden action cand_slots23() {
        meta.slot2 = meta.resub.slot0 ^ meta.x2;
        meta.slot3 = meta.resub.slot1 ^ meta.x2;
    }

    /* Bind pass: the chosen server's id, c_p = cand_hi | slot_p. */
    @hidden action bind_server_id() {
        meta.d.server = meta.rb_cand_hi | meta.rb_slot;
    }
    @hidden action bind_server_hdr() {
        hdr.h.p4ctl.server_id = meta.d.server;
    }

    /* Reply pass: the server's register index and slot. */
    @hidden action reply_slot() {
        meta.ridx = meta.d.server & 0xFFFC;
        meta.rslot = meta.d.server & 3;
    }

    /* The bridge header, field by field (see the end of apply). */
    @hidden action bridge_init() {
        hdr.bridge.setValid();
        hdr.bridge.hold = 0;
        hdr.bridge.bind = 0;
        hdr.bridge.stale = 0;
        hdr.bridge.forced = 0;
        hdr.bridge.pad = 0;
    }
    @hidden action bridge_hold() { hdr.bridge.hold = 1; }
    @hidden action bridge_bind() { hdr.bridge.bind = 1; }
    @hidden action bridge_stale() { hdr.bridge.stale = 1; }
    @hidden action bridge_forced() { hdr.bridge.forced = 1; }
    @hidden action bridge_port() { hdr.bridge.client_port = meta.client_port; }
    @hidden action bridge_bound() { hdr.bridge.bound = meta.rb_bound; }
    @hidden action bridge_cand_hi() { hdr.bridge.cand_hi = meta.rb_cand_hi; }
    @hidden action bridge_slot() { hdr.bridge.slot = meta.rb_slot; }


    action set_region_bit(region_set_t bit_r) { meta.region_bit = bit_r; }

    /* ---------------- tables: as ../v1model/ingress.p4 ---------------- */
    table client_site {
        key = { hdr.h.ipv4.src_addr : lpm @name("src_addr"); }
        actions = { set_client_site; NoAction; }
        default_action = NoAction();
        size = CLIENT_SITE_SIZE;
    }
    table sla_feasibility {
        key = {
            meta.d.site        : exact @name("site");
            hdr.h.p4ctl.sla_ms : range @name("sla_ms");
        }
        actions = { set_feasible; NoAction; }
        default_action = NoAction();
        size = SLA_FEASIBILITY_SIZE;
    }
    table active_epoch {
        key = { }
        actions = { set_active_epoch; }
        default_action = set_active_epoch(0);
        size = 1;
    }
    table carbon_rank {
        key = {
            meta.d.epoch : exact   @name("epoch");
            meta.d.site  : ternary @name("site");
            meta.d.cand  : ternary @name("feasible");
        }
        actions = { route_to_region; NoAction; }
        default_action = NoAction();
        size = CARBON_RANK_SIZE;
    }
    table region_next_hop {
        key = { meta.d.region : exact @name("region"); }
        actions = { dispatch_local; forward_remote; NoAction; }
        default_action = NoAction();
        size = MAX_REGIONS;
    }
    table server_pool {
        key = { meta.d.region : exact @name("region"); }
        actions = { set_pool; NoAction; }
        default_action = NoAction();
        size = MAX_REGIONS;
    }
    table exec_class_cost {
        key = { hdr.h.p4ctl.exec_class : exact @name("exec_class"); }
        actions = { set_exec_cost; NoAction; }
        default_action = NoAction();
        size = EXEC_CLASS_SIZE;
    }
    table server_endpoint {
        key = { meta.d.server : exact @name("server"); }
        actions = { set_server_endpoint; NoAction; }
        default_action = NoAction();
        size = MAX_SERVERS;
    }
    table l3_forward {
        key = { hdr.h.ipv4.dst_addr : lpm @name("dst_addr"); }
        actions = { forward; drop; }
        default_action = drop();
        size = L3_FORWARD_SIZE;
    }
    table l2_forward {
        key = { hdr.h.ethernet.dst_addr : exact @name("dst_mac"); }
        actions = { forward; drop; }
        default_action = drop();
        size = L2_FORWARD_SIZE;
    }

    /* TNA only: 1 << region (Tofino has no variable shift). Constant
     * entries; not written by the controller. Regions >= 32 miss: 0. */
    table region_bit {
        key = { meta.d.region : exact @name("region"); }
        actions = { set_region_bit; NoAction; }
        default_action = NoAction();
        size = MAX_REGIONS;
        const entries = {
            0: set_region_bit(1 << 0);   1: set_region_bit(1 << 1);
            2: set_region_bit(1 << 2);   3: set_region_bit(1 << 3);
            4: set_region_bit(1 << 4);   5: set_region_bit(1 << 5);
            6: set_region_bit(1 << 6);   7: set_region_bit(1 << 7);
            8: set_region_bit(1 << 8);   9: set_region_bit(1 << 9);
            10: set_region_bit(1 << 10); 11: set_region_bit(1 << 11);
            12: set_region_bit(1 << 12); 13: set_region_bit(1 << 13);
            14: set_region_bit(1 << 14); 15: set_region_bit(1 << 15);
            16: set_region_bit(1 << 16); 17: set_region_bit(1 << 17);
            18: set_region_bit(1 << 18); 19: set_region_bit(1 << 19);
            20: set_region_bit(1 << 20); 21: set_region_bit(1 << 21);
            22: set_region_bit(1 << 22); 23: set_region_bit(1 << 23);
            24: set_region_bit(1 << 24); 25: set_region_bit(1 << 25);
            26: set_region_bit(1 << 26); 27: set_region_bit(1 << 27);
            28: set_region_bit(1 << 28); 29: set_region_bit(1 << 29);
            30: set_region_bit(1 << 30); 31: set_region_bit(1 << 31);
        }
    }

    apply {
        ig_dprsr_md.drop_ctl = 1;              /* dropped unless a step forwards */
        /* µs ~ ns >> 10 (1.024 µs units): Tofino cannot divide by 1000. */
        meta.now = ig_prsr_md.global_tstamp[41:10];
        /* the port the request first arrived on (a held or bound request
         * comes back from RECIRC_PORT with it in the bridge header) */
        if (hdr.bridge.isValid()) {
            meta.client_port = hdr.bridge.client_port;
        } else {
            meta.client_port = ig_intr_md.ingress_port;
        }
        bool apply_l3 = false;
        bool hold = false;
        bool bind_next = false;
        bit<8> sp = 0;
        bit<8> forced = 0;

        if (ig_prsr_md.parser_err != PARSER_ERROR_OK) {
            meta.ev_on = 1; meta.ev = EVENT_MALFORMED;
        } else if (!hdr.h.ipv4.isValid()) {
            l2_forward.apply();
        } else if (!hdr.h.p4ctl.isValid()) {
            apply_l3 = true;
        } else if (hdr.h.udp.length < P4CTL_MIN_UDP_LENGTH
                   || hdr.h.p4ctl.version != P4CTL_VERSION
                   || hdr.h.p4ctl.msg_type < MSG_REQUEST
                   || hdr.h.p4ctl.msg_type > MSG_NACK) {
            meta.ev_on = 1; meta.ev = EVENT_MALFORMED;
        } else if (hdr.h.p4ctl.msg_type == MSG_NACK) {
            apply_l3 = true;
        } else {
            /* bf-p4c: a bool cannot be the result of a comparison in an
             * action ("source of modify_field invalid") */
            bool is_request = false;
            if (hdr.h.p4ctl.msg_type == MSG_REQUEST) {
                is_request = true;
            }
            bool lookup_endpoint = false;

            exec_class_cost.apply();

            if (is_request) {
                client_site.apply();
                hdr.h.p4ctl.site_id = meta.d.site;
                if (meta.resub.isValid()) {
                    /* decide pass: the resubmitted packet is the original */
                    meta.d.region = meta.resub.region;
                    hdr.h.p4ctl.flags = meta.resub.flags;
                } else if (meta.rb_bind == 1) {
                    /* bind pass: the decide pass wrote region and flags */
                    meta.d.region = hdr.h.p4ctl.region_id;
                } else {
                    /* select pass: region selection */
                    sla_feasibility.apply();
                    active_epoch.apply();
                    bit<32> full = region_full_read.execute(0);
                    meta.d.cand = meta.d.feasible & ~full;
                    if (meta.d.cand == 0) {
                        meta.d.cand = meta.d.feasible;
                    } else if (meta.d.cand != meta.d.feasible) {
                        hdr.h.p4ctl.flags = hdr.h.p4ctl.flags | FLAG_SPILLED;
                        dispatch_events_spill.count(EVENT_SPILLED);
                    }
                    carbon_rank.apply();
                    if (!meta.d.ranked) {
                        meta.d.region = meta.d.nearest;
                        hdr.h.p4ctl.flags = hdr.h.p4ctl.flags | FLAG_FALLBACK;
                        dispatch_events_fallback.count(EVENT_FALLBACK);
                        region_fallback.count(meta.d.nearest);
                    }
                }
                hdr.h.p4ctl.region_id = meta.d.region;
            } else {
                meta.d.region = hdr.h.p4ctl.region_id;
                meta.d.server = hdr.h.p4ctl.server_id;
            }

            region_next_hop.apply();
            region_bit.apply();

            if (is_request) {
                if (meta.d.next_hop == NEXT_HOP_REMOTE) {
                    hdr.h.ethernet.dst_addr = meta.d.nh_dmac;
                    hdr.h.ipv4.dst_addr = meta.d.nh_addr;
                    ig_tm_md.ucast_egress_port = meta.d.nh_port;
                    ig_dprsr_md.drop_ctl = 0;
                    hdr.h.p4ctl.server_id = NO_SERVER;
                    hdr.h.udp.checksum = 0;
                    meta.d.ipv4_rewritten = true;
                    meta.routed = 1;
                } else if (meta.d.next_hop != NEXT_HOP_LOCAL) {
                    meta.ev_on = 1; meta.ev = EVENT_UNREACHABLE;
                } else {
                    server_pool.apply();
                    bit<16> limit = meta.d.pool_bound;
                    if (meta.d.pool_policy == POLICY_JIQ) {
                        limit = 1;
                    }
                    if (!meta.d.pool_found) {
                        meta.ev_on = 1; meta.ev = EVENT_UNREACHABLE;
                    } else if (meta.rb_bind == 1) {
                        /* ---- bind pass: one atomic check-and-increment ---- */
                        bind_server_id();
                        bind_server_hdr();
                        bit<1> ok;
                        if (meta.rb_slot == 0) {
                            ok = bind_outstanding_0.execute(meta.rb_cand_hi);
                        } else if (meta.rb_slot == 1) {
                            ok = bind_outstanding_1.execute(meta.rb_cand_hi);
                        } else if (meta.rb_slot == 2) {
                            ok = bind_outstanding_2.execute(meta.rb_cand_hi);
                        } else {
                            ok = bind_outstanding_3.execute(meta.rb_cand_hi);
                        }
                        if (ok == 0) {
                            /* filled up since the decide pass: hold again */
                            hold = true;
                        } else {
                            if (meta.rb_slot == 0) {
                                bind_work_0.execute(meta.rb_cand_hi);
                                touch_last_0.execute(meta.rb_cand_hi);
                            } else if (meta.rb_slot == 1) {
                                bind_work_1.execute(meta.rb_cand_hi);
                                touch_last_1.execute(meta.rb_cand_hi);
                            } else if (meta.rb_slot == 2) {
                                bind_work_2.execute(meta.rb_cand_hi);
                                touch_last_2.execute(meta.rb_cand_hi);
                            } else {
                                bind_work_3.execute(meta.rb_cand_hi);
                                touch_last_3.execute(meta.rb_cand_hi);
                            }
                            if (meta.rb_stale == 1) {
                                meta.cause_on = 1; meta.cause = EVENT_STALE_RESET;
                            }
                            bit<32> ro = region_acquire.execute(meta.d.region);
                            if (meta.d.capacity != 0 && ro >= meta.d.capacity) {
                                region_full_set.execute(0);
                            }
                            server_bound.count(meta.d.server);
                            meta.routed = 1;
                            lookup_endpoint = true;
                        }
                    } else if (!meta.resub.isValid()) {
                        /* ---- select pass: the candidates' group, then resubmit ----
                         * c_j = base + ((g | ((h + j) & 3)) & size_mask); with the
                         * pool layout (power-of-two size, base aligned to
                         * min(size, 4)) c_j & ~3 = base + (h & size_mask & ~3)
                         * and c_j mod 4 = (base & 3) | ((h + j) & size_mask & 3);
                         * the decide pass derives c_2, c_3 from c_0, c_1. */
                        cand_hash();
                        cand_step1();
                        cand_step2();
                        cand_step3();
                        cand_resub();
                        ig_dprsr_md.resubmit_type = RESUBMIT_DECIDE;
                        ig_dprsr_md.drop_ctl = 0;
                    } else {
                        /* ---- decide pass: read the aligned group, decide ---- */
                        cand_x2();
                        cand_slots23();
                        bit<16> v0 = read_outstanding_0.execute(meta.resub.cand_hi);
                        bit<16> v1 = read_outstanding_1.execute(meta.resub.cand_hi);
                        bit<16> v2 = read_outstanding_2.execute(meta.resub.cand_hi);
                        bit<16> v3 = read_outstanding_3.execute(meta.resub.cand_hi);
                        bit<32> x0 = read_work_0.execute(meta.resub.cand_hi);
                        bit<32> x1 = read_work_1.execute(meta.resub.cand_hi);
                        bit<32> x2 = read_work_2.execute(meta.resub.cand_hi);
                        bit<32> x3 = read_work_3.execute(meta.resub.cand_hi);
                        bit<32> y0 = read_last_0.execute(meta.resub.cand_hi);
                        bit<32> y1 = read_last_1.execute(meta.resub.cand_hi);
                        bit<32> y2 = read_last_2.execute(meta.resub.cand_hi);
                        bit<32> y3 = read_last_3.execute(meta.resub.cand_hi);
                        /* candidate j's cells are slot (c_j mod 4) of the group */
                        bit<16> o0; bit<16> o1; bit<16> o2; bit<16> o3;
                        bit<32> w0; bit<32> w1; bit<32> w2; bit<32> w3;
                        bit<32> l0; bit<32> l1; bit<32> l2; bit<32> l3;
                        P4CTL_MUX3(o0, w0, l0, meta.resub.slot0)
                        P4CTL_MUX3(o1, w1, l1, meta.resub.slot1)
                        P4CTL_MUX3(o2, w2, l2, meta.slot2)
                        P4CTL_MUX3(o3, w3, l3, meta.slot3)

                        bit<32> ttl = meta.d.pool_credit_ttl_us;
                        bit<8> s0 = 0; bit<8> s1 = 0; bit<8> s2 = 0; bit<8> s3 = 0;
                        if (ttl != 0) {
                            if (o0 != 0 && meta.now - l0 > ttl) { s0 = 1; o0 = 0; w0 = 0; }
                            if (o1 != 0 && meta.now - l1 > ttl) { s1 = 1; o1 = 0; w1 = 0; }
                            if (o2 != 0 && meta.now - l2 > ttl) { s2 = 1; o2 = 0; w2 = 0; }
                            if (o3 != 0 && meta.now - l3 > ttl) { s3 = 1; o3 = 0; w3 = 0; }
                        }

                        bit<16> op = o0; sp = s0; bit<16> slp = meta.resub.slot0;
                        bit<8> policy = meta.d.pool_policy;
                        if (policy == POLICY_P2C) {
                            if (o1 < o0) { op = o1; sp = s1; slp = meta.resub.slot1; }
                        } else if (policy == POLICY_P2C_WORK) {
                            if (w1 < w0 || (w1 == w0 && o1 < o0)) { op = o1; sp = s1; slp = meta.resub.slot1; }
                        } else if (policy == POLICY_JBSQ || policy == POLICY_JIQ) {
                            if (o1 < op) { op = o1; sp = s1; slp = meta.resub.slot1; }
                            if (o2 < op) { op = o2; sp = s2; slp = meta.slot2; }
                            if (o3 < op) { op = o3; sp = s3; slp = meta.slot3; }
                        }

                        bool nack = false;
                        if (meta.d.is_long == 1 && meta.d.pool_long_reserve != 0 && limit != 0
                            && hdr.h.p4ctl.hold_count < meta.d.pool_long_max_holds
                            && op + meta.d.pool_long_reserve >= limit) {
                            hold = true;
                            hdr.h.p4ctl.flags = hdr.h.p4ctl.flags | FLAG_LONG_DEFERRED;
                            meta.cause_on = 1; meta.cause = EVENT_LONG_DEFERRED;
                        } else if (limit != 0 && op >= limit) {
                            if (hdr.h.p4ctl.hold_count < meta.d.pool_max_holds) {
                                hold = true;
                            } else if (meta.d.pool_on_full == ON_FULL_FORCE) {
                                forced = 1;
                                hdr.h.p4ctl.flags = hdr.h.p4ctl.flags | FLAG_FORCED;
                            } else {
                                nack = true;
                            }
                        }

                        if (nack) {
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
                            ig_tm_md.ucast_egress_port = meta.client_port;
                            ig_dprsr_md.drop_ctl = 0;
                            meta.ev_on = 1; meta.ev = EVENT_NACK;
                        } else if (!hold) {
                            /* bind c_p in a recirculated pass */
                            bind_next = true;
                            meta.rb_cand_hi = meta.resub.cand_hi;
                            meta.rb_slot = slp;
                            meta.rb_bound = limit;
                            if (forced == 1 || limit == 0) {
                                meta.rb_bound = 0xFFFF;
                            }
                            ig_tm_md.ucast_egress_port = RECIRC_PORT;
                            ig_dprsr_md.drop_ctl = 0;
                            if (forced == 1) {
                                meta.ev_on = 1; meta.ev = EVENT_FORCED;
                            }
                        }
                    }

                    if (hold) {
                        hdr.h.p4ctl.hold_count = hdr.h.p4ctl.hold_count + 1;
                        hdr.h.p4ctl.flags = hdr.h.p4ctl.flags | FLAG_HELD;
                        meta.ev_on = 1; meta.ev = EVENT_HOLD;
                        ig_tm_md.ucast_egress_port = RECIRC_PORT;
                        ig_dprsr_md.drop_ctl = 0;
                    }
                }
            } else if (hdr.h.p4ctl.server_id == NO_SERVER) {
                apply_l3 = true;
            } else {
                lookup_endpoint = true;
            }

            if (lookup_endpoint) {
                server_endpoint.apply();
                if (is_request) {
                    if (!meta.d.endpoint_found) {
                        meta.ev_on = 1; meta.ev = EVENT_UNREACHABLE;
                    } else {
                        hdr.h.ethernet.dst_addr = meta.d.ep_dmac;
                        hdr.h.ipv4.dst_addr = meta.d.ep_addr;
                        ig_tm_md.ucast_egress_port = meta.d.ep_port;
                        ig_dprsr_md.drop_ctl = 0;
                        hdr.h.udp.checksum = 0;
                        meta.d.ipv4_rewritten = true;
                    }
                } else if (!meta.d.endpoint_found || hdr.h.ipv4.src_addr != meta.d.ep_addr) {
                    meta.ev_on = 1; meta.ev = EVENT_REPLY_REJECTED;
                } else {
                    reply_slot();
                    slot_index_t idx = meta.ridx;
                    if (meta.rslot == 0) {
                        release_outstanding_0.execute(idx); release_work_0.execute(idx); touch_last_0.execute(idx);
                    } else if (meta.rslot == 1) {
                        release_outstanding_1.execute(idx); release_work_1.execute(idx); touch_last_1.execute(idx);
                    } else if (meta.rslot == 2) {
                        release_outstanding_2.execute(idx); release_work_2.execute(idx); touch_last_2.execute(idx);
                    } else {
                        release_outstanding_3.execute(idx); release_work_3.execute(idx); touch_last_3.execute(idx);
                    }
                    bit<32> ro = region_release.execute(meta.d.region);
                    if (meta.d.capacity == 0 || ro < meta.d.capacity) {
                        region_full_clear.execute(0);
                    }
                    meta.ev_on = 1; meta.ev = EVENT_REPLY_RELEASED;
                    apply_l3 = true;
                }
            }
        }

        if (apply_l3) {
            l3_forward.apply();
        }

        /* one access per counter per pass */
        if (meta.ev_on == 1) {
            dispatch_events.count(meta.ev);
        }
        if (meta.cause_on == 1) {
            dispatch_events_cause.count(meta.cause);
        }
        if (meta.routed == 1) {
            region_routed.count(meta.d.region);
        }

        /* to egress (and back, for holds and binds). The bridge fields
         * share PHV containers: each is written by its own action with one
         * source (bf-p4c: one PHV source per container per action). */
        bridge_init();
        if (hold) {
            bridge_hold();
        }
        if (bind_next) {
            bridge_bind();
        }
        if (sp == 1) {
            bridge_stale();
        }
        if (forced == 1) {
            bridge_forced();
        }
        bridge_port();
        bridge_bound();
        bridge_cand_hi();
        bridge_slot();
    }
}

#endif /* P4CTL_TNA_INGRESS_P4 */
