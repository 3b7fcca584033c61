//go:build !linux

package bmv2tests

import "testing"

func TestPacketCases(t *testing.T) { t.Skip("BMv2 tests need Linux (network namespaces, AF_PACKET)") }
