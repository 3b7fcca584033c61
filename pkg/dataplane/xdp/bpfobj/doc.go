// Package bpfobj is the compiled p4ctl XDP program (bpf/p4ctl.c) and its
// Go bindings (maps, programs, and the C structs its maps hold), generated
// by bpf2go from cilium/ebpf, as p4src/build/ holds p4c's outputs for the P4
// programs. Nothing here is written by hand but this file: regenerate with
// go generate ./pkg/dataplane/xdp/bpfobj (needs clang 14 and libbpf-dev),
// which also records the compiler and the sources' SHA-256 in BUILDINFO; a
// test regenerates the object byte for byte where that clang is present and
// checks the sources' hashes otherwise.
package bpfobj

//go:generate go tool bpf2go -cc clang-14 -strip llvm-strip-14 -cflags "-O2 -Wall -Werror -mcpu=v3 -idirafter /usr/include/x86_64-linux-gnu" -target bpfel -type p4_action -type p4_slots -type lpm_v4_key -type site_set -type site_table -type sla_interval -type sla_ranges -type rank_key -type rank_rule -type rank_group -type p4_count -type line32 -type line64 -type p4_meta -type p4_config -type latency_sample -type packet_in_frame -output-stem p4ctl P4ctl ../../../../bpf/p4ctl.c
//go:generate go run ./buildinfo -sources ../../../../bpf -o BUILDINFO
