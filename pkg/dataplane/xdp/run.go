package xdp

import (
	"encoding/binary"
	"fmt"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/dataplane/program"
	"github.com/p4ctl/p4ctl/pkg/dataplane/xdp/bpfobj"
	"github.com/p4ctl/p4ctl/pkg/dataplane/xdp/contract"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// xdpMD is struct xdp_md, the context BPF_PROG_RUN gives an XDP program:
// Data is where the frame starts after the metadata.
type xdpMD struct {
	Data, DataEnd, DataMeta, IngressIfindex, RxQueueIndex, EgressIfindex uint32
}

// xdpPass is XDP_PASS, what p4ctl_inject returns after a reported pass.
const xdpPass = 2

// metaLen is the size of the carry (struct p4_meta).
var metaLen = binary.Size(bpfobj.P4ctlP4Meta{})

func encodeMeta(b []byte, m *bpfobj.P4ctlP4Meta) error {
	_, err := binary.Encode(b, binary.LittleEndian, m)
	return err
}

func decodeMeta(b []byte, m *bpfobj.P4ctlP4Meta) error {
	_, err := binary.Decode(b, binary.LittleEndian, m)
	return err
}

// Process runs frame, received on inPort, through the program with
// BPF_PROG_RUN (p4ctl_inject), rewriting it in place: each pass reports its
// outcome and its carry in the frame's metadata, and a recirculated request
// is run again with its carry, as the recirculation port would, until it is
// forwarded, nacked or dropped. Nothing is sent. The pass clock is
// Options.Clock's when set, else the kernel's.
//
// A frame shorter than an Ethernet header, which BPF_PROG_RUN refuses to
// run and no interface delivers to XDP, gets step 1 here, as the program
// would give it: malformed, counted, dropped.
func (d *Datapath) Process(frame []byte, inPort uint32) program.Result {
	var res program.Result
	if len(frame) < ethLen {
		res.Passes, res.Verdict = 1, program.Dropped
		if !d.bound.Load() {
			res.Reason = program.NoPipeline
			return res
		}
		res.Reason = program.Malformed
		if err := d.countMalformed(len(frame)); err != nil {
			d.log.Error("count a truncated frame", "err", err)
		}
		return res
	}
	meta := bpfobj.P4ctlP4Meta{Magic: contract.MetaMagic, InPort: uint16(inPort), Mode: contract.InjectReport}
	if d.opts.Clock != nil {
		meta.Mode |= contract.InjectClock
		meta.Now = d.opts.Clock()
	}
	in := make([]byte, metaLen+len(frame))
	out := make([]byte, len(in)+256)
	for res.Passes < pipeline.MaxPasses {
		res.Passes++
		if err := encodeMeta(in, &meta); err != nil {
			return d.failed(res, err)
		}
		copy(in[metaLen:], frame)
		var ctxOut xdpMD
		ret, err := d.objs.P4ctlInject.Run(&ebpf.RunOptions{Data: in, DataOut: out,
			Context: xdpMD{Data: uint32(metaLen), DataEnd: uint32(len(in))}, ContextOut: &ctxOut})
		if err == nil && ret != xdpPass {
			err = fmt.Errorf("p4ctl_inject returned %d", ret)
		}
		if err == nil && (int(ctxOut.Data) != metaLen || int(ctxOut.DataEnd) != len(in)) {
			err = fmt.Errorf("p4ctl_inject moved the frame (metadata %d, end %d)", ctxOut.Data, ctxOut.DataEnd)
		}
		if err == nil {
			err = decodeMeta(out[:metaLen], &meta)
		}
		if err != nil {
			return d.failed(res, err)
		}
		copy(frame, out[metaLen:len(in)])
		switch meta.Outcome {
		case contract.OutForward:
			res.Verdict, res.Port, res.Reason = program.Forwarded, uint32(meta.OutPort), program.NotDropped
			return res
		case contract.OutNack:
			res.Verdict, res.Port, res.Reason = program.Nacked, uint32(meta.OutPort), program.NotDropped
			return res
		case contract.OutRecirculate:
			meta.Outcome, meta.Reason, meta.OutPort = 0, 0, 0
			continue
		}
		res.Verdict, res.Reason, res.Port = program.Dropped, program.DropReason(meta.Reason), 0
		return res
	}
	res.Verdict, res.Reason = program.Dropped, program.NoPipeline
	return res
}

// ethLen is an Ethernet header's length.
const ethLen = 14

// countMalformed counts a malformed frame of n bytes in dispatch_events,
// on the first CPU's cell.
func (d *Datapath) countMalformed(n int) error {
	key := uint32(pipeline.EventMalformed.Lane())*pipeline.NumEvents + uint32(pipeline.EventMalformed)
	vals := make([]bpfobj.P4ctlP4Count, d.ncpu)
	if err := d.objs.DispatchEvents.Lookup(key, &vals); err != nil {
		return err
	}
	vals[0].Packets++
	vals[0].Bytes += uint64(n)
	return d.objs.DispatchEvents.Put(key, vals)
}

func (d *Datapath) failed(res program.Result, err error) program.Result {
	d.log.Error("run a frame through the XDP program", "err", err)
	res.Verdict, res.Reason, res.Port = program.Dropped, program.NoPipeline, 0
	return res
}

// Transmit runs frame, from inPort (the CPU port for a PacketOut), through
// the program in live-frame mode: what it forwards leaves on the attached
// interfaces, a held request goes round the recirculation port.
// dataplane.ErrNoPorts when no port is attached.
func (d *Datapath) Transmit(frame []byte, inPort uint32) error {
	if d.ports == nil {
		return dataplane.ErrNoPorts
	}
	if len(frame) < ethLen {
		d.Process(frame, inPort) // malformed, counted, as the program would
		return nil
	}
	meta := bpfobj.P4ctlP4Meta{Magic: contract.MetaMagic, InPort: uint16(inPort)}
	in := make([]byte, metaLen+len(frame))
	if err := encodeMeta(in, &meta); err != nil {
		return err
	}
	copy(in[metaLen:], frame)
	_, err := d.objs.P4ctlInject.Run(&ebpf.RunOptions{Data: in, Repeat: 1, Flags: unix.BPF_F_TEST_XDP_LIVE_FRAMES,
		Context: xdpMD{Data: uint32(metaLen), DataEnd: uint32(len(in))}})
	if err != nil {
		return fmt.Errorf("transmit through the XDP program: %w", err)
	}
	return nil
}

// Repeat runs frame, from inPort, through one pass n times in one
// BPF_PROG_RUN, every repeat the same first pass (its effects on the
// registers and counters accumulate; nothing is sent): for benchmarks.
func (d *Datapath) Repeat(frame []byte, inPort uint32, n int) error {
	if len(frame) < ethLen {
		return fmt.Errorf("repeat: a %d-byte frame is shorter than an Ethernet header", len(frame))
	}
	meta := bpfobj.P4ctlP4Meta{Magic: contract.MetaMagic, InPort: uint16(inPort), Mode: contract.InjectReport | contract.InjectKeep}
	in := make([]byte, metaLen+len(frame))
	if err := encodeMeta(in, &meta); err != nil {
		return err
	}
	copy(in[metaLen:], frame)
	_, err := d.objs.P4ctlInject.Run(&ebpf.RunOptions{Data: in, Repeat: uint32(n),
		Context: xdpMD{Data: uint32(metaLen), DataEnd: uint32(len(in))}})
	if err != nil {
		return fmt.Errorf("repeat a pass of the XDP program: %w", err)
	}
	return nil
}
