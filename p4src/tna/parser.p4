/*
 * p4ctl — TNA parsers. The ingress parser reads Tofino's intrinsic
 * metadata, the decide pass's resubmit data, the bridge header of a held
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
        /* select on the intrinsic metadata here: after it is skipped,
         * selecting on it would need a negative extract */
        transition select(ig_intr_md.resubmit_flag, ig_intr_md.ingress_port) {
            (1, RECIRC_PORT): parse_resub_recirc;
            (1, _):           parse_resub_client;
            (0, RECIRC_PORT): parse_port_metadata_recirc;
            default:          parse_port_metadata_client;
        }
    }

    state parse_resub_recirc {
        pkt.extract(meta.resub);
        transition parse_bridge;
    }

    state parse_resub_client {
        pkt.extract(meta.resub);
        transition parse_packet;
    }

    state parse_port_metadata_recirc {
        pkt.advance(PORT_METADATA_SIZE);
        transition parse_bridge;
    }

    state parse_port_metadata_client {
        pkt.advance(PORT_METADATA_SIZE);
        transition parse_packet;
    }

    state parse_bridge {
        pkt.extract(hdr.bridge);
        meta.rb_bind = hdr.bridge.bind;
        meta.rb_stale = hdr.bridge.stale;
        meta.rb_forced = hdr.bridge.forced;
        meta.rb_bound = hdr.bridge.bound;
        meta.rb_cand_hi = hdr.bridge.cand_hi;
        meta.rb_slot = hdr.bridge.slot;
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
