package engine

import (
	"fmt"
	"sync/atomic"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// Digest is one digest of the P4Info and its configuration: a controller
// enables it by inserting a DigestEntry (P4Runtime spec "DigestEntry"); until
// then the data plane generates none of it.
type Digest struct {
	ID   uint32
	Name string

	// cfg is the DigestEntry's configuration, nil while not configured. It
	// is replaced under the engine's write lock and read during passes under
	// its read lock, so an atomic pointer is only for the race detector's
	// benefit and for readers outside a pass.
	cfg atomic.Pointer[p4v1.DigestEntry_Config]
}

// Config returns the digest's configuration and whether a controller has
// enabled it.
func (d *Digest) Config() (*p4v1.DigestEntry_Config, bool) {
	c := d.cfg.Load()
	return c, c != nil
}

// Digest returns the named digest.
func (p *Pipeline) Digest(name string) (*Digest, error) {
	if d, ok := p.digestNames[name]; ok {
		return d, nil
	}
	return nil, fmt.Errorf("pipeline has no digest %q", name)
}

// DigestByID returns the digest with P4Runtime id id.
func (p *Pipeline) DigestByID(id uint32) (*Digest, bool) {
	d, ok := p.digestsByID[id]
	return d, ok
}

// writeDigest applies a DigestEntry update: INSERT enables a digest that is
// not configured, MODIFY changes a configured one, DELETE disables it.
func (p *Pipeline) writeDigest(typ p4v1.Update_Type, de *p4v1.DigestEntry, undo *[]func()) error {
	d, ok := p.digestsByID[de.GetDigestId()]
	if !ok {
		return invalid("unknown digest id %d", de.GetDigestId())
	}
	old := d.cfg.Load()
	var next *p4v1.DigestEntry_Config
	switch typ {
	case p4v1.Update_INSERT, p4v1.Update_MODIFY:
		if typ == p4v1.Update_INSERT && old != nil {
			return status.Errorf(codes.AlreadyExists, "digest %s is already configured (MODIFY changes it)", d.Name)
		}
		if typ == p4v1.Update_MODIFY && old == nil {
			return status.Errorf(codes.NotFound, "digest %s is not configured (INSERT enables it)", d.Name)
		}
		c := de.GetConfig()
		if c == nil {
			return invalid("digest %s: a DigestEntry INSERT or MODIFY needs a config", d.Name)
		}
		if c.GetMaxTimeoutNs() < 0 || c.GetMaxListSize() < 0 || c.GetAckTimeoutNs() < 0 {
			return invalid("digest %s: max_timeout_ns %d, max_list_size %d, ack_timeout_ns %d must be ≥ 0",
				d.Name, c.GetMaxTimeoutNs(), c.GetMaxListSize(), c.GetAckTimeoutNs())
		}
		next = proto.Clone(c).(*p4v1.DigestEntry_Config)
	case p4v1.Update_DELETE:
		if old == nil {
			return status.Errorf(codes.NotFound, "digest %s is not configured", d.Name)
		}
	}
	d.cfg.Store(next)
	record(undo, func() { d.cfg.Store(old) })
	p.noteDigest(d)
	return nil
}

// readDigests emits the configured digests (all of them for digest id 0).
func (p *Pipeline) readDigests(de *p4v1.DigestEntry, out *[]*p4v1.Entity) error {
	emit := func(d *Digest) {
		if c, ok := d.Config(); ok {
			*out = append(*out, &p4v1.Entity{Entity: &p4v1.Entity_DigestEntry{DigestEntry: &p4v1.DigestEntry{
				DigestId: d.ID, Config: proto.Clone(c).(*p4v1.DigestEntry_Config)}}})
		}
	}
	if de.GetDigestId() == 0 {
		for _, d := range p.digests {
			emit(d)
		}
		return nil
	}
	d, ok := p.digestsByID[de.GetDigestId()]
	if !ok {
		return status.Errorf(codes.NotFound, "unknown digest id %d", de.GetDigestId())
	}
	emit(d)
	return nil
}
