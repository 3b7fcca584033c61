// Package layout holds the test that keeps the repository laid out by role
// (docs/decisions/layout.md): product packages under pkg/, research under
// research/, test rigs under internal/testing/, and imports that never run
// back up from product to research or to a rig.
package layout
