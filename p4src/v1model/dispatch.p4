/*
 * p4ctl — server dispatch and credit release (v1model; docs/PIPELINE.md
 * steps 10 and 11). The same algorithm as p4src/tna/dispatch.p4 and
 * pkg/pipeline (Claim, Pool.Threshold, Pool.AfterRefusal):
 *
 *   candidates  the slots of the aligned group of four the packet hash
 *               selects that belong to the pool (jbsq, jiq), the hashed
 *               server (random), or the lighter of two (p2c, p2c-work;
 *               v1model only);
 *   chain       the slots in order, each one atomic claim: an expired credit
 *               → count 1; count < threshold → count + 1; else refused; the
 *               first that takes the request wins;
 *   after       every tried slot refused: a level round at the least refused
 *               count + 1 (same candidates), or a hold (resample), a
 *               long-request deferral, a forced round, or the NACK pass.
 *
 * Registers (written by the data plane only, read by the controller):
 *   server_credit_<k>[i]  server 4i+k: last_tick (bits 63..32) and
 *                         outstanding (31..0). +1 on a bind (1 when it claimed
 *                         an expired credit), −1 (never below 0) on a valid
 *                         reply; last_tick = now_tick on both.
 *   server_work_us[s]     expected remaining work of server s (µs): +cost_us
 *                         on a bind (cost_us when it claimed an expired
 *                         credit), −cost_us (never below 0) on a valid reply.
 * BMv2 runs one packet through ingress at a time, so each read-modify-write
 * below is atomic, as a Tofino RegisterAction is.
 */
#ifndef P4CTL_V1MODEL_DISPATCH_P4
#define P4CTL_V1MODEL_DISPATCH_P4

/* Read and write server s's credit cell: the slot arrays by s mod 4. */
#define CREDIT_READ(cell, slot, idx) \
    if ((slot) == 0) { server_credit_0.read(cell, idx); } \
    else if ((slot) == 1) { server_credit_1.read(cell, idx); } \
    else if ((slot) == 2) { server_credit_2.read(cell, idx); } \
    else { server_credit_3.read(cell, idx); }
#define CREDIT_WRITE(slot, idx, cell) \
    if ((slot) == 0) { server_credit_0.write(idx, cell); } \
    else if ((slot) == 1) { server_credit_1.write(idx, cell); } \
    else if ((slot) == 2) { server_credit_2.write(idx, cell); } \
    else { server_credit_3.write(idx, cell); }

/* One link of the chain: slot K's atomic claim (pipeline.Claim). */
#define CLAIM_SLOT(K) \
    if (slots[K:K] == 1 && !taken) { \
        bit<64> cell; \
        server_credit_##K.read(cell, group_idx); \
        bit<32> outstanding = cell[31:0]; \
        bit<32> age = cell[63:32] - stale_before; \
        if (expiry && age[31:31] == 1) { \
            stale = outstanding != 0; \
            server_credit_##K.write(group_idx, now_tick ++ 32w1); \
            taken = true; \
            d.server = (server_id_t)(group_idx << 2) | K; \
        } else if (outstanding < threshold) { \
            server_credit_##K.write(group_idx, now_tick ++ (outstanding + 1)); \
            taken = true; \
            d.server = (server_id_t)(group_idx << 2) | K; \
        } else if (outstanding < min_refused) { \
            min_refused = outstanding; \
        } \
    }

control ServerDispatch(inout headers_t hdr,
                       inout p4ctl_metadata_t d,
                       inout p4ctl_carry_h carry,
                       in bit<48> now,
                       in bool is_reply) {

    @name(".P4ctlIngress.server_credit_0")
    register<bit<64>>(SLOT_CELLS) server_credit_0;
    @name(".P4ctlIngress.server_credit_1")
    register<bit<64>>(SLOT_CELLS) server_credit_1;
    @name(".P4ctlIngress.server_credit_2")
    register<bit<64>>(SLOT_CELLS) server_credit_2;
    @name(".P4ctlIngress.server_credit_3")
    register<bit<64>>(SLOT_CELLS) server_credit_3;
    @name(".P4ctlIngress.server_work_us")
    register<bit<32>>(MAX_SERVERS) server_work_us;

    apply {
        /* the pool's credit clock (pipeline.NowTick) */
        bit<8> tick = d.pool_credit_tick;
        if (tick > MAX_CREDIT_TICK) {
            tick = MAX_CREDIT_TICK;
        }
        bit<32> now_tick = 0;
        if (tick != 0) {
            now_tick = (bit<32>)(now >> (tick - 1));
        }
        bool expiry = tick != 0;

        if (is_reply) {
            /* 11: a valid reply releases its server's credit and work */
            bit<16> s = d.server & SERVER_INDEX_MASK;
            bit<2> slot = (bit<2>)s;
            bit<32> idx = (bit<32>)(s >> 2);
            bit<64> cell;
            CREDIT_READ(cell, slot, idx)
            bit<32> outstanding = cell[31:0];
            if (outstanding != 0) {
                outstanding = outstanding - 1;
            }
            CREDIT_WRITE(slot, idx, now_tick ++ outstanding)
            bit<32> w;
            server_work_us.read(w, (bit<32>)s);
            if (w >= d.cost_us) {
                w = w - d.cost_us;
            } else {
                w = 0;
            }
            server_work_us.write((bit<32>)s, w);
            return;
        }

        /* 10.1 candidates */
        bit<16> h;
        hash(h, HashAlgorithm.crc32, 16w0,
             { hdr.ipv4.src_addr, hdr.udp.src_port,
               hdr.p4ctl.request_id, hdr.p4ctl.hold_count },
             32w65536);
        bit<8> policy = d.pool_policy;
        server_id_t c0 = d.pool_base + (h & d.pool_size_mask);
        server_id_t group = c0;      /* an id of the candidates' group */
        bit<4> slots = 0;            /* the slots the chain tries      */
        if (policy == POLICY_JBSQ || policy == POLICY_JIQ) {
            group = d.pool_base + (h & d.pool_size_mask & CANDIDATE_GROUP_MASK);
            bit<4> members = 4w0b0001;         /* j with j & ~size_mask = 0 */
            bit<2> m = (bit<2>)d.pool_size_mask;
            if (m == 3) {
                members = 4w0b1111;
            } else if (m == 1) {
                members = 4w0b0011;
            } else if (m == 2) {
                members = 4w0b0101;
            }
            slots = members << (bit<2>)group;
        } else if (policy == POLICY_P2C || policy == POLICY_P2C_WORK) {
            /* 10.2 (v1model only): the lighter of candidates 0 and 1,
             * expired credits counting as idle */
            server_id_t c1 = d.pool_base + (((h & CANDIDATE_GROUP_MASK) | ((h + 1) & 3)) & d.pool_size_mask);
            bit<32> stale_now = now_tick - CREDIT_TTL_TICKS;
            bit<64> cell0;
            bit<64> cell1;
            CREDIT_READ(cell0, (bit<2>)c0, (bit<32>)((c0 & SERVER_INDEX_MASK) >> 2))
            CREDIT_READ(cell1, (bit<2>)c1, (bit<32>)((c1 & SERVER_INDEX_MASK) >> 2))
            bit<32> o0 = cell0[31:0];
            bit<32> o1 = cell1[31:0];
            bit<32> w0;
            bit<32> w1;
            server_work_us.read(w0, (bit<32>)(c0 & SERVER_INDEX_MASK));
            server_work_us.read(w1, (bit<32>)(c1 & SERVER_INDEX_MASK));
            bit<32> age0 = cell0[63:32] - stale_now;
            bit<32> age1 = cell1[63:32] - stale_now;
            if (expiry && age0[31:31] == 1) { o0 = 0; w0 = 0; }
            if (expiry && age1[31:31] == 1) { o1 = 0; w1 = 0; }
            if ((policy == POLICY_P2C && o1 < o0) ||
                (policy == POLICY_P2C_WORK && (w1 < w0 || (w1 == w0 && o1 < o0)))) {
                group = c1;
            }
            slots = 4w1 << (bit<2>)group;
        } else {
            slots = 4w1 << (bit<2>)c0;     /* random, and unknown codes */
        }
        bit<32> group_idx = (bit<32>)((group & SERVER_INDEX_MASK) >> 2);

        /* 10.3 the pass's threshold (pipeline.Pool.Threshold) */
        bit<32> limit = (bit<32>)d.pool_bound;
        if (policy == POLICY_JIQ) {
            limit = 1;
        }
        bit<32> cap = limit;
        bool long_cut = false;
        if (limit == 0) {
            cap = UNBOUNDED;
        } else if (d.is_long == 1 && d.pool_long_reserve != 0 && hdr.p4ctl.hold_count < d.pool_long_max_holds) {
            long_cut = true;
            if ((bit<32>)d.pool_long_reserve >= limit) {
                cap = 0;
            } else {
                cap = limit - (bit<32>)d.pool_long_reserve;
            }
        }
        bit<32> threshold = carry.level;
        if (carry.forced != 1) {
            if (threshold == 0) {
                /* a new attempt: first fit below the cap; unbounded jbsq
                 * tries idle servers first */
                threshold = cap;
                if (cap == UNBOUNDED && (policy == POLICY_JBSQ || policy == POLICY_JIQ)) {
                    threshold = 1;
                }
            }
            if (threshold > cap) {
                threshold = cap;
            }
        }

        /* 10.4 the chain */
        bit<32> stale_before = now_tick - CREDIT_TTL_TICKS;
        bool taken = false;
        bool stale = false;
        bit<32> min_refused = UNBOUNDED;
        if (threshold != 0) {
            CLAIM_SLOT(0)
            CLAIM_SLOT(1)
            CLAIM_SLOT(2)
            CLAIM_SLOT(3)
        }

        if (taken) {
            /* 10.5 bound */
            bit<32> sidx = (bit<32>)(d.server & SERVER_INDEX_MASK);
            bit<32> w;
            server_work_us.read(w, sidx);
            if (stale) {
                w = 0;
                d.ev_cause_on = 1;
                d.ev_cause = EVENT_STALE_RESET;
            }
            server_work_us.write(sidx, w + d.cost_us);
            if (carry.forced == 1) {
                hdr.p4ctl.flags = hdr.p4ctl.flags | FLAG_FORCED;
                d.ev_outcome_on = 1;
                d.ev_outcome = EVENT_FORCED;
            }
            hdr.p4ctl.server_id = d.server;
            d.count_bound = 1;
            d.count_routed = 1;
            return;
        }

        /* 10.7 every tried slot refused (pipeline.Pool.AfterRefusal) */
        d.recirculate = true;
        if (carry.forced == 1) {
            carry.level = UNBOUNDED;
            d.ev_outcome_on = 1;
            d.ev_outcome = EVENT_LEVEL_ROUND;
        } else if (threshold != 0 && min_refused < cap) {
            carry.level = min_refused + 1;
            d.ev_outcome_on = 1;
            d.ev_outcome = EVENT_LEVEL_ROUND;
        } else if (long_cut || hdr.p4ctl.hold_count < d.pool_max_holds) {
            hdr.p4ctl.hold_count = hdr.p4ctl.hold_count + 1;
            hdr.p4ctl.flags = hdr.p4ctl.flags | FLAG_HELD;
            carry.level = 0;
            d.ev_outcome_on = 1;
            d.ev_outcome = EVENT_HOLD;
            if (long_cut) {
                hdr.p4ctl.flags = hdr.p4ctl.flags | FLAG_LONG_DEFERRED;
                d.ev_cause_on = 1;
                d.ev_cause = EVENT_LONG_DEFERRED;
            }
        } else if (d.pool_on_full == ON_FULL_FORCE) {
            carry.forced = 1;
            carry.level = min_refused |+| 1;
            d.ev_outcome_on = 1;
            d.ev_outcome = EVENT_LEVEL_ROUND;
        } else {
            carry.nack_release = 1;
        }
    }
}

#endif /* P4CTL_V1MODEL_DISPATCH_P4 */
