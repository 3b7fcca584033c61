/*
 * p4ctl — how a region is reached and what a request costs (docs/PIPELINE.md
 * steps 4 and 7): region_next_hop (a local pool with its capacity, or a
 * remote gateway), server_pool (the pool's dispatch parameters) and
 * exec_class_cost (expected service time, long or short). Tables only;
 * written by the controller (pkg/compiler), read by every request and
 * reply. Architecture-neutral.
 */
#ifndef P4CTL_NEXT_HOP_P4
#define P4CTL_NEXT_HOP_P4

#include "headers.p4"

control ExecClass(in headers_t hdr, inout p4ctl_metadata_t pass) {
    @name(".P4ctlIngress.set_exec_cost")
    action set_exec_cost(micros_t cost_us, bit<1> is_long) {
        pass.cost_us = cost_us;
        pass.is_long = is_long;
    }

    /* Expected service time (µs) of an exec class and whether it counts as
     * long for bounded preemption. Controller, from execution-time
     * profiles. Miss: cost 0, short. */
    @name(".P4ctlIngress.exec_class_cost")
    table exec_class_cost {
        key = { hdr.p4ctl.exec_class : exact @name("exec_class"); }
        actions = { set_exec_cost; NoAction; }
        default_action = NoAction();
        size = EXEC_CLASS_SIZE;
    }

    apply { exec_class_cost.apply(); }
}

/* region: the region the request is for (v1model: pass.region; TNA: the
 * header's region_id, which the parser fills, so that a dispatch pass can
 * look these tables up in its first stage). */
control NextHop(in region_id_t region, inout p4ctl_metadata_t pass) {
    @name(".P4ctlIngress.dispatch_local")
    action dispatch_local(bit<32> capacity) {
        pass.next_hop = NEXT_HOP_LOCAL;
        pass.capacity = capacity;
    }

    @name(".P4ctlIngress.forward_remote")
    action forward_remote(port_t port, mac_addr_t dmac, ipv4_addr_t addr, bit<32> capacity) {
        pass.next_hop = NEXT_HOP_REMOTE;
        pass.nh_port = port;
        pass.nh_dmac = dmac;
        pass.nh_addr = addr;
        pass.capacity = capacity;
    }

    @name(".P4ctlIngress.set_pool")
    action set_pool(server_id_t base, server_id_t size_mask, bit<8> policy,
                    bit<16> bound, bit<8> max_holds, bit<8> on_full,
                    bit<8> credit_tick, bit<16> long_reserve,
                    bit<8> long_max_holds) {
        pass.pool_found = true;
        pass.pool_base = base;
        pass.pool_size_mask = size_mask;
        pass.pool_policy = policy;
        pass.pool_bound = bound;
        pass.pool_max_holds = max_holds;
        pass.pool_on_full = on_full;
        pass.pool_credit_tick = credit_tick;
        pass.pool_long_reserve = long_reserve;
        pass.pool_long_max_holds = long_max_holds;
    }

    /* How a region is reached: a local server pool (with its capacity) or
     * a remote gateway. Controller, on topology change. Miss: unreachable. */
    @name(".P4ctlIngress.region_next_hop")
    table region_next_hop {
        key = { region : exact @name("region"); }
        actions = { dispatch_local; forward_remote; NoAction; }
        default_action = NoAction();
        size = MAX_REGIONS;
    }

    /* A local region's server pool and dispatch parameters; replies read
     * its credit_tick. Controller, on topology change and whenever `tune`
     * picks a new bound. Miss: unreachable. */
    @name(".P4ctlIngress.server_pool")
    table server_pool {
        key = { region : exact @name("region"); }
        actions = { set_pool; NoAction; }
        default_action = NoAction();
        size = MAX_REGIONS;
    }

    apply {
        region_next_hop.apply();
        server_pool.apply();
    }
}

#endif /* P4CTL_NEXT_HOP_P4 */
