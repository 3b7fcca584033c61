// Package bmv2tests holds the tests that hold BMv2 to the same packets as
// p4ctl's embedded target (pkg/dataplane):
//
//   - TestPacketCases runs the shared packet-case table
//     (internal/testing/packetcases) unchanged against simple_switch_grpc loaded
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
//     (internal/testing/conformance) against BMv2.
//   - TestPacketCasesEmbedded runs the same packet cases, through the same
//     veths and AF_PACKET sockets, against p4ctl's embedded switch as a
//     process of its own (`p4ctl switch -i N@swN ...`, built by the test),
//     next to the in-process embedded target.
//   - BenchmarkVethForwarding measures both switches' forwarding rates
//     through veths in one run and reports embedded/BMv2.
//
// BMv2 runs inside a network namespace created and removed by
// internal/testing/bmv2harness (its Thrift server listens on every interface; its
// P4Runtime server is on 127.0.0.1 inside the namespace); so does the
// embedded switch. Frames are built with gopacket (pkg/wire, packetcases)
// and injected and captured with AF_PACKET sockets (pkg/afpacket) opened
// inside that namespace.
//
// Every BMv2 test skips with a one-line reason when simple_switch_grpc
// (P4CTL_BMV2 or PATH), root, or the p4c outputs (p4src/build/v1model, or
// P4CTL_P4BUILD) are missing; the embedded switch's need root only. To run
// them:
//
//	source /opt/p4/env.sh   # PATH/LD_LIBRARY_PATH of a local BMv2 build
//	make p4                 # p4c outputs
//	sudo -E go test ./bmv2-tests -v
//	sudo -E go test ./bmv2-tests -run '^$' -bench VethForwarding
package bmv2tests
