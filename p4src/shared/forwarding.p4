/*
 * p4ctl — plain forwarding (docs/PIPELINE.md step 2 and every reply): l3
 * by IPv4 destination prefix, l2 by destination MAC. The actions only set
 * pass.forward / pass.out_port; each architecture's ingress turns them into its
 * egress port or drop. Written by the controller on topology change.
 */
#ifndef P4CTL_FORWARDING_P4
#define P4CTL_FORWARDING_P4

#include "headers.p4"

control Forwarding(in headers_t hdr, inout p4ctl_metadata_t pass, in bool l2) {
    @name(".P4ctlIngress.forward")
    action forward(port_t port) {
        pass.forward = true;
        pass.out_port = port;
    }

    @name(".P4ctlIngress.drop")
    action drop() {
        pass.forward = false;
    }

    /* IPv4 forwarding (non-p4ctl traffic, replies, nacks). Miss: drop. */
    @name(".P4ctlIngress.l3_forward")
    table l3_forward {
        key = { hdr.ipv4.dst_addr : lpm @name("dst_addr"); }
        actions = { forward; drop; }
        default_action = drop();
        size = L3_FORWARD_SIZE;
    }

    /* L2 forwarding (non-IPv4 traffic). Miss: drop. */
    @name(".P4ctlIngress.l2_forward")
    table l2_forward {
        key = { hdr.ethernet.dst_addr : exact @name("dst_mac"); }
        actions = { forward; drop; }
        default_action = drop();
        size = L2_FORWARD_SIZE;
    }

    apply {
        if (l2) {
            l2_forward.apply();
        } else {
            l3_forward.apply();
        }
    }
}

#endif /* P4CTL_FORWARDING_P4 */
