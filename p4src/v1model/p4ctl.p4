/*
 * p4ctl — the v1model (BMv2 simple_switch_grpc) program.
 *
 * Carbon-aware, SLA-constrained region selection and one-pass late-binding
 * server dispatch (JBSQ / JIQ / random, plus the v1model-only power-of-two
 * policies) with credit TTLs, bounded holds and preemption. Normative
 * description: docs/PIPELINE.md; wire header: docs/PROTOCOL.md; names,
 * widths and the dispatch algorithm in Go: pkg/pipeline. Build: `make p4`
 * (p4c-bm2-ss --arch v1model --std p4-16), outputs in p4src/build/v1model/.
 *
 * Layout (as p4src/tna/, fabric-tna style): the architecture-neutral
 * controls live in ../shared/ (region_select.p4, next_hop.p4,
 * endpoints.p4, forwarding.p4); the controls that hold registers
 * (capacity.p4, dispatch.p4) and the glue (ingress.p4) are per
 * architecture, with the same names.
 */
#include <core.p4>
#include <v1model.p4>

#include "../shared/defines.p4"
#include "../shared/headers.p4"
#include "../shared/parser.p4"
#include "../shared/region_select.p4"
#include "../shared/next_hop.p4"
#include "../shared/endpoints.p4"
#include "../shared/forwarding.p4"

/* standard_metadata.instance_type of a recirculated packet (BMv2). */
#define PKT_INSTANCE_TYPE_RECIRC 4
/* The field list preserved across recirculation (egress.p4). */
#define CARRY_FIELD_LIST 1

struct v1_metadata_t {
    p4ctl_metadata_t d;
    /* The carry (p4ctl_carry_h) of a recirculated request, and the time it
     * left: BMv2 resets all other metadata on recirculation (egress.p4). */
    @field_list(CARRY_FIELD_LIST) port_t       client_port;
    @field_list(CARRY_FIELD_LIST) bit<48>      recirc_now;
    @field_list(CARRY_FIELD_LIST) bit<32>      c_level;
    @field_list(CARRY_FIELD_LIST) bit<8>       c_forced;
    @field_list(CARRY_FIELD_LIST) bit<8>       c_region_held;
    @field_list(CARRY_FIELD_LIST) bit<8>       c_spill;
    @field_list(CARRY_FIELD_LIST) bit<8>       c_exhausted;
    @field_list(CARRY_FIELD_LIST) bit<8>       c_nack_release;
    @field_list(CARRY_FIELD_LIST) region_id_t  c_nearest;
    @field_list(CARRY_FIELD_LIST) region_set_t c_cand;
}

#include "parser.p4"
#include "capacity.p4"
#include "dispatch.p4"
#include "probe.p4"
#include "ingress.p4"
#include "egress.p4"
#include "deparser.p4"

V1Switch(P4ctlParser(),
         P4ctlVerifyChecksum(),
         P4ctlIngress(),
         P4ctlEgress(),
         P4ctlComputeChecksum(),
         P4ctlDeparser()) main;
