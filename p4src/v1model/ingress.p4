/*
 * p4ctl — ingress (v1model / BMv2): region selection and late-binding server
 * dispatch. docs/PIPELINE.md "Ingress, step by step" is the normative text;
 * the step numbers below refer to it.
 *
 * Every table, action, register and counter is declared directly in this
 * control, so P4Info names are "P4ctlIngress.<name>" (pkg/pipeline). Table
 * actions only write metadata (meta.d); the apply block acts on it, so each
 * table is applied at most once per pass for requests and replies alike.
 *
 * Who writes what:
 *   tables     — the controller (P4Runtime), see each table's comment;
 *   registers  — the data plane only (the controller reads them);
 *   counters   — the data plane only (the controller reads them).
 */
#ifndef P4CTL_V1MODEL_INGRESS_P4
#define P4CTL_V1MODEL_INGRESS_P4

control P4ctlIngress(inout headers_t hdr,
                     inout v1_metadata_t meta,
                     inout standard_metadata_t std) {

    /* ------------------------------------------------------------------
     * Registers: state written by the data plane per packet.
     * Indices are the low bits of the id (server & 0x3FF, region & 0x1F):
     * ids are always in range for a correctly filled switch; the mask only
     * guarantees that a misconfigured one never indexes out of bounds.
     * ------------------------------------------------------------------ */

    /* Requests bound to each server and not yet released. +1 on bind
     * (reset to 1 when the bind found the credit expired), -1 (never below
     * 0) on a valid reply. */
    register<bit<16>>(MAX_SERVERS) server_outstanding;
    /* Expected remaining work per server, in µs: sum of cost_us of its
     * outstanding requests. +cost_us on bind, -cost_us (never below 0) on
     * a valid reply; 0 when the credit expired. */
    register<bit<32>>(MAX_SERVERS) server_work_us;
    /* Timestamp (µs) of each server's last bind or release; drives the
     * credit TTL. Written on bind and on a valid reply. */
    register<bit<48>>(MAX_SERVERS) server_last_seen;
    /* Requests bound into each local region's pool and not yet released.
     * +1 on bind, -1 (never below 0) on a valid reply. */
    register<bit<32>>(MAX_REGIONS) region_outstanding;
    /* One cell: bit r set while region_outstanding[r] >= capacity(r).
     * Set on the bind that reaches the capacity, cleared on the release
     * that drops below it. Read by region selection to mask full regions. */
    register<bit<32>>(1) region_full;

    /* ------------------------------------------------------------------
     * Counters (packets and bytes), counted by the data plane.
     * ------------------------------------------------------------------ */

    /* Requests bound into (local) or forwarded to (remote) each region. */
    counter(MAX_REGIONS, CounterType.packets_and_bytes) region_routed;
    /* Requests sent to their site's nearest region because carbon_rank
     * did not choose one. Index: the nearest region. */
    counter(MAX_REGIONS, CounterType.packets_and_bytes) region_fallback;
    /* Requests bound to each server. */
    counter(MAX_SERVERS, CounterType.packets_and_bytes) server_bound;
    /* Per-event counts, indexed by pipeline.Event (EVENT_* in defines.p4). */
    counter(NUM_EVENTS, CounterType.packets_and_bytes) dispatch_events;

    /* ------------------------------------------------------------------
     * Actions. Each writes only metadata (or egress_spec for l2/l3).
     * ------------------------------------------------------------------ */

    action set_client_site(site_id_t site) {
        meta.d.site = site;
    }

    action set_feasible(region_set_t feasible, region_id_t nearest) {
        meta.d.feasible = feasible;
        meta.d.nearest = nearest;
    }

    action set_active_epoch(epoch_t epoch) {
        meta.d.epoch = epoch;
    }

    action route_to_region(region_id_t region) {
        meta.d.ranked = true;
        meta.d.region = region;
    }

    action dispatch_local(bit<32> capacity) {
        meta.d.next_hop = NEXT_HOP_LOCAL;
        meta.d.capacity = capacity;
    }

    action forward_remote(port_t port, mac_addr_t dmac, ipv4_addr_t addr, bit<32> capacity) {
        meta.d.next_hop = NEXT_HOP_REMOTE;
        meta.d.nh_port = port;
        meta.d.nh_dmac = dmac;
        meta.d.nh_addr = addr;
        meta.d.capacity = capacity;
    }

    action set_pool(server_id_t base, server_id_t size_mask, bit<8> policy,
                    bit<16> bound, bit<8> max_holds, bit<8> on_full,
                    micros_t credit_ttl_us, bit<16> long_reserve,
                    bit<8> long_max_holds) {
        meta.d.pool_found = true;
        meta.d.pool_base = base;
        meta.d.pool_size_mask = size_mask;
        meta.d.pool_policy = policy;
        meta.d.pool_bound = bound;
        meta.d.pool_max_holds = max_holds;
        meta.d.pool_on_full = on_full;
        meta.d.pool_credit_ttl_us = credit_ttl_us;
        meta.d.pool_long_reserve = long_reserve;
        meta.d.pool_long_max_holds = long_max_holds;
    }

    action set_exec_cost(micros_t cost_us, bit<1> is_long) {
        meta.d.cost_us = cost_us;
        meta.d.is_long = is_long;
    }

    action set_server_endpoint(port_t port, mac_addr_t dmac, ipv4_addr_t addr) {
        meta.d.endpoint_found = true;
        meta.d.ep_port = port;
        meta.d.ep_dmac = dmac;
        meta.d.ep_addr = addr;
    }

    action forward(port_t port) {
        std.egress_spec = port;
    }

    action drop() {
        mark_to_drop(std);
    }

    /* ------------------------------------------------------------------
     * Tables. All written by the controller; none by the data plane.
     * ------------------------------------------------------------------ */

    /* Which client site a request comes from. Controller, on topology
     * change. Miss: site 0. */
    table client_site {
        key = { hdr.ipv4.src_addr : lpm @name("src_addr"); }
        actions = { set_client_site; NoAction; }
        default_action = NoAction();
        size = CLIENT_SITE_SIZE;
    }

    /* Which regions can meet (site, SLA), and the site's nearest region.
     * One range entry per latency interval per site. Controller, when
     * latency profiles or the policy change. Miss: none feasible, nearest 0. */
    table sla_feasibility {
        key = {
            meta.d.site     : exact @name("site");
            hdr.p4ctl.sla_ms : range @name("sla_ms");
        }
        actions = { set_feasible; NoAction; }
        default_action = NoAction();
        size = SLA_FEASIBILITY_SIZE;
    }

    /* Which generation of carbon_rank is live. Keyless: its default action
     * is the single write that flips generations (DESIGN §2). Controller,
     * once per hourly update. */
    table active_epoch {
        key = { }
        actions = { set_active_epoch; }
        default_action = set_active_epoch(0);
        size = 1;
    }

    /* The cleanest candidate region: entries (epoch, site/mask,
     * feasible = 1<<r / 1<<r) at priority MAX_REGIONS - carbon rank.
     * Controller, every hour (new epoch). Anything but route_to_region
     * (miss, or a NoAction entry) falls back to the nearest region. */
    table carbon_rank {
        key = {
            meta.d.epoch : exact   @name("epoch");
            meta.d.site  : ternary @name("site");
            meta.d.cand  : ternary @name("feasible");
        }
        actions = { route_to_region; NoAction; }
        default_action = NoAction();
        size = CARBON_RANK_SIZE;
    }

    /* How a region is reached: a local server pool (with its capacity) or
     * a remote gateway. Controller, on topology change. Miss: unreachable. */
    table region_next_hop {
        key = { meta.d.region : exact @name("region"); }
        actions = { dispatch_local; forward_remote; NoAction; }
        default_action = NoAction();
        size = MAX_REGIONS;
    }

    /* A local region's server pool and dispatch parameters. Controller, on
     * topology change and whenever `tune` picks a new bound. Miss:
     * unreachable. */
    table server_pool {
        key = { meta.d.region : exact @name("region"); }
        actions = { set_pool; NoAction; }
        default_action = NoAction();
        size = MAX_REGIONS;
    }

    /* Expected service time (µs) of an exec class and whether it counts as
     * long for bounded preemption. Controller, from execution-time
     * profiles. Miss: cost 0, short. */
    table exec_class_cost {
        key = { hdr.p4ctl.exec_class : exact @name("exec_class"); }
        actions = { set_exec_cost; NoAction; }
        default_action = NoAction();
        size = EXEC_CLASS_SIZE;
    }

    /* Where a server lives: port, MAC, IPv4 address. Rewrites bound
     * requests and authenticates replies. Controller, on topology change.
     * Miss: unknown server. */
    table server_endpoint {
        key = { meta.d.server : exact @name("server"); }
        actions = { set_server_endpoint; NoAction; }
        default_action = NoAction();
        size = MAX_SERVERS;
    }

    /* Plain IPv4 forwarding (non-p4ctl traffic, replies, nacks).
     * Controller, on topology change. Miss: drop. */
    table l3_forward {
        key = { hdr.ipv4.dst_addr : lpm @name("dst_addr"); }
        actions = { forward; drop; }
        default_action = drop();
        size = L3_FORWARD_SIZE;
    }

    /* Plain L2 forwarding (non-IPv4 traffic). Controller, on topology
     * change. Miss: drop. */
    table l2_forward {
        key = { hdr.ethernet.dst_addr : exact @name("dst_mac"); }
        actions = { forward; drop; }
        default_action = drop();
        size = L2_FORWARD_SIZE;
    }

    apply {
        /* A packet that no step sends anywhere is dropped. */
        mark_to_drop(std);

        /* BMv2 resets standard metadata on recirculation: the client's
         * port and the current time travel in @field_list metadata. */
        bit<48> now = std.ingress_global_timestamp;
        if (std.instance_type == PKT_INSTANCE_TYPE_RECIRC) {
            now = meta.recirc_now;
        } else {
            meta.client_port = std.ingress_port;
        }

        bool apply_l3 = false;   /* l3_forward is applied once, at the end */

        if (std.parser_error != error.NoError) {
            /* step 1 */
            dispatch_events.count(EVENT_MALFORMED);
        } else if (!hdr.ipv4.isValid()) {
            /* step 2 */
            l2_forward.apply();
        } else if (!hdr.p4ctl.isValid()) {
            /* step 2: plain IPv4, not modified */
            apply_l3 = true;
        } else if (hdr.udp.length < P4CTL_MIN_UDP_LENGTH
                   || hdr.p4ctl.version != P4CTL_VERSION
                   || hdr.p4ctl.msg_type < MSG_REQUEST
                   || hdr.p4ctl.msg_type > MSG_NACK) {
            /* step 3 */
            dispatch_events.count(EVENT_MALFORMED);
        } else if (hdr.p4ctl.msg_type == MSG_NACK) {
            /* step 3 */
            apply_l3 = true;
        } else {
            bool is_request = hdr.p4ctl.msg_type == MSG_REQUEST;
            bool lookup_endpoint = false;

            /* step 4 */
            exec_class_cost.apply();

            if (is_request) {
                /* step 5: region selection */
                client_site.apply();
                hdr.p4ctl.site_id = meta.d.site;
                sla_feasibility.apply();
                active_epoch.apply();

                bit<32> full;
                region_full.read(full, 0);
                meta.d.cand = meta.d.feasible & ~full;
                if (meta.d.cand == 0) {
                    meta.d.cand = meta.d.feasible;
                } else if (meta.d.cand != meta.d.feasible) {
                    hdr.p4ctl.flags = hdr.p4ctl.flags | FLAG_SPILLED;
                    dispatch_events.count(EVENT_SPILLED);
                }

                carbon_rank.apply();
                if (!meta.d.ranked) {
                    meta.d.region = meta.d.nearest;
                    hdr.p4ctl.flags = hdr.p4ctl.flags | FLAG_FALLBACK;
                    dispatch_events.count(EVENT_FALLBACK);
                    region_fallback.count((bit<32>)(meta.d.nearest & REGION_INDEX_MASK));
                }
                hdr.p4ctl.region_id = meta.d.region;
            } else {
                /* step 6: reply */
                meta.d.region = hdr.p4ctl.region_id;
                meta.d.server = hdr.p4ctl.server_id;
            }

            /* step 7 */
            region_next_hop.apply();
            bit<32> region_idx = (bit<32>)(meta.d.region & REGION_INDEX_MASK);
            bit<32> region_bit = (bit<32>)1 << meta.d.region;

            if (is_request) {
                if (meta.d.next_hop == NEXT_HOP_REMOTE) {
                    /* step 8: remote region */
                    hdr.ethernet.dst_addr = meta.d.nh_dmac;
                    hdr.ipv4.dst_addr = meta.d.nh_addr;
                    std.egress_spec = meta.d.nh_port;
                    hdr.p4ctl.server_id = NO_SERVER;
                    hdr.udp.checksum = 0;
                    meta.d.ipv4_rewritten = true;
                    region_routed.count(region_idx);
                } else if (meta.d.next_hop != NEXT_HOP_LOCAL) {
                    /* step 8: no next hop */
                    dispatch_events.count(EVENT_UNREACHABLE);
                } else {
                    /* step 9: local region, server dispatch */
                    server_pool.apply();
                    if (!meta.d.pool_found) {
                        dispatch_events.count(EVENT_UNREACHABLE);
                    } else {
                        /* 9.2 candidates: the aligned group of four around the hash,
                         * starting at the hash's own position in the group */
                        bit<16> h;
                        hash(h, HashAlgorithm.crc32, 16w0,
                             { hdr.ipv4.src_addr, hdr.udp.src_port,
                               hdr.p4ctl.request_id, hdr.p4ctl.hold_count },
                             32w65536);
                        bit<16> g = h & CANDIDATE_GROUP_MASK;
                        server_id_t c0 = meta.d.pool_base + ((g | (h & 3)) & meta.d.pool_size_mask);
                        server_id_t c1 = meta.d.pool_base + ((g | ((h + 1) & 3)) & meta.d.pool_size_mask);
                        server_id_t c2 = meta.d.pool_base + ((g | ((h + 2) & 3)) & meta.d.pool_size_mask);
                        server_id_t c3 = meta.d.pool_base + ((g | ((h + 3) & 3)) & meta.d.pool_size_mask);

                        /* 9.3 read the candidates; expired credits read as 0 */
                        bit<16> o0; bit<16> o1; bit<16> o2; bit<16> o3;
                        bit<32> w0; bit<32> w1; bit<32> w2; bit<32> w3;
                        bit<48> l0; bit<48> l1; bit<48> l2; bit<48> l3;
                        server_outstanding.read(o0, (bit<32>)(c0 & SERVER_INDEX_MASK));
                        server_outstanding.read(o1, (bit<32>)(c1 & SERVER_INDEX_MASK));
                        server_outstanding.read(o2, (bit<32>)(c2 & SERVER_INDEX_MASK));
                        server_outstanding.read(o3, (bit<32>)(c3 & SERVER_INDEX_MASK));
                        server_work_us.read(w0, (bit<32>)(c0 & SERVER_INDEX_MASK));
                        server_work_us.read(w1, (bit<32>)(c1 & SERVER_INDEX_MASK));
                        server_work_us.read(w2, (bit<32>)(c2 & SERVER_INDEX_MASK));
                        server_work_us.read(w3, (bit<32>)(c3 & SERVER_INDEX_MASK));
                        server_last_seen.read(l0, (bit<32>)(c0 & SERVER_INDEX_MASK));
                        server_last_seen.read(l1, (bit<32>)(c1 & SERVER_INDEX_MASK));
                        server_last_seen.read(l2, (bit<32>)(c2 & SERVER_INDEX_MASK));
                        server_last_seen.read(l3, (bit<32>)(c3 & SERVER_INDEX_MASK));

                        bit<48> ttl = (bit<48>)meta.d.pool_credit_ttl_us;
                        bool s0 = false; bool s1 = false; bool s2 = false; bool s3 = false;
                        if (ttl != 0) {
                            if (o0 != 0 && now - l0 > ttl) { s0 = true; o0 = 0; w0 = 0; }
                            if (o1 != 0 && now - l1 > ttl) { s1 = true; o1 = 0; w1 = 0; }
                            if (o2 != 0 && now - l2 > ttl) { s2 = true; o2 = 0; w2 = 0; }
                            if (o3 != 0 && now - l3 > ttl) { s3 = true; o3 = 0; w3 = 0; }
                        }

                        /* 9.4 pick: (cp, op, wp, sp) = candidate p */
                        server_id_t cp = c0; bit<16> op = o0; bit<32> wp = w0; bool sp = s0;
                        bit<8> policy = meta.d.pool_policy;
                        if (policy == POLICY_P2C) {
                            if (o1 < o0) { cp = c1; op = o1; wp = w1; sp = s1; }
                        } else if (policy == POLICY_P2C_WORK) {
                            if (w1 < w0 || (w1 == w0 && o1 < o0)) { cp = c1; op = o1; wp = w1; sp = s1; }
                        } else if (policy == POLICY_JBSQ || policy == POLICY_JIQ) {
                            if (o1 < op) { cp = c1; op = o1; wp = w1; sp = s1; }
                            if (o2 < op) { cp = c2; op = o2; wp = w2; sp = s2; }
                            if (o3 < op) { cp = c3; op = o3; wp = w3; sp = s3; }
                        }
                        /* any other policy code behaves as random: candidate 0 */

                        /* 9.5 */
                        bit<16> limit = meta.d.pool_bound;
                        if (policy == POLICY_JIQ) {
                            limit = 1;
                        }

                        bool hold = false;
                        bool nack = false;
                        if (meta.d.is_long == 1 && meta.d.pool_long_reserve != 0 && limit != 0
                            && hdr.p4ctl.hold_count < meta.d.pool_long_max_holds
                            && op + meta.d.pool_long_reserve >= limit) {
                            /* 9.6 bounded preemption: keep slots for short requests */
                            hold = true;
                            hdr.p4ctl.flags = hdr.p4ctl.flags | FLAG_LONG_DEFERRED;
                            dispatch_events.count(EVENT_LONG_DEFERRED);
                        } else if (limit != 0 && op >= limit) {
                            /* 9.7 all sampled servers at the bound */
                            if (hdr.p4ctl.hold_count < meta.d.pool_max_holds) {
                                hold = true;
                            } else if (meta.d.pool_on_full == ON_FULL_FORCE) {
                                hdr.p4ctl.flags = hdr.p4ctl.flags | FLAG_FORCED;
                                dispatch_events.count(EVENT_FORCED);
                            } else {
                                nack = true;
                            }
                        }

                        if (hold) {
                            /* 9.8 hold: recirculate (egress), resample next pass */
                            hdr.p4ctl.hold_count = hdr.p4ctl.hold_count + 1;
                            hdr.p4ctl.flags = hdr.p4ctl.flags | FLAG_HELD;
                            dispatch_events.count(EVENT_HOLD);
                            meta.d.hold = true;
                            std.egress_spec = meta.client_port;
                        } else if (nack) {
                            /* 9.10 nack back to the client */
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
                            meta.d.ipv4_rewritten = true;
                            std.egress_spec = meta.client_port;
                            dispatch_events.count(EVENT_NACK);
                        } else {
                            /* 9.9 bind to cp */
                            bit<32> sidx = (bit<32>)(cp & SERVER_INDEX_MASK);
                            server_outstanding.write(sidx, op + 1);
                            server_work_us.write(sidx, wp + meta.d.cost_us);
                            server_last_seen.write(sidx, now);
                            if (sp) {
                                dispatch_events.count(EVENT_STALE_RESET);
                            }
                            bit<32> ro;
                            region_outstanding.read(ro, region_idx);
                            ro = ro + 1;
                            region_outstanding.write(region_idx, ro);
                            if (meta.d.capacity != 0 && ro >= meta.d.capacity) {
                                bit<32> f;
                                region_full.read(f, 0);
                                region_full.write(0, f | region_bit);
                            }
                            server_bound.count(sidx);
                            region_routed.count(region_idx);
                            hdr.p4ctl.server_id = cp;
                            meta.d.server = cp;
                            lookup_endpoint = true;
                        }
                    }
                }
            } else if (hdr.p4ctl.server_id == NO_SERVER) {
                /* step 10: reply from a remote region */
                apply_l3 = true;
            } else {
                lookup_endpoint = true;
            }

            if (lookup_endpoint) {
                /* step 11 */
                server_endpoint.apply();
                if (is_request) {
                    if (!meta.d.endpoint_found) {
                        dispatch_events.count(EVENT_UNREACHABLE);
                    } else {
                        hdr.ethernet.dst_addr = meta.d.ep_dmac;
                        hdr.ipv4.dst_addr = meta.d.ep_addr;
                        std.egress_spec = meta.d.ep_port;
                        hdr.udp.checksum = 0;
                        meta.d.ipv4_rewritten = true;
                    }
                } else if (!meta.d.endpoint_found || hdr.ipv4.src_addr != meta.d.ep_addr) {
                    dispatch_events.count(EVENT_REPLY_REJECTED);
                } else {
                    /* release the server's slot */
                    bit<32> sidx = (bit<32>)(meta.d.server & SERVER_INDEX_MASK);
                    bit<16> o;
                    bit<32> w;
                    server_outstanding.read(o, sidx);
                    server_work_us.read(w, sidx);
                    if (o != 0) {
                        o = o - 1;
                    }
                    if (w >= meta.d.cost_us) {
                        w = w - meta.d.cost_us;
                    } else {
                        w = 0;
                    }
                    server_outstanding.write(sidx, o);
                    server_work_us.write(sidx, w);
                    server_last_seen.write(sidx, now);
                    bit<32> ro;
                    region_outstanding.read(ro, region_idx);
                    if (ro != 0) {
                        ro = ro - 1;
                    }
                    region_outstanding.write(region_idx, ro);
                    if (meta.d.capacity == 0 || ro < meta.d.capacity) {
                        bit<32> f;
                        region_full.read(f, 0);
                        region_full.write(0, f & ~region_bit);
                    }
                    dispatch_events.count(EVENT_REPLY_RELEASED);
                    apply_l3 = true;
                }
            }
        }

        if (apply_l3) {
            l3_forward.apply();
        }
    }
}

#endif /* P4CTL_V1MODEL_INGRESS_P4 */
