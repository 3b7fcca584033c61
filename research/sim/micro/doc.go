// Package micro is the microsecond-scale late-binding simulator: N hosts of m
// cores (one FCFS queue per host) behind an ingress or dispatcher, renewal
// arrivals of a chosen coefficient of variation (distributions in
// research/sim/dist), optional micro-bursts, host stalls and lost notifications,
// a one-way network delay D on every message a policy needs, and an SLO on
// end-to-end latency.
//
// A Policy (ParsePolicy) combines a binding (early at the ingress, or late
// at a dispatcher: JBSQ(n), JIQ), the ingress's choice of host (random,
// power of two, join-shortest-workload, connection hash or migration, least
// outstanding) and movement between hosts (forwarding, ideal). Run simulates one Config; E1, E2, E3, T40b, GatewaySweep,
// TTLAblation and RunSet reproduce the experiments of the late-binding study
// across seeds; TuneJBSQ finds the smallest JBSQ bound per host that meets a
// violation target, the value `p4ctl tune jbsq` reports for the switch's
// set_pool action.
//
// A run is one goroutine with a typed event heap and FIFO queues for
// constant-delay messages; it does not allocate after warm-up, and one
// random stream per purpose keeps a seed's workload identical across
// policies.
package micro
