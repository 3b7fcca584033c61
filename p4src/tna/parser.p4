/*
 * p4ctl — TNA parsers. The ingress parser reads Tofino's intrinsic
 * metadata, the bind pass's resubmit data, the bridge header of a held
 * (recirculated) request, then applies the shared header parser
 * (../shared/parser.p4). The egress parser only needs the bridge header;
 * the rest of the packet passes through egress as payload.
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
        meta.client_port = ig_intr_md.ingress_port;
        transition select(ig_intr_md.resubmit_flag) {
            1: parse_bind;
            default: parse_port_metadata;
        }
    }

    state parse_bind {
        pkt.extract(meta.bind);
        transition parse_origin;
    }

    state parse_port_metadata {
        pkt.advance(PORT_METADATA_SIZE);
        transition parse_origin;
    }

    state parse_origin {
        transition select(ig_intr_md.ingress_port) {
            RECIRC_PORT: parse_bridge;
            default: parse_packet;
        }
    }

    state parse_bridge {
        pkt.extract(hdr.bridge);
        meta.client_port = hdr.bridge.client_port;
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
        pkt.extract(hdr.bridge);
        transition accept;
    }
}

#endif /* P4CTL_TNA_PARSER_P4 */
