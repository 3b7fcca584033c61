package p4rt_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/prototext"

	"github.com/p4ctl/p4ctl/internal/testing/p4rttest"
	"github.com/p4ctl/p4ctl/internal/testing/testnet"
	"github.com/p4ctl/p4ctl/pkg/dataplane/engine"
	"github.com/p4ctl/p4ctl/pkg/dataplane/p4rtserver"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

// serveTCP serves target on addr ("127.0.0.1:0" for a free port) until
// the returned stop function is called.
func serveTCP(t *testing.T, target p4rtserver.Target, addr string, opts ...p4rtserver.Option) (string, func()) {
	t.Helper()
	srv := p4rtserver.New(target, append([]p4rtserver.Option{p4rtserver.WithAddress(addr)}, opts...)...)
	lis, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(lis) }()
	var once sync.Once
	stop := func() { once.Do(func() { srv.Stop(); <-done }) }
	t.Cleanup(stop)
	return lis.Addr().String(), stop
}

// The stream breaks when the switch restarts; the client reconnects with
// backoff, re-arbitrates and calls the resync hook.
func TestReconnectAndResync(t *testing.T) {
	eng := engine.New(engine.Options{})
	if err := eng.SetPipelineInfo(p4rttest.ProgramP4Info()); err != nil {
		t.Fatal(err)
	}
	addr, stop := serveTCP(t, eng, "127.0.0.1:0")
	var resyncs atomic.Int64
	c, err := p4rt.Dial(addr, p4rt.WithElectionID(p4rt.Election(3)),
		p4rt.WithBackoff(p4rt.Backoff{Initial: 20 * time.Millisecond, Max: 200 * time.Millisecond, Multiplier: 2}),
		p4rt.WithResync(func(ctx context.Context, c *p4rt.Client) error {
			resyncs.Add(1)
			idx, err := c.Index(ctx)
			if err != nil {
				return err
			}
			return c.ApplyRetrySafe(ctx, p4rt.Updates(p4v1.Update_INSERT, l2(t, idx, 1, 1)))
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := ctxT(t)
	if st, err := c.Arbitrate(ctx); err != nil || !st.Primary {
		t.Fatalf("arbitrate: %v %v", st, err)
	}
	stop()
	st := waitEvent(t, c, p4rt.EventLostPrimary)
	if st.Connected || st.Err == nil {
		t.Fatalf("after the switch stopped: %v", st)
	}
	serveTCP(t, eng, addr) // the switch comes back on the same address
	st = waitEvent(t, c, p4rt.EventReconnected)
	if !st.Primary || st.Err != nil || resyncs.Load() != 1 {
		t.Fatalf("after reconnect: %v (resyncs %d)", st, resyncs.Load())
	}
	if got, err := c.ReadTableEntries(ctx, "l2_forward"); err != nil || len(got) != 1 {
		t.Fatalf("resync did not write: %v %v", got, err)
	}
}

func TestWithoutReconnect(t *testing.T) {
	eng := engine.New(engine.Options{})
	addr, stop := serveTCP(t, eng, "127.0.0.1:0")
	c, err := p4rt.Dial(addr, p4rt.WithElectionID(p4rt.Election(1)), p4rt.WithoutReconnect())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Arbitrate(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	stop()
	waitEvent(t, c, p4rt.EventLostPrimary)
	if err := c.SendPacketOut(ctxT(t), &p4v1.PacketOut{}); !errors.Is(err, p4rt.ErrFailedPrecondition) {
		t.Fatalf("PacketOut after the stream ended: %v", err)
	}
}

// pki writes a CA, a server certificate (127.0.0.1, switch.test) and a
// client certificate into dir.
func pki(t *testing.T, dir string) (ca, srvCert, srvKey, cliCert, cliKey string) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "p4ctl test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	leaf := func(name string, serial int64, usage x509.ExtKeyUsage) (string, string) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			DNSNames: []string{"switch.test"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kder, _ := x509.MarshalECPrivateKey(key)
		return write(name+".crt", "CERTIFICATE", der), write(name+".key", "EC PRIVATE KEY", kder)
	}
	ca = write("ca.crt", "CERTIFICATE", caDER)
	srvCert, srvKey = leaf("server", 2, x509.ExtKeyUsageServerAuth)
	cliCert, cliKey = leaf("client", 3, x509.ExtKeyUsageClientAuth)
	return
}

func TestMutualTLS(t *testing.T) {
	ca, sc, sk, cc, ck := pki(t, t.TempDir())
	eng := engine.New(engine.Options{})
	addr, _ := serveTCP(t, eng, "127.0.0.1:0", p4rtserver.WithTLS(p4rtserver.TLS{CertFile: sc, KeyFile: sk, ClientCAFile: ca}))
	try := func(opts ...p4rt.Option) error {
		c, err := p4rt.Dial(addr, append(opts, p4rt.WithCallTimeout(3*time.Second))...)
		if err != nil {
			return err
		}
		defer c.Close()
		_, err = c.Capabilities(context.Background())
		return err
	}
	if err := try(p4rt.WithTLS(p4rt.TLSOptions{CAFile: ca, CertFile: cc, KeyFile: ck, ServerName: "switch.test"})); err != nil {
		t.Fatalf("mTLS: %v", err)
	}
	if err := try(p4rt.WithTLS(p4rt.TLSOptions{CAFile: ca, CertFile: cc, KeyFile: ck})); err != nil {
		t.Fatalf("mTLS by IP SAN: %v", err)
	}
	if err := try(p4rt.WithTLS(p4rt.TLSOptions{CAFile: ca, ServerName: "switch.test"})); err == nil {
		t.Fatal("server accepted a client without certificate")
	}
	if err := try(p4rt.WithTLS(p4rt.TLSOptions{CAFile: ca, CertFile: cc, KeyFile: ck, ServerName: "other.test"})); err == nil {
		t.Fatal("client accepted a certificate for another name")
	}
	if err := try(); err == nil {
		t.Fatal("plaintext client talked to a TLS server")
	}
	if err := try(p4rt.WithTLS(p4rt.TLSOptions{CAFile: ca, CertFile: cc})); err == nil {
		t.Fatal("client certificate without key accepted")
	}
	if err := try(p4rt.WithTLS(p4rt.TLSOptions{CAFile: filepath.Join(t.TempDir(), "missing.crt")})); err == nil {
		t.Fatal("missing CA file accepted")
	}
}

const packetP4Info = `
tables {
  preamble { id: 1 name: "ingress.t" }
  match_fields { id: 1 name: "f" bitwidth: 8 match_type: EXACT }
  action_refs { id: 10 }
  size: 16
}
actions { preamble { id: 10 name: "ingress.nop" } }
controller_packet_metadata {
  preamble { id: 100 name: "packet_in" }
  metadata { id: 1 name: "ingress_port" bitwidth: 9 }
}
controller_packet_metadata {
  preamble { id: 101 name: "packet_out" }
  metadata { id: 1 name: "egress_port" bitwidth: 9 }
  metadata { id: 2 name: "flags" bitwidth: 8 }
}
digests {
  preamble { id: 200 name: "ingress.learn" }
  type_spec { bitstring { bit { bitwidth: 48 } } }
}
`

// digestEngine adds digests to the engine (which has none): a DigestTarget
// that records acks and DigestEntry writes.
type digestEngine struct {
	*engine.Engine
	mu      sync.Mutex
	subs    []func(*p4v1.DigestList)
	acks    []*p4v1.DigestListAck
	configs int
}

func (d *digestEngine) SubscribeDigests(fn func(*p4v1.DigestList)) func() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.subs = append(d.subs, fn)
	return func() {}
}

func (d *digestEngine) AckDigest(_ context.Context, a *p4v1.DigestListAck) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.acks = append(d.acks, a)
	return nil
}

func (d *digestEngine) Write(ctx context.Context, ups []*p4v1.Update, a p4v1.WriteRequest_Atomicity) []error {
	if len(ups) == 1 && ups[0].GetEntity().GetDigestEntry() != nil {
		d.mu.Lock()
		defer d.mu.Unlock()
		d.configs++
		return []error{nil}
	}
	return d.Engine.Write(ctx, ups, a)
}

func (d *digestEngine) emit(l *p4v1.DigestList) {
	d.mu.Lock()
	subs := append(([]func(*p4v1.DigestList))(nil), d.subs...)
	d.mu.Unlock()
	for _, f := range subs {
		f(l)
	}
}

func TestPacketIOAndDigests(t *testing.T) {
	info := &p4configv1.P4Info{}
	if err := prototext.Unmarshal([]byte(packetP4Info), info); err != nil {
		t.Fatal(err)
	}
	outs := make(chan *p4v1.PacketOut, 4)
	eng := engine.New(engine.Options{PacketOut: func(_ context.Context, p *p4v1.PacketOut) error {
		outs <- p
		return nil
	}})
	if err := eng.SetPipelineInfo(info); err != nil {
		t.Fatal(err)
	}
	target := &digestEngine{Engine: eng}
	c, _ := p4rttest.New(t, p4rttest.WithTarget(target))
	ctx := ctxT(t)
	idx, _ := c.Index(ctx)

	po, err := idx.BuildPacketOut([]byte("frame"), p4rt.Param("egress_port", 7), p4rt.Param("flags", 1))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SendPacketOut(ctx, po); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-outs:
		if string(got.Payload) != "frame" || len(got.Metadata) != 2 {
			t.Fatalf("PacketOut at the target: %v", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("PacketOut did not reach the target")
	}
	if _, err := idx.BuildPacketOut(nil, p4rt.Param("egress_port", 7)); err == nil {
		t.Error("PacketOut with a missing metadata field built")
	}
	if _, err := idx.BuildPacketOut(nil, p4rt.Param("egress_port", 512), p4rt.Param("flags", 0)); err == nil {
		t.Error("PacketOut with a 10-bit port built")
	}

	pv, _ := p4rt.EncodeUint(3, 9)
	if n := eng.EmitPacketIn(&p4v1.PacketIn{Payload: []byte("in"), Metadata: []*p4v1.PacketMetadata{{MetadataId: 1, Value: pv}}}); n != 1 {
		t.Fatalf("PacketIn reached %d subscribers", n)
	}
	select {
	case pin := <-c.PacketIns():
		md, err := idx.DecodePacketIn(pin)
		if err != nil || md["ingress_port"] != 3 || string(pin.Payload) != "in" {
			t.Fatalf("PacketIn: %v %v", md, err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no PacketIn")
	}

	if err := c.ConfigureDigest(ctx, "learn", p4rt.DigestConfig{MaxTimeoutNs: 1000, MaxListSize: 10}); err != nil {
		t.Fatal(err)
	}
	target.emit(&p4v1.DigestList{DigestId: 200, ListId: 9})
	select {
	case d := <-c.Digests():
		if err := c.AckDigest(ctx, d); err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no digest")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		target.mu.Lock()
		n, cfgs := len(target.acks), target.configs
		target.mu.Unlock()
		if n == 1 && cfgs == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("acks %d configs %d", n, cfgs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestBackupPacketOutRefused(t *testing.T) {
	_, sw := p4rttest.New(t)
	ctx := ctxT(t)
	b := sw.Dial(t)
	if _, err := b.Arbitrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.SendPacketOut(ctx, &p4v1.PacketOut{Payload: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	select {
	case se := <-b.StreamErrors():
		if codes.Code(se.GetCanonicalCode()) != codes.PermissionDenied {
			t.Fatalf("stream error %v", se)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no StreamError for a backup's PacketOut")
	}
}

// Issue 27: Arbitrate opened the StreamChannel under the client's own
// context, so against a switch that accepts and never answers neither
// Ctrl-C (the caller's context) nor the call deadline ended it: `p4ctl
// run` outlived its second of grace. Both end it now.
func TestArbitrateEndsWithItsContext(t *testing.T) {
	addr := testnet.SilentListener(t)
	for _, tc := range []struct {
		name    string
		timeout time.Duration // the client's call deadline (0 = none)
		cancel  time.Duration // when the caller's context ends (0 = never)
	}{
		{"caller cancels", 0, 200 * time.Millisecond},
		{"call deadline", 200 * time.Millisecond, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := p4rt.Dial(addr, p4rt.WithElectionID(p4rt.Election(1)), p4rt.WithCallTimeout(tc.timeout))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx := context.Background()
			if tc.cancel > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.cancel)
				defer cancel()
			}
			start := time.Now()
			done := make(chan error, 1)
			go func() { _, err := c.Arbitrate(ctx); done <- err }()
			select {
			case err := <-done:
				if err == nil {
					t.Fatal("Arbitrate with a server that never answers succeeded")
				}
				if d := time.Since(start); d > time.Second {
					t.Fatalf("Arbitrate returned after %v: want within a second of its context ending", d)
				}
			case <-time.After(3 * time.Second):
				t.Fatal("Arbitrate still blocked 3 s after its context ended")
			}
		})
	}
}
