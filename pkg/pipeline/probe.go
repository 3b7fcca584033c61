package pipeline

import "fmt"

// In-band latency sampling (docs/PIPELINE.md "Latency probes"): the switch
// times some requests from the pass that sends them toward their region to
// the pass of their reply, and reports each round trip to the controller as
// a latency_sample digest.
//
// A probe is one cell of latency_probe: {request_id, sent}, sent being the
// low 32 bits of the pass clock when the timed request left (0 = free).
// Each (site, region) pair has ProbeWays probes, chosen by the low bits of
// the request id. A request takes its probe when it is free or has waited
// longer than ProbeTimeout (its reply was lost or is very late: that wait
// is reported as a lost sample); a reply whose id matches its probe frees
// it and reports the round trip. Both are one atomic step on one cell, as
// Tofino's stateful ALU does them.

const (
	// RegisterLatencyProbe holds the probes (64-bit cells: request_id in
	// 63..32, sent in 31..0; TNA: the pair {sent, request_id}).
	RegisterLatencyProbe = Control + ".latency_probe"
	// ProbeSiteBits, ProbeWayBits and the region's 5 bits make a probe's
	// index: site ids ≥ 2^ProbeSiteBits share probes with lower ones
	// (ProbeIndex), which only makes their samples rarer.
	ProbeSiteBits = 6
	ProbeWayBits  = 2
	// ProbeWays is the number of probes per (site, region).
	ProbeWays = 1 << ProbeWayBits
	// SizeLatencyProbe is latency_probe's number of cells.
	SizeLatencyProbe = 1 << (ProbeSiteBits + ProbeWayBits + 5)
	// WidthProbe is a probe cell's width.
	WidthProbe = 64
	// ProbeTimeout is how long, in pass-clock units (µs; TNA 1.024 µs), a
	// probe waits for its reply before a new request may take it, reporting
	// the wait as a lost sample: 2^22 µs ≈ 4.2 s, above every SLA class the
	// examples use. Round trips longer than this are reported as lost at
	// ProbeTimeout or more.
	ProbeTimeout = 1 << 22

	// DigestLatencySample is the P4Info name of the latency digest (v1model
	// names a digest after its struct type; TNA's deparser instance carries
	// the same @name).
	DigestLatencySample = "latency_sample_t"
	// The digest's members, in order, and their widths.
	WidthProbeRTT  = 32
	WidthProbeLost = 8
)

// ProbeIndex returns the latency_probe cell of a request of site to region
// with id requestID: ((site mod 64) << 7) | ((id mod 4) << 5) | (region mod
// 32).
func ProbeIndex(site uint16, region uint8, requestID uint32) uint32 {
	const siteMask = 1<<ProbeSiteBits - 1
	return (uint32(site)&siteMask)<<(ProbeWayBits+5) | (requestID&(ProbeWays-1))<<5 | uint32(region)&(MaxRegions-1)
}

// Probe is one latency_probe cell.
type Probe struct {
	RequestID uint32
	Sent      uint32 // pass clock (low 32 bits) when the request left; 0 = free
}

// ProbeFromCell decodes a 64-bit cell.
func ProbeFromCell(v uint64) Probe { return Probe{RequestID: uint32(v >> 32), Sent: uint32(v)} }

// Cell encodes p as a 64-bit cell.
func (p Probe) Cell() uint64 { return uint64(p.RequestID)<<32 | uint64(p.Sent) }

// ProbeTake is a request's step on its probe at pass clock now (low 32
// bits): a free probe, or one older than ProbeTimeout (the signed 32-bit
// difference sent − now is below −ProbeTimeout: one subtraction compared
// with a constant, as Tofino's stateful ALU compares), is taken — {id,
// now} — and the step returns the replaced probe's sent time when it was
// occupied (a lost sample of age now − sent), else 0. A busy probe is left
// alone (0).
func ProbeTake(p *Probe, id, now uint32) (lostSent uint32) {
	if p.Sent != 0 && int32(p.Sent-now) >= -ProbeTimeout {
		return 0
	}
	old := p.Sent
	p.RequestID, p.Sent = id, now
	return old
}

// ProbeMatch is a reply's step on its probe: when the probe is occupied by
// the reply's request id it is freed and the step returns its sent time
// (the round trip is now − sent), else 0 and the probe is unchanged.
func ProbeMatch(p *Probe, id uint32) (sent uint32) {
	if p.Sent == 0 || p.RequestID != id {
		return 0
	}
	sent = p.Sent
	*p = Probe{}
	return sent
}

// LatencySample is one latency_sample digest: a round trip of a request of
// site to region, in pass-clock units (Arch.ClockNanos), or a lost one (a
// probe that waited RTT ≥ ProbeTimeout for a reply that did not come).
type LatencySample struct {
	Site   uint16
	Region uint8
	Lost   bool
	RTT    uint32
}

// DigestMembers are the latency_sample_t struct's members and widths, in
// order (the P4Info's type_info).
func DigestMembers() []Param {
	return []Param{{"site_id", WidthSite}, {"region_id", WidthRegion}, {"lost", WidthProbeLost}, {"rtt", WidthProbeRTT}}
}

// ClockNanos is the length of the pass clock's unit in ns: the unit of
// credit ticks and of latency_sample.rtt (v1model and the Go model: 1 µs;
// TNA: global_tstamp >> 10, 1.024 µs).
func (a Arch) ClockNanos() float64 {
	if a == TNA {
		return 1024
	}
	return 1000
}

// DigestWidths are DigestMembers' widths, in order.
func DigestWidths() []int {
	m := DigestMembers()
	w := make([]int, len(m))
	for i, p := range m {
		w[i] = p.Width
	}
	return w
}

// SampleFromMembers builds a LatencySample from the digest's decoded
// members (DigestMembers order).
func SampleFromMembers(v []uint64) (LatencySample, error) {
	if len(v) != 4 {
		return LatencySample{}, fmt.Errorf("latency sample: %d members, want 4", len(v))
	}
	if v[2] > 1 {
		return LatencySample{}, fmt.Errorf("latency sample: lost = %d, want 0 or 1", v[2])
	}
	return LatencySample{Site: uint16(v[0]), Region: uint8(v[1]), Lost: v[2] == 1, RTT: uint32(v[3])}, nil
}
