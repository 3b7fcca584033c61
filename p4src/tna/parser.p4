/*
 * p4ctl — TNA parsers. The ingress parser reads Tofino's intrinsic
 * metadata, the carry of a recirculated request (packets from
 * RECIRC_PORT), then applies the shared header parser (../shared/parser.p4).
 * The egress parser only needs the carry; the rest of the packet passes
 * through egress as payload.
 */
#ifndef P4CTL_TNA_PARSER_P4
#define P4CTL_TNA_PARSER_P4

parser P4ctlIngressParser(packet_in pkt,
                          out tna_headers_t hdr,
                          out tna_ingress_metadata_t meta,
                          out ingress_intrinsic_metadata_t ig_intr_md) {
    P4ctlHeaderParser() headers;

    state start {
        pkt.extract(ig_intr_md);
        /* select on the intrinsic metadata here: after it is skipped,
         * selecting on it would need a negative extract */
        transition select(ig_intr_md.ingress_port) {
            RECIRC_PORT: parse_port_metadata_recirc;
            default:     parse_port_metadata;
        }
    }

    state parse_port_metadata_recirc {
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.carry);
        transition parse_packet;
    }

    /* a first pass starts with an empty carry (set here rather than in
     * ingress, so that stage 0 can read it) */
    state parse_port_metadata {
        pkt.advance(PORT_METADATA_SIZE);
        hdr.carry.setValid();
        hdr.carry.level = 0;
        hdr.carry.forced = 0;
        hdr.carry.region_held = 0;
        hdr.carry.spill = 0;
        hdr.carry.exhausted = 0;
        hdr.carry.nack_release = 0;
        hdr.carry.nearest = 0;
        hdr.carry.cand = 0;
        hdr.carry.selected = 0;
        hdr.carry.fallback = 0;
        hdr.carry.pad = 0;
        hdr.carry.client_port = ig_intr_md.ingress_port;
        transition parse_packet;
    }

    state parse_packet {
        headers.apply(pkt, hdr.h);
        transition accept;
    }
}

parser P4ctlEgressParser(packet_in pkt,
                         out tna_egress_headers_t hdr,
                         out tna_egress_metadata_t meta,
                         out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(hdr.carry);
        transition accept;
    }
}

#endif /* P4CTL_TNA_PARSER_P4 */
