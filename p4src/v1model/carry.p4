/*
 * p4ctl — the carry of a recirculated request (v1model; docs/PIPELINE.md
 * "Recirculation"): restored at the start of a pass, saved at its end into
 * the @field_list metadata BMv2 keeps (metadata.p4), and rewritten for a
 * spill.
 */
#ifndef P4CTL_V1MODEL_CARRY_P4
#define P4CTL_V1MODEL_CARRY_P4

/* A recirculated request's carry and clock, or a first pass's empty carry. */
control CarryIn(inout v1_metadata_t meta,
                in standard_metadata_t std,
                out p4ctl_carry_h carry,
                out bit<48> now) {
    apply {
        carry.setValid();
        if (std.instance_type == PKT_INSTANCE_TYPE_RECIRC) {
            now = meta.recirc_now;  /* BMv2 leaves ingress_global_timestamp 0 */
            carry.level = meta.carry_level;
            carry.forced = meta.carry_forced;
            carry.region_held = meta.carry_region_held;
            carry.spill = meta.carry_spill;
            carry.exhausted = meta.carry_exhausted;
            carry.nack_release = meta.carry_nack_release;
            carry.nearest = meta.carry_nearest;
            carry.cand = meta.carry_cand;
        } else {
            now = std.ingress_global_timestamp;
            meta.client_port = std.ingress_port;
            carry.level = 0;
            carry.forced = 0;
            carry.region_held = 0;
            carry.spill = 0;
            carry.exhausted = 0;
            carry.nack_release = 0;
            carry.nearest = 0;
            carry.cand = 0;
        }
        carry.selected = 0;   /* TNA's selection pass only */
        carry.fallback = 0;
        carry.pad = 0;
        carry.client_port = meta.client_port;
    }
}

/* Every region refused this one's acquire: select again among the others. */
control SpillCarry(inout p4ctl_metadata_t pass, inout p4ctl_carry_h carry) {
    apply {
        region_set_t untried = pass.cand & ~((bit<32>)1 << pass.region);
        carry.level = 0;
        carry.forced = 0;
        carry.nack_release = 0;
        carry.region_held = 0;
        if (untried == 0) {
            carry.spill = 0;
            carry.exhausted = 1;
        } else {
            carry.spill = 1;
            carry.exhausted = 0;
            carry.cand = untried;
            carry.nearest = pass.nearest;
        }
        pass.recirculate = true;
        outcome(pass, EVENT_REGION_FULL);
    }
}

/* A request that runs again leaves toward its client's port, which egress
 * recirculates, with the carry in the field list. */
control CarryOut(inout v1_metadata_t meta,
                 inout standard_metadata_t std,
                 in p4ctl_carry_h carry) {
    apply {
        if (meta.pass.recirculate) {
            std.egress_spec = meta.client_port;
            meta.carry_level = carry.level;
            meta.carry_forced = carry.forced;
            meta.carry_region_held = carry.region_held;
            meta.carry_spill = carry.spill;
            meta.carry_exhausted = carry.exhausted;
            meta.carry_nack_release = carry.nack_release;
            meta.carry_nearest = carry.nearest;
            meta.carry_cand = carry.cand;
        }
    }
}

#endif /* P4CTL_V1MODEL_CARRY_P4 */
