// Package eval holds p4ctl's experiments that reproduce research results.
// Each experiment lives in a subpackage (carbon: SLA-constrained
// carbon-aware routing, `p4ctl eval carbon`) and reports which data it used.
package eval
