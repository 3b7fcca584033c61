/*
 * p4ctl — v1model metadata: the pass's lookups and decisions
 * (p4ctl_metadata_t, ../shared/headers.p4) and what a recirculated request
 * keeps, which BMv2 preserves only in @field_list metadata (egress.p4).
 */
#ifndef P4CTL_V1MODEL_METADATA_P4
#define P4CTL_V1MODEL_METADATA_P4

/* standard_metadata.instance_type of a recirculated packet (BMv2). */
#define PKT_INSTANCE_TYPE_RECIRC 4
/* The field list preserved across recirculation (egress.p4). */
#define CARRY_FIELD_LIST 1

struct v1_metadata_t {
    p4ctl_metadata_t pass;        /* this pass's lookups, decisions and counts */
    /* the carry (p4ctl_carry_h) and the time the request left: carry.p4 */
    @field_list(CARRY_FIELD_LIST) port_t       client_port;
    @field_list(CARRY_FIELD_LIST) bit<48>      recirc_now;
    @field_list(CARRY_FIELD_LIST) bit<32>      carry_level;
    @field_list(CARRY_FIELD_LIST) bit<8>       carry_forced;
    @field_list(CARRY_FIELD_LIST) bit<8>       carry_region_held;
    @field_list(CARRY_FIELD_LIST) bit<8>       carry_spill;
    @field_list(CARRY_FIELD_LIST) bit<8>       carry_exhausted;
    @field_list(CARRY_FIELD_LIST) bit<8>       carry_nack_release;
    @field_list(CARRY_FIELD_LIST) region_id_t  carry_nearest;
    @field_list(CARRY_FIELD_LIST) region_set_t carry_cand;
}

/* An event of the outcome lane (pipeline.Lane), counted at the end of the pass. */
void outcome(inout p4ctl_metadata_t pass, in bit<4> event) {
    pass.ev_outcome_on = 1;
    pass.ev_outcome = event;
}

#endif /* P4CTL_V1MODEL_METADATA_P4 */
