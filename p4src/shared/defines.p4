/*
 * p4ctl — sizes, widths and numeric codes shared by every architecture.
 *
 * The Go mirror of this file is pkg/pipeline (pipeline.go, schema.go); the
 * prose is docs/PIPELINE.md. A value changed here changes there in the same
 * commit, and `make p4` regenerates p4src/build/.
 */
#ifndef P4CTL_DEFINES_P4
#define P4CTL_DEFINES_P4

/* ---- array and table sizes (pipeline.MaxRegions, MaxServers, ...) ---- */
#define MAX_REGIONS            32     /* feasible bitmap width; region ids 0..31      */
#define MAX_SERVERS            1024   /* per-server registers/counters; ids 0..1023   */
#define REGION_INDEX_MASK      0x1F   /* register/counter index = region & mask       */
#define SERVER_INDEX_MASK      0x3FF  /* register/counter index = server & mask       */
#define NUM_EVENTS             16     /* dispatch_events size                         */
#define CLIENT_SITE_SIZE       1024
#define SERVER_ENDPOINT_SIZE   1024
#define REPLY_SOURCE_SIZE      1024
#define SLA_FEASIBILITY_SIZE   4096
#define CARBON_RANK_SIZE       4096
#define EXEC_CLASS_SIZE        256
#define L3_FORWARD_SIZE        16384
#define L2_FORWARD_SIZE        1024

/* ---- wire constants (docs/PROTOCOL.md, pkg/wire) ---- */
#define ETHERTYPE_IPV4         0x0800
#define IPPROTO_UDP            17
#define P4CTL_UDP_PORT         9800
#define P4CTL_VERSION          1
#define P4CTL_HEADER_BYTES     16
#define UDP_HEADER_BYTES       8
#define P4CTL_MIN_UDP_LENGTH   24     /* UDP header + p4ctl header                    */
#define MSG_REQUEST            1
#define MSG_REPLY              2
#define MSG_NACK               3
#define NO_SERVER              0xFFFF /* server_id of a request sent to a remote region */

/* flags byte (wire.Flag*) */
#define FLAG_FALLBACK          0x01
#define FLAG_SPILLED           0x02
#define FLAG_HELD              0x04
#define FLAG_FORCED            0x08
#define FLAG_LONG_DEFERRED     0x10

/* ---- controller codes (pipeline.Policy, OnFull, NextHop*) ---- */
#define POLICY_RANDOM          0
#define POLICY_P2C             1
#define POLICY_P2C_WORK        2
#define POLICY_JBSQ            3
#define POLICY_JIQ             4
#define ON_FULL_NACK           0
#define ON_FULL_FORCE          1
#define NEXT_HOP_NONE          0
#define NEXT_HOP_LOCAL         1
#define NEXT_HOP_REMOTE        2

/* ---- dispatch_events indices (pipeline.Event*) ---- */
#define EVENT_MALFORMED        0
#define EVENT_FALLBACK         1
#define EVENT_SPILLED          2
#define EVENT_HOLD             3
#define EVENT_NACK             4
#define EVENT_FORCED           5
#define EVENT_LONG_DEFERRED    6
#define EVENT_STALE_RESET      7
#define EVENT_REPLY_RELEASED   8
#define EVENT_REPLY_REJECTED   9
#define EVENT_UNREACHABLE      10
#define EVENT_LEVEL_ROUND      11
#define EVENT_REGION_FULL      12

/* A pass tries at most CANDIDATES servers: the aligned group of four the
 * packet hash selects, one per credit slot array (pipeline.Candidates). */
#define CANDIDATES             4
#define CANDIDATE_GROUP_MASK   0xFFFC
#define SLOT_CELLS             256    /* cells per server_credit_<slot> array   */

/* ---- credits (pipeline.CreditTTLTicks, MaxCreditTick) ---- */
#define CREDIT_TTL_TICKS       7      /* a credit expires after more ticks      */
#define MAX_CREDIT_TICK        38
#define UNBOUNDED              0xFFFFFFFF

/* ---- latency probes (pipeline.ProbeIndex, ProbeTimeout; PIPELINE.md) ---- */
#define LATENCY_PROBE_CELLS    8192   /* 64 sites x 4 ways x 32 regions          */
#define PROBE_SITE_MASK        0x3F   /* site ids alias modulo 64                */
#define PROBE_WAY_MASK         0x3    /* request_id's low bits pick the way      */
#define PROBE_TIMEOUT          0x400000 /* 2^22 clock units (~4.2 s): a probe
                                           older is taken again, reported lost */
#define PROBE_EXPIRED_BELOW    (-(int<32>)PROBE_TIMEOUT) /* expired: (int)(sent - now) below this */
#define DIGEST_LATENCY         1      /* v1model digest receiver                 */

#endif /* P4CTL_DEFINES_P4 */
