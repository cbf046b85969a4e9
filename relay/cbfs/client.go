package cbfs

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/cowboy-foundation/cowboy/relay/captoken"
	"github.com/cowboy-foundation/cowboy/relay/transport"
	"github.com/cowboy-foundation/cowboy/relay/wire"
	"github.com/ethereum/go-ethereum/crypto"
)

// Defaults.
const (
	DefaultSegmentSize = 4 << 20
	DefaultK           = 4
	DefaultM           = 2
)

// Config configures a Client. Key, Directory and Anchor are required; the
// rest have defaults.
type Config struct {
	// Key is the account key: the owner of created volumes, or the grantee
	// of tokens passed to OpenShared.
	Key       *ecdsa.PrivateKey
	Directory Directory
	Anchor    Anchor
	Logger    *slog.Logger
	// SegmentSize is used for new volumes (default 4 MiB).
	SegmentSize int
	// Parallelism bounds concurrent shard deletes and audit challenges per
	// operation (default 2*(K+M)). Uploads run K+M transfers per segment in
	// flight; reads fetch K (plus hedges) per segment in flight.
	Parallelism int
	// SegmentsInFlight bounds segments being encoded and uploaded
	// concurrently per upload, and read ahead per download (default 4).
	// Memory use is about 2.5 segment sizes per segment in flight.
	SegmentsInFlight int
	// RequestTimeout bounds each relay request (default 60s). A relay that
	// uses it up, or whose connection fails, is avoided for RelayDownFor.
	RequestTimeout time.Duration
	// RelayDownFor is how long a relay that failed a request is avoided
	// (default transport.DownFor). An upload that lacks relays only because
	// some are avoided waits up to about this long for them.
	RelayDownFor time.Duration
	// TokenTTL is the lifetime of the owner's self-issued tokens (default 1h).
	TokenTTL time.Duration
	// OnShardFailure, if set, is told about every shard that could not be
	// read or failed verification (e.g. to feed a Repairer).
	OnShardFailure func(ShardFault)
	// InlineMax is the largest file kept inline in the metadata instead of
	// shards (default DefaultInlineMax; negative: never). Only files
	// smaller than one segment qualify.
	InlineMax int
	// CheckpointInterval is how soon after a commit the volume's head is
	// anchored (default 5s; negative: only on Volume.Checkpoint). Commits
	// are durable before that, on a relay majority.
	CheckpointInterval time.Duration
	Now                func() time.Time
}

func (c Config) withDefaults() Config {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.SegmentSize <= 0 {
		c.SegmentSize = DefaultSegmentSize
	}
	if c.SegmentsInFlight <= 0 {
		c.SegmentsInFlight = 4
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = 60 * time.Second
	}
	if c.TokenTTL <= 0 {
		c.TokenTTL = time.Hour
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.InlineMax == 0 {
		c.InlineMax = DefaultInlineMax
	}
	if c.CheckpointInterval == 0 {
		c.CheckpointInterval = 5 * time.Second
	}
	return c
}

// ShardFault reports a shard that failed.
type ShardFault struct {
	Volume VolumeID
	Shard  ShardRef
	Err    error
}

// Client talks to relays on behalf of one account. It is safe for concurrent
// use. Close releases its connections.
type Client struct {
	cfg  Config
	log  *slog.Logger
	pool *transport.Pool
	// bg bounds background checkpoints; Close cancels it and waits (wg).
	bg     context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	vols   map[*Volume]bool // volumes that scheduled checkpoints
	// The healthy relays commits were last sent to, and when they were
	// listed (headRelays); guarded by mu.
	headList []RelayInfo
	headAt   time.Time
}

func (c *Client) track(v *Volume) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.vols == nil {
		c.vols = map[*Volume]bool{}
	}
	c.vols[v] = true
}

// New returns a client.
func New(cfg Config) (*Client, error) {
	cfg = cfg.withDefaults()
	if cfg.Key == nil || cfg.Directory == nil || cfg.Anchor == nil {
		return nil, errors.New("cbfs: Config.Key, Config.Directory and Config.Anchor are required")
	}
	bg, cancel := context.WithCancel(context.Background())
	return &Client{cfg: cfg, log: cfg.Logger, pool: transport.NewPool(transport.WithDownFor(cfg.RelayDownFor)), bg: bg, cancel: cancel}, nil
}

// Close stops background checkpoints (a commit not anchored yet stays
// durable on the relays; the next checkpoint anchors it) and closes relay
// connections.
func (c *Client) Close() error {
	c.cancel()
	c.mu.Lock()
	for v := range c.vols {
		v.stop()
	}
	c.mu.Unlock()
	c.wg.Wait()
	return c.pool.Close()
}

// Address is the client's account address.
func (c *Client) Address() [20]byte { return crypto.PubkeyToAddress(c.cfg.Key.PublicKey) }

// relays lists healthy relays.
func (c *Client) relays(ctx context.Context) ([]RelayInfo, map[RelayID]RelayInfo, error) {
	all, err := c.cfg.Directory.Relays(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("cbfs: list relays: %w", err)
	}
	byID := make(map[RelayID]RelayInfo, len(all))
	var healthy []RelayInfo
	for _, r := range all {
		byID[r.ID] = r
		if r.Healthy {
			healthy = append(healthy, r)
		}
	}
	return healthy, byID, nil
}

// headRelaysTTL is how long commits reuse a listing of the healthy relays.
// Listing them asks the chain node (a round trip of about a millisecond,
// more on a busy node), which a commit made on every close(2) cannot
// afford each time; the registry's health marks change on the scale of
// heartbeats, seconds.
const headRelaysTTL = time.Second

// headRelays lists the healthy relays for a commit: a listing at most
// headRelaysTTL old (cached says it was reused). A commit that fails calls
// forgetHeadRelays, so that its retry lists them afresh.
func (c *Client) headRelays(ctx context.Context) (list []RelayInfo, cached bool, err error) {
	c.mu.Lock()
	list, at := c.headList, c.headAt
	c.mu.Unlock()
	if list != nil && time.Since(at) < headRelaysTTL {
		return list, true, nil
	}
	at = time.Now()
	if list, _, err = c.relays(ctx); err != nil {
		return nil, false, err
	}
	c.mu.Lock()
	c.headList, c.headAt = list, at
	c.mu.Unlock()
	return list, false, nil
}

// forgetHeadRelays drops the listing headRelays reuses.
func (c *Client) forgetHeadRelays() {
	c.mu.Lock()
	c.headList = nil
	c.mu.Unlock()
}

// statusError maps a relay status to the package errors.
func statusError(r RelayInfo, op wire.Op, resp *wire.Response) error {
	var base error
	switch resp.Status {
	case wire.StatusOK:
		return nil
	case wire.StatusNotFound:
		base = ErrNotFound
	case wire.StatusExpired:
		base = ErrTokenExpired
	case wire.StatusUnauthorized:
		base = ErrPermission
	case wire.StatusFull:
		base = ErrRelayFull
	case wire.StatusCorrupt:
		base = ErrIntegrity
	case wire.StatusConflict:
		base = ErrConflict
	default:
		base = errors.New(resp.Status.String())
	}
	return fmt.Errorf("relay %s %s: %w (%s)", r.ID.String()[:8], op, base, resp.Error)
}

// session is the identity used for requests on one volume.
type session struct {
	vol   VolumeID
	key   *ecdsa.PrivateKey
	token func() (*captoken.Token, error)
}

// do signs and sends one request; the caller must Close the reply.
func (c *Client) do(ctx context.Context, s *session, r RelayInfo, req *wire.Request, body io.Reader) (*transport.Reply, error) {
	tok, err := s.token()
	if err != nil {
		return nil, err
	}
	req.Volume = s.vol
	req.Relay = r.ID
	req.Time = c.cfg.Now().Unix()
	rand.Read(req.Nonce[:])
	req.Token = tok.Encode()
	req.Sig, err = captoken.SignRequest(s.key, req.SigningHash())
	if err != nil {
		return nil, err
	}
	// The pool drops a failed relay's connection itself; a request its
	// caller gave up must leave the connection others share alone.
	reply, err := c.pool.Do(ctx, r.Addr, r.PubKey, req, body)
	if err != nil {
		return nil, fmt.Errorf("relay %s: %w", r.ID.String()[:8], err)
	}
	if err := statusError(r, req.Op, &reply.Response); err != nil {
		reply.Close()
		return nil, err
	}
	return reply, nil
}

// call is do for requests without a response body.
func (c *Client) call(ctx context.Context, s *session, r RelayInfo, req *wire.Request, body io.Reader) (*wire.Response, error) {
	ctx, cancel := transport.WithRequestTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	reply, err := c.do(ctx, s, r, req, body)
	if err != nil {
		return nil, err
	}
	defer reply.Close()
	return &reply.Response, nil
}

// fetch GETs a whole object.
func (c *Client) fetch(ctx context.Context, s *session, r RelayInfo, kind wire.Kind, id [32]byte, maxSize uint64) ([]byte, [32]byte, error) {
	ctx, cancel := transport.WithRequestTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	reply, err := c.do(ctx, s, r, &wire.Request{Op: wire.OpGet, Kind: kind, ID: id}, nil)
	if err != nil {
		return nil, [32]byte{}, err
	}
	defer reply.Close()
	if reply.Size > maxSize {
		return nil, [32]byte{}, fmt.Errorf("relay %s: object of %d bytes exceeds %d: %w", r.ID.String()[:8], reply.Size, maxSize, ErrIntegrity)
	}
	buf := make([]byte, reply.Size)
	if _, err := io.ReadFull(reply.Body, buf); err != nil {
		return nil, [32]byte{}, fmt.Errorf("relay %s: read body: %w", r.ID.String()[:8], err)
	}
	return buf, reply.Hash, nil
}

// Stat asks a relay for its usage (unauthenticated).
func (c *Client) Stat(ctx context.Context, r RelayInfo) (*wire.Stat, error) {
	ctx, cancel := transport.WithRequestTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	reply, err := c.pool.Do(ctx, r.Addr, r.PubKey, &wire.Request{Op: wire.OpStat}, nil)
	if err != nil {
		return nil, err
	}
	defer reply.Close()
	if err := statusError(r, wire.OpStat, &reply.Response); err != nil {
		return nil, err
	}
	if reply.Stat == nil {
		return nil, fmt.Errorf("relay %s: empty stat", r.ID)
	}
	return reply.Stat, nil
}

// VolumeOptions are the parameters of a new volume.
type VolumeOptions struct {
	K, M        int // default 4+2
	SegmentSize int // default Config.SegmentSize
}

// CreateVolume creates a volume owned by the client's key and commits its
// empty manifest (version 1).
func (c *Client) CreateVolume(ctx context.Context, opts VolumeOptions) (*Volume, error) {
	if opts.K == 0 {
		opts.K = DefaultK
	}
	if opts.M == 0 {
		opts.M = DefaultM
	}
	if opts.SegmentSize == 0 {
		opts.SegmentSize = c.cfg.SegmentSize
	}
	if opts.K < 1 || opts.M < 1 || opts.K+opts.M > 64 || opts.SegmentSize < 1024 || opts.SegmentSize > 64<<20 {
		return nil, fmt.Errorf("cbfs: invalid volume options K=%d M=%d segment=%d", opts.K, opts.M, opts.SegmentSize)
	}
	var salt [12]byte
	rand.Read(salt[:])
	vol := captoken.NewVolumeID(crypto.PubkeyToAddress(c.cfg.Key.PublicKey), salt)
	v, err := c.ownerVolume(vol)
	if err != nil {
		return nil, err
	}
	m := &Manifest{Volume: vol, K: uint8(opts.K), M: uint8(opts.M), SegmentSize: uint32(opts.SegmentSize)}
	if _, err := v.commit(ctx, func(*Manifest) (*Manifest, error) { return m.clone(), nil }, true); err != nil {
		return nil, fmt.Errorf("cbfs: create volume: %w", err)
	}
	// Register the volume with the anchor at once (on chain: VolumeCreate).
	if err := v.Checkpoint(ctx); err != nil {
		return nil, fmt.Errorf("cbfs: create volume: %w", err)
	}
	return v, nil
}

// OpenVolume opens a volume owned by the client's key.
func (c *Client) OpenVolume(ctx context.Context, vol VolumeID) (*Volume, error) {
	v, err := c.ownerVolume(vol)
	if err != nil {
		return nil, err
	}
	if _, err := v.latest(ctx); err != nil {
		return nil, err
	}
	return v, nil
}

// OpenShared opens a volume through a capability token granted to the
// client's key. Tokens that allow read or write must carry the wrapped
// volume key.
func (c *Client) OpenShared(ctx context.Context, tok *captoken.Token) (*Volume, error) {
	cav, err := tok.Verify(c.cfg.Now())
	if err != nil {
		return nil, fmt.Errorf("cbfs: open shared volume: %w", err)
	}
	if string(tok.Holder()) != string(crypto.CompressPubkey(&c.cfg.Key.PublicKey)) {
		return nil, fmt.Errorf("%w: token is not granted to this key", ErrPermission)
	}
	v := &Volume{c: c, id: tok.Volume, caveats: cav}
	if len(cav.WrappedKey) > 0 {
		if v.key, err = unwrapKey(cav.WrappedKey, c.cfg.Key); err != nil {
			return nil, err
		}
		v.hasKey = true
	}
	v.sess = &session{vol: tok.Volume, key: c.cfg.Key, token: func() (*captoken.Token, error) { return tok, nil }}
	v.tok = tok
	if _, err := v.latest(ctx); err != nil {
		return nil, err
	}
	return v, nil
}

func (c *Client) ownerVolume(vol VolumeID) (*Volume, error) {
	if vol.Owner() != crypto.PubkeyToAddress(c.cfg.Key.PublicKey) {
		return nil, fmt.Errorf("%w: volume %s is not owned by %x", ErrPermission, vol, c.Address())
	}
	key, err := volumeKey(c.cfg.Key, vol)
	if err != nil {
		return nil, err
	}
	v := &Volume{c: c, id: vol, key: key, hasKey: true, owner: true,
		caveats: captoken.Caveats{Perms: captoken.PermAll}}
	var cached *captoken.Token
	v.sess = &session{vol: vol, key: c.cfg.Key, token: func() (*captoken.Token, error) {
		v.mu.Lock()
		defer v.mu.Unlock()
		now := c.cfg.Now()
		if cached != nil && cached.Caveats().Expiry-now.Unix() > int64(c.cfg.TokenTTL/time.Second)/4 {
			return cached, nil
		}
		t, err := captoken.Issue(c.cfg.Key, vol, captoken.Caveats{Perms: captoken.PermAll,
			Expiry: now.Add(c.cfg.TokenTTL).Unix(), Grantee: crypto.CompressPubkey(&c.cfg.Key.PublicKey)})
		if err != nil {
			return nil, err
		}
		cached = t
		return t, nil
	}}
	return v, nil
}
