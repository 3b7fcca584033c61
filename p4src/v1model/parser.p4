/*
 * p4ctl — v1model parser: the shared header parser (../shared/parser.p4)
 * and nothing else. v1model hands no intrinsic metadata to the parser, and
 * BMv2 continues into ingress with standard_metadata.parser_error set when
 * a header is cut short, where ingress step 1 counts and drops it.
 */
#ifndef P4CTL_V1MODEL_PARSER_P4
#define P4CTL_V1MODEL_PARSER_P4

parser P4ctlParser(packet_in pkt,
                   out headers_t hdr,
                   inout v1_metadata_t meta,
                   inout standard_metadata_t std) {
    P4ctlHeaderParser() headers;

    state start {
        headers.apply(pkt, hdr);
        transition accept;
    }
}

#endif /* P4CTL_V1MODEL_PARSER_P4 */
