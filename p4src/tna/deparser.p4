/*
 * p4ctl — TNA deparsers. The ingress deparser puts the carry in front of
 * every packet (egress strips it unless the packet recirculates),
 * recomputes the IPv4 checksum only when ingress rewrote the IPv4 header,
 * and packs the latency_sample digest when ingress asked for it
 * (probe.p4).
 */
#ifndef P4CTL_TNA_DEPARSER_P4
#define P4CTL_TNA_DEPARSER_P4

control P4ctlIngressDeparser(packet_out pkt,
                             inout tna_headers_t hdr,
                             in tna_ingress_metadata_t meta,
                             in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Checksum() ipv4_checksum;
    @name(".latency_sample_t")
    Digest<latency_sample_t>() latency_sample;

    apply {
        if (ig_dprsr_md.digest_type == DIGEST_LATENCY) {
            latency_sample.pack({ hdr.h.p4ctl.site_id, hdr.h.p4ctl.region_id,
                                  meta.sample_lost, meta.sample_rtt });
        }
        if (meta.pass.ipv4_rewritten) {
            hdr.h.ipv4.hdr_checksum = ipv4_checksum.update({
                hdr.h.ipv4.version, hdr.h.ipv4.ihl, hdr.h.ipv4.diffserv,
                hdr.h.ipv4.total_len, hdr.h.ipv4.identification,
                hdr.h.ipv4.flags, hdr.h.ipv4.frag_offset, hdr.h.ipv4.ttl,
                hdr.h.ipv4.protocol, hdr.h.ipv4.src_addr, hdr.h.ipv4.dst_addr });
        }
        pkt.emit(hdr);
    }
}

control P4ctlEgressDeparser(packet_out pkt,
                            inout tna_egress_headers_t hdr,
                            in tna_egress_metadata_t meta,
                            in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply {
        pkt.emit(hdr);
    }
}

#endif /* P4CTL_TNA_DEPARSER_P4 */
