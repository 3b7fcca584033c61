/*
 * p4ctl — the architecture-neutral header parser.
 *
 * Ethernet -> IPv4 (ether_type 0x0800) -> UDP (protocol 17 and ihl 5) ->
 * p4ctl (UDP source or destination port 9800). Each architecture's top-level
 * parser handles its own intrinsic metadata and then applies this sub-parser
 * (docs/PIPELINE.md step 1). A frame too short for a header this parser
 * selects is a parser error (PacketTooShort), which ingress counts as
 * malformed and drops; nothing here inspects header contents beyond the
 * selects, so validity checks of the p4ctl header live in ingress step 3.
 */
#ifndef P4CTL_PARSER_P4
#define P4CTL_PARSER_P4

#include "headers.p4"

parser P4ctlHeaderParser(packet_in pkt, out headers_t hdr) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }

    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        /* Only option-less IPv4 carries a p4ctl header we parse. */
        transition select(hdr.ipv4.ihl, hdr.ipv4.protocol) {
            (4w5, IPPROTO_UDP): parse_udp;
            default: accept;
        }
    }

    state parse_udp {
        pkt.extract(hdr.udp);
        transition select(hdr.udp.dst_port, hdr.udp.src_port) {
            (P4CTL_UDP_PORT, _): parse_p4ctl;
            (_, P4CTL_UDP_PORT): parse_p4ctl;
            default: accept;
        }
    }

    state parse_p4ctl {
        pkt.extract(hdr.p4ctl);
        transition accept;
    }
}

#endif /* P4CTL_PARSER_P4 */
