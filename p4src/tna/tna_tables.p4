/*
 * p4ctl — the TNA program's constant tables: what Tofino cannot compute in
 * one ALU operation — a variable shift, a slice at a variable offset —
 * looked up instead. const entries, in the P4Info but never written by the
 * controller (pipeline.TNAOnly). The v1model program computes the same
 * values with shifts (p4src/v1model/dispatch.p4, carry.p4).
 */
#ifndef P4CTL_TNA_TABLES_P4
#define P4CTL_TNA_TABLES_P4

/* 1 << region, for the spill's untried regions (passes.p4). Regions >= 32 miss: 0. */
control RegionBit(in region_id_t region, out region_set_t bit_r) {
    @name(".P4ctlIngress.set_region_bit")
    action set_region_bit(region_set_t b) { bit_r = b; }

    @name(".P4ctlIngress.region_bit")
    table region_bit {
        key = { region : exact @name("region"); }
        actions = { set_region_bit; NoAction; }
        default_action = NoAction();
        size = MAX_REGIONS;
        const entries = {
            0: set_region_bit(32w1 << 0);
            1: set_region_bit(32w1 << 1);
            2: set_region_bit(32w1 << 2);
            3: set_region_bit(32w1 << 3);
            4: set_region_bit(32w1 << 4);
            5: set_region_bit(32w1 << 5);
            6: set_region_bit(32w1 << 6);
            7: set_region_bit(32w1 << 7);
            8: set_region_bit(32w1 << 8);
            9: set_region_bit(32w1 << 9);
            10: set_region_bit(32w1 << 10);
            11: set_region_bit(32w1 << 11);
            12: set_region_bit(32w1 << 12);
            13: set_region_bit(32w1 << 13);
            14: set_region_bit(32w1 << 14);
            15: set_region_bit(32w1 << 15);
            16: set_region_bit(32w1 << 16);
            17: set_region_bit(32w1 << 17);
            18: set_region_bit(32w1 << 18);
            19: set_region_bit(32w1 << 19);
            20: set_region_bit(32w1 << 20);
            21: set_region_bit(32w1 << 21);
            22: set_region_bit(32w1 << 22);
            23: set_region_bit(32w1 << 23);
            24: set_region_bit(32w1 << 24);
            25: set_region_bit(32w1 << 25);
            26: set_region_bit(32w1 << 26);
            27: set_region_bit(32w1 << 27);
            28: set_region_bit(32w1 << 28);
            29: set_region_bit(32w1 << 29);
            30: set_region_bit(32w1 << 30);
            31: set_region_bit(32w1 << 31);
        }
    }

    apply {
        bit_r = 0;
        region_bit.apply();
    }
}

/* The slots a pass tries (pipeline.CandidateServers), bit k = slot k: a jbsq
 * or jiq group's members (tries_group = 1) by base mod 4 (sel) and size_mask,
 * or the hashed server's slot (README.md "Invariants"). */
control DispatchSlots(in bit<1> tries_group, in bit<2> sel, in bit<2> mask_lo, out bit<4> slots) {
    @name(".P4ctlIngress.set_dispatch_slots")
    action set_dispatch_slots(bit<4> s) { slots = s; }

    @name(".P4ctlIngress.dispatch_slots")
    table dispatch_slots {
        key = {
            tries_group : exact   @name("chain");
            sel         : exact   @name("sel");
            mask_lo     : ternary @name("mask_lo");
        }
        actions = { set_dispatch_slots; NoAction; }
        default_action = NoAction();
        size = 32;
        const entries = {
            (1, 0, 0 &&& 3): set_dispatch_slots(4w0x1);
            (1, 0, 1 &&& 3): set_dispatch_slots(4w0x3);
            (1, 0, 2 &&& 3): set_dispatch_slots(4w0x5);
            (1, 0, 3 &&& 3): set_dispatch_slots(4w0xf);
            (1, 1, 0 &&& 3): set_dispatch_slots(4w0x2);
            (1, 1, 1 &&& 3): set_dispatch_slots(4w0x6);
            (1, 1, 2 &&& 3): set_dispatch_slots(4w0xa);
            (1, 1, 3 &&& 3): set_dispatch_slots(4w0xe);
            (1, 2, 0 &&& 3): set_dispatch_slots(4w0x4);
            (1, 2, 1 &&& 3): set_dispatch_slots(4w0xc);
            (1, 2, 2 &&& 3): set_dispatch_slots(4w0x4);
            (1, 2, 3 &&& 3): set_dispatch_slots(4w0xc);
            (1, 3, 0 &&& 3): set_dispatch_slots(4w0x8);
            (1, 3, 1 &&& 3): set_dispatch_slots(4w0x8);
            (1, 3, 2 &&& 3): set_dispatch_slots(4w0x8);
            (1, 3, 3 &&& 3): set_dispatch_slots(4w0x8);
            (0, 0, 0 &&& 0): set_dispatch_slots(4w0x1);
            (0, 1, 0 &&& 0): set_dispatch_slots(4w0x2);
            (0, 2, 0 &&& 0): set_dispatch_slots(4w0x4);
            (0, 3, 0 &&& 0): set_dispatch_slots(4w0x8);
        }
    }

    apply {
        slots = 0;
        dispatch_slots.apply();
    }
}

/* The pool's credit clock (pipeline.NowTick): the pass clock shifted right by
 * credit_tick - 1, one action a tick (README "no-variable-shift"); tick 0 or
 * above TNA_MAX_CREDIT_TICK misses: 0, never expires (README "What differs
 * from v1model"). */
control CreditClock(in bit<32> now, in bit<8> tick, out bit<32> now_tick) {
    @name(".P4ctlIngress.credit_clock_1") action clock_1() { now_tick = now; }
    @name(".P4ctlIngress.credit_clock_2") action clock_2() { now_tick = now >> 1; }
    @name(".P4ctlIngress.credit_clock_3") action clock_3() { now_tick = now >> 2; }
    @name(".P4ctlIngress.credit_clock_4") action clock_4() { now_tick = now >> 3; }
    @name(".P4ctlIngress.credit_clock_5") action clock_5() { now_tick = now >> 4; }
    @name(".P4ctlIngress.credit_clock_6") action clock_6() { now_tick = now >> 5; }
    @name(".P4ctlIngress.credit_clock_7") action clock_7() { now_tick = now >> 6; }
    @name(".P4ctlIngress.credit_clock_8") action clock_8() { now_tick = now >> 7; }
    @name(".P4ctlIngress.credit_clock_9") action clock_9() { now_tick = now >> 8; }
    @name(".P4ctlIngress.credit_clock_10") action clock_10() { now_tick = now >> 9; }
    @name(".P4ctlIngress.credit_clock_11") action clock_11() { now_tick = now >> 10; }
    @name(".P4ctlIngress.credit_clock_12") action clock_12() { now_tick = now >> 11; }
    @name(".P4ctlIngress.credit_clock_13") action clock_13() { now_tick = now >> 12; }
    @name(".P4ctlIngress.credit_clock_14") action clock_14() { now_tick = now >> 13; }
    @name(".P4ctlIngress.credit_clock_15") action clock_15() { now_tick = now >> 14; }
    @name(".P4ctlIngress.credit_clock_16") action clock_16() { now_tick = now >> 15; }
    @name(".P4ctlIngress.credit_clock_17") action clock_17() { now_tick = now >> 16; }
    @name(".P4ctlIngress.credit_clock_18") action clock_18() { now_tick = now >> 17; }
    @name(".P4ctlIngress.credit_clock_19") action clock_19() { now_tick = now >> 18; }
    @name(".P4ctlIngress.credit_clock_20") action clock_20() { now_tick = now >> 19; }
    @name(".P4ctlIngress.credit_clock_21") action clock_21() { now_tick = now >> 20; }
    @name(".P4ctlIngress.credit_clock_22") action clock_22() { now_tick = now >> 21; }
    @name(".P4ctlIngress.credit_clock_23") action clock_23() { now_tick = now >> 22; }
    @name(".P4ctlIngress.credit_clock_24") action clock_24() { now_tick = now >> 23; }

    @name(".P4ctlIngress.credit_clock")
    table credit_clock {
        key = { tick : exact @name("credit_tick"); }
        actions = {
            clock_1;
            clock_2;
            clock_3;
            clock_4;
            clock_5;
            clock_6;
            clock_7;
            clock_8;
            clock_9;
            clock_10;
            clock_11;
            clock_12;
            clock_13;
            clock_14;
            clock_15;
            clock_16;
            clock_17;
            clock_18;
            clock_19;
            clock_20;
            clock_21;
            clock_22;
            clock_23;
            clock_24;
            NoAction;
        }
        default_action = NoAction();
        size = 64;
        const entries = {
            1: clock_1();
            2: clock_2();
            3: clock_3();
            4: clock_4();
            5: clock_5();
            6: clock_6();
            7: clock_7();
            8: clock_8();
            9: clock_9();
            10: clock_10();
            11: clock_11();
            12: clock_12();
            13: clock_13();
            14: clock_14();
            15: clock_15();
            16: clock_16();
            17: clock_17();
            18: clock_18();
            19: clock_19();
            20: clock_20();
            21: clock_21();
            22: clock_22();
            23: clock_23();
            24: clock_24();
        }
    }

    apply {
        now_tick = 0;
        credit_clock.apply();
    }
}

#endif /* P4CTL_TNA_TABLES_P4 */
