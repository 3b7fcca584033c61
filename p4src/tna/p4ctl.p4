/*
 * p4ctl — the TNA (Tofino 1) program: the same decisions as the v1model
 * program and the Go model (docs/PIPELINE.md; pkg/pipeline), a request's
 * region selection in a pass of its own (README.md "Stages"). Build: `make
 * p4-tna`, outputs in p4src/build/tna/. Layout as p4src/v1model/ (README.md
 * "Files"): architecture-neutral tables in ../shared/, the controls that
 * hold registers, the constant tables and the passes here.
 */
#include <core.p4>
#include <tna.p4>

#include "../shared/defines.p4"
#include "../shared/headers.p4"
#include "../shared/parser.p4"
#include "../shared/region_select.p4"
#include "../shared/next_hop.p4"
#include "../shared/endpoints.p4"
#include "../shared/forwarding.p4"

#include "metadata.p4"

/* zero is every table's "missed" value, as on BMv2 (README "metadata-init") */
@pa_auto_init_metadata

#include "parser.p4"
#include "tna_tables.p4"
#include "capacity.p4"
#include "dispatch.p4"
#include "probe.p4"
#include "passes.p4"
#include "ingress.p4"
#include "egress.p4"
#include "deparser.p4"

Pipeline(P4ctlIngressParser(),
         P4ctlIngress(),
         P4ctlIngressDeparser(),
         P4ctlEgressParser(),
         P4ctlEgress(),
         P4ctlEgressDeparser()) pipe;

Switch(pipe) main;
