/*
 * p4ctl — egress (v1model / BMv2). Held requests are recirculated (ingress
 * step 9.8); everything else leaves unchanged. No tables, registers or
 * counters live here.
 *
 * BMv2 resets all metadata of a recirculated packet except the user
 * metadata fields tagged @field_list(HOLD_FIELD_LIST): the client's port
 * (for a later nack) and the time at which the packet left, which the next
 * pass uses as `now` because BMv2 leaves ingress_global_timestamp at 0 for
 * recirculated packets.
 */
#ifndef P4CTL_V1MODEL_EGRESS_P4
#define P4CTL_V1MODEL_EGRESS_P4

control P4ctlEgress(inout headers_t hdr,
                    inout v1_metadata_t meta,
                    inout standard_metadata_t std) {
    apply {
        if (meta.d.hold) {
            meta.recirc_now = std.egress_global_timestamp;
            recirculate_preserving_field_list(HOLD_FIELD_LIST);
        }
    }
}

#endif /* P4CTL_V1MODEL_EGRESS_P4 */
