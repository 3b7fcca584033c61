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
            c.last_tick = meta.now_tick; \
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
            meta.taken_slot = K; \
        } else { \
            meta.min_refused = min(meta.min_refused, meta.refused##K); \
        } \
    }

control ServerDispatch(inout headers_t hdr,
                       inout tna_ingress_metadata_t meta,
                       inout p4ctl_carry_h carry,
                       in bit<48> ts,
                       in bool is_reply) {

    CREDIT_SLOT(0, ".P4ctlIngress.server_credit_0")
    CREDIT_SLOT(1, ".P4ctlIngress.server_credit_1")
    CREDIT_SLOT(2, ".P4ctlIngress.server_credit_2")
    CREDIT_SLOT(3, ".P4ctlIngress.server_credit_3")

    Hash<bit<16>>(HashAlgorithm_t.CRC32) candidate_hash;   /* reflected CRC-32, as zlib */
    DispatchSlots() dispatch_slots;
    CreditClock() credit_clock;

    apply {
        credit_clock.apply(ts, meta.d.pool_credit_tick, meta.now_tick);

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
        meta.hash = candidate_hash.get({ hdr.ipv4.src_addr, hdr.udp.src_port,
                                         hdr.p4ctl.request_id, hdr.p4ctl.hold_count });
        meta.hashed = meta.hash & meta.d.pool_size_mask;
        meta.offset = meta.hashed & CANDIDATE_GROUP_MASK;
        meta.chain = 0;
        if (meta.d.pool_policy == POLICY_JBSQ || meta.d.pool_policy == POLICY_JIQ) {
            meta.chain = 1;
            meta.group = meta.d.pool_base + meta.offset;
        } else {
            meta.group = meta.d.pool_base + meta.hashed;   /* random */
        }
        dispatch_slots.apply(meta.chain, meta.group[1:0], meta.d.pool_size_mask[1:0], meta.slots);
        meta.group_idx = meta.group[9:2];

        /* 10.3 the pass's threshold (pipeline.Pool.Threshold) */
        meta.limit = (bit<32>)meta.d.pool_bound;
        if (meta.d.pool_policy == POLICY_JIQ) {
            meta.limit = 1;
        }
        meta.cap = meta.limit;
        if (meta.limit == 0) {
            meta.cap = UNBOUNDED;
        } else if (meta.d.is_long == 1 && meta.d.pool_long_reserve != 0
                   && hdr.p4ctl.hold_count < meta.d.pool_long_max_holds) {
            meta.long_cut = 1;
            if ((bit<32>)meta.d.pool_long_reserve >= meta.limit) {
                meta.cap = 0;
            } else {
                meta.cap = meta.limit - (bit<32>)meta.d.pool_long_reserve;
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
        meta.stale_before = meta.now_tick - CREDIT_TTL_TICKS;

        /* 10.4 the chain, slot by slot in stage order */
        meta.min_refused = UNBOUNDED;
        if (meta.threshold != 0) {
            CHAIN_SLOT(0)
            CHAIN_SLOT(1)
            CHAIN_SLOT(2)
            CHAIN_SLOT(3)
        }

        if (meta.taken == 1) {
            /* 10.5 bound */
            meta.d.server = meta.group & CANDIDATE_GROUP_MASK;
            meta.d.server = meta.d.server | (server_id_t)meta.taken_slot;
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

        /* 10.7 every tried slot refused (pipeline.Pool.AfterRefusal) */
        meta.d.recirculate = true;
        if (carry.forced == 1) {
            carry.level = UNBOUNDED;
            meta.d.ev_outcome_on = 1;
            meta.d.ev_outcome = EVENT_LEVEL_ROUND;
        } else if (meta.threshold != 0 && meta.min_refused < meta.cap) {
            carry.level = meta.min_refused + 1;
            meta.d.ev_outcome_on = 1;
            meta.d.ev_outcome = EVENT_LEVEL_ROUND;
        } else if (meta.long_cut == 1 || hdr.p4ctl.hold_count < meta.d.pool_max_holds) {
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
