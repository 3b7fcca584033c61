/*
 * p4ctl — LatencyProbe (TNA): in-band latency sampling
 * (docs/PIPELINE.md "Latency probes"; pipeline.ProbeTake, ProbeMatch).
 *
 * latency_probe — written by the data plane only: a request takes its probe
 * in the pass that binds it to a local server or forwards it to a remote
 * region, a reply frees it; each is one RegisterAction that decides in the
 * stateful ALU (inputs: the pass clock and request_id). Read by the
 * controller only for inspection. Cell: the pair {sent, request_id}, sent =
 * the pass clock (global_tstamp >> 10, 1.024 µs units) when the request
 * left; 0 = free. idx (pipeline.ProbeIndex: site[5:0] ++ request_id[1:0]
 * ++ region[4:0] of the header) is computed by ingress.p4 in stage 0.
 *
 * The sample goes to the controller as the latency_sample digest, packed by
 * the ingress deparser when digest_type is DIGEST_LATENCY.
 */
#ifndef P4CTL_TNA_PROBE_P4
#define P4CTL_TNA_PROBE_P4

control LatencyProbe(in p4ctl_h p4h,
                     inout tna_ingress_metadata_t meta,
                     in bit<13> idx,
                     in bool is_request,
                     inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    @name(".P4ctlIngress.latency_probe")
    Register<probe_pair_t, bit<13>>(LATENCY_PROBE_CELLS, {0, 0}) latency_probe;

    /* free, or older than PROBE_TIMEOUT: take it; return the replaced
     * probe's sent time (0 if it was free or is busy) */
    RegisterAction<probe_pair_t, bit<13>, bit<32>>(latency_probe) probe_take = {
        void apply(inout probe_pair_t p, out bit<32> replaced_sent) {
            replaced_sent = 0;
            if (p.sent == 0 || (int<32>)(p.sent - meta.now) < PROBE_EXPIRED_BELOW) {
                replaced_sent = p.sent;
                p.sent = meta.now;
                p.request_id = p4h.request_id;
            }
        }
    };
    /* the timed request's reply: free the probe, return its sent time */
    RegisterAction<probe_pair_t, bit<13>, bit<32>>(latency_probe) probe_match = {
        void apply(inout probe_pair_t p, out bit<32> sent) {
            sent = 0;
            if (p.sent != 0 && p.request_id == p4h.request_id) {
                sent = p.sent;
                p.sent = 0;
                p.request_id = 0;
            }
        }
    };

    apply {
        bit<32> sent;
        if (is_request) {
            sent = probe_take.execute(idx);
            meta.sample_lost = 1;
        } else {
            sent = probe_match.execute(idx);
            meta.sample_lost = 0;
        }
        if (sent != 0) {
            meta.sample_rtt = meta.now - sent;
            ig_dprsr_md.digest_type = DIGEST_LATENCY;
        }
    }
}

#endif /* P4CTL_TNA_PROBE_P4 */
