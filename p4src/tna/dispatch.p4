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
 *   1  DispatchStage1: the policy's offset, limit and cut cap, the credit
 *      clock, the hold rooms, the level (UNBOUNDED for a new attempt);
 *   2  DispatchStage2: the group, stale_before, the slots (dispatch_slots
 *      by the pool base: a group's ids mod 4 are its), the cap and the
 *      threshold in one ternary lookup (ingress.p4: the region's capacity);
 *   3-6  ServerDispatch: the chain, one slot per stage, its register cell
 *      group[9:2]; the group's first id (DispatchStage3), the least refused
 *      count and the candidate server beside it;
 *   7  the bound request's endpoint, or the next level's parts;
 *   8  toward the server, or what follows the refusal (then ingress.p4's
 *      latency probe in 8, the sample and counters in 9).
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
/* Whether the pass tries slot K: a jbsq or jiq pass by dispatch_slots, a
 * random one the slot of its server, meta.group (known in stage 3, a stage
 * after the pool base that dispatch_slots is keyed on). */
#define TRIES(K) ((meta.chain == 1 && meta.slots[K:K] == 1) || (meta.chain == 0 && meta.group[1:0] == K))
#define CHAIN_LINK(K) \
    if (meta.PREV_##K != 0 && TRIES(K)) { \
        if (meta.d.pool_credit_tick != 0) { \
            meta.after_slot##K = claim_##K.execute(meta.group[9:2]); \
        } else { \
            meta.after_slot##K = take_##K.execute(meta.group[9:2]); \
        } \
    } else { \
        pass_on_##K##_t.apply(); \
    }

/* Stage 0: the candidate hash (docs/PIPELINE.md 10.1). */
control CandidateHash(in headers_t hdr, inout tna_ingress_metadata_t meta) {
    Hash<bit<16>>(HashAlgorithm_t.CRC32) candidate_hash;   /* reflected CRC-32, as zlib */

    /* pipeline.CandidateHash of the packet's own fields, and its
     * group-aligned copy h & ~3 (bits 1:0 stay 0: metadata starts at 0,
     * @pa_auto_init_metadata, and nothing may write them: dispatch_slots is
     * keyed by the pool base on the strength of group[1:0] = base[1:0]);
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
control DispatchStage1(in headers_t hdr, inout tna_ingress_metadata_t meta, in p4ctl_carry_h carry) {
    CreditClock() credit_clock;

    /* jbsq, jiq: the aligned group, offset h & size_mask & ~3; anything
     * else (random): the hashed server, offset h & size_mask. The limit
     * (pipeline.Pool.Limit): 1 for jiq, else the bound. */
    @hidden action group_policy(bit<1> chain) {
        meta.chain = chain;
        meta.offset = meta.hash_group & meta.d.pool_size_mask;
        meta.limit = (bit<32>)meta.d.pool_bound;
        meta.cut = meta.d.pool_bound |-| meta.d.pool_long_reserve;
    }
    @hidden action group_policy_jiq() {
        meta.chain = 1;
        meta.offset = meta.hash_group & meta.d.pool_size_mask;
        meta.limit = 1;
        meta.cut = 1 |-| meta.d.pool_long_reserve;
    }
    @hidden action pick_policy() {
        meta.chain = 0;
        meta.offset = meta.hash & meta.d.pool_size_mask;
        meta.limit = (bit<32>)meta.d.pool_bound;
        meta.cut = meta.d.pool_bound |-| meta.d.pool_long_reserve;
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
        /* 10.1 the candidates' offset; 10.2 the credit clock
         * (pipeline.NowTick); 10.3 the limit and the hold rooms */
        policy_t.apply();
        credit_clock.apply(meta.now, meta.d.pool_credit_tick, meta.now_tick);
        hold_rooms_t.apply();
    }
}

/* Stage 2. */
control DispatchStage2(inout tna_ingress_metadata_t meta, in p4ctl_carry_h carry) {
    DispatchSlots() dispatch_slots;

    /* the group, and the tick before which a credit has expired; also
     * what a bind or a release writes as last_tick (+ CREDIT_TTL_TICKS =
     * now_tick), so that every RegisterAction of a slot array reads only
     * stale_before and threshold (a stateful ALU has two PHV inputs) */
    @hidden action group_of() {
        meta.group = meta.d.pool_base + meta.offset;
        meta.stale_before = meta.now_tick - CREDIT_TTL_TICKS;
    }
    @hidden table group_t {
        actions = { group_of; }
        const default_action = group_of();
        size = 1;
    }

    /* 10.3 the cap (pipeline.Pool.Cap) and the pass's threshold
     * (pipeline.Pool.Threshold) in one lookup, from stage 1's limit, cut
     * cap (limit |-| long_reserve) and level_or_unbounded (the carried
     * level, UNBOUNDED for a new attempt): the cap is UNBOUNDED when the
     * limit is 0, the cut cap for a long request in a pool with a reserve
     * and deferrals left (bounded preemption, long_cut), else the limit; a
     * forced round's threshold is the level; a new attempt in an unbounded
     * jbsq pool tries an idle server first (1); otherwise the threshold is
     * min(level_or_unbounded, cap): the cap for a new attempt, min(level,
     * cap) for a level round. A ternary table rather than a tree of
     * gateways: one logical table in a stage that is full */
    @hidden action unbounded_forced() { meta.cap = UNBOUNDED; meta.threshold = carry.level; }
    @hidden action unbounded_idle()   { meta.cap = UNBOUNDED; meta.threshold = 1; }
    @hidden action unbounded()        { meta.cap = UNBOUNDED; meta.threshold = meta.level_or_unbounded; }
    @hidden action limit_forced()     { meta.cap = meta.limit; meta.threshold = carry.level; }
    @hidden action limit_cap()        { meta.cap = meta.limit; meta.threshold = min(meta.level_or_unbounded, meta.limit); }
    @hidden action cut_forced() {
        meta.long_cut = 1;
        meta.cap = (bit<32>)meta.cut;
        meta.threshold = carry.level;
    }
    @hidden action cut_cap() {
        meta.long_cut = 1;
        meta.cap = (bit<32>)meta.cut;
        meta.threshold = min(meta.level_or_unbounded, (bit<32>)meta.cut);
    }
    @hidden table cap_threshold_t {
        key = {
            meta.limit               : ternary;
            meta.d.is_long           : ternary;
            meta.d.pool_long_reserve : ternary;
            meta.hold_room_long      : ternary;
            carry.forced             : ternary;
            carry.level              : ternary;
            meta.chain               : ternary;
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
        /* 10.1 the slots a jbsq or jiq pass tries: its group's ids mod 4
         * are the pool base's (the offset is a multiple of 4); a random
         * pass tries the slot of meta.group (ServerDispatch tests it) */
        dispatch_slots.apply(meta.chain, meta.d.pool_base[1:0], meta.d.pool_size_mask[1:0], meta.slots);
        cap_threshold_t.apply();
    }
}

/* Stage 3. */
control DispatchStage3(inout tna_ingress_metadata_t meta) {
    /* the group's first id: slot k's server is group_base | k */
    @hidden action group_cells() {
        meta.group_base = meta.group & CANDIDATE_GROUP_MASK;
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

/* Stages 3-8: the chain and what it found (requests); the credit release
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

    /* stages 5, 6: the least refused count so far, for the level round */
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
    /* stage 7: the least refused count m = min(min_refused012,
     * after_slot3), and its two halves' rooms, which stage 8 tests: some
     * server is below the cap iff cap |-| m > 0, i.e. iff either half's
     * room is; the next level is m |+| 1 */
    @hidden action level_parts() {
        meta.level_room012 = meta.cap |-| meta.min_refused012;
        meta.level_room3 = meta.cap |-| meta.after_slot3;
        meta.min_refused = min(meta.min_refused012, meta.after_slot3);
    }
    @hidden table level_parts_t {
        actions = { level_parts; }
        const default_action = level_parts();
        size = 1;
    }

    /* stage 6: the server the request is bound to if it is: the first slot
     * whose link took it, else slot 3 (whose claim runs beside this), so
     * that stage 7 can look its endpoint up */
    @hidden action candidate_server(bit<16> k) {
        meta.d.server = meta.group_base | k;
    }
    /* stage 8: toward the server, or around again (ingress.p4's send;
     * here so that the two are branches of one if, which the compiler
     * places in one stage) */
    @hidden action send(port_t port) {
        ig_tm_md.ucast_egress_port = port;
        ig_dprsr_md.drop_ctl = 0;
    }
    /* stage 8: the next round's threshold */
    @hidden action level_round() {
        carry.level = meta.min_refused |+| 1;
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
            if (TRIES(0)) {
                if (meta.d.pool_credit_tick != 0) {
                    meta.after_slot0 = claim_0.execute(meta.group[9:2]);
                } else {
                    meta.after_slot0 = take_0.execute(meta.group[9:2]);
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
