/*
 * p4ctl — checksums and deparser (v1model / BMv2).
 *
 * Incoming IPv4 checksums are not verified (docs/PIPELINE.md). The IPv4
 * header checksum is recomputed only when ingress rewrote the IPv4 header
 * (remote forward, bind, nack); all other packets leave byte-identical
 * except for p4ctl header fields the switch writes (and then the UDP
 * checksum is 0).
 */
#ifndef P4CTL_V1MODEL_DEPARSER_P4
#define P4CTL_V1MODEL_DEPARSER_P4

control P4ctlVerifyChecksum(inout headers_t hdr, inout v1_metadata_t meta) {
    apply { }
}

control P4ctlComputeChecksum(inout headers_t hdr, inout v1_metadata_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid() && meta.pass.ipv4_rewritten,
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv,
              hdr.ipv4.total_len, hdr.ipv4.identification, hdr.ipv4.flags,
              hdr.ipv4.frag_offset, hdr.ipv4.ttl, hdr.ipv4.protocol,
              hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control P4ctlDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.udp);
        pkt.emit(hdr.p4ctl);
    }
}

#endif /* P4CTL_V1MODEL_DEPARSER_P4 */
