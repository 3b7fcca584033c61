/*
 * p4ctl — TNA egress. Every packet arrives with the carry ingress puts in
 * front of it (deparser.p4); it stays only on packets that egress through
 * RECIRC_PORT, so the request's next ingress pass reads it (parser.p4).
 * No tables, registers or counters.
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
        if (eg_intr_md.egress_port != RECIRC_PORT) {
            hdr.carry.setInvalid();
        }
    }
}

#endif /* P4CTL_TNA_EGRESS_P4 */
