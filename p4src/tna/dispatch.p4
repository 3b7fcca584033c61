/*
 * p4ctl — server dispatch and credit release (TNA; docs/PIPELINE.md steps 10
 * and 11; pkg/pipeline Claim, Pool.Threshold, Pool.AfterRefusal), one
 * dependency level per stage (README.md "Stages"); differences from v1model:
 * README.md "What differs from v1model".
 */
#ifndef P4CTL_TNA_DISPATCH_P4
#define P4CTL_TNA_DISPATCH_P4

/* Stage 0: the candidate hash (docs/PIPELINE.md 10.1). */
control CandidateHash(in headers_t hdr, inout tna_ingress_metadata_t meta) {
    Hash<bit<16>>(HashAlgorithm_t.CRC32) candidate_hash;   /* reflected CRC-32, as zlib */

    /* the hash and its copy & ~3, whose bits 1:0 nothing may write (README.md "Invariants") */
    @hidden action candidate_hash_of() {
        bit<16> h = candidate_hash.get({ hdr.ipv4.src_addr, hdr.udp.src_port,
                                         hdr.p4ctl.request_id, hdr.p4ctl.hold_count });
        meta.candidate_hash = h;
        meta.candidate_hash_aligned[15:2] = h[15:2];
    }
    @hidden table candidate_hash_t {
        actions = { candidate_hash_of; }
        const default_action = candidate_hash_of();
        size = 1;
    }

    apply { candidate_hash_t.apply(); }
}

/* Stage 1, from the pool (server_pool in stage 0). */
control DispatchStage1(in headers_t hdr, inout tna_ingress_metadata_t meta, in p4ctl_carry_h carry) {
    CreditClock() credit_clock;

    /* 10.1 the group's offset (jbsq, jiq) or the hashed server's (random); 10.3 pipeline.Pool.Limit */
    @hidden action group_policy(bit<1> tries_group) {
        meta.tries_group = tries_group;
        meta.group_offset = meta.candidate_hash_aligned & meta.pass.pool_size_mask;
        meta.limit = (bit<32>)meta.pass.pool_bound;
        meta.long_cap = meta.pass.pool_bound |-| meta.pass.pool_long_reserve;
    }
    @hidden action group_policy_jiq() {
        meta.tries_group = 1;
        meta.group_offset = meta.candidate_hash_aligned & meta.pass.pool_size_mask;
        meta.limit = 1;
        meta.long_cap = 1 |-| meta.pass.pool_long_reserve;
    }
    @hidden action pick_policy() {
        meta.tries_group = 0;
        meta.group_offset = meta.candidate_hash & meta.pass.pool_size_mask;
        meta.limit = (bit<32>)meta.pass.pool_bound;
        meta.long_cap = meta.pass.pool_bound |-| meta.pass.pool_long_reserve;
    }
    @hidden table policy_t {
        key = { meta.pass.pool_policy : exact; }
        actions = { group_policy; group_policy_jiq; pick_policy; }
        const default_action = pick_policy();
        size = 2;
        const entries = {
            POLICY_JBSQ : group_policy(1);
            POLICY_JIQ  : group_policy_jiq();
        }
    }
    /* saturating differences, tested against 0 (README "gateway") */
    @hidden action hold_rooms() {
        meta.long_holds_left = meta.pass.pool_long_max_holds |-| hdr.p4ctl.hold_count;
        meta.holds_left = meta.pass.pool_max_holds |-| hdr.p4ctl.hold_count;
    }
    @hidden table hold_rooms_t {
        actions = { hold_rooms; }
        const default_action = hold_rooms();
        size = 1;
    }

    /* the carried level, UNBOUNDED for a new attempt (level 0) */
    @hidden action level_of() { meta.level_or_unbounded = carry.level; }
    @hidden action unbounded_level() { meta.level_or_unbounded = UNBOUNDED; }
    @hidden table level_t {
        key = { carry.level : exact; }
        actions = { level_of; unbounded_level; }
        const default_action = level_of();
        size = 1;
        const entries = { 0 : unbounded_level(); }
    }

    apply {
        level_t.apply();
        policy_t.apply();
        credit_clock.apply(meta.now, meta.pass.pool_credit_tick, meta.now_tick);
        hold_rooms_t.apply();
    }
}

/* Stage 2, beside the region's capacity. */
control DispatchStage2(inout tna_ingress_metadata_t meta, in p4ctl_carry_h carry) {
    DispatchSlots() dispatch_slots;

    /* the group, and the tick before which a credit has expired (README "salu") */
    @hidden action group_of() {
        meta.group = meta.pass.pool_base + meta.group_offset;
        meta.stale_before = meta.now_tick - CREDIT_TTL_TICKS;
    }
    @hidden table group_t {
        actions = { group_of; }
        const default_action = group_of();
        size = 1;
    }

    /* 10.3 pipeline.Pool.Cap and Pool.Threshold in one ternary lookup (README "logical-tables") */
    @hidden action unbounded_forced() { meta.cap = UNBOUNDED; meta.threshold = carry.level; }
    @hidden action unbounded_idle()   { meta.cap = UNBOUNDED; meta.threshold = 1; }
    @hidden action unbounded()        { meta.cap = UNBOUNDED; meta.threshold = meta.level_or_unbounded; }
    @hidden action limit_forced()     { meta.cap = meta.limit; meta.threshold = carry.level; }
    @hidden action limit_cap()        { meta.cap = meta.limit; meta.threshold = min(meta.level_or_unbounded, meta.limit); }
    @hidden action cut_forced() {
        meta.cap_lowered_for_long = 1;
        meta.cap = (bit<32>)meta.long_cap;
        meta.threshold = carry.level;
    }
    @hidden action cut_cap() {
        meta.cap_lowered_for_long = 1;
        meta.cap = (bit<32>)meta.long_cap;
        meta.threshold = min(meta.level_or_unbounded, (bit<32>)meta.long_cap);
    }
    @hidden table cap_threshold_t {
        key = {
            meta.limit                  : ternary;
            meta.pass.is_long           : ternary;
            meta.pass.pool_long_reserve : ternary;
            meta.long_holds_left        : ternary;
            carry.forced                : ternary;
            carry.level                 : ternary;
            meta.tries_group            : ternary;
        }
        actions = { unbounded_forced; unbounded_idle; unbounded; limit_forced; limit_cap; cut_forced; cut_cap; }
        const default_action = cut_cap();
        size = 16;
        /* first match wins, in this order */
        const entries = {
            (0, _, _, _, 1, _, _) : unbounded_forced();
            (0, _, _, _, _, 0, 1) : unbounded_idle();
            (0, _, _, _, _, _, _) : unbounded();
            (_, 0, _, _, 1, _, _) : limit_forced();
            (_, 0, _, _, _, _, _) : limit_cap();
            (_, _, 0, _, 1, _, _) : limit_forced();
            (_, _, 0, _, _, _, _) : limit_cap();
            (_, _, _, 0, 1, _, _) : limit_forced();
            (_, _, _, 0, _, _, _) : limit_cap();
            (_, _, _, _, 1, _, _) : cut_forced();
        }
    }

    apply {
        group_t.apply();
        /* 10.1 the slots a jbsq or jiq pass tries, by the pool base (README.md "Invariants") */
        dispatch_slots.apply(meta.tries_group, meta.pass.pool_base[1:0], meta.pass.pool_size_mask[1:0], meta.slots_tried);
        cap_threshold_t.apply();
    }
}

/* Stage 3, beside the chain's first link. */
control DispatchStage3(inout tna_ingress_metadata_t meta) {
    /* the group's first id: slot k's server is group_first_id | k */
    @hidden action group_cells() {
        meta.group_first_id = meta.group & CANDIDATE_GROUP_MASK;
    }
    @hidden table group_cells_t {
        actions = { group_cells; }
        const default_action = group_cells();
        size = 1;
    }

    apply {
        group_cells_t.apply();
    }
}

/* 10.5-10.6 (stages 7-8): bound to meta.pass.server, toward its endpoint. */
control BindToServer(inout headers_t hdr,
                     inout tna_ingress_metadata_t meta,
                     in p4ctl_carry_h carry,
                     inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                     inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    ServerEndpoint() server_endpoint;

    /* BindToServer and AfterRefusal are the branches of one if (README "write-once") */
    @hidden action send(port_t port) {
        ig_tm_md.ucast_egress_port = port;
        ig_dprsr_md.drop_ctl = 0;
    }

    apply {
        hdr.p4ctl.server_id = meta.pass.server;
        if (carry.forced == 1) {
            hdr.p4ctl.flags = hdr.p4ctl.flags | FLAG_FORCED;
            meta.pass.ev_outcome_on = 1;
            meta.pass.ev_outcome = EVENT_FORCED;
        }
        meta.pass.count_bound = 1;
        meta.pass.count_routed = 1;
        meta.pass.probe_request = true;
        server_endpoint.apply(meta.pass);
        if (!meta.pass.endpoint_found) {
            meta.pass.ev_outcome_on = 1;
            meta.pass.ev_outcome = EVENT_UNREACHABLE;
        } else {
            hdr.ethernet.dst_addr = meta.pass.ep_dmac;
            hdr.ipv4.dst_addr = meta.pass.ep_addr;
            send(meta.pass.ep_port);
            hdr.udp.checksum = 0;
            meta.pass.ipv4_rewritten = true;
        }
    }
}

/* 10.7 (stages 7-8) every tried slot refused: a level round, a hold, a forced round or the NACK pass. */
control AfterRefusal(inout headers_t hdr,
                     inout tna_ingress_metadata_t meta,
                     inout p4ctl_carry_h carry,
                     inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                     inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    /* BindToServer and AfterRefusal are the branches of one if (README "write-once") */
    @hidden action send(port_t port) {
        ig_tm_md.ucast_egress_port = port;
        ig_dprsr_md.drop_ctl = 0;
    }
    @hidden action level_round() {
        carry.level = meta.least_refused |+| 1;
        meta.pass.ev_outcome_on = 1;
        meta.pass.ev_outcome = EVENT_LEVEL_ROUND;
    }

    apply {
        send(RECIRC_PORT);
        if (carry.forced == 1) {
            carry.level = UNBOUNDED;
            meta.pass.ev_outcome_on = 1;
            meta.pass.ev_outcome = EVENT_LEVEL_ROUND;
        } else if (meta.cap_room_upto2 != 0) {
            level_round();
        } else if (meta.cap_room_slot3 != 0) {
            level_round();
        } else if (meta.cap_lowered_for_long == 1) {
            hdr.p4ctl.hold_count = hdr.p4ctl.hold_count + 1;
            hdr.p4ctl.flags = hdr.p4ctl.flags | (FLAG_HELD | FLAG_LONG_DEFERRED);
            carry.level = 0;
            meta.pass.ev_outcome_on = 1;
            meta.pass.ev_outcome = EVENT_HOLD;
            meta.pass.ev_cause_on = 1;
            meta.pass.ev_cause = EVENT_LONG_DEFERRED;
        } else if (meta.holds_left != 0) {
            hdr.p4ctl.hold_count = hdr.p4ctl.hold_count + 1;
            hdr.p4ctl.flags = hdr.p4ctl.flags | FLAG_HELD;
            carry.level = 0;
            meta.pass.ev_outcome_on = 1;
            meta.pass.ev_outcome = EVENT_HOLD;
        } else if (meta.pass.pool_on_full == ON_FULL_FORCE) {
            carry.forced = 1;
            level_round();
        } else {
            carry.nack_release = 1;
        }
    }
}

/* Stages 3-8: the chain of claims and what follows it (requests), or the credit release (valid replies). */
control ServerDispatch(inout headers_t hdr,
                       inout tna_ingress_metadata_t meta,
                       inout p4ctl_carry_h carry,
                       in bool is_reply,
                       inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                       inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {

    /* server_credit_0[i]: server 4i+0's {outstanding, last_tick}; data plane: +1 on a bind (1 on an expired credit), -1 on a valid reply */
    @name(".P4ctlIngress.server_credit_0")
    Register<credit_pair_t, bit<8>>(SLOT_CELLS, {0, 0}) server_credit_0;
    /* pools with expiry: an expired credit is claimed with count 1; returns the refused count, 0 = taken (README "salu") */
    RegisterAction<credit_pair_t, bit<8>, bit<32>>(server_credit_0) claim_0 = {
        void apply(inout credit_pair_t c, out bit<32> refused) {
            refused = 0;
            if ((int<32>)(c.last_tick - meta.stale_before) < 0) {
                c.outstanding = 1;
                c.last_tick = meta.stale_before + CREDIT_TTL_TICKS;
            } else if (c.outstanding < meta.threshold) {
                c.outstanding = c.outstanding + 1;
                c.last_tick = meta.stale_before + CREDIT_TTL_TICKS;
            } else {
                refused = c.outstanding;
            }
        }
    };
    /* pools without expiry */
    RegisterAction<credit_pair_t, bit<8>, bit<32>>(server_credit_0) take_0 = {
        void apply(inout credit_pair_t c, out bit<32> refused) {
            refused = 0;
            if (c.outstanding < meta.threshold) {
                c.outstanding = c.outstanding + 1;
                c.last_tick = 0;
            } else {
                refused = c.outstanding;
            }
        }
    };
    /* a valid reply */
    RegisterAction<credit_pair_t, bit<8>, bit<32>>(server_credit_0) release_0 = {
        void apply(inout credit_pair_t c) {
            if (c.outstanding != 0) {
                c.outstanding = c.outstanding - 1;
            }
            c.last_tick = meta.stale_before + CREDIT_TTL_TICKS;
        }
    };

    /* server_credit_1: as server_credit_0, for server 4i+1 */
    @name(".P4ctlIngress.server_credit_1")
    Register<credit_pair_t, bit<8>>(SLOT_CELLS, {0, 0}) server_credit_1;
    RegisterAction<credit_pair_t, bit<8>, bit<32>>(server_credit_1) claim_1 = {
        void apply(inout credit_pair_t c, out bit<32> refused) {
            refused = 0;
            if ((int<32>)(c.last_tick - meta.stale_before) < 0) {
                c.outstanding = 1;
                c.last_tick = meta.stale_before + CREDIT_TTL_TICKS;
            } else if (c.outstanding < meta.threshold) {
                c.outstanding = c.outstanding + 1;
                c.last_tick = meta.stale_before + CREDIT_TTL_TICKS;
            } else {
                refused = c.outstanding;
            }
        }
    };
    RegisterAction<credit_pair_t, bit<8>, bit<32>>(server_credit_1) take_1 = {
        void apply(inout credit_pair_t c, out bit<32> refused) {
            refused = 0;
            if (c.outstanding < meta.threshold) {
                c.outstanding = c.outstanding + 1;
                c.last_tick = 0;
            } else {
                refused = c.outstanding;
            }
        }
    };
    RegisterAction<credit_pair_t, bit<8>, bit<32>>(server_credit_1) release_1 = {
        void apply(inout credit_pair_t c) {
            if (c.outstanding != 0) {
                c.outstanding = c.outstanding - 1;
            }
            c.last_tick = meta.stale_before + CREDIT_TTL_TICKS;
        }
    };

    /* server_credit_2: as server_credit_0, for server 4i+2 */
    @name(".P4ctlIngress.server_credit_2")
    Register<credit_pair_t, bit<8>>(SLOT_CELLS, {0, 0}) server_credit_2;
    RegisterAction<credit_pair_t, bit<8>, bit<32>>(server_credit_2) claim_2 = {
        void apply(inout credit_pair_t c, out bit<32> refused) {
            refused = 0;
            if ((int<32>)(c.last_tick - meta.stale_before) < 0) {
                c.outstanding = 1;
                c.last_tick = meta.stale_before + CREDIT_TTL_TICKS;
            } else if (c.outstanding < meta.threshold) {
                c.outstanding = c.outstanding + 1;
                c.last_tick = meta.stale_before + CREDIT_TTL_TICKS;
            } else {
                refused = c.outstanding;
            }
        }
    };
    RegisterAction<credit_pair_t, bit<8>, bit<32>>(server_credit_2) take_2 = {
        void apply(inout credit_pair_t c, out bit<32> refused) {
            refused = 0;
            if (c.outstanding < meta.threshold) {
                c.outstanding = c.outstanding + 1;
                c.last_tick = 0;
            } else {
                refused = c.outstanding;
            }
        }
    };
    RegisterAction<credit_pair_t, bit<8>, bit<32>>(server_credit_2) release_2 = {
        void apply(inout credit_pair_t c) {
            if (c.outstanding != 0) {
                c.outstanding = c.outstanding - 1;
            }
            c.last_tick = meta.stale_before + CREDIT_TTL_TICKS;
        }
    };

    /* server_credit_3: as server_credit_0, for server 4i+3 */
    @name(".P4ctlIngress.server_credit_3")
    Register<credit_pair_t, bit<8>>(SLOT_CELLS, {0, 0}) server_credit_3;
    RegisterAction<credit_pair_t, bit<8>, bit<32>>(server_credit_3) claim_3 = {
        void apply(inout credit_pair_t c, out bit<32> refused) {
            refused = 0;
            if ((int<32>)(c.last_tick - meta.stale_before) < 0) {
                c.outstanding = 1;
                c.last_tick = meta.stale_before + CREDIT_TTL_TICKS;
            } else if (c.outstanding < meta.threshold) {
                c.outstanding = c.outstanding + 1;
                c.last_tick = meta.stale_before + CREDIT_TTL_TICKS;
            } else {
                refused = c.outstanding;
            }
        }
    };
    RegisterAction<credit_pair_t, bit<8>, bit<32>>(server_credit_3) take_3 = {
        void apply(inout credit_pair_t c, out bit<32> refused) {
            refused = 0;
            if (c.outstanding < meta.threshold) {
                c.outstanding = c.outstanding + 1;
                c.last_tick = 0;
            } else {
                refused = c.outstanding;
            }
        }
    };
    RegisterAction<credit_pair_t, bit<8>, bit<32>>(server_credit_3) release_3 = {
        void apply(inout credit_pair_t c) {
            if (c.outstanding != 0) {
                c.outstanding = c.outstanding - 1;
            }
            c.last_tick = meta.stale_before + CREDIT_TTL_TICKS;
        }
    };

    /* slot k not tried: the count so far passes on, in slot k's stage (README "one-stage-action") */
    @hidden action skip_slot1() { meta.refused_upto1 = meta.refused_upto0; }
    @hidden table skip_slot1_t {
        actions = { skip_slot1; }
        const default_action = skip_slot1();
        size = 1;
    }
    @hidden action skip_slot2() { meta.refused_upto2 = meta.refused_upto1; }
    @hidden table skip_slot2_t {
        actions = { skip_slot2; }
        const default_action = skip_slot2();
        size = 1;
    }
    @hidden action skip_slot3() { meta.refused_upto3 = meta.refused_upto2; }
    @hidden table skip_slot3_t {
        actions = { skip_slot3; }
        const default_action = skip_slot3();
        size = 1;
    }

    /* stages 5, 6: the least refused count so far, for the level round */
    @hidden action least_refused_upto1_of() { meta.least_refused_upto1 = min(meta.refused_upto0, meta.refused_upto1); }
    @hidden table least_refused_upto1_t {
        actions = { least_refused_upto1_of; }
        const default_action = least_refused_upto1_of();
        size = 1;
    }
    @hidden action least_refused_upto2_of() { meta.least_refused_upto2 = min(meta.least_refused_upto1, meta.refused_upto2); }
    @hidden table least_refused_upto2_t {
        actions = { least_refused_upto2_of; }
        const default_action = least_refused_upto2_of();
        size = 1;
    }
    /* stage 7: the least refused count, and each half's room below the cap (README "gateway") */
    @hidden action level_parts() {
        meta.cap_room_upto2 = meta.cap |-| meta.least_refused_upto2;
        meta.cap_room_slot3 = meta.cap |-| meta.refused_upto3;
        meta.least_refused = min(meta.least_refused_upto2, meta.refused_upto3);
    }
    @hidden table level_parts_t {
        actions = { level_parts; }
        const default_action = level_parts();
        size = 1;
    }

    /* stage 6: the first slot that took the request, else slot 3 (claiming beside it) */
    @hidden action candidate_server(bit<16> k) {
        meta.pass.server = meta.group_first_id | k;
    }

    BindToServer() bind_to_server;
    AfterRefusal() after_refusal;

    apply {
        if (is_reply) {
            /* 11: a valid reply releases its server's credit */
            bit<8> idx = meta.pass.server[9:2];
            bit<2> slot = meta.pass.server[1:0];
            if (slot == 0) {
                release_0.execute(idx);
            } else if (slot == 1) {
                release_1.execute(idx);
            } else if (slot == 2) {
                release_2.execute(idx);
            } else {
                release_3.execute(idx);
            }
            return;
        }

        /* 10.4 the chain: link k claims if the pass tries slot k and link k-1 refused (README "stage-order") */
        if (meta.threshold != 0) {
            if ((meta.tries_group == 1 && meta.slots_tried[0:0] == 1)
                || (meta.tries_group == 0 && meta.group[1:0] == 0)) {
                if (meta.pass.pool_credit_tick != 0) {
                    meta.refused_upto0 = claim_0.execute(meta.group[9:2]);
                } else {
                    meta.refused_upto0 = take_0.execute(meta.group[9:2]);
                }
            } else {
                meta.refused_upto0 = UNBOUNDED;
            }
            if (meta.refused_upto0 != 0
                && ((meta.tries_group == 1 && meta.slots_tried[1:1] == 1)
                    || (meta.tries_group == 0 && meta.group[1:0] == 1))) {
                if (meta.pass.pool_credit_tick != 0) {
                    meta.refused_upto1 = claim_1.execute(meta.group[9:2]);
                } else {
                    meta.refused_upto1 = take_1.execute(meta.group[9:2]);
                }
            } else {
                skip_slot1_t.apply();
            }
            least_refused_upto1_t.apply();  /* beside link 2 (README "sequence") */
            if (meta.refused_upto1 != 0
                && ((meta.tries_group == 1 && meta.slots_tried[2:2] == 1)
                    || (meta.tries_group == 0 && meta.group[1:0] == 2))) {
                if (meta.pass.pool_credit_tick != 0) {
                    meta.refused_upto2 = claim_2.execute(meta.group[9:2]);
                } else {
                    meta.refused_upto2 = take_2.execute(meta.group[9:2]);
                }
            } else {
                skip_slot2_t.apply();
            }
            least_refused_upto2_t.apply();
            if (meta.refused_upto0 == 0) {
                candidate_server(0);
            } else if (meta.refused_upto1 == 0) {
                candidate_server(1);
            } else if (meta.refused_upto2 == 0) {
                candidate_server(2);
            } else {
                candidate_server(3);
            }
            if (meta.refused_upto2 != 0
                && ((meta.tries_group == 1 && meta.slots_tried[3:3] == 1)
                    || (meta.tries_group == 0 && meta.group[1:0] == 3))) {
                if (meta.pass.pool_credit_tick != 0) {
                    meta.refused_upto3 = claim_3.execute(meta.group[9:2]);
                } else {
                    meta.refused_upto3 = take_3.execute(meta.group[9:2]);
                }
            } else {
                skip_slot3_t.apply();
            }
        } else {
            /* no claim runs */
            meta.refused_upto0 = UNBOUNDED;
            meta.refused_upto1 = UNBOUNDED;
            meta.refused_upto2 = UNBOUNDED;
            meta.refused_upto3 = UNBOUNDED;
            meta.least_refused_upto2 = UNBOUNDED;
        }
        level_parts_t.apply();

        if (meta.refused_upto3 == 0) {
            bind_to_server.apply(hdr, meta, carry, ig_dprsr_md, ig_tm_md);
            return;
        }
        after_refusal.apply(hdr, meta, carry, ig_dprsr_md, ig_tm_md);
    }
}

#endif /* P4CTL_TNA_DISPATCH_P4 */
