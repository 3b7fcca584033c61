/*
 * p4ctl — ingress (v1model / BMv2): one pass of docs/PIPELINE.md "Ingress,
 * step by step" as a sequence of named controls (passes.p4, carry.p4,
 * capacity.p4, dispatch.p4, probe.p4, counters.p4). Every table, action,
 * register and counter keeps its P4Info name "P4ctlIngress.<name>" by an
 * absolute @name (pkg/pipeline).
 */
#ifndef P4CTL_V1MODEL_INGRESS_P4
#define P4CTL_V1MODEL_INGRESS_P4

control P4ctlIngress(inout headers_t hdr,
                     inout v1_metadata_t meta,
                     inout standard_metadata_t std) {
    /* instances in P4Info order: p4c lists entities in declaration order */
    RequestRegion()  request_region;
    ExecClass()      exec_class;
    NextHop()        next_hop;
    RegionCapacity() capacity;
    DispatchPass()   dispatch_pass;
    LatencyProbe()   latency_probe;
    ReplyCheck()     reply_check;
    PlainForward()   plain_forwarding;
    PassCounters()   counters;
    CarryIn()        carry_in;
    PacketCheck()    packet_check;
    RouteToRegion()  route_to_region;
    NackToClient()   nack_to_client;
    SpillCarry()     spill_carry;
    CarryOut()       carry_out;

    apply {
        mark_to_drop(std);  /* a packet that no step sends anywhere is dropped */
        p4ctl_carry_h carry;
        bit<48> now;
        carry_in.apply(meta, std, carry, now);
        bool p4ctl_msg;
        bool plain_forward = false;  /* l2/l3 forwarding at the end of the pass */
        bool by_mac = false;
        packet_check.apply(hdr, std.parser_error, meta.pass, p4ctl_msg, plain_forward, by_mac);
        if (p4ctl_msg) {
            bool is_request = hdr.p4ctl.msg_type == MSG_REQUEST;
            bool nack_pass = is_request && carry.nack_release == 1;
            bool valid_reply = false;
            bool local = false;
            bool region_full = false;
            exec_class.apply(hdr, meta.pass);
            if (is_request) {
                request_region.apply(hdr, meta.pass, carry, nack_pass);
            } else {
                reply_check.apply(hdr, meta.pass, valid_reply, plain_forward);
            }
            next_hop.apply(meta.pass.region, meta.pass);
            if (is_request && !nack_pass) {
                route_to_region.apply(hdr, meta.pass, std, local);
            }
            if (nack_pass || valid_reply || (local && carry.region_held == 0)) {
                capacity.apply(meta.pass, carry, nack_pass || valid_reply, region_full);
            }
            if (nack_pass) {
                nack_to_client.apply(hdr, meta.pass, std, meta.client_port);
            } else if (region_full) {
                spill_carry.apply(meta.pass, carry);
            } else if (local || valid_reply) {
                dispatch_pass.apply(hdr, meta.pass, carry, std, now, local, valid_reply, plain_forward);
            }
        }
        if (meta.pass.probe_request || meta.pass.probe_reply) {
            latency_probe.apply(hdr.p4ctl, now, meta.pass.probe_request);
        }
        if (plain_forward) {
            plain_forwarding.apply(hdr, meta.pass, std, by_mac);
        }
        carry_out.apply(meta, std, carry);
        counters.apply(meta.pass);
    }
}

#endif /* P4CTL_V1MODEL_INGRESS_P4 */
