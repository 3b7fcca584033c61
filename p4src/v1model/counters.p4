/*
 * p4ctl — the per-pass counters (v1model): each counted at most once per
 * pass, from what the pass recorded in p4ctl_metadata_t. Written by the data
 * plane only; read by the controller (p4ctl get counters).
 */
#ifndef P4CTL_V1MODEL_COUNTERS_P4
#define P4CTL_V1MODEL_COUNTERS_P4

control PassCounters(in p4ctl_metadata_t pass) {
    /* region_routed[r]: requests bound into (local) or forwarded to (remote) region r. */
    @name(".P4ctlIngress.region_routed")
    counter(MAX_REGIONS, CounterType.packets_and_bytes) region_routed;
    /* region_fallback[r]: requests sent to nearest region r because carbon_rank chose none. */
    @name(".P4ctlIngress.region_fallback")
    counter(MAX_REGIONS, CounterType.packets_and_bytes) region_fallback;
    /* server_bound[s]: requests bound to server s. */
    @name(".P4ctlIngress.server_bound")
    counter(MAX_SERVERS, CounterType.packets_and_bytes) server_bound;
    /* dispatch_events*: one counter per lane (pipeline.Lane), indexed by pipeline.Event. */
    @name(".P4ctlIngress.dispatch_events")
    counter(NUM_EVENTS, CounterType.packets_and_bytes) dispatch_events;
    @name(".P4ctlIngress.dispatch_events_spill")
    counter(NUM_EVENTS, CounterType.packets_and_bytes) dispatch_events_spill;
    @name(".P4ctlIngress.dispatch_events_fallback")
    counter(NUM_EVENTS, CounterType.packets_and_bytes) dispatch_events_fallback;
    @name(".P4ctlIngress.dispatch_events_cause")
    counter(NUM_EVENTS, CounterType.packets_and_bytes) dispatch_events_cause;

    apply {
        if (pass.ev_outcome_on == 1) {
            dispatch_events.count((bit<32>)pass.ev_outcome);
        }
        if (pass.ev_spill_on == 1) {
            dispatch_events_spill.count(EVENT_SPILLED);
        }
        if (pass.ev_fallback_on == 1) {
            dispatch_events_fallback.count(EVENT_FALLBACK);
        }
        if (pass.ev_cause_on == 1) {
            dispatch_events_cause.count((bit<32>)pass.ev_cause);
        }
        if (pass.count_routed == 1) {
            region_routed.count((bit<32>)(pass.region & REGION_INDEX_MASK));
        }
        if (pass.count_fallback == 1) {
            region_fallback.count((bit<32>)(pass.nearest & REGION_INDEX_MASK));
        }
        if (pass.count_bound == 1) {
            server_bound.count((bit<32>)(pass.server & SERVER_INDEX_MASK));
        }
    }
}

#endif /* P4CTL_V1MODEL_COUNTERS_P4 */
