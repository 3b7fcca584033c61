/*
 * p4ctl — TNA headers and metadata: the carry in front of a recirculated
 * request, the register pairs, and what the ingress stages hand each other
 * (the stage that computes a field is its comment's number; README.md
 * "Stages").
 */
#ifndef P4CTL_TNA_METADATA_P4
#define P4CTL_TNA_METADATA_P4

/* Tofino 1, pipe 0 recirculation port. Deployment-specific. */
#define RECIRC_PORT 68
/* The size of p4ctl_carry_h, in front of every recirculated packet. */
#define CARRY_BYTES 16

/* The carry rides in front of the Ethernet header (README "recirculation"). */
struct tna_headers_t {
    p4ctl_carry_h carry;
    headers_t     h;
}

/* A latency probe (probe.p4): the pair a stateful ALU updates atomically. */
struct probe_pair_t {
    bit<32> sent;
    bit<32> request_id;
}

/* One server's credit cell: the pair a stateful ALU updates atomically. */
struct credit_pair_t {
    bit<32> outstanding;
    bit<32> last_tick;
}

struct tna_ingress_metadata_t {
    p4ctl_metadata_t pass;        /* the pass's lookups, decisions and counts */
    /* dispatch.p4 */
    bit<16>      candidate_hash;          /* 0: the candidate hash, low 16 bits      */
    bit<16>      candidate_hash_aligned;  /* 0: candidate_hash & ~3                  */
    bit<1>       tries_group;             /* 1: jbsq or jiq (a group), 0: random     */
    bit<16>      group_offset;            /* 1: the candidates' offset in the pool   */
    bit<32>      limit;                   /* 1: pipeline.Pool.Limit                  */
    bit<8>       holds_left;              /* 1: max_holds |-| hold_count             */
    bit<8>       long_holds_left;         /* 1: long_max_holds |-| hold_count        */
    bit<32>      now_tick;                /* 1: the pool's credit clock              */
    bit<32>      level_or_unbounded;      /* 1: carry.level, UNBOUNDED if it is 0    */
    bit<16>      long_cap;                /* 1: limit |-| long_reserve               */
    server_id_t  group;                   /* 2: base + group_offset                  */
    bit<32>      cap;                     /* 2: pipeline.Pool.Cap                    */
    bit<1>       cap_lowered_for_long;    /* 2: bounded preemption lowered the cap   */
    bit<32>      stale_before;            /* 2: now_tick - CREDIT_TTL_TICKS          */
    bit<32>      threshold;               /* 2: pipeline.Pool.Threshold              */
    server_id_t  group_first_id;          /* 3: group & ~3: slot k's server is | k   */
    bit<4>       slots_tried;             /* 2: the slots a jbsq or jiq pass tries   */
    /* 3-6: after slots 0..k: 0 = one of them took the request, else the
     * refused count of the last slot tried (UNBOUNDED before any) */
    bit<32>      refused_upto0;
    bit<32>      refused_upto1;
    bit<32>      refused_upto2;
    bit<32>      refused_upto3;
    bit<32>      least_refused_upto1;     /* 5: min(refused_upto0, refused_upto1)    */
    bit<32>      least_refused_upto2;     /* 6: min(least_refused_upto1, upto2)      */
    bit<32>      cap_room_upto2;          /* 7: cap |-| least_refused_upto2          */
    bit<32>      cap_room_slot3;          /* 7: cap |-| refused_upto3                */
    bit<32>      least_refused;           /* 7: min(least_refused_upto2, upto3)      */
    /* ingress.p4, passes.p4, capacity.p4 */
    region_set_t region_bit;              /* 0: 1 << hdr.region_id (region_bit)      */
    region_set_t untried_regions;         /* 1: carry.cand & ~region_bit             */
    bit<1>       valid_reply;             /* 1: a reply of the server it names       */
    bit<1>       local;                   /* 1: a request for a local region's pool  */
    bit<1>       forward_reply;           /* 1: a reply l3_forward forwards          */
    bit<32>      region_full;             /* 2: a refused acquire's count; 0 = held  */
    bit<13>      probe_cell;              /* 0: the header's latency_probe cell      */
    /* probe.p4 */
    bit<32>      now;                     /* global_tstamp[41:10] (1.024 µs units)   */
    bit<8>       sample_lost;             /* latency_sample digest data              */
    bit<32>      sample_rtt;
}

struct tna_egress_headers_t {
    p4ctl_carry_h carry;
}

struct tna_egress_metadata_t { }

#endif /* P4CTL_TNA_METADATA_P4 */
