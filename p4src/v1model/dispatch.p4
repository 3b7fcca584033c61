/*
 * p4ctl — server dispatch and credit release (v1model; docs/PIPELINE.md
 * steps 10 and 11): the algorithm of pkg/pipeline (Claim, Pool.Threshold,
 * Pool.AfterRefusal) and p4src/tna/dispatch.p4, one named control per step.
 * BMv2 runs one packet through ingress at a time, so each read-modify-write
 * is atomic, as a Tofino RegisterAction is.
 */
#ifndef P4CTL_V1MODEL_DISPATCH_P4
#define P4CTL_V1MODEL_DISPATCH_P4

/* The pool's credit clock (pipeline.NowTick). */
struct credit_clock_t {
    bit<32> now_tick;
    bool    expiry;        /* credit_tick != 0: credits expire            */
    bit<32> stale_before;  /* now_tick - CREDIT_TTL_TICKS: older expired  */
}

/* What the pass's threshold step decided (pipeline.Pool.Threshold). */
struct pass_limits_t {
    bit<32> cap;
    bit<32> threshold;
    bool    cap_lowered_for_long;  /* bounded preemption lowered the cap */
}

/* The chain so far: taken by a slot, or the least count a slot refused. */
struct claims_t {
    bool    taken;
    bool    stale_reset;     /* the taken credit had expired with work on it */
    bit<32> least_refused;   /* UNBOUNDED until a slot refuses               */
}

control CreditClock(in bit<8> credit_tick, in bit<48> now, out credit_clock_t clock) {
    apply {
        bit<8> tick = credit_tick;
        if (tick > MAX_CREDIT_TICK) {
            tick = MAX_CREDIT_TICK;
        }
        clock.now_tick = 0;
        if (tick != 0) {
            clock.now_tick = (bit<32>)(now >> (tick - 1));
        }
        clock.expiry = tick != 0;
        clock.stale_before = clock.now_tick - CREDIT_TTL_TICKS;
    }
}

/* Server s's credit cell, from the slot array of s mod 4. */
control ReadCredit(in server_id_t s, out bit<64> cell)
                  (register<bit<64>> credit_0, register<bit<64>> credit_1,
                   register<bit<64>> credit_2, register<bit<64>> credit_3) {
    apply {
        bit<32> idx = (bit<32>)((s & SERVER_INDEX_MASK) >> 2);
        bit<2> slot = (bit<2>)s;
        if (slot == 0) {
            credit_0.read(cell, idx);
        } else if (slot == 1) {
            credit_1.read(cell, idx);
        } else if (slot == 2) {
            credit_2.read(cell, idx);
        } else {
            credit_3.read(cell, idx);
        }
    }
}

/* 11: a valid reply releases one credit and its cost from its server. */
control CreditRelease(in p4ctl_metadata_t pass, in credit_clock_t clock)
                     (register<bit<64>> credit_0, register<bit<64>> credit_1,
                      register<bit<64>> credit_2, register<bit<64>> credit_3,
                      register<bit<32>> work_us) {
    ReadCredit(credit_0, credit_1, credit_2, credit_3) read_credit;

    apply {
        bit<16> s = pass.server & SERVER_INDEX_MASK;
        bit<2> slot = (bit<2>)s;
        bit<32> idx = (bit<32>)(s >> 2);
        bit<64> cell;
        read_credit.apply(s, cell);
        bit<32> outstanding = cell[31:0];
        if (outstanding != 0) {
            outstanding = outstanding - 1;
        }
        if (slot == 0) {
            credit_0.write(idx, clock.now_tick ++ outstanding);
        } else if (slot == 1) {
            credit_1.write(idx, clock.now_tick ++ outstanding);
        } else if (slot == 2) {
            credit_2.write(idx, clock.now_tick ++ outstanding);
        } else {
            credit_3.write(idx, clock.now_tick ++ outstanding);
        }
        bit<32> w;
        work_us.read(w, (bit<32>)s);
        if (w >= pass.cost_us) {
            w = w - pass.cost_us;
        } else {
            w = 0;
        }
        work_us.write((bit<32>)s, w);
    }
}

/* 10.1 the candidates: the pool's slots of the aligned group of four the
 * packet hash selects (jbsq, jiq), the lighter of two (p2c, p2c-work:
 * v1model only, expired credits counting as idle), or the hashed server. */
control Candidates(in headers_t hdr,
                   in p4ctl_metadata_t pass,
                   in credit_clock_t clock,
                   out server_id_t group,
                   out bit<4> slots)
                  (register<bit<64>> credit_0, register<bit<64>> credit_1,
                   register<bit<64>> credit_2, register<bit<64>> credit_3,
                   register<bit<32>> work_us) {
    ReadCredit(credit_0, credit_1, credit_2, credit_3) read_credit_c0;
    ReadCredit(credit_0, credit_1, credit_2, credit_3) read_credit_c1;

    apply {
        bit<16> h;
        hash(h, HashAlgorithm.crc32, 16w0,
             { hdr.ipv4.src_addr, hdr.udp.src_port,
               hdr.p4ctl.request_id, hdr.p4ctl.hold_count },
             32w65536);
        bit<8> policy = pass.pool_policy;
        server_id_t c0 = pass.pool_base + (h & pass.pool_size_mask);
        group = c0;
        slots = 0;
        if (policy == POLICY_JBSQ || policy == POLICY_JIQ) {
            group = pass.pool_base + (h & pass.pool_size_mask & CANDIDATE_GROUP_MASK);
            bit<4> members = 4w0b0001;  /* offsets j with j & ~size_mask = 0 */
            bit<2> m = (bit<2>)pass.pool_size_mask;
            if (m == 3) {
                members = 4w0b1111;
            } else if (m == 1) {
                members = 4w0b0011;
            } else if (m == 2) {
                members = 4w0b0101;
            }
            slots = members << (bit<2>)group;
        } else if (policy == POLICY_P2C || policy == POLICY_P2C_WORK) {
            server_id_t c1 = pass.pool_base + (((h & CANDIDATE_GROUP_MASK) | ((h + 1) & 3)) & pass.pool_size_mask);
            bit<64> cell0;
            bit<64> cell1;
            read_credit_c0.apply(c0, cell0);
            read_credit_c1.apply(c1, cell1);
            bit<32> o0 = cell0[31:0];
            bit<32> o1 = cell1[31:0];
            bit<32> w0;
            bit<32> w1;
            work_us.read(w0, (bit<32>)(c0 & SERVER_INDEX_MASK));
            work_us.read(w1, (bit<32>)(c1 & SERVER_INDEX_MASK));
            bit<32> age0 = cell0[63:32] - clock.stale_before;
            bit<32> age1 = cell1[63:32] - clock.stale_before;
            if (clock.expiry && age0[31:31] == 1) { o0 = 0; w0 = 0; }
            if (clock.expiry && age1[31:31] == 1) { o1 = 0; w1 = 0; }
            if ((policy == POLICY_P2C && o1 < o0) ||
                (policy == POLICY_P2C_WORK && (w1 < w0 || (w1 == w0 && o1 < o0)))) {
                group = c1;
            }
            slots = 4w1 << (bit<2>)group;
        } else {
            slots = 4w1 << (bit<2>)c0;  /* random, and unknown codes */
        }
    }
}

/* 10.3 the pass's cap and threshold (pipeline.Pool.Threshold). */
control PassThreshold(in headers_t hdr,
                      in p4ctl_metadata_t pass,
                      in p4ctl_carry_h carry,
                      out pass_limits_t limits) {
    apply {
        bit<32> limit = (bit<32>)pass.pool_bound;
        if (pass.pool_policy == POLICY_JIQ) {
            limit = 1;
        }
        limits.cap = limit;
        limits.cap_lowered_for_long = false;
        if (limit == 0) {
            limits.cap = UNBOUNDED;
        } else if (pass.is_long == 1 && pass.pool_long_reserve != 0 && hdr.p4ctl.hold_count < pass.pool_long_max_holds) {
            limits.cap_lowered_for_long = true;
            if ((bit<32>)pass.pool_long_reserve >= limit) {
                limits.cap = 0;
            } else {
                limits.cap = limit - (bit<32>)pass.pool_long_reserve;
            }
        }
        limits.threshold = carry.level;
        if (carry.forced != 1) {
            if (limits.threshold == 0) {
                /* a new attempt: first fit below the cap; unbounded jbsq
                 * and jiq try idle servers first */
                limits.threshold = limits.cap;
                if (limits.cap == UNBOUNDED && (pass.pool_policy == POLICY_JBSQ || pass.pool_policy == POLICY_JIQ)) {
                    limits.threshold = 1;
                }
            }
            if (limits.threshold > limits.cap) {
                limits.threshold = limits.cap;
            }
        }
    }
}

/* 10.4 one link of the chain: slot k's atomic claim (pipeline.Claim) of
 * server 4 * cell + k, if the pass tries slot k and no earlier slot took the
 * request: an expired credit → 1; below the threshold → + 1; else refused. */
control SlotClaim(in bit<4> slots,
                  in bit<32> cell_index,
                  in credit_clock_t clock,
                  in bit<32> threshold,
                  inout claims_t claims,
                  inout server_id_t server)
                 (register<bit<64>> credits, bit<2> k) {
    apply {
        if ((slots & (4w1 << k)) != 0 && !claims.taken) {
            bit<64> cell;
            credits.read(cell, cell_index);
            bit<32> outstanding = cell[31:0];
            bit<32> age = cell[63:32] - clock.stale_before;
            if (clock.expiry && age[31:31] == 1) {
                claims.stale_reset = outstanding != 0;
                credits.write(cell_index, clock.now_tick ++ 32w1);
                claims.taken = true;
                server = (server_id_t)(cell_index << 2) | (server_id_t)k;
            } else if (outstanding < threshold) {
                credits.write(cell_index, clock.now_tick ++ (outstanding + 1));
                claims.taken = true;
                server = (server_id_t)(cell_index << 2) | (server_id_t)k;
            } else if (outstanding < claims.least_refused) {
                claims.least_refused = outstanding;
            }
        }
    }
}

/* 10.5 bound: the server's expected work, the forced flag, the counts. */
control BindServer(inout headers_t hdr,
                   inout p4ctl_metadata_t pass,
                   in p4ctl_carry_h carry,
                   in bool stale_reset)
                  (register<bit<32>> work_us) {
    apply {
        bit<32> sidx = (bit<32>)(pass.server & SERVER_INDEX_MASK);
        bit<32> w;
        work_us.read(w, sidx);
        if (stale_reset) {
            w = 0;
            pass.ev_cause_on = 1;
            pass.ev_cause = EVENT_STALE_RESET;
        }
        work_us.write(sidx, w + pass.cost_us);
        if (carry.forced == 1) {
            hdr.p4ctl.flags = hdr.p4ctl.flags | FLAG_FORCED;
            outcome(pass, EVENT_FORCED);
        }
        hdr.p4ctl.server_id = pass.server;
        pass.count_bound = 1;
        pass.count_routed = 1;
    }
}

/* 10.7 every tried slot refused (pipeline.Pool.AfterRefusal): another pass,
 * as a level round, a hold (a long-request deferral), a forced round, or the
 * NACK pass. */
control AfterRefusal(inout headers_t hdr,
                     inout p4ctl_metadata_t pass,
                     inout p4ctl_carry_h carry,
                     in pass_limits_t limits,
                     in bit<32> least_refused) {
    apply {
        pass.recirculate = true;
        if (carry.forced == 1) {
            carry.level = UNBOUNDED;
            outcome(pass, EVENT_LEVEL_ROUND);
        } else if (limits.threshold != 0 && least_refused < limits.cap) {
            carry.level = least_refused + 1;
            outcome(pass, EVENT_LEVEL_ROUND);
        } else if (limits.cap_lowered_for_long || hdr.p4ctl.hold_count < pass.pool_max_holds) {
            hdr.p4ctl.hold_count = hdr.p4ctl.hold_count + 1;
            hdr.p4ctl.flags = hdr.p4ctl.flags | FLAG_HELD;
            carry.level = 0;
            outcome(pass, EVENT_HOLD);
            if (limits.cap_lowered_for_long) {
                hdr.p4ctl.flags = hdr.p4ctl.flags | FLAG_LONG_DEFERRED;
                pass.ev_cause_on = 1;
                pass.ev_cause = EVENT_LONG_DEFERRED;
            }
        } else if (pass.pool_on_full == ON_FULL_FORCE) {
            carry.forced = 1;
            carry.level = least_refused |+| 1;
            outcome(pass, EVENT_LEVEL_ROUND);
        } else {
            carry.nack_release = 1;
        }
    }
}

control ServerDispatch(inout headers_t hdr,
                       inout p4ctl_metadata_t pass,
                       inout p4ctl_carry_h carry,
                       in bit<48> now,
                       in bool is_reply) {
    /* server_credit_k[i]: server 4i+k's last_tick (63..32) and outstanding (31..0); data plane: +1 on a bind (1 on an expired credit), -1 on a valid reply. */
    @name(".P4ctlIngress.server_credit_0")
    register<bit<64>>(SLOT_CELLS) server_credit_0;
    @name(".P4ctlIngress.server_credit_1")
    register<bit<64>>(SLOT_CELLS) server_credit_1;
    @name(".P4ctlIngress.server_credit_2")
    register<bit<64>>(SLOT_CELLS) server_credit_2;
    @name(".P4ctlIngress.server_credit_3")
    register<bit<64>>(SLOT_CELLS) server_credit_3;
    /* server_work_us[s]: server s's expected remaining work (µs); data plane: +cost_us on a bind, -cost_us on a valid reply. */
    @name(".P4ctlIngress.server_work_us")
    register<bit<32>>(MAX_SERVERS) server_work_us;

    CreditClock() credit_clock;
    CreditRelease(server_credit_0, server_credit_1, server_credit_2, server_credit_3, server_work_us) credit_release;
    Candidates(server_credit_0, server_credit_1, server_credit_2, server_credit_3, server_work_us) candidates;
    PassThreshold() pass_threshold;
    SlotClaim(server_credit_0, 0) claim_slot_0;
    SlotClaim(server_credit_1, 1) claim_slot_1;
    SlotClaim(server_credit_2, 2) claim_slot_2;
    SlotClaim(server_credit_3, 3) claim_slot_3;
    BindServer(server_work_us) bind_server;
    AfterRefusal() after_refusal;

    apply {
        credit_clock_t clock;
        credit_clock.apply(pass.pool_credit_tick, now, clock);
        if (is_reply) {
            credit_release.apply(pass, clock);
            return;
        }
        server_id_t group;
        bit<4> slots;
        candidates.apply(hdr, pass, clock, group, slots);
        bit<32> group_cell = (bit<32>)((group & SERVER_INDEX_MASK) >> 2);
        pass_limits_t limits;
        pass_threshold.apply(hdr, pass, carry, limits);
        claims_t claims = { false, false, UNBOUNDED };
        if (limits.threshold != 0) {
            claim_slot_0.apply(slots, group_cell, clock, limits.threshold, claims, pass.server);
            claim_slot_1.apply(slots, group_cell, clock, limits.threshold, claims, pass.server);
            claim_slot_2.apply(slots, group_cell, clock, limits.threshold, claims, pass.server);
            claim_slot_3.apply(slots, group_cell, clock, limits.threshold, claims, pass.server);
        }
        if (claims.taken) {
            bind_server.apply(hdr, pass, carry, claims.stale_reset);
        } else {
            after_refusal.apply(hdr, pass, carry, limits, claims.least_refused);
        }
    }
}

#endif /* P4CTL_V1MODEL_DISPATCH_P4 */
