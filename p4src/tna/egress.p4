/*
 * p4ctl — TNA egress. Keeps the bridge header only on held requests and binds
 * (which ingress sent to RECIRC_PORT), so the next ingress pass knows the
 * client's port and the server to bind; strips it from everything else. No tables, registers or counters.
 */
#ifndef P4CTL_TNA_EGRESS_P4
#define P4CTL_TNA_EGRESS_P4

control P4ctlEgress(inout tna_egress_headers_t hdr,
                    inout tna_egress_metadata_t meta,
                    in egress_intrinsic_metadata_t eg_intr_md,
                    in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                    inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                    inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply {
        if (hdr.bridge.hold == 0 && hdr.bridge.bind == 0) {
            hdr.bridge.setInvalid();
        }
    }
}

#endif /* P4CTL_TNA_EGRESS_P4 */
