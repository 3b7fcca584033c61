package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	"github.com/spf13/cobra"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/prototext"

	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/dataplane/p4rtserver"
)

// switchOptions are the flags of `p4ctl switch`.
type switchOptions struct {
	GRPCAddr    string
	DeviceID    uint64
	P4InfoFile  string
	NoP4        bool
	CPUPort     uint32
	TLSCert     string
	TLSKey      string
	TLSClientCA string

	p4info *p4configv1.P4Info
	ready  func(net.Addr) // tests: called once the server listens
}

func newSwitchCmd(s *streams) *cobra.Command {
	o := &switchOptions{}
	cmd := &cobra.Command{
		Use:   "switch",
		Short: "Run the embedded P4Runtime target (the p4ctl program in Go) standalone",
		Long: `Run the embedded target: the p4ctl P4 program modelled in Go behind a P4Runtime
gRPC server, so controllers (p4ctl push/apply/get, p4runtime-shell, ONOS) can
drive it exactly as they drive BMv2's simple_switch_grpc. It listens on
loopback only unless --grpc-addr says otherwise, and serves until interrupted.`,
		Args: cobra.NoArgs,
		RunE: runE(o, s),
	}
	f := cmd.Flags()
	f.StringVar(&o.GRPCAddr, "grpc-addr", p4rtserver.DefaultAddress, "P4Runtime listen address (host:port)")
	f.Uint64Var(&o.DeviceID, "device-id", p4rtserver.DefaultDeviceID, "P4Runtime device id")
	f.StringVar(&o.P4InfoFile, "p4info", "", "P4Info (text format) to start with instead of the built-in one; must describe the p4ctl program")
	f.BoolVar(&o.NoP4, "no-p4", false, "start without a pipeline: the controller must SetForwardingPipelineConfig first (like simple_switch_grpc --no-p4)")
	f.Uint32Var(&o.CPUPort, "cpu-port", dataplane.DefaultCPUPort, "port whose traffic is exchanged with the controller as PacketIn/PacketOut")
	f.StringVar(&o.TLSCert, "tls-cert", "", "server certificate (PEM) for TLS")
	f.StringVar(&o.TLSKey, "tls-key", "", "server key (PEM) for TLS")
	f.StringVar(&o.TLSClientCA, "tls-client-ca", "", "CA (PEM) for client certificates: enables mTLS")
	return cmd
}

// Complete loads the P4Info file, if any.
func (o *switchOptions) Complete(*cobra.Command, []string) error {
	if o.P4InfoFile == "" {
		return nil
	}
	b, err := os.ReadFile(o.P4InfoFile)
	if err != nil {
		return fmt.Errorf("read --p4info: %w", err)
	}
	var info p4configv1.P4Info
	if err := prototext.Unmarshal(b, &info); err != nil {
		return fmt.Errorf("parse %s as a text-format P4Info: %w", o.P4InfoFile, err)
	}
	o.p4info = &info
	return nil
}

// Validate checks flag values (usage errors exit 2).
func (o *switchOptions) Validate() error {
	if _, port, err := net.SplitHostPort(o.GRPCAddr); err != nil || port == "" {
		return usageErrorf("--grpc-addr %q: want host:port", o.GRPCAddr)
	}
	if o.CPUPort == 0 || o.CPUPort >= 1<<9 {
		return usageErrorf("--cpu-port %d: want 1..511 (9-bit ports)", o.CPUPort)
	}
	if (o.TLSCert == "") != (o.TLSKey == "") {
		return usageErrorf("--tls-cert and --tls-key go together")
	}
	if o.TLSClientCA != "" && o.TLSCert == "" {
		return usageErrorf("--tls-client-ca needs --tls-cert and --tls-key")
	}
	if o.NoP4 && o.p4info != nil {
		return usageErrorf("--no-p4 and --p4info are exclusive")
	}
	// The files are read now, so that nothing is announced (or served)
	// with TLS flags that cannot work.
	if o.TLSCert != "" {
		if _, err := tls.LoadX509KeyPair(o.TLSCert, o.TLSKey); err != nil {
			return fmt.Errorf("--tls-cert %s / --tls-key %s: %w", o.TLSCert, o.TLSKey, err)
		}
	}
	if o.TLSClientCA != "" {
		b, err := os.ReadFile(o.TLSClientCA)
		if err != nil {
			return fmt.Errorf("--tls-client-ca: %w", err)
		}
		if !x509.NewCertPool().AppendCertsFromPEM(b) {
			return fmt.Errorf("--tls-client-ca %s: no PEM certificate in it", o.TLSClientCA)
		}
	}
	return nil
}

func isLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Run serves P4Runtime until ctx is done.
func (o *switchOptions) Run(ctx context.Context, s *streams) error {
	sw, err := dataplane.New(dataplane.Options{P4Info: o.p4info, NoPipeline: o.NoP4, CPUPort: o.CPUPort})
	if err != nil {
		return err
	}
	opts := []p4rtserver.Option{p4rtserver.WithAddress(o.GRPCAddr), p4rtserver.WithDeviceID(o.DeviceID)}
	if o.TLSCert != "" {
		opts = append(opts, p4rtserver.WithTLS(p4rtserver.TLS{CertFile: o.TLSCert, KeyFile: o.TLSKey, ClientCAFile: o.TLSClientCA}))
	}
	srv := p4rtserver.New(sw, opts...)
	lis, err := srv.Listen()
	if err != nil {
		return err
	}
	if !isLoopbackAddr(o.GRPCAddr) {
		fmt.Fprintf(s.Err, "warning: P4Runtime is reachable beyond this machine (%s)%s\n", o.GRPCAddr,
			map[bool]string{true: "", false: " without TLS"}[o.TLSCert != ""])
	}
	pipelineNote := "p4ctl program loaded"
	if o.NoP4 {
		pipelineNote = "no pipeline until SetForwardingPipelineConfig"
	}
	fmt.Fprintf(s.Err, "p4ctl switch: P4Runtime on %s, device %d, CPU port %d, %s\n", lis.Addr(), o.DeviceID, o.CPUPort, pipelineNote)
	if o.ready != nil {
		o.ready(lis.Addr())
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	err = srv.Serve(lis)
	if ctx.Err() != nil {
		<-stopped
	}
	if err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return fmt.Errorf("p4ctl switch: %w", err)
	}
	return nil
}
