package p4rt

import (
	"context"
	"fmt"
	"math/big"
	"net"
	"strings"
	"sync"
	"time"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// Defaults. The batch size keeps a Write well under gRPC's default limits:
// a p4ctl table update is 40–150 bytes, so 500 updates are ≤ ~75 KB against
// the 4 MiB default max message; the worst-case error reply (every update
// failing, ~150 B of p4.v1.Error each, base64 in the grpc-status-details-bin
// trailer) is ~100 KB, which this client accepts because it advertises a
// 16 MiB header list (DefaultMaxHeaderListSize) instead of the 8 KiB that
// C++ gRPC and grpc-go's upcoming default allow.
const (
	DefaultDeviceID          uint64 = 1
	DefaultBatchSize                = 500
	DefaultMaxMsgSize               = 64 << 20 // pipeline configs carry a compiled program
	DefaultMaxHeaderListSize        = 16 << 20
	DefaultCallTimeout              = 30 * time.Second
	DefaultStreamBuffer             = 1024 // PacketIns/digests queued before dropping
)

// ElectionID is a 128-bit P4Runtime election id. The zero value means
// "unset": such a client is a read-only backup that never becomes primary.
type ElectionID struct{ High, Low uint64 }

// Election returns the election id low (with high = 0).
func Election(low uint64) ElectionID { return ElectionID{Low: low} }

// IsZero reports whether the id is unset.
func (e ElectionID) IsZero() bool { return e.High == 0 && e.Low == 0 }

// Compare returns -1, 0 or +1.
func (e ElectionID) Compare(o ElectionID) int {
	switch {
	case e.High != o.High:
		if e.High < o.High {
			return -1
		}
		return 1
	case e.Low != o.Low:
		if e.Low < o.Low {
			return -1
		}
		return 1
	}
	return 0
}

// Next returns e+1.
func (e ElectionID) Next() ElectionID {
	if e.Low == ^uint64(0) {
		return ElectionID{High: e.High + 1}
	}
	return ElectionID{High: e.High, Low: e.Low + 1}
}

// String renders the id in decimal ("unset" for zero).
func (e ElectionID) String() string {
	if e.IsZero() {
		return "unset"
	}
	if e.High == 0 {
		return fmt.Sprint(e.Low)
	}
	v := new(big.Int).Lsh(new(big.Int).SetUint64(e.High), 64)
	return v.Or(v, new(big.Int).SetUint64(e.Low)).String()
}

// Pair writes the id as p4runtime-shell and --election-id spell it:
// HIGH,LOW (1,0 is p4runtime-shell's default).
func (e ElectionID) Pair() string { return fmt.Sprintf("%d,%d", e.High, e.Low) }

func (e ElectionID) proto() *p4v1.Uint128 {
	if e.IsZero() {
		return nil
	}
	return &p4v1.Uint128{High: e.High, Low: e.Low}
}

func electionFromProto(u *p4v1.Uint128) ElectionID {
	return ElectionID{High: u.GetHigh(), Low: u.GetLow()}
}

// Backoff is the reconnect schedule of the StreamChannel: Initial, then
// multiplied by Multiplier per failed attempt up to Max.
type Backoff struct {
	Initial    time.Duration
	Max        time.Duration
	Multiplier float64
}

// DefaultBackoff is 100 ms doubling up to 5 s.
var DefaultBackoff = Backoff{Initial: 100 * time.Millisecond, Max: 5 * time.Second, Multiplier: 2}

func (b Backoff) next(d time.Duration) time.Duration {
	if d <= 0 {
		return b.Initial
	}
	n := time.Duration(float64(d) * b.Multiplier)
	if n > b.Max {
		n = b.Max
	}
	return n
}

// Option configures a Client.
type Option func(*options)

type options struct {
	deviceID      uint64
	election      ElectionID
	role          string
	tls           *TLSOptions
	insecureOK    bool
	dialOpts      []grpc.DialOption
	maxMsg        int
	maxHeaderList uint32
	batchSize     int
	callTimeout   time.Duration
	backoff       Backoff
	reconnect     bool
	onResync      func(context.Context, *Client) error
	p4info        *p4configv1.P4Info
	streamBuffer  int
}

// WithDeviceID sets the P4Runtime device id (default 1; 0 is a valid id,
// simple_switch_grpc's default).
func WithDeviceID(id uint64) Option { return func(o *options) { o.deviceID = id } }

// WithElectionID sets the election id used for arbitration and writes
// (default unset: a read-only backup).
func WithElectionID(id ElectionID) Option { return func(o *options) { o.election = id } }

// WithRole sets the role name (default: the default role, full access).
func WithRole(name string) Option { return func(o *options) { o.role = name } }

// WithTLS connects over TLS, or mTLS when a client certificate is given.
func WithTLS(t TLSOptions) Option { return func(o *options) { o.tls = &t } }

// WithInsecure allows plaintext to a non-loopback address (plaintext to
// loopback is always allowed).
func WithInsecure() Option { return func(o *options) { o.insecureOK = true } }

// WithDialOptions adds gRPC dial options (e.g. a bufconn dialer in tests).
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(o *options) { o.dialOpts = append(o.dialOpts, opts...) }
}

// WithBatchSize sets the default number of updates per WriteRequest
// (default DefaultBatchSize = 500).
func WithBatchSize(n int) Option { return func(o *options) { o.batchSize = n } }

// WithCallTimeout sets the deadline applied to calls whose context has
// none (default 30 s).
func WithCallTimeout(d time.Duration) Option { return func(o *options) { o.callTimeout = d } }

// WithBackoff sets the StreamChannel reconnect schedule.
func WithBackoff(b Backoff) Option { return func(o *options) { o.backoff = b } }

// WithoutReconnect disables reconnecting the StreamChannel after it breaks.
func WithoutReconnect() Option { return func(o *options) { o.reconnect = false } }

// WithResync registers fn, called after every successful reconnection and
// re-arbitration of the StreamChannel (not after the first Arbitrate), e.g.
// to reconcile the switch after it restarted. Its error is reported in the
// state change (ArbitrationState.Err).
func WithResync(fn func(ctx context.Context, c *Client) error) Option {
	return func(o *options) { o.onResync = fn }
}

// WithP4Info gives the client the switch's P4Info, used to resolve names and
// to decode errors; without it the client fetches the P4Info from the
// switch when a name-based call first needs it.
func WithP4Info(info *p4configv1.P4Info) Option { return func(o *options) { o.p4info = info } }

// Client is a P4Runtime client for one device. It is safe for concurrent
// use. Unary RPCs (Write, Read, pipeline config) need no stream; Arbitrate
// opens the StreamChannel that makes the client primary or backup and
// carries packet I/O and digests.
type Client struct {
	conn     *grpc.ClientConn
	ownsConn bool
	rpc      p4v1.P4RuntimeClient
	opts     options

	ctx    context.Context // lives until Close
	cancel context.CancelFunc

	mu       sync.Mutex
	idx      *Index
	election ElectionID
	state    ArbitrationState
	sess     *session
	stateCh  chan ArbitrationState
	packetIn chan *p4v1.PacketIn
	digests  chan *p4v1.DigestList
	errs     chan *p4v1.StreamError
	dropped  uint64
	wg       sync.WaitGroup
}

func defaultOptions() options {
	return options{deviceID: DefaultDeviceID, maxMsg: DefaultMaxMsgSize, maxHeaderList: DefaultMaxHeaderListSize,
		batchSize: DefaultBatchSize, callTimeout: DefaultCallTimeout, backoff: DefaultBackoff, reconnect: true,
		streamBuffer: DefaultStreamBuffer}
}

// Dial connects to a P4Runtime server at addr ("host:port"). Without TLS
// options the connection is plaintext, which is only allowed to loopback
// addresses unless WithInsecure is given. Dial does not block: connection
// errors surface on the first call.
func Dial(addr string, opts ...Option) (*Client, error) {
	o := defaultOptions()
	for _, f := range opts {
		f(&o)
	}
	dial := []grpc.DialOption{
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(o.maxMsg), grpc.MaxCallSendMsgSize(o.maxMsg)),
		grpc.WithMaxHeaderListSize(o.maxHeaderList),
		// Reconnect the transport on the same schedule as the stream (gRPC's
		// default backs off to 120 s, too slow to regain a switch).
		grpc.WithConnectParams(grpc.ConnectParams{MinConnectTimeout: ConnectTimeout, Backoff: backoff.Config{
			BaseDelay: o.backoff.Initial, Multiplier: o.backoff.Multiplier, Jitter: 0.2, MaxDelay: o.backoff.Max}}),
	}
	if o.tls != nil {
		creds, err := o.tls.credentials()
		if err != nil {
			return nil, err
		}
		dial = append(dial, grpc.WithTransportCredentials(creds))
	} else {
		if !o.insecureOK && !isLoopback(addr) {
			return nil, fmt.Errorf("p4rt: refusing plaintext P4Runtime to non-loopback address %s: configure TLS (WithTLS) or allow plaintext explicitly (WithInsecure)", addr)
		}
		dial = append(dial, grpc.WithTransportCredentials(insecure.NewCredentials()))
	}
	dial = append(dial, o.dialOpts...)
	conn, err := grpc.NewClient(addr, dial...)
	if err != nil {
		return nil, fmt.Errorf("p4rt: dial %s: %w", addr, err)
	}
	c, err := newClient(conn, o)
	if err != nil {
		conn.Close()
		return nil, err
	}
	c.ownsConn = true
	return c, nil
}

// NewClient wraps an existing connection (e.g. over bufconn). Close does not
// close conn. Transport options (TLS, dial options, sizes) are the caller's.
func NewClient(conn *grpc.ClientConn, opts ...Option) (*Client, error) {
	o := defaultOptions()
	for _, f := range opts {
		f(&o)
	}
	return newClient(conn, o)
}

func newClient(conn *grpc.ClientConn, o options) (*Client, error) {
	if o.batchSize <= 0 {
		return nil, fmt.Errorf("p4rt: batch size %d must be positive", o.batchSize)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Client{conn: conn, rpc: p4v1.NewP4RuntimeClient(conn), opts: o, ctx: ctx, cancel: cancel,
		election: o.election,
		stateCh:  make(chan ArbitrationState, 16),
		packetIn: make(chan *p4v1.PacketIn, o.streamBuffer),
		digests:  make(chan *p4v1.DigestList, o.streamBuffer),
		errs:     make(chan *p4v1.StreamError, 64),
	}
	c.state = ArbitrationState{ElectionID: o.election, Device: o.deviceID, Role: o.role}
	if o.p4info != nil {
		idx, err := NewIndex(o.p4info)
		if err != nil {
			cancel()
			return nil, err
		}
		c.idx = idx
	}
	return c, nil
}

// isLoopback reports whether a gRPC target names this host: a unix socket,
// "localhost" or a loopback IP, with or without a passthrough:/// or
// dns:/// scheme.
func isLoopback(addr string) bool {
	if strings.HasPrefix(addr, "unix:") {
		return true
	}
	for _, scheme := range []string{"passthrough:///", "dns:///"} {
		addr = strings.TrimPrefix(addr, scheme)
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// Close ends the StreamChannel and, for clients from Dial, the connection.
func (c *Client) Close() error {
	c.cancel()
	c.wg.Wait()
	if c.ownsConn {
		return c.conn.Close()
	}
	return nil
}

// Conn returns the underlying gRPC connection.
func (c *Client) Conn() *grpc.ClientConn { return c.conn }

// RPC returns the raw generated P4Runtime client, for calls this package
// does not wrap.
func (c *Client) RPC() p4v1.P4RuntimeClient { return c.rpc }

// DeviceID returns the device id.
func (c *Client) DeviceID() uint64 { return c.opts.deviceID }

// Role returns the role name ("" for the default role).
func (c *Client) Role() string { return c.opts.role }

// ElectionID returns the election id the client currently uses.
func (c *Client) ElectionID() ElectionID {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.election
}

// BatchSize returns the default write batch size.
func (c *Client) BatchSize() int { return c.opts.batchSize }

// callCtx applies the default call timeout when ctx has no deadline.
func (c *Client) callCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok || c.opts.callTimeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, c.opts.callTimeout)
}

// RPCError is a failed RPC: which call, on which device, and the status.
// errors.Is matches the CodeError sentinel of its code.
type RPCError struct {
	Op     string
	Device uint64
	Status *status.Status
}

// Error implements error: the operation, the device and the gRPC status.
func (e *RPCError) Error() string {
	return fmt.Sprintf("%s on device %d: %s: %s", e.Op, e.Device, codeName(e.Status.Code()), e.Status.Message())
}

// Unwrap exposes the code sentinel and the status error.
func (e *RPCError) Unwrap() []error { return []error{&CodeError{e.Status.Code()}, e.Status.Err()} }

// GRPCStatus lets status.Code see the code.
func (e *RPCError) GRPCStatus() *status.Status { return e.Status }

func (c *Client) rpcError(op string, err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		st = status.FromContextError(err)
	}
	if st.Code() == codes.PermissionDenied && (op == "Write" || op == "SetForwardingPipelineConfig") {
		op = fmt.Sprintf("%s (election id %s, role %q: this client is not primary)", op, c.ElectionID(), c.opts.role)
	}
	return &RPCError{Op: op, Device: c.opts.deviceID, Status: st}
}

// Index returns the P4Info index: the one given with WithP4Info or set by
// SetPipeline / SetIndex, else the switch's P4Info fetched now.
func (c *Client) Index(ctx context.Context) (*Index, error) {
	c.mu.Lock()
	idx := c.idx
	c.mu.Unlock()
	if idx != nil {
		return idx, nil
	}
	cfg, err := c.GetPipeline(ctx, p4v1.GetForwardingPipelineConfigRequest_P4INFO_AND_COOKIE)
	if err != nil {
		return nil, err
	}
	if cfg.GetP4Info() == nil {
		return nil, fmt.Errorf("device %d has no pipeline config (push one first): %w", c.opts.deviceID, ErrFailedPrecondition)
	}
	idx, err = NewIndex(cfg.GetP4Info())
	if err != nil {
		return nil, err
	}
	c.SetIndex(idx)
	return idx, nil
}

// SetIndex sets the P4Info index used for names and error messages.
func (c *Client) SetIndex(idx *Index) {
	c.mu.Lock()
	c.idx = idx
	c.mu.Unlock()
}

func (c *Client) cachedIndex() *Index {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.idx
}

// Capabilities returns the server's P4Runtime API version.
func (c *Client) Capabilities(ctx context.Context) (string, error) {
	ctx, cancel := c.callCtx(ctx)
	defer cancel()
	r, err := c.rpc.Capabilities(ctx, &p4v1.CapabilitiesRequest{DeviceId: c.opts.deviceID})
	if err != nil {
		return "", c.rpcError("Capabilities", err)
	}
	return r.GetP4RuntimeApiVersion(), nil
}
