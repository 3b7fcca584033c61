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

/* One link of the chain: slot K runs if the pass tries it and no earlier
 * slot took the request. */
#define CHAIN_SLOT(K) \
    if (meta.taken == 0 && meta.slots[K:K] == 1) { \
        if (meta.d.pool_credit_tick != 0) { \
            meta.refused##K = claim_##K.execute(meta.group_idx); \
        } else { \
            meta.refused##K = take_##K.execute(meta.group_idx); \
        } \
        if (meta.refused##K == 0) { \
            meta.taken = 1; \
            meta.d.server = meta.group_base | K; \
        } else { \
            meta.min_refused = min(meta.min_refused, meta.refused##K); \
        } \
    }

control ServerDispatch(inout headers_t hdr,
                       inout tna_ingress_metadata_t meta,
                       inout p4ctl_carry_h carry,
                       in bool is_reply) {

    CREDIT_SLOT(0, ".P4ctlIngress.server_credit_0")
    CREDIT_SLOT(1, ".P4ctlIngress.server_credit_1")
    CREDIT_SLOT(2, ".P4ctlIngress.server_credit_2")
    CREDIT_SLOT(3, ".P4ctlIngress.server_credit_3")

    Hash<bit<16>>(HashAlgorithm_t.CRC32) candidate_hash;   /* reflected CRC-32, as zlib */
    DispatchSlots() dispatch_slots;
    CreditClock() credit_clock;

    /* 10.1 in dependency levels: a Tofino action runs in one stage and
     * cannot use what it writes, so each level is its own @hidden table
     * (not in the P4Info) and bf-p4c puts the levels in successive stages. */
    @hidden action candidate_hash_level() {
        meta.hash = candidate_hash.get({ hdr.ipv4.src_addr, hdr.udp.src_port,
                                         hdr.p4ctl.request_id, hdr.p4ctl.hold_count });
        meta.group_mask = meta.d.pool_size_mask & CANDIDATE_GROUP_MASK;
    }
    @hidden table candidate_hash_t {
        actions = { candidate_hash_level; }
        const default_action = candidate_hash_level();
        size = 1;
    }
    /* hashed = h & size_mask; offset = hashed & ~3 = h & (size_mask & ~3) */
    @hidden action candidate_mask_level() {
        meta.hashed = meta.hash & meta.d.pool_size_mask;
        meta.offset = meta.hash & meta.group_mask;
    }
    @hidden table candidate_mask_t {
        actions = { candidate_mask_level; }
        const default_action = candidate_mask_level();
        size = 1;
    }
    /* jbsq, jiq: the aligned group; anything else (random): the hashed server */
    @hidden action group_of_chain() {
        meta.chain = 1;
        meta.group = meta.d.pool_base + meta.offset;
    }
    @hidden action group_of_pick() {
        meta.chain = 0;
        meta.group = meta.d.pool_base + meta.hashed;
    }
    @hidden table candidate_group_t {
        key = { meta.d.pool_policy : exact; }
        actions = { group_of_chain; group_of_pick; }
        const default_action = group_of_pick();
        size = 2;
        const entries = {
            POLICY_JBSQ : group_of_chain();
            POLICY_JIQ  : group_of_chain();
        }
    }
    /* The saturating differences the gateways test (a gateway compares a
     * field with a constant; @hidden tables keep the compiler from folding
     * the difference back into the condition). */
    @hidden action hold_rooms() {
        meta.hold_room_long = meta.d.pool_long_max_holds |-| hdr.p4ctl.hold_count;
        meta.hold_room = meta.d.pool_max_holds |-| hdr.p4ctl.hold_count;
    }
    @hidden table hold_rooms_t {
        actions = { hold_rooms; }
        const default_action = hold_rooms();
        size = 1;
    }
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
    @hidden action level_room_of() { meta.level_room = meta.cap |-| meta.min_refused; }
    @hidden table level_room_t {
        actions = { level_room_of; }
        const default_action = level_room_of();
        size = 1;
    }
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
        credit_clock.apply(meta.now, meta.d.pool_credit_tick, meta.now_tick);
        stale_before_t.apply();

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

        /* 10.1 candidates: the group and its slots */
        candidate_hash_t.apply();
        candidate_mask_t.apply();
        candidate_group_t.apply();
        group_cells_t.apply();
        dispatch_slots.apply(meta.chain, meta.group[1:0], meta.d.pool_size_mask[1:0], meta.slots);

        /* 10.3 the pass's threshold (pipeline.Pool.Threshold). A gateway
         * compares a field with a constant, not with another field: a < b
         * becomes the saturating difference b |-| a tested against 0. */
        meta.limit = (bit<32>)meta.d.pool_bound;
        if (meta.d.pool_policy == POLICY_JIQ) {
            meta.limit = 1;
        }
        hold_rooms_t.apply();
        meta.cap = meta.limit;
        if (meta.limit == 0) {
            meta.cap = UNBOUNDED;
        } else if (meta.d.is_long == 1) {
            /* nested: one field per gateway */
            if (meta.d.pool_long_reserve != 0) {
                if (meta.hold_room_long != 0) {
                    /* bounded preemption: long_reserve slots kept for
                     * short requests (0 when the reserve is at least the
                     * limit) */
                    meta.long_cut = 1;
                    meta.cap = meta.limit |-| (bit<32>)meta.d.pool_long_reserve;
                }
            }
        }
        meta.threshold = carry.level;
        if (carry.forced != 1) {
            if (meta.threshold == 0) {
                /* a new attempt: first fit below the cap; unbounded jbsq
                 * tries idle servers first */
                meta.threshold = meta.cap;
                if (meta.chain == 1 && meta.cap == UNBOUNDED) {
                    meta.threshold = 1;
                }
            }
            meta.threshold = min(meta.threshold, meta.cap);
        }

        /* 10.4 the chain, slot by slot in stage order */
        meta.min_refused = UNBOUNDED;
        if (meta.threshold != 0) {
            CHAIN_SLOT(0)
            CHAIN_SLOT(1)
            CHAIN_SLOT(2)
            CHAIN_SLOT(3)
        }

        if (meta.taken == 1) {
            /* 10.5 bound (the chain set meta.d.server) */
            if (carry.forced == 1) {
                hdr.p4ctl.flags = hdr.p4ctl.flags | FLAG_FORCED;
                meta.d.ev_outcome_on = 1;
                meta.d.ev_outcome = EVENT_FORCED;
            }
            hdr.p4ctl.server_id = meta.d.server;
            meta.d.count_bound = 1;
            meta.d.count_routed = 1;
            return;
        }

        /* 10.7 every tried slot refused (pipeline.Pool.AfterRefusal);
         * level_room > 0 iff some server of the group is below the cap */
        level_room_t.apply();
        meta.d.recirculate = true;
        /* the conditions, one field per gateway */
        bool level = false;
        if (meta.threshold != 0) {
            if (meta.level_room != 0) {
                level = true;
            }
        }
        bool hold = false;
        if (meta.long_cut == 1) {
            hold = true;
        } else if (meta.hold_room != 0) {
            hold = true;
        }
        if (carry.forced == 1) {
            carry.level = UNBOUNDED;
            meta.d.ev_outcome_on = 1;
            meta.d.ev_outcome = EVENT_LEVEL_ROUND;
        } else if (level) {
            carry.level = meta.min_refused + 1;
            meta.d.ev_outcome_on = 1;
            meta.d.ev_outcome = EVENT_LEVEL_ROUND;
        } else if (hold) {
            hdr.p4ctl.hold_count = hdr.p4ctl.hold_count + 1;
            hdr.p4ctl.flags = hdr.p4ctl.flags | FLAG_HELD;
            carry.level = 0;
            meta.d.ev_outcome_on = 1;
            meta.d.ev_outcome = EVENT_HOLD;
            if (meta.long_cut == 1) {
                hdr.p4ctl.flags = hdr.p4ctl.flags | FLAG_LONG_DEFERRED;
                meta.d.ev_cause_on = 1;
                meta.d.ev_cause = EVENT_LONG_DEFERRED;
            }
        } else if (meta.d.pool_on_full == ON_FULL_FORCE) {
            carry.forced = 1;
            carry.level = meta.min_refused |+| 1;
            meta.d.ev_outcome_on = 1;
            meta.d.ev_outcome = EVENT_LEVEL_ROUND;
        } else {
            carry.nack_release = 1;
        }
    }
}

#endif /* P4CTL_TNA_DISPATCH_P4 */
