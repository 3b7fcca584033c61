/*
 * p4ctl — region selection (docs/PIPELINE.md step 6): which client site a
 * request comes from, which regions can meet its SLA from there, which
 * generation of the carbon ranking is live, and the cleanest candidate.
 * Architecture-neutral: tables and metadata only. All four tables are
 * written by the controller (pkg/compiler); none by the data plane.
 *
 * A spill pass (carry.spill = 1: a region refused the request for
 * capacity) skips sla_feasibility and ranks the carried remainder instead.
 * Fallback and spill are reported in pass.ev_* for the end-of-pass counters.
 */
#ifndef P4CTL_REGION_SELECT_P4
#define P4CTL_REGION_SELECT_P4

#include "headers.p4"

control RegionSelect(inout headers_t hdr,
                     inout p4ctl_metadata_t pass,
                     in p4ctl_carry_h carry) {

    @name(".P4ctlIngress.set_client_site")
    action set_client_site(site_id_t site) {
        pass.site = site;
    }

    @name(".P4ctlIngress.set_feasible")
    action set_feasible(region_set_t feasible, region_id_t nearest) {
        pass.cand = feasible;
        pass.nearest = nearest;
    }

    @name(".P4ctlIngress.set_active_epoch")
    action set_active_epoch(epoch_t epoch) {
        pass.epoch = epoch;
    }

    @name(".P4ctlIngress.route_to_region")
    action route_to_region(region_id_t region) {
        pass.ranked = true;
        pass.region = region;
    }

    @hidden action take_carried_candidates() {
        pass.cand = carry.cand;
        pass.nearest = carry.nearest;
    }

    /* Which client site a request comes from. Controller, on topology
     * change. Miss: site 0. */
    @name(".P4ctlIngress.client_site")
    table client_site {
        key = { hdr.ipv4.src_addr : lpm @name("src_addr"); }
        actions = { set_client_site; NoAction; }
        default_action = NoAction();
        size = CLIENT_SITE_SIZE;
    }

    /* Which regions can meet (site, SLA), and the site's nearest region.
     * One range entry per latency interval per site. Controller, when
     * latency profiles or the policy change. Miss: none feasible, nearest 0. */
    @name(".P4ctlIngress.sla_feasibility")
    table sla_feasibility {
        key = {
            pass.site        : exact @name("site");
            hdr.p4ctl.sla_ms : range @name("sla_ms");
        }
        actions = { set_feasible; NoAction; }
        default_action = NoAction();
        size = SLA_FEASIBILITY_SIZE;
    }

    /* Which generation of carbon_rank is live. Keyless: its default action
     * is the single write that flips generations (DESIGN §2). Controller,
     * once per hourly update. */
    @name(".P4ctlIngress.active_epoch")
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
    @name(".P4ctlIngress.carbon_rank")
    table carbon_rank {
        key = {
            pass.epoch : exact   @name("epoch");
            pass.site  : ternary @name("site");
            pass.cand  : ternary @name("feasible");
        }
        actions = { route_to_region; NoAction; }
        default_action = NoAction();
        size = CARBON_RANK_SIZE;
    }

    apply {
        client_site.apply();
        hdr.p4ctl.site_id = pass.site;
        if (carry.spill == 1) {
            take_carried_candidates();
            hdr.p4ctl.flags = hdr.p4ctl.flags | FLAG_SPILLED;
            pass.ev_spill_on = 1;
        } else {
            sla_feasibility.apply();
        }
        active_epoch.apply();
        carbon_rank.apply();
        if (!pass.ranked) {
            pass.region = pass.nearest;
            hdr.p4ctl.flags = hdr.p4ctl.flags | FLAG_FALLBACK;
            pass.ev_fallback_on = 1;
            pass.count_fallback = 1;
        }
        hdr.p4ctl.region_id = pass.region;
    }
}

#endif /* P4CTL_REGION_SELECT_P4 */
