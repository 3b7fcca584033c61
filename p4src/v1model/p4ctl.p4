/*
 * p4ctl — the v1model (BMv2 simple_switch_grpc) program: carbon-aware,
 * SLA-constrained region selection and one-pass late-binding server
 * dispatch. Normative description: docs/PIPELINE.md; wire header:
 * docs/PROTOCOL.md; names, widths and the algorithm in Go: pkg/pipeline.
 * Build: `make p4`, outputs in p4src/build/v1model/. Layout as p4src/tna/
 * (fabric-tna style): architecture-neutral tables in ../shared/, the
 * controls that hold registers and the pass's steps here.
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

#include "metadata.p4"
#include "parser.p4"
#include "carry.p4"
#include "capacity.p4"
#include "dispatch.p4"
#include "probe.p4"
#include "passes.p4"
#include "counters.p4"
#include "ingress.p4"
#include "egress.p4"
#include "deparser.p4"

V1Switch(P4ctlParser(),
         P4ctlVerifyChecksum(),
         P4ctlIngress(),
         P4ctlEgress(),
         P4ctlComputeChecksum(),
         P4ctlDeparser()) main;
