/*
 * p4ctl — LatencyProbe (v1model): in-band latency sampling
 * (docs/PIPELINE.md "Latency probes"; pipeline.ProbeTake, ProbeMatch).
 *
 * latency_probe — written by the data plane only: a request takes its probe
 * in the pass that binds it to a local server or forwards it to a remote
 * region, a reply frees it. Read by the controller
 * only for inspection (`p4ctl get registers`). Cell (bit<64>):
 * request_id (63..32) ++ sent (31..0), sent = the pass clock's low 32 bits
 * when the request left; 0 = free. Index (pipeline.ProbeIndex):
 * (site & 63) << 7 | (request_id & 3) << 5 | (region & 31).
 *
 * Each pass reads and writes its cell once (one RegisterAction on TNA).
 */
#ifndef P4CTL_V1MODEL_PROBE_P4
#define P4CTL_V1MODEL_PROBE_P4

control LatencyProbe(in p4ctl_h p4h, in bit<48> now, in bool is_request) {
    @name(".P4ctlIngress.latency_probe")
    register<bit<64>>(LATENCY_PROBE_CELLS) latency_probe;

    apply {
        bit<32> idx = ((bit<32>)(p4h.site_id & PROBE_SITE_MASK) << 7)
                    | ((p4h.request_id & PROBE_WAY_MASK) << 5)
                    | (bit<32>)(p4h.region_id & REGION_INDEX_MASK);
        bit<64> cell;
        latency_probe.read(cell, idx);
        bit<32> timed_id = cell[63:32];
        bit<32> sent = cell[31:0];
        bit<32> t = now[31:0];
        bool report = false;
        bit<8> lost = 0;
        if (is_request) {
            /* free, or waited longer than PROBE_TIMEOUT: take it */
            if (sent == 0 || (int<32>)(sent - t) < PROBE_EXPIRED_BELOW) {
                latency_probe.write(idx, p4h.request_id ++ t);
                if (sent != 0) {
                    report = true;  /* the replaced probe's reply never came */
                    lost = 1;
                }
            }
        } else if (sent != 0 && timed_id == p4h.request_id) {
            latency_probe.write(idx, 0);
            report = true;
        }
        if (report) {
            digest<latency_sample_t>(DIGEST_LATENCY,
                {p4h.site_id, p4h.region_id, lost, t - sent});
        }
    }
}

#endif /* P4CTL_V1MODEL_PROBE_P4 */
