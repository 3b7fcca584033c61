// Package bmv2tests holds the tests that hold BMv2 to the same packets as
// p4ctl's embedded target (pkg/dataplane):
//
//   - TestPacketCases runs the shared packet-case table
//     (pkg/dataplane/packetcases) unchanged against simple_switch_grpc loaded
//     with p4c's compile of p4src/v1model, and against a fresh embedded
//     switch, and requires every output — verdict, egress port, the exact
//     bytes of every emitted frame (rewritten and switch-set header fields),
//     counters and registers — to equal both the case's expectation and the
//     embedded target's.
//   - TestCompiledConfig pushes the Mininet testbed's compiled tables
//     (pkg/compiler output for mininet/testbed.yaml) to both targets and
//     requires identical bindings, the plan's regions, forwarded replies and
//     released slots.
//   - TestConformance runs the P4Runtime conformance suite
//     (pkg/p4rt/conformance) against BMv2.
//
// BMv2 runs inside a network namespace created and removed by
// pkg/p4rt/bmv2harness (its Thrift server listens on every interface; its
// P4Runtime server is on 127.0.0.1 inside the namespace). Frames are built
// with gopacket (pkg/wire, packetcases) and injected and captured with
// AF_PACKET sockets opened inside that namespace.
//
// Every test skips with a one-line reason when simple_switch_grpc
// (P4CTL_BMV2 or PATH), root, or the p4c outputs (p4src/build/v1model, or
// P4CTL_P4BUILD) are missing. To run them:
//
//	source /opt/p4/env.sh   # PATH/LD_LIBRARY_PATH of a local BMv2 build
//	make p4                 # p4c outputs
//	sudo -E go test ./bmv2-tests -v
//
// The plumbing (harness, AF_PACKET injection and capture, comparisons) can
// be exercised without BMv2 by pointing P4CTL_BMV2 at mininet/standin (the
// embedded target on AF_PACKET ports) and P4CTL_P4BUILD at a directory with
// `testbedctl p4info` output as p4ctl.p4info.txtpb and any p4ctl.json; the
// packet cases and the compiled configuration must then agree trivially,
// and TestConformance fails by design (it expects BMv2's quirks).
package bmv2tests
