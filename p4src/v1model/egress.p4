/*
 * p4ctl — egress (v1model / BMv2). Requests ingress decided to run again
 * (a level round, a hold, a forced round, a spill, the NACK pass) are
 * recirculated; everything else leaves unchanged. No tables, registers or
 * counters live here.
 *
 * BMv2 resets all metadata of a recirculated packet except the user
 * metadata fields tagged @field_list(CARRY_FIELD_LIST): the carry, the
 * client's port (where a NACK goes) and the time at which the packet left,
 * which the next pass uses as `now` because BMv2 leaves
 * ingress_global_timestamp at 0 for recirculated packets.
 */
#ifndef P4CTL_V1MODEL_EGRESS_P4
#define P4CTL_V1MODEL_EGRESS_P4

control P4ctlEgress(inout headers_t hdr,
                    inout v1_metadata_t meta,
                    inout standard_metadata_t std) {
    apply {
        if (meta.pass.recirculate) {
            meta.recirc_now = std.egress_global_timestamp;
            recirculate_preserving_field_list(CARRY_FIELD_LIST);
        }
    }
}

#endif /* P4CTL_V1MODEL_EGRESS_P4 */
