/*
 * p4ctl — the steps of a v1model pass (docs/PIPELINE.md "Ingress, step by
 * step"; the step numbers below are its), applied in order by ingress.p4.
 */
#ifndef P4CTL_V1MODEL_PASSES_P4
#define P4CTL_V1MODEL_PASSES_P4

/* Steps 1-3: malformed (dropped), plain traffic and NACKs (forwarded as
 * they are), or a request or reply the pass acts on (p4ctl_msg). */
control PacketCheck(in headers_t hdr,
                    in error parser_error,
                    inout p4ctl_metadata_t pass,
                    out bool p4ctl_msg,
                    inout bool plain_forward,
                    inout bool by_mac) {
    apply {
        p4ctl_msg = false;
        if (parser_error != error.NoError) {
            outcome(pass, EVENT_MALFORMED);
        } else if (!hdr.ipv4.isValid()) {
            plain_forward = true;
            by_mac = true;
        } else if (!hdr.p4ctl.isValid()) {
            plain_forward = true;
        } else if (hdr.udp.length < P4CTL_MIN_UDP_LENGTH
                   || hdr.p4ctl.version != P4CTL_VERSION
                   || hdr.p4ctl.msg_type < MSG_REQUEST
                   || hdr.p4ctl.msg_type > MSG_NACK) {
            outcome(pass, EVENT_MALFORMED);
        } else if (hdr.p4ctl.msg_type == MSG_NACK) {
            plain_forward = true;
        } else {
            p4ctl_msg = true;
        }
    }
}

/* Steps 5, 6, 10: a NACK pass and a request holding its region's credit keep
 * the header's region; any other request selects one. */
control RequestRegion(inout headers_t hdr,
                      inout p4ctl_metadata_t pass,
                      in p4ctl_carry_h carry,
                      in bool nack_pass) {
    RegionSelect() region_select;

    apply {
        if (nack_pass || carry.region_held == 1) {
            pass.region = hdr.p4ctl.region_id;
        } else {
            region_select.apply(hdr, pass, carry);
        }
    }
}

/* Step 11: a remote region's reply is forwarded; a local server's reply
 * releases (valid_reply) only if it comes from the server's own address. */
control ReplyCheck(in headers_t hdr,
                   inout p4ctl_metadata_t pass,
                   inout bool valid_reply,
                   inout bool plain_forward) {
    ReplySource() reply_source;

    apply {
        pass.region = hdr.p4ctl.region_id;
        pass.server = hdr.p4ctl.server_id;
        if (hdr.p4ctl.server_id == NO_SERVER) {
            plain_forward = true;
            pass.probe_reply = true;
        } else {
            reply_source.apply(pass.server, pass);
            if (!pass.reply_source_found || hdr.ipv4.src_addr != pass.reply_addr) {
                outcome(pass, EVENT_REPLY_REJECTED);
            } else {
                valid_reply = true;
            }
        }
    }
}

/* Step 8: toward a remote region's gateway, unreachable (no next hop, no
 * pool), or local: dispatched to a server of the region's pool. */
control RouteToRegion(inout headers_t hdr,
                      inout p4ctl_metadata_t pass,
                      inout standard_metadata_t std,
                      out bool local) {
    apply {
        local = false;
        if (pass.next_hop == NEXT_HOP_REMOTE) {
            hdr.ethernet.dst_addr = pass.nh_dmac;
            hdr.ipv4.dst_addr = pass.nh_addr;
            std.egress_spec = pass.nh_port;
            hdr.p4ctl.server_id = NO_SERVER;
            hdr.udp.checksum = 0;
            pass.ipv4_rewritten = true;
            pass.count_routed = 1;
            pass.probe_request = true;
        } else if (pass.next_hop != NEXT_HOP_LOCAL || !pass.pool_found) {
            outcome(pass, EVENT_UNREACHABLE);
        } else {
            local = true;
        }
    }
}

/* Step 5: the NACK pass turns the request around to its client. */
control NackToClient(inout headers_t hdr,
                     inout p4ctl_metadata_t pass,
                     inout standard_metadata_t std,
                     in port_t client_port) {
    apply {
        mac_addr_t mac = hdr.ethernet.dst_addr;
        hdr.ethernet.dst_addr = hdr.ethernet.src_addr;
        hdr.ethernet.src_addr = mac;
        ipv4_addr_t addr = hdr.ipv4.dst_addr;
        hdr.ipv4.dst_addr = hdr.ipv4.src_addr;
        hdr.ipv4.src_addr = addr;
        bit<16> port = hdr.udp.dst_port;
        hdr.udp.dst_port = hdr.udp.src_port;
        hdr.udp.src_port = port;
        hdr.udp.checksum = 0;
        hdr.p4ctl.msg_type = MSG_NACK;
        pass.ipv4_rewritten = true;
        std.egress_spec = client_port;
        outcome(pass, EVENT_NACK);
    }
}

/* Steps 10 and 11: a local request claims a server (dispatch.p4) and goes
 * toward it or around again; a valid reply releases its credit. */
control DispatchPass(inout headers_t hdr,
                     inout p4ctl_metadata_t pass,
                     inout p4ctl_carry_h carry,
                     inout standard_metadata_t std,
                     in bit<48> now,
                     in bool local,
                     in bool valid_reply,
                     inout bool plain_forward) {
    ServerDispatch() dispatch;
    ServerEndpoint() server_endpoint;

    apply {
        if (local) {
            carry.region_held = 1;
            carry.spill = 0;
            carry.exhausted = 0;
        }
        dispatch.apply(hdr, pass, carry, now, valid_reply);
        if (valid_reply) {
            outcome(pass, EVENT_REPLY_RELEASED);
            plain_forward = true;
            pass.probe_reply = true;
        } else if (pass.count_bound == 1) {
            pass.probe_request = true;
            server_endpoint.apply(pass);
            if (!pass.endpoint_found) {
                outcome(pass, EVENT_UNREACHABLE);
            } else {
                hdr.ethernet.dst_addr = pass.ep_dmac;
                hdr.ipv4.dst_addr = pass.ep_addr;
                std.egress_spec = pass.ep_port;
                hdr.udp.checksum = 0;
                pass.ipv4_rewritten = true;
            }
        }
    }
}

/* Plain traffic, NACKs and replies: l2_forward or l3_forward (step 2). */
control PlainForward(in headers_t hdr,
                     inout p4ctl_metadata_t pass,
                     inout standard_metadata_t std,
                     in bool by_mac) {
    Forwarding() forwarding;

    apply {
        forwarding.apply(hdr, pass, by_mac);
        if (pass.forward) {
            std.egress_spec = pass.out_port;
        }
    }
}

#endif /* P4CTL_V1MODEL_PASSES_P4 */
