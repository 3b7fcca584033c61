/*
 * p4ctl — a local region's capacity (v1model; docs/PIPELINE.md step 9): one
 * atomic acquire per request, one release per valid reply or NACK.
 *
 * region_outstanding[r] counts the requests admitted into local region r's
 * pool and not yet released. Written by the data plane only (here); read by
 * the controller (p4ctl get regions). The acquire is pipeline.RegionAcquire:
 * unlimited (capacity 0) or forced (every feasible region refused, or a
 * fallback) → count; v < capacity → count; else refuse, and ingress retries
 * without the region (a spill).
 */
#ifndef P4CTL_V1MODEL_CAPACITY_P4
#define P4CTL_V1MODEL_CAPACITY_P4

control RegionCapacity(inout p4ctl_metadata_t d,
                       in p4ctl_carry_h carry,
                       in bool release,
                       out bool refused) {
    @name(".P4ctlIngress.region_outstanding")
    register<bit<32>>(MAX_REGIONS) region_outstanding;

    apply {
        refused = false;
        bit<32> idx = (bit<32>)(d.region & REGION_INDEX_MASK);
        bit<32> v;
        region_outstanding.read(v, idx);
        if (release) {
            if (v != 0) {
                v = v - 1;
            }
        } else if (carry.exhausted == 1 || d.count_fallback == 1 || d.capacity == 0 || v < d.capacity) {
            v = v + 1;
        } else {
            refused = true;
        }
        region_outstanding.write(idx, v);
    }
}

#endif /* P4CTL_V1MODEL_CAPACITY_P4 */
