package p4rtserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// Defaults.
const (
	// DefaultAddress is where ListenAndServe listens: loopback only. Listening
	// on other interfaces must be asked for explicitly (WithAddress).
	DefaultAddress = "127.0.0.1:9559"
	// DefaultDeviceID is the P4Runtime device id the server answers to.
	DefaultDeviceID uint64 = 1
	// DefaultMaxMsgSize bounds received and sent gRPC messages (pipeline
	// configs carry a whole compiled program).
	DefaultMaxMsgSize = 64 << 20
	// DefaultMaxStreams bounds live StreamChannels per (device, role); more
	// are refused with RESOURCE_EXHAUSTED.
	DefaultMaxStreams = 64
	// DefaultMaxErrorDetails bounds the encoded size of per-update error
	// details in a Write/Read status. They travel in the grpc-status-details-bin
	// trailer, i.e. in HTTP/2 metadata, which peers cap (8 KiB in C++ gRPC and
	// in grpc-go's upcoming default; p4rt clients advertise 16 MiB). Over the
	// budget, messages are shortened, then dropped, but every update keeps its
	// canonical code.
	DefaultMaxErrorDetails = 4 << 20
	// APIVersion is the P4Runtime API version the server implements.
	APIVersion = "1.5.0"
	// readChunk is how many entities go into one ReadResponse.
	readChunk = 1000
	// outboxLimit bounds queued PacketIn/digest messages per stream; beyond
	// it they are dropped (arbitration updates are never dropped).
	outboxLimit = 4096
)

// Option configures a Server.
type Option func(*options)

type options struct {
	addr            string
	deviceID        uint64
	maxMsg          int
	maxStreams      int
	maxErrorDetails int
	tls             *TLS
	grpcOpts        []grpc.ServerOption
	log             *slog.Logger
}

// WithAddress sets the listen address of ListenAndServe (default
// 127.0.0.1:9559). Use a non-loopback address only on purpose.
func WithAddress(addr string) Option { return func(o *options) { o.addr = addr } }

// WithDeviceID sets the device id (default 1).
func WithDeviceID(id uint64) Option { return func(o *options) { o.deviceID = id } }

// WithMaxStreams bounds live StreamChannels per role (default 64).
func WithMaxStreams(n int) Option { return func(o *options) { o.maxStreams = n } }

// WithMaxErrorDetails bounds the encoded per-update error details of one
// reply (default 4 MiB; see DefaultMaxErrorDetails).
func WithMaxErrorDetails(n int) Option { return func(o *options) { o.maxErrorDetails = n } }

// WithGRPCOptions adds gRPC server options (interceptors, keepalive, ...).
func WithGRPCOptions(opts ...grpc.ServerOption) Option {
	return func(o *options) { o.grpcOpts = append(o.grpcOpts, opts...) }
}

// TLS configures server-side TLS. With ClientCAFile set, clients must
// present a certificate signed by that CA (mTLS).
type TLS struct {
	CertFile, KeyFile string
	ClientCAFile      string
}

// WithTLS serves over TLS (or mTLS) instead of plaintext.
func WithTLS(t TLS) Option { return func(o *options) { o.tls = &t } }

// Server is a P4Runtime server (p4.v1.P4Runtime) in front of a Target for
// one device. Create it with New, then Serve / ListenAndServe, or Register
// it on your own grpc.Server.
type Server struct {
	p4v1.UnimplementedP4RuntimeServer

	target Target
	opts   options
	log    *slog.Logger

	// gate serialises primary changes and pipeline changes against
	// in-flight Writes (spec §5.4: the server finishes in-flight writes of
	// the old primary before accepting the new one).
	gate sync.RWMutex

	mu       sync.Mutex
	roles    map[string]*role
	nextID   uint64
	shutdown chan struct{}
	grpcSrv  *grpc.Server
	lis      net.Listener
	unsubPkt func()
	unsubDig func()
	stopOnce sync.Once
}

// New returns a server for target. It subscribes to the target's PacketIns
// (and digests, if the target offers them) until Stop/GracefulStop.
func New(target Target, opts ...Option) *Server {
	o := options{addr: DefaultAddress, deviceID: DefaultDeviceID, maxMsg: DefaultMaxMsgSize,
		maxStreams: DefaultMaxStreams, maxErrorDetails: DefaultMaxErrorDetails}
	for _, f := range opts {
		f(&o)
	}
	if o.log == nil {
		o.log = slog.New(slog.DiscardHandler)
	}
	s := &Server{target: target, opts: o, log: o.log, roles: map[string]*role{}, shutdown: make(chan struct{})}
	s.unsubPkt = target.SubscribePacketIn(s.packetIn)
	if d, ok := target.(DigestTarget); ok {
		s.unsubDig = d.SubscribeDigests(s.digest)
	}
	return s
}

// DeviceID returns the device id the server answers to.
func (s *Server) DeviceID() uint64 { return s.opts.deviceID }

// Target returns the server's target.
func (s *Server) Target() Target { return s.target }

// Register registers the P4Runtime service on g (for callers that run their
// own grpc.Server; set its max message sizes yourself, see ServerOptions).
func (s *Server) Register(g grpc.ServiceRegistrar) { p4v1.RegisterP4RuntimeServer(g, s) }

// ServerOptions returns the gRPC server options the server uses: message
// size limits, TLS credentials and the options given with WithGRPCOptions.
func (s *Server) ServerOptions() ([]grpc.ServerOption, error) {
	opts := []grpc.ServerOption{
		grpc.MaxRecvMsgSize(s.opts.maxMsg),
		grpc.MaxSendMsgSize(s.opts.maxMsg),
	}
	if s.opts.tls != nil {
		creds, err := serverCreds(*s.opts.tls)
		if err != nil {
			return nil, err
		}
		opts = append(opts, grpc.Creds(creds))
	}
	return append(opts, s.opts.grpcOpts...), nil
}

func serverCreds(t TLS) (credentials.TransportCredentials, error) {
	cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("load server certificate: %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if t.ClientCAFile != "" {
		pem, err := os.ReadFile(t.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("read client CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("client CA %s: no PEM certificates", t.ClientCAFile)
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return credentials.NewTLS(cfg), nil
}

// Serve serves P4Runtime on lis until Stop or GracefulStop.
func (s *Server) Serve(lis net.Listener) error {
	opts, err := s.ServerOptions()
	if err != nil {
		return err
	}
	g := grpc.NewServer(opts...)
	s.Register(g)
	s.mu.Lock()
	if s.grpcSrv != nil {
		s.mu.Unlock()
		return errors.New("p4rtserver: Serve called twice")
	}
	select {
	case <-s.shutdown:
		s.mu.Unlock()
		return errors.New("p4rtserver: server stopped")
	default:
	}
	s.grpcSrv, s.lis = g, lis
	s.mu.Unlock()
	return g.Serve(lis)
}

// Listen opens the configured address (default 127.0.0.1:9559).
func (s *Server) Listen() (net.Listener, error) {
	lis, err := net.Listen("tcp", s.opts.addr)
	if err != nil {
		return nil, fmt.Errorf("p4rtserver: listen on %s: %w", s.opts.addr, err)
	}
	return lis, nil
}

// ListenAndServe listens on the configured address and serves until ctx is
// done, then stops gracefully (waiting at most 5 s for in-flight RPCs).
func (s *Server) ListenAndServe(ctx context.Context) error {
	lis, err := s.Listen()
	if err != nil {
		return err
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			s.Shutdown(sctx)
		case <-done:
		}
	}()
	if err := s.Serve(lis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return err
	}
	return nil
}

// Addr returns the address being served, or nil before Serve.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lis == nil {
		return nil
	}
	return s.lis.Addr()
}

// Shutdown ends every StreamChannel (clients see UNAVAILABLE), waits for
// in-flight unary RPCs until ctx is done, then stops.
func (s *Server) Shutdown(ctx context.Context) {
	s.beginStop()
	s.mu.Lock()
	g := s.grpcSrv
	s.mu.Unlock()
	if g == nil {
		return
	}
	done := make(chan struct{})
	go func() { g.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		g.Stop()
		<-done
	}
}

// GracefulStop is Shutdown without a deadline.
func (s *Server) GracefulStop() { s.Shutdown(context.Background()) }

// Stop closes all connections immediately.
func (s *Server) Stop() {
	s.beginStop()
	s.mu.Lock()
	g := s.grpcSrv
	s.mu.Unlock()
	if g != nil {
		g.Stop()
	}
}

func (s *Server) beginStop() {
	s.stopOnce.Do(func() {
		close(s.shutdown)
		if s.unsubPkt != nil {
			s.unsubPkt()
		}
		if s.unsubDig != nil {
			s.unsubDig()
		}
	})
}

// checkDevice returns NOT_FOUND for a foreign device id.
func (s *Server) checkDevice(id uint64) error {
	if id != s.opts.deviceID {
		return status.Errorf(codes.NotFound, "unknown device id %d (this server is device %d)", id, s.opts.deviceID)
	}
	return nil
}

// Capabilities reports the P4Runtime API version.
func (s *Server) Capabilities(_ context.Context, req *p4v1.CapabilitiesRequest) (*p4v1.CapabilitiesResponse, error) {
	if req.GetDeviceId() != 0 {
		if err := s.checkDevice(req.GetDeviceId()); err != nil {
			return nil, err
		}
	}
	return &p4v1.CapabilitiesResponse{P4RuntimeApiVersion: APIVersion}, nil
}

// Write applies a batch from the primary controller; per-update failures
// come back as code UNKNOWN with one p4.v1.Error per update in the status
// details (spec §12.4).
func (s *Server) Write(ctx context.Context, req *p4v1.WriteRequest) (*p4v1.WriteResponse, error) {
	if err := s.checkDevice(req.GetDeviceId()); err != nil {
		return nil, err
	}
	s.gate.RLock()
	defer s.gate.RUnlock()
	if err := s.checkPrimary(req.GetRole(), req.GetElectionId()); err != nil {
		return nil, err
	}
	if s.target.P4Info() == nil {
		return nil, status.Error(codes.FailedPrecondition, "no forwarding pipeline config set")
	}
	switch req.GetAtomicity() {
	case p4v1.WriteRequest_CONTINUE_ON_ERROR, p4v1.WriteRequest_ROLLBACK_ON_ERROR, p4v1.WriteRequest_DATAPLANE_ATOMIC:
	default:
		return nil, status.Errorf(codes.InvalidArgument, "unknown atomicity %d", req.GetAtomicity())
	}
	if len(req.GetUpdates()) == 0 {
		return &p4v1.WriteResponse{}, nil
	}
	errs := s.target.Write(ctx, req.GetUpdates(), req.GetAtomicity())
	if len(errs) != len(req.GetUpdates()) {
		return nil, status.Errorf(codes.Internal, "target returned %d results for %d updates", len(errs), len(req.GetUpdates()))
	}
	if st := s.batchStatus("Write", errs); st != nil {
		return nil, st.Err()
	}
	return &p4v1.WriteResponse{}, nil
}

// batchStatus returns nil if every error is nil, else an UNKNOWN status
// carrying one p4.v1.Error per element, within the details budget.
func (s *Server) batchStatus(rpc string, errs []error) *status.Status {
	failed := 0
	for _, e := range errs {
		if e != nil {
			failed++
		}
	}
	if failed == 0 {
		return nil
	}
	details := make([]*p4v1.Error, len(errs))
	for i, e := range errs {
		details[i] = toP4Error(e)
	}
	msg := fmt.Sprintf("%s failure: %d of %d failed", rpc, failed, len(errs))
	for _, limit := range []int{-1, 80, 0} {
		if limit >= 0 {
			for _, d := range details {
				if len(d.Message) > limit {
					d.Message = d.Message[:limit]
				}
			}
		}
		st, err := statusWithDetails(msg, details)
		if err != nil {
			return status.New(codes.Internal, err.Error())
		}
		if proto.Size(st.Proto()) <= s.opts.maxErrorDetails || limit == 0 {
			return st
		}
	}
	return nil // unreachable
}

func statusWithDetails(msg string, details []*p4v1.Error) (*status.Status, error) {
	sp := status.New(codes.Unknown, msg).Proto()
	sp.Details = make([]*anypb.Any, len(details))
	for i, d := range details {
		a, err := anypb.New(d)
		if err != nil {
			return nil, err
		}
		sp.Details[i] = a
	}
	return status.FromProto(sp), nil
}

// toP4Error converts a target error to a p4.v1.Error (code OK for nil),
// with the code the P4Runtime spec requires (specCode).
func toP4Error(err error) *p4v1.Error {
	if err == nil {
		return &p4v1.Error{CanonicalCode: int32(codes.OK)}
	}
	st, ok := status.FromError(err)
	if !ok {
		return &p4v1.Error{CanonicalCode: int32(codes.Unknown), Message: err.Error()}
	}
	return &p4v1.Error{CanonicalCode: int32(specCode(st.Code(), st.Message())), Message: st.Message()}
}

// specCode returns the code the P4Runtime spec requires for a target error
// reported with code and msg: a bytestring that is empty or wider than its
// field or parameter is OUT_OF_RANGE ("Bytestrings": "When the server
// rejects a binary string due to any of the previous criteria, it returns
// an OUT_OF_RANGE error"), where the engine reports INVALID_ARGUMENT with
// the decoding error in its message.
func specCode(code codes.Code, msg string) codes.Code {
	if code == codes.InvalidArgument && (strings.Contains(msg, "empty bytestring") || strings.Contains(msg, " does not fit in ")) {
		return codes.OutOfRange
	}
	return code
}

// Read streams the entities matching each request entity; requests that
// fail are reported as UNKNOWN with one p4.v1.Error per request entity.
func (s *Server) Read(req *p4v1.ReadRequest, stream p4v1.P4Runtime_ReadServer) error {
	if err := s.checkDevice(req.GetDeviceId()); err != nil {
		return err
	}
	if s.target.P4Info() == nil {
		return status.Error(codes.FailedPrecondition, "no forwarding pipeline config set")
	}
	if len(req.GetEntities()) == 0 {
		return status.Error(codes.InvalidArgument, "read request without entities")
	}
	ctx := stream.Context()
	var buf []*p4v1.Entity
	flush := func() error {
		if len(buf) == 0 {
			return nil
		}
		err := stream.Send(&p4v1.ReadResponse{Entities: buf})
		buf = nil
		return err
	}
	var sendErr error
	emit := func(e *p4v1.Entity) error {
		buf = append(buf, e)
		if len(buf) >= readChunk {
			if err := flush(); err != nil {
				sendErr = err
				return err
			}
		}
		return ctx.Err()
	}
	errs := make([]error, len(req.GetEntities()))
	for i, e := range req.GetEntities() {
		if e.GetEntity() == nil {
			errs[i] = status.Error(codes.InvalidArgument, "entity not set (a wildcard read must name the entity type)")
			continue
		}
		errs[i] = s.target.Read(ctx, e, emit)
		if sendErr != nil {
			return sendErr
		}
		if ctx.Err() != nil {
			return status.FromContextError(ctx.Err()).Err()
		}
	}
	if err := flush(); err != nil {
		return err
	}
	if st := s.batchStatus("Read", errs); st != nil {
		if len(errs) == 1 {
			// One request entity: its own code (INVALID_ARGUMENT,
			// OUT_OF_RANGE, NOT_FOUND, …), not UNKNOWN, so that a client
			// that reads only the status code (p4runtime-shell) sees the
			// real one; the detail stays for those that read it.
			sp := st.Proto()
			d := toP4Error(errs[0])
			sp.Code, sp.Message = d.CanonicalCode, d.Message
			return status.FromProto(sp).Err()
		}
		return st.Err()
	}
	return nil
}

// SetForwardingPipelineConfig verifies or installs a pipeline (primary only).
func (s *Server) SetForwardingPipelineConfig(ctx context.Context, req *p4v1.SetForwardingPipelineConfigRequest) (*p4v1.SetForwardingPipelineConfigResponse, error) {
	if err := s.checkDevice(req.GetDeviceId()); err != nil {
		return nil, err
	}
	s.gate.Lock() // no write runs while the pipeline changes
	defer s.gate.Unlock()
	if err := s.checkPrimary(req.GetRole(), req.GetElectionId()); err != nil {
		return nil, err
	}
	switch req.GetAction() {
	case p4v1.SetForwardingPipelineConfigRequest_VERIFY, p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT,
		p4v1.SetForwardingPipelineConfigRequest_RECONCILE_AND_COMMIT, p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_SAVE:
		if req.GetConfig() == nil || req.GetConfig().GetP4Info() == nil {
			return nil, status.Errorf(codes.InvalidArgument, "%s needs a config with a P4Info", req.GetAction())
		}
	case p4v1.SetForwardingPipelineConfigRequest_COMMIT:
		if req.GetConfig() != nil {
			return nil, status.Error(codes.InvalidArgument, "COMMIT takes no config")
		}
	default:
		return nil, status.Errorf(codes.InvalidArgument, "unsupported pipeline action %s", req.GetAction())
	}
	if err := s.target.SetPipeline(ctx, req.GetAction(), req.GetConfig()); err != nil {
		if _, ok := status.FromError(err); !ok {
			err = status.Error(codes.InvalidArgument, err.Error())
		}
		return nil, err
	}
	return &p4v1.SetForwardingPipelineConfigResponse{}, nil
}

// GetForwardingPipelineConfig returns the current pipeline, filtered by the
// response type; config is unset when no pipeline is installed.
func (s *Server) GetForwardingPipelineConfig(_ context.Context, req *p4v1.GetForwardingPipelineConfigRequest) (*p4v1.GetForwardingPipelineConfigResponse, error) {
	if err := s.checkDevice(req.GetDeviceId()); err != nil {
		return nil, err
	}
	cur := s.target.Pipeline()
	if cur == nil {
		return &p4v1.GetForwardingPipelineConfigResponse{}, nil
	}
	out := &p4v1.ForwardingPipelineConfig{Cookie: cur.GetCookie()}
	switch req.GetResponseType() {
	case p4v1.GetForwardingPipelineConfigRequest_ALL:
		out.P4Info, out.P4DeviceConfig = cur.GetP4Info(), cur.GetP4DeviceConfig()
	case p4v1.GetForwardingPipelineConfigRequest_P4INFO_AND_COOKIE:
		out.P4Info = cur.GetP4Info()
	case p4v1.GetForwardingPipelineConfigRequest_DEVICE_CONFIG_AND_COOKIE:
		out.P4DeviceConfig = cur.GetP4DeviceConfig()
	case p4v1.GetForwardingPipelineConfigRequest_COOKIE_ONLY:
	default:
		return nil, status.Errorf(codes.InvalidArgument, "unknown response type %d", req.GetResponseType())
	}
	return &p4v1.GetForwardingPipelineConfigResponse{Config: out}, nil
}
