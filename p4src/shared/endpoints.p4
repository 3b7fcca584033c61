/*
 * p4ctl — where servers are (docs/PIPELINE.md steps 10.6 and 11):
 * server_endpoint rewrites a bound request toward its server;
 * reply_source is the address a server's replies must come from. Two
 * tables with one key because a request learns its server at the end of
 * dispatch while a reply must be checked before it releases anything (on
 * Tofino one table sits in one stage). Written by the controller on
 * topology change. Architecture-neutral.
 */
#ifndef P4CTL_ENDPOINTS_P4
#define P4CTL_ENDPOINTS_P4

#include "headers.p4"

control ServerEndpoint(inout p4ctl_metadata_t pass) {
    @name(".P4ctlIngress.set_server_endpoint")
    action set_server_endpoint(port_t port, mac_addr_t dmac, ipv4_addr_t addr) {
        pass.endpoint_found = true;
        pass.ep_port = port;
        pass.ep_dmac = dmac;
        pass.ep_addr = addr;
    }

    /* Where a server lives: port, MAC, IPv4 address. Miss: unknown server
     * (the request is dropped, counted unreachable). */
    @name(".P4ctlIngress.server_endpoint")
    table server_endpoint {
        key = { pass.server : exact @name("server"); }
        actions = { set_server_endpoint; NoAction; }
        default_action = NoAction();
        size = SERVER_ENDPOINT_SIZE;
    }

    apply { server_endpoint.apply(); }
}

/* server: the server a reply names (v1model: pass.server; TNA: the header's
 * server_id, which the parser fills, so that the lookup is made in the
 * first stage). */
control ReplySource(in server_id_t server, inout p4ctl_metadata_t pass) {
    @name(".P4ctlIngress.set_reply_source")
    action set_reply_source(ipv4_addr_t addr) {
        pass.reply_source_found = true;
        pass.reply_addr = addr;
    }

    /* The address a server's replies come from. Miss, or another source:
     * the reply is dropped (reply-rejected) and releases nothing. */
    @name(".P4ctlIngress.reply_source")
    table reply_source {
        key = { server : exact @name("server"); }
        actions = { set_reply_source; NoAction; }
        default_action = NoAction();
        size = REPLY_SOURCE_SIZE;
    }

    apply { reply_source.apply(); }
}

#endif /* P4CTL_ENDPOINTS_P4 */
