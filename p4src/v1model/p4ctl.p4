/*
 * p4ctl — the v1model (BMv2 simple_switch_grpc) program.
 *
 * Carbon-aware, SLA-constrained region selection and late-binding server
 * dispatch (JBSQ / JIQ / power-of-two / expected-work power-of-two /
 * random) with bounded holds and preemption. Normative description:
 * docs/PIPELINE.md; wire header: docs/PROTOCOL.md; names and widths:
 * pkg/pipeline. Build: `make p4` (p4c-bm2-ss --arch v1model --std p4-16),
 * outputs in p4src/build/v1model/.
 */
#include <core.p4>
#include <v1model.p4>

#include "../shared/defines.p4"
#include "../shared/headers.p4"
#include "../shared/parser.p4"

/* standard_metadata.instance_type of a recirculated packet (BMv2). */
#define PKT_INSTANCE_TYPE_RECIRC 4
/* The field list preserved across recirculation (egress.p4). */
#define HOLD_FIELD_LIST 1

struct v1_metadata_t {
    p4ctl_metadata_t d;
    /* Preserved across holds; see egress.p4. */
    @field_list(HOLD_FIELD_LIST) port_t  client_port;
    @field_list(HOLD_FIELD_LIST) bit<48> recirc_now;
}

#include "parser.p4"
#include "ingress.p4"
#include "egress.p4"
#include "deparser.p4"

V1Switch(P4ctlParser(),
         P4ctlVerifyChecksum(),
         P4ctlIngress(),
         P4ctlEgress(),
         P4ctlComputeChecksum(),
         P4ctlDeparser()) main;
