/*
 * p4ctl — a local region's capacity (v1model; docs/PIPELINE.md step 9,
 * pipeline.RegionAcquire): one atomic acquire per request, one release per
 * valid reply or NACK pass. Refused (region_full): ingress spills.
 */
#ifndef P4CTL_V1MODEL_CAPACITY_P4
#define P4CTL_V1MODEL_CAPACITY_P4

control RegionCapacity(inout p4ctl_metadata_t pass,
                       in p4ctl_carry_h carry,
                       in bool release,
                       out bool region_full) {
    /* region_outstanding[r]: requests admitted into local region r, not yet released; data plane (here), per acquire and release. */
    @name(".P4ctlIngress.region_outstanding")
    register<bit<32>>(MAX_REGIONS) region_outstanding;

    apply {
        region_full = false;
        bit<32> idx = (bit<32>)(pass.region & REGION_INDEX_MASK);
        bit<32> v;
        region_outstanding.read(v, idx);
        if (release) {
            if (v != 0) {
                v = v - 1;
            }
        } else if (carry.exhausted == 1 || pass.count_fallback == 1 || pass.capacity == 0 || v < pass.capacity) {
            v = v + 1;  /* forced (exhausted, fallback), unlimited, or below capacity */
        } else {
            region_full = true;
        }
        region_outstanding.write(idx, v);
    }
}

#endif /* P4CTL_V1MODEL_CAPACITY_P4 */
