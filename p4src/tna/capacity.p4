/*
 * p4ctl — a local region's capacity (TNA; docs/PIPELINE.md step 9,
 * pipeline.RegionAcquire): one acquire per request, one release per valid
 * reply or NACK pass, each a RegisterAction deciding in the stateful ALU
 * (README "salu"). The region is the header's; carry.fallback (the
 * selection pass's) forces the acquire. full: the refused acquire's count,
 * 0 when held. Applied by DispatchPass (passes.p4).
 */
#ifndef P4CTL_TNA_CAPACITY_P4
#define P4CTL_TNA_CAPACITY_P4

control RegionCapacity(in region_id_t region,
                       in p4ctl_metadata_t pass,
                       in p4ctl_carry_h carry,
                       in bool release,
                       inout bit<32> full) {
    /* region_outstanding[r]: requests admitted into local region r, not yet released; data plane only (p4ctl get regions reads it) */
    @name(".P4ctlIngress.region_outstanding")
    Register<bit<32>, bit<5>>(MAX_REGIONS, 0) region_outstanding;

    /* v < capacity → v + 1 and 0; else untouched and v (≥ 1): refused */
    RegisterAction<bit<32>, bit<5>, bit<32>>(region_outstanding) acquire_below_capacity = {
        void apply(inout bit<32> v, out bit<32> count) {
            count = 0;
            if (v < pass.capacity) {
                v = v + 1;
            } else {
                count = v;
            }
        }
    };
    /* unlimited capacity, or a forced acquire */
    RegisterAction<bit<32>, bit<5>, bit<32>>(region_outstanding) acquire_any = {
        void apply(inout bit<32> v) {
            v = v + 1;
        }
    };
    RegisterAction<bit<32>, bit<5>, bit<32>>(region_outstanding) release_one = {
        void apply(inout bit<32> v) {
            if (v != 0) {
                v = v - 1;
            }
        }
    };

    apply {
        bit<5> idx = region[4:0];
        if (release) {
            release_one.execute(idx);
        } else if (carry.exhausted == 1 || carry.fallback == 1 || pass.capacity == 0) {
            acquire_any.execute(idx);
        } else {
            full = acquire_below_capacity.execute(idx);
        }
    }
}

#endif /* P4CTL_TNA_CAPACITY_P4 */
