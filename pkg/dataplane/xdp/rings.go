package xdp

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	"github.com/cilium/ebpf/ringbuf"

	"github.com/p4ctl/p4ctl/pkg/dataplane/xdp/bpfobj"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// startRings starts the readers of the program's two ring buffers: latency
// samples to the switch's digester, frames sent to the CPU port to its
// PacketIn subscribers. They stop when ctx is done.
func (d *Datapath) startRings(ctx context.Context) error {
	dr, err := ringbuf.NewReader(d.objs.Digests)
	if err != nil {
		return fmt.Errorf("read the XDP program's digests: %w", err)
	}
	pr, err := ringbuf.NewReader(d.objs.PacketIn)
	if err != nil {
		dr.Close()
		return fmt.Errorf("read the XDP program's packet-ins: %w", err)
	}
	read := func(r *ringbuf.Reader, handle func([]byte)) {
		defer d.wg.Done()
		var rec ringbuf.Record
		for {
			if err := r.ReadInto(&rec); err != nil {
				if errors.Is(err, ringbuf.ErrClosed) || errors.Is(err, os.ErrDeadlineExceeded) && ctx.Err() != nil {
					return
				}
				d.log.Error("read an XDP ring buffer", "err", err)
				continue
			}
			handle(rec.RawSample)
		}
	}
	d.wg.Add(3)
	go read(dr, d.onDigest)
	go read(pr, d.onPacketIn)
	go func() {
		defer d.wg.Done()
		<-ctx.Done()
		dr.Close()
		pr.Close()
	}()
	return nil
}

func (d *Datapath) onDigest(b []byte) {
	var s bpfobj.P4ctlLatencySample
	if _, err := binary.Decode(b, binary.LittleEndian, &s); err != nil {
		d.log.Error("decode a latency sample from the XDP program", "err", err)
		return
	}
	p := d.cur.Load()
	if p == nil || d.env.Digest == nil {
		return
	}
	d.env.Digest(p, pipeline.LatencySample{Site: s.Site, Region: s.Region, Lost: s.Lost != 0, RTT: s.Rtt})
}

// packetInHeader is the length of struct packet_in_frame before its data.
var packetInHeader = binary.Size(bpfobj.P4ctlPacketInFrame{}) - len(bpfobj.P4ctlPacketInFrame{}.Data)

func (d *Datapath) onPacketIn(b []byte) {
	if len(b) < packetInHeader || d.env.PacketIn == nil {
		return
	}
	n := int(binary.LittleEndian.Uint32(b))
	if n > len(b)-packetInHeader {
		d.log.Error("a packet-in from the XDP program is longer than its record", "len", n)
		return
	}
	d.env.PacketIn(append([]byte(nil), b[packetInHeader:packetInHeader+n]...))
}
