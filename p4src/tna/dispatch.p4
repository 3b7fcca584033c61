/*
 * p4ctl — server dispatch and credit release (TNA; docs/PIPELINE.md steps
 * 10 and 11). The same algorithm as p4src/v1model/dispatch.p4 and
 * pkg/pipeline (Claim, Pool.Threshold, Pool.AfterRefusal), in one pass:
 *
 *   candidates  the pool's slots of the aligned group of four the packet
 *               hash selects (jbsq, jiq), or the hashed server (random);
 *               dispatch_slots says which of the four slots;
 *   chain       slot 0, 1, 2, 3 in stage order, each one RegisterAction
 *               over its {outstanding, last_tick} pair that decides in the
 *               stateful ALU: an expired credit → count 1; count <
 *               threshold → count + 1; else refused (it returns the count);
 *               a slot runs only if every earlier tried slot refused;
 *   after       every tried slot refused: a level round at the least refused
 *               count + 1 (same candidates), or a hold, a long-request
 *               deferral, a forced round, or the NACK pass — all by
 *               recirculation, with the carry.
 *
 * No register is read in one pass and written in another; every register is
 * accessed at most once per pass.
 *
 * One dependency level per stage (README.md "Stages"):
 *   0  CandidateHash: the hash of the packet's own fields (ingress.p4 looks
 *      the pool up in the same stage);
 *   1  DispatchStage1: the policy's offset and limit, the credit clock, the
 *      hold rooms;
 *   2  DispatchStage2: the group, the cap, stale_before;
 *   3  DispatchStage3: the group's cells and slots, the threshold;
 *   4-7  ServerDispatch: the chain, one slot per stage; the least refused
 *      count and the candidate server beside it;
 *   8  the bound request's endpoint, or the next level's parts;
 *   9  toward the server, or what follows the refusal.
 * Tofino runs a control's tables in sequence order (each names its
 * successor), so ingress.p4 applies DispatchStage1..3 beside its own steps
 * of those stages. Each value a later level tests is computed in a @hidden
 * table's action of its own, so that the compiler cannot fold it back into
 * the test.
 *
 * Registers (written by the data plane only, read by the controller):
 *   server_credit_<k>[i]  server 4i+k: {outstanding, last_tick}. +1 on a
 *                         bind (1 when it claimed an expired credit), −1
 *                         (never below 0) on a valid reply; last_tick =
 *                         now_tick on both (0 in pools without expiry).
 *
 * Differences from v1model (README.md): no server_work_us (p2c-work is not
 * offered on TNA; p2c and p2c-work pools act as random); the stale-reset
 * event is not counted (a stateful ALU returns one word: the refused count);
 * the credit clock counts 1.024 µs units.
 */
#ifndef P4CTL_TNA_DISPATCH_P4
#define P4CTL_TNA_DISPATCH_P4

/* Slot K's credit array (P4Info name NAME) and its three RegisterActions. */
#define CREDIT_SLOT(K, NAME) \
    @name(NAME) \
    Register<credit_pair_t, bit<8>>(SLOT_CELLS, {0, 0}) server_credit_##K; \
    /* pools with expiry: an expired credit is claimed with count 1 */ \
    RegisterAction<credit_pair_t, bit<8>, bit<32>>(server_credit_##K) claim_##K = { \
        void apply(inout credit_pair_t c, out bit<32> refused) { \
            refused = 0; \
            if ((int<32>)(c.last_tick - meta.stale_before) < 0) { \
                c.outstanding = 1; \
                c.last_tick = meta.stale_before + CREDIT_TTL_TICKS; \
            } else if (c.outstanding < meta.threshold) { \
                c.outstanding = c.outstanding + 1; \
                c.last_tick = meta.stale_before + CREDIT_TTL_TICKS; \
            } else { \
                refused = c.outstanding; \
            } \
        } \
    }; \
    /* pools without expiry */ \
    RegisterAction<credit_pair_t, bit<8>, bit<32>>(server_credit_##K) take_##K = { \
        void apply(inout credit_pair_t c, out bit<32> refused) { \
            refused = 0; \
            if (c.outstanding < meta.threshold) { \
                c.outstanding = c.outstanding + 1; \
                c.last_tick = 0; \
            } else { \
                refused = c.outstanding; \
            } \
        } \
    }; \
    /* a valid reply */ \
    RegisterAction<credit_pair_t, bit<8>, bit<32>>(server_credit_##K) release_##K = { \
        void apply(inout credit_pair_t c) { \
            if (c.outstanding != 0) { \
                c.outstanding = c.outstanding - 1; \
            } \
            c.last_tick = meta.stale_before + CREDIT_TTL_TICKS; /* now_tick: the SALU's inputs are stale_before and threshold */ \
        } \
    };

/* Slot K's link when it does not claim: the previous value passes on (in a
 * table of its own, so that the copy stays in slot K's stage). */
#define PASS_ON(K) \
    @hidden action pass_on_##K() { meta.after_slot##K = meta.PREV_##K; } \
    @hidden table pass_on_##K##_t { \
        actions = { pass_on_##K; } \
        const default_action = pass_on_##K(); \
        size = 1; \
    }

/* The running value before slot K of the chain. */
#define PREV_1 after_slot0
#define PREV_2 after_slot1
#define PREV_3 after_slot2

/* Link K of the chain, one stage: slot K claims if the pass tries it and no
 * earlier slot took the request (the previous link's value is not 0); else
 * the previous value passes on. The link tests only its predecessor's
 * output, so the links follow each other stage by stage. */
#define CHAIN_LINK(K) \
    if (meta.PREV_##K != 0 && meta.slots[K:K] == 1) { \
        if (meta.d.pool_credit_tick != 0) { \
            meta.after_slot##K = claim_##K.execute(meta.group_idx); \
        } else { \
            meta.after_slot##K = take_##K.execute(meta.group_idx); \
        } \
    } else { \
        pass_on_##K##_t.apply(); \
    }

/* Stage 0: the candidate hash (docs/PIPELINE.md 10.1). */
control CandidateHash(in headers_t hdr, inout tna_ingress_metadata_t meta) {
    Hash<bit<16>>(HashAlgorithm_t.CRC32) candidate_hash;   /* reflected CRC-32, as zlib */

    /* pipeline.CandidateHash of the packet's own fields, and its
     * group-aligned copy h & ~3 (bits 1:0 stay 0: metadata starts at 0);
     * 30 bits of hash output (an action carries at most 32) */
    @hidden action candidate_hash_of() {
        bit<16> h = candidate_hash.get({ hdr.ipv4.src_addr, hdr.udp.src_port,
                                         hdr.p4ctl.request_id, hdr.p4ctl.hold_count });
        meta.hash = h;
        meta.hash_group[15:2] = h[15:2];
    }
    @hidden table candidate_hash_t {
        actions = { candidate_hash_of; }
        const default_action = candidate_hash_of();
        size = 1;
    }

    apply { candidate_hash_t.apply(); }
}

/* Stage 1, from the pool (server_pool in stage 0). */
control DispatchStage1(in headers_t hdr, inout tna_ingress_metadata_t meta) {
    CreditClock() credit_clock;

    /* jbsq, jiq: the aligned group, offset h & size_mask & ~3; anything
     * else (random): the hashed server, offset h & size_mask. The limit
     * (pipeline.Pool.Limit): 1 for jiq, else the bound. */
    @hidden action group_policy(bit<1> chain) {
        meta.chain = chain;
        meta.offset = meta.hash_group & meta.d.pool_size_mask;
        meta.limit = (bit<32>)meta.d.pool_bound;
    }
    @hidden action group_policy_jiq() {
        meta.chain = 1;
        meta.offset = meta.hash_group & meta.d.pool_size_mask;
        meta.limit = 1;
    }
    @hidden action pick_policy() {
        meta.chain = 0;
        meta.offset = meta.hash & meta.d.pool_size_mask;
        meta.limit = (bit<32>)meta.d.pool_bound;
    }
    @hidden table policy_t {
        key = { meta.d.pool_policy : exact; }
        actions = { group_policy; group_policy_jiq; pick_policy; }
        const default_action = pick_policy();
        size = 2;
        const entries = {
            POLICY_JBSQ : group_policy(1);
            POLICY_JIQ  : group_policy_jiq();
        }
    }
    /* The saturating differences the gateways test (a gateway compares a
     * field with a constant). */
    @hidden action hold_rooms() {
        meta.hold_room_long = meta.d.pool_long_max_holds |-| hdr.p4ctl.hold_count;
        meta.hold_room = meta.d.pool_max_holds |-| hdr.p4ctl.hold_count;
    }
    @hidden table hold_rooms_t {
        actions = { hold_rooms; }
        const default_action = hold_rooms();
        size = 1;
    }

    apply {
        /* 10.1 the candidates' offset; 10.2 the credit clock
         * (pipeline.NowTick); 10.3 the limit and the hold rooms */
        policy_t.apply();
        credit_clock.apply(meta.now, meta.d.pool_credit_tick, meta.now_tick);
        hold_rooms_t.apply();
    }
}

/* Stage 2. */
control DispatchStage2(inout tna_ingress_metadata_t meta) {
    /* the tick before which a credit has expired; also what a bind or a
     * release writes as last_tick (+ CREDIT_TTL_TICKS = now_tick), so that
     * every RegisterAction of a slot array reads only stale_before and
     * threshold (a stateful ALU has two PHV inputs) */
    @hidden action stale_before_of() { meta.stale_before = meta.now_tick - CREDIT_TTL_TICKS; }
    @hidden table stale_before_t {
        actions = { stale_before_of; }
        const default_action = stale_before_of();
        size = 1;
    }
    @hidden action group_of() { meta.group = meta.d.pool_base + meta.offset; }
    @hidden table group_t {
        actions = { group_of; }
        const default_action = group_of();
        size = 1;
    }

    apply {
        stale_before_t.apply();
        group_t.apply();
        /* 10.3 the cap (pipeline.Pool.Cap), one field per gateway */
        if (meta.limit == 0) {
            meta.cap = UNBOUNDED;
        } else if (meta.d.is_long == 0) {
            meta.cap = meta.limit;
        } else if (meta.d.pool_long_reserve == 0) {
            meta.cap = meta.limit;
        } else if (meta.hold_room_long == 0) {
            meta.cap = meta.limit;
        } else {
            /* bounded preemption: long_reserve slots kept for short
             * requests (0 when the reserve is at least the limit) */
            meta.long_cut = 1;
            meta.cap = meta.limit |-| (bit<32>)meta.d.pool_long_reserve;
        }
    }
}

/* Stage 3. */
control DispatchStage3(inout tna_ingress_metadata_t meta, in p4ctl_carry_h carry) {
    DispatchSlots() dispatch_slots;

    /* the cell every slot array holds for the group, and the group's first id */
    @hidden action group_cells() {
        meta.group_idx = meta.group[9:2];
        meta.group_base = meta.group & CANDIDATE_GROUP_MASK;
    }
    @hidden table group_cells_t {
        actions = { group_cells; }
        const default_action = group_cells();
        size = 1;
    }

    apply {
        /* 10.1 the group's cells and the slots the chain tries */
        group_cells_t.apply();
        dispatch_slots.apply(meta.chain, meta.group[1:0], meta.d.pool_size_mask[1:0], meta.slots);
        /* 10.3 the pass's threshold (pipeline.Pool.Threshold) */
        if (carry.forced == 1) {
            meta.threshold = carry.level;
        } else if (carry.level != 0) {
            /* a level round */
            meta.threshold = min(carry.level, meta.cap);
        } else if (meta.chain == 1 && meta.cap == UNBOUNDED) {
            /* a new attempt in an unbounded jbsq pool: an idle server
             * first */
            meta.threshold = 1;
        } else {
            /* a new attempt: first fit below the cap */
            meta.threshold = meta.cap;
        }
    }
}

/* Stages 4-9: the chain and what it found (requests); the credit release
 * (valid replies). */
control ServerDispatch(inout headers_t hdr,
                       inout tna_ingress_metadata_t meta,
                       inout p4ctl_carry_h carry,
                       in bool is_reply,
                       inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                       inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {

    CREDIT_SLOT(0, ".P4ctlIngress.server_credit_0")
    CREDIT_SLOT(1, ".P4ctlIngress.server_credit_1")
    CREDIT_SLOT(2, ".P4ctlIngress.server_credit_2")
    CREDIT_SLOT(3, ".P4ctlIngress.server_credit_3")
    PASS_ON(1)
    PASS_ON(2)
    PASS_ON(3)
    ServerEndpoint() server_endpoint;

    /* stages 6, 7: the least refused count so far, for the level round */
    @hidden action min_refused01_of() { meta.min_refused01 = min(meta.after_slot0, meta.after_slot1); }
    @hidden table min_refused01_t {
        actions = { min_refused01_of; }
        const default_action = min_refused01_of();
        size = 1;
    }
    @hidden action min_refused012_of() { meta.min_refused012 = min(meta.min_refused01, meta.after_slot2); }
    @hidden table min_refused012_t {
        actions = { min_refused012_of; }
        const default_action = min_refused012_of();
        size = 1;
    }
    /* stage 8: the least refused count m = min(min_refused012,
     * after_slot3), in two halves that stage 9 combines: some server is
     * below the cap iff cap |-| m > 0, i.e. iff either half's room is; the
     * next level m |+| 1 is the lesser of the halves' (saturation keeps the
     * order) */
    @hidden action level_parts() {
        meta.level_room012 = meta.cap |-| meta.min_refused012;
        meta.level_room3 = meta.cap |-| meta.after_slot3;
        meta.next_level012 = meta.min_refused012 |+| 1;
        meta.next_level3 = meta.after_slot3 |+| 1;
    }
    @hidden table level_parts_t {
        actions = { level_parts; }
        const default_action = level_parts();
        size = 1;
    }

    /* stage 7: the server the request is bound to if it is: the first slot
     * whose link took it, else slot 3 (whose claim runs beside this), so
     * that stage 8 can look its endpoint up */
    @hidden action candidate_server(bit<16> k) {
        meta.d.server = meta.group_base | k;
    }
    /* stage 9: toward the server, or around again (ingress.p4's send;
     * here so that the two are branches of one if, which the compiler
     * places in one stage) */
    @hidden action send(port_t port) {
        ig_tm_md.ucast_egress_port = port;
        ig_dprsr_md.drop_ctl = 0;
    }
    /* stage 9: the next round's threshold */
    @hidden action level_round() {
        carry.level = min(meta.next_level012, meta.next_level3);
        meta.d.ev_outcome_on = 1;
        meta.d.ev_outcome = EVENT_LEVEL_ROUND;
    }

    apply {
        if (is_reply) {
            /* 11: a valid reply releases its server's credit */
            bit<8> idx = meta.d.server[9:2];
            bit<2> slot = meta.d.server[1:0];
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

        /* 10.4 the chain, slot by slot in stage order */
        if (meta.threshold != 0) {
            if (meta.slots[0:0] == 1) {
                if (meta.d.pool_credit_tick != 0) {
                    meta.after_slot0 = claim_0.execute(meta.group_idx);
                } else {
                    meta.after_slot0 = take_0.execute(meta.group_idx);
                }
            } else {
                meta.after_slot0 = UNBOUNDED;
            }
            CHAIN_LINK(1)
            /* beside the next link: a table runs after its predecessor in
             * the sequence */
            min_refused01_t.apply();
            CHAIN_LINK(2)
            min_refused012_t.apply();
            if (meta.after_slot0 == 0) {
                candidate_server(0);
            } else if (meta.after_slot1 == 0) {
                candidate_server(1);
            } else if (meta.after_slot2 == 0) {
                candidate_server(2);
            } else {
                candidate_server(3);
            }
            CHAIN_LINK(3)
        } else {
            /* no claim runs */
            meta.after_slot0 = UNBOUNDED;
            meta.after_slot1 = UNBOUNDED;
            meta.after_slot2 = UNBOUNDED;
            meta.after_slot3 = UNBOUNDED;
            meta.min_refused012 = UNBOUNDED;
        }
        level_parts_t.apply();

        if (meta.after_slot3 == 0) {
            /* 10.5 bound to meta.d.server */
            hdr.p4ctl.server_id = meta.d.server;
            if (carry.forced == 1) {
                hdr.p4ctl.flags = hdr.p4ctl.flags | FLAG_FORCED;
                meta.d.ev_outcome_on = 1;
                meta.d.ev_outcome = EVENT_FORCED;
            }
            meta.d.count_bound = 1;
            meta.d.count_routed = 1;
            meta.d.probe_request = true;
            /* 10.6 toward the server */
            server_endpoint.apply(meta.d);
            if (!meta.d.endpoint_found) {
                meta.d.ev_outcome_on = 1;
                meta.d.ev_outcome = EVENT_UNREACHABLE;
            } else {
                hdr.ethernet.dst_addr = meta.d.ep_dmac;
                hdr.ipv4.dst_addr = meta.d.ep_addr;
                send(meta.d.ep_port);
                hdr.udp.checksum = 0;
                meta.d.ipv4_rewritten = true;
            }
            return;
        }

        /* 10.7 every tried slot refused (pipeline.Pool.AfterRefusal): another
         * pass; a level round iff some server of the group is below the cap
         * (with threshold 0 no claim ran and both rooms are 0) */
        send(RECIRC_PORT);
        if (carry.forced == 1) {
            carry.level = UNBOUNDED;
            meta.d.ev_outcome_on = 1;
            meta.d.ev_outcome = EVENT_LEVEL_ROUND;
        } else if (meta.level_room012 != 0) {
            level_round();
        } else if (meta.level_room3 != 0) {
            level_round();
        } else if (meta.long_cut == 1) {
            /* a hold caused by bounded preemption */
            hdr.p4ctl.hold_count = hdr.p4ctl.hold_count + 1;
            hdr.p4ctl.flags = hdr.p4ctl.flags | (FLAG_HELD | FLAG_LONG_DEFERRED);
            carry.level = 0;
            meta.d.ev_outcome_on = 1;
            meta.d.ev_outcome = EVENT_HOLD;
            meta.d.ev_cause_on = 1;
            meta.d.ev_cause = EVENT_LONG_DEFERRED;
        } else if (meta.hold_room != 0) {
            hdr.p4ctl.hold_count = hdr.p4ctl.hold_count + 1;
            hdr.p4ctl.flags = hdr.p4ctl.flags | FLAG_HELD;
            carry.level = 0;
            meta.d.ev_outcome_on = 1;
            meta.d.ev_outcome = EVENT_HOLD;
        } else if (meta.d.pool_on_full == ON_FULL_FORCE) {
            /* a forced round at m |+| 1 */
            carry.forced = 1;
            level_round();
        } else {
            carry.nack_release = 1;
        }
    }
}

#endif /* P4CTL_TNA_DISPATCH_P4 */
