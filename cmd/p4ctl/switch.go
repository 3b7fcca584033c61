package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	"github.com/spf13/cobra"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/prototext"

	"github.com/p4ctl/p4ctl/pkg/cmdutil"
	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/dataplane/p4rtserver"
	"github.com/p4ctl/p4ctl/pkg/dataplane/ports"
	"github.com/p4ctl/p4ctl/pkg/dataplane/switchd"
	"github.com/p4ctl/p4ctl/pkg/inputfile"
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
	Interfaces  []string
	Datapath    string
	XDPGeneric  bool

	p4info *p4configv1.P4Info
	ports  []ports.Spec
	netns  string         // tests: open the interfaces inside this network namespace
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
loopback only unless --grpc-addr says otherwise, and serves until interrupted.

Data-plane ports, as simple_switch_grpc's: -i PORT@INTERFACE (repeatable)
binds switch port PORT to a network interface through an AF_PACKET socket
(Linux; root or CAP_NET_RAW). A frame received on the interface enters the
pipeline on PORT; a frame the pipeline sends out of PORT leaves by the
interface. Turn checksum offloads off on the interfaces' peers as for BMv2
(ethtool -K IFACE tx off), or the switch completes the checksums itself. An
interface that disappears while the switch runs (deleted, moved to another
namespace) stops it with an error naming the port (exit 1); one that goes
down is waited for. Interrupting the switch closes every socket.

  p4ctl switch --no-p4 --device-id 1 -i 1@veth1 -i 2@veth2

--datapath xdp runs the same program in the Linux XDP data path instead
(the SmartNIC-class target, docs/XDP.md): the program is attached to each
-i interface (native XDP, else generic XDP with a warning), tables,
registers and counters live in BPF maps, held requests go round a
recirculation veth pair in a network namespace of the switch's own. It
needs root and a kernel with BPF, BTF and XDP (5.17 or later). A veth
port's peer needs an XDP program or GRO on (ethtool -K PEER gro on) to
receive the frames sent out of the port. On exit, even on SIGKILL, the
program leaves every interface and the recirculation pair is gone.

  p4ctl switch --datapath xdp -i 1@veth1 -i 2@veth2`,
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
	f.StringArrayVarP(&o.Interfaces, "interface", "i", nil, "data-plane port PORT@INTERFACE, e.g. 1@veth1 (repeatable; port numbers 0..509, not the CPU port)")
	f.StringVar(&o.Datapath, "datapath", datapathGo, "what runs the packets: go (the Go model; AF_PACKET ports) or xdp (the XDP program; needs root)")
	f.BoolVar(&o.XDPGeneric, "xdp-generic", false, "--datapath xdp: attach in generic (skb) mode everywhere instead of trying native XDP first")
	return cmd
}

// Complete loads the P4Info file, if any.
func (o *switchOptions) Complete(c *cobra.Command, _ []string) error {
	if o.P4InfoFile == "" {
		return nil
	}
	ctx := context.Background()
	if c != nil {
		ctx = c.Context()
	}
	b, err := inputfile.Read(ctx, o.P4InfoFile, inputfile.MaxSize)
	if err != nil {
		return cmdutil.InputError(fmt.Errorf("read --p4info: %w", err))
	}
	var info p4configv1.P4Info
	if err := prototext.Unmarshal(b, &info); err != nil {
		return cmdutil.InputError(fmt.Errorf("parse %s as a text-format P4Info: %w", o.P4InfoFile, err))
	}
	if err := dataplane.VerifyP4Info(&info); err != nil { // refused before the switch starts (exit 2)
		return cmdutil.Usagef("--p4info %s: %s", o.P4InfoFile, status.Convert(err).Message())
	}
	o.p4info = &info
	return nil
}

// The --datapath values.
const (
	datapathGo  = "go"
	datapathXDP = "xdp"
)

// Validate checks flag values (usage errors exit 2).
func (o *switchOptions) Validate() error {
	switch o.Datapath {
	case "":
		o.Datapath = datapathGo
	case datapathGo, datapathXDP:
	default:
		return cmdutil.Usagef("--datapath %q: want %s or %s", o.Datapath, datapathGo, datapathXDP)
	}
	if o.Datapath != datapathXDP && o.XDPGeneric {
		return cmdutil.Usagef("--xdp-generic is for --datapath xdp")
	}
	if err := cmdutil.CheckHostPort("--grpc-addr", o.GRPCAddr, true); err != nil {
		return err
	}
	if o.CPUPort == 0 || o.CPUPort >= 1<<9 {
		return cmdutil.Usagef("--cpu-port %d: want 1..511 (9-bit ports)", o.CPUPort)
	}
	if (o.TLSCert == "") != (o.TLSKey == "") {
		return cmdutil.Usagef("--tls-cert and --tls-key go together")
	}
	if o.TLSClientCA != "" && o.TLSCert == "" {
		return cmdutil.Usagef("--tls-client-ca needs --tls-cert and --tls-key")
	}
	if o.NoP4 && o.p4info != nil {
		return cmdutil.Usagef("--no-p4 and --p4info are exclusive")
	}
	o.ports = nil
	for _, v := range o.Interfaces {
		sp, err := ports.ParseSpec(v)
		if err != nil {
			return cmdutil.Usagef("-i: %w", err)
		}
		o.ports = append(o.ports, sp)
	}
	if err := ports.Validate(o.ports, o.CPUPort); err != nil {
		return cmdutil.Usagef("-i: %w", err)
	}
	// The files are read now, so that nothing is announced (or served)
	// with TLS flags that cannot work; unusable files exit 2.
	if o.TLSCert != "" {
		if _, err := tls.LoadX509KeyPair(o.TLSCert, o.TLSKey); err != nil {
			return cmdutil.Usagef("--tls-cert %s / --tls-key %s: %w", o.TLSCert, o.TLSKey, err)
		}
	}
	if o.TLSClientCA != "" {
		b, err := os.ReadFile(o.TLSClientCA)
		if err != nil {
			return cmdutil.Usagef("--tls-client-ca: %w", err)
		}
		if !x509.NewCertPool().AppendCertsFromPEM(b) {
			return cmdutil.Usagef("--tls-client-ca %s: no PEM certificate in it", o.TLSClientCA)
		}
	}
	return nil
}

// Run serves P4Runtime, and moves frames between the data-plane ports and
// their interfaces, until ctx is done or a port fails (switchd.Run).
func (o *switchOptions) Run(ctx context.Context, s *streams) error {
	log, err := cmdutil.NewLogger(s.Err, "text", "info")
	if err != nil {
		return err
	}
	err = switchd.Run(ctx, switchd.Options{
		Addr: o.GRPCAddr, DeviceID: o.DeviceID, P4Info: o.p4info, NoPipeline: o.NoP4, CPUPort: o.CPUPort,
		TLS:   p4rtserver.TLS{CertFile: o.TLSCert, KeyFile: o.TLSKey, ClientCAFile: o.TLSClientCA},
		Ports: o.ports, NetNS: o.netns, XDP: o.Datapath == datapathXDP, XDPGeneric: o.XDPGeneric, Log: log,
		Ready: func(st switchd.Started) {
			if !cmdutil.IsLoopbackAddr(o.GRPCAddr) {
				fmt.Fprintf(s.Err, "warning: P4Runtime is reachable beyond this machine (%s)%s\n", o.GRPCAddr,
					map[bool]string{true: "", false: " without TLS"}[o.TLSCert != ""])
			}
			fmt.Fprintf(s.Err, "p4ctl switch: P4Runtime on %s, device %d, CPU port %d, %s, %s\n", st.Addr, o.DeviceID, o.CPUPort, st.Pipeline, st.Ports)
			if o.ready != nil {
				o.ready(st.Listen)
			}
		},
		Stopped: func(left string) { fmt.Fprintf(s.Err, "p4ctl switch: stopped: %s\n", left) },
	})
	if err != nil {
		return fmt.Errorf("p4ctl switch: %w", err)
	}
	return nil
}
