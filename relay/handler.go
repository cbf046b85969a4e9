package relay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/cowboy-foundation/cowboy/relay/captoken"
	"github.com/cowboy-foundation/cowboy/relay/internal/store"
	"github.com/cowboy-foundation/cowboy/relay/wire"
	"github.com/quic-go/quic-go"
)

type reqError struct {
	status wire.Status
	err    error
}

func (e *reqError) Error() string { return e.err.Error() }
func (e *reqError) Unwrap() error { return e.err }

func fail(s wire.Status, format string, args ...any) error {
	return &reqError{status: s, err: fmt.Errorf(format, args...)}
}

func statusOf(err error) wire.Status {
	var re *reqError
	switch {
	case errors.As(err, &re):
		return re.status
	case errors.Is(err, captoken.ErrExpired):
		return wire.StatusExpired
	case errors.Is(err, captoken.ErrMalformed), errors.Is(err, captoken.ErrBadSignature),
		errors.Is(err, captoken.ErrWrongVolume), errors.Is(err, captoken.ErrWrongGrantee),
		errors.Is(err, captoken.ErrRevoked), errors.Is(err, captoken.ErrPermission),
		errors.Is(err, captoken.ErrWidened), errors.Is(err, captoken.ErrPrefixEscaped):
		return wire.StatusUnauthorized
	case errors.Is(err, store.ErrNotFound):
		return wire.StatusNotFound
	case errors.Is(err, store.ErrFull):
		return wire.StatusFull
	case errors.Is(err, store.ErrCorrupt):
		return wire.StatusCorrupt
	case errors.Is(err, store.ErrHeadConflict):
		return wire.StatusConflict
	case errors.Is(err, wire.ErrHead):
		return wire.StatusUnauthorized
	case errors.Is(err, store.ErrHashMismatch), errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrTooLarge):
		return wire.StatusBadRequest
	case errors.Is(err, context.Canceled):
		return wire.StatusUnavailable
	}
	return wire.StatusInternal
}

func (n *Node) serveStream(s *quic.Stream) {
	start := time.Now()
	defer func() {
		s.Close()
		release(s)
	}()
	// The handler stops when the node closes or the client gives up on the
	// request (its STOP_SENDING or reset ends the stream's context), so a
	// request waiting on a lock, the disk or a chain query frees its slot.
	ctx, cancel := context.WithCancel(n.hardCtx)
	defer cancel()
	stopPeer := context.AfterFunc(s.Context(), cancel)
	defer stopPeer()
	stop := context.AfterFunc(ctx, func() { s.CancelRead(2); s.CancelWrite(2) })
	defer stop()
	s.SetReadDeadline(time.Now().Add(30 * time.Second))
	req, err := wire.ReadRequest(s)
	if err != nil {
		n.m.requests.WithLabelValues("invalid", wire.StatusBadRequest.String()).Inc()
		wire.WriteFrame(s, &wire.Response{Status: wire.StatusBadRequest, Error: err.Error()})
		return
	}
	s.SetReadDeadline(time.Time{})
	resp, body, bodyLen, err := n.handle(ctx, req, s)
	if body != nil {
		defer body.Close()
	}
	if err != nil {
		st := statusOf(err)
		resp = &wire.Response{Status: st, Error: err.Error()}
		body = nil
		if st == wire.StatusUnauthorized || st == wire.StatusExpired {
			n.m.authFailures.Inc()
		}
		if st == wire.StatusCorrupt {
			n.m.hashFailures.Inc()
			n.log.Warn("corrupt object", "volume", fmt.Sprintf("%x", req.Volume[:8]), "id", fmt.Sprintf("%x", req.ID[:8]), "err", err)
		}
		if req.Op == wire.OpPut || req.Op == wire.OpCommit {
			s.CancelRead(3) // do not wait for a body we refused
		}
	} else {
		resp.Size = bodyLen
	}
	n.m.requests.WithLabelValues(req.Op.String(), resp.Status.String()).Inc()
	n.m.duration.WithLabelValues(req.Op.String()).Observe(time.Since(start).Seconds())
	if err := wire.WriteFrame(s, resp); err != nil {
		n.log.Debug("write response", "op", req.Op.String(), "err", err)
		return
	}
	if body != nil {
		w, err := io.CopyBuffer(s, body, make([]byte, 256<<10))
		n.m.bytesOut.Add(float64(w))
		if err != nil {
			n.log.Debug("write body", "op", req.Op.String(), "err", err)
		}
	}
}

// drainMax and drainWait bound what release reads after the answer.
const (
	drainMax  = 64 << 10
	drainWait = 2 * time.Second
)

// release frees the stream's slot once its answer is written. QUIC counts a
// stream against the connection's MaxIncomingStreams until both directions
// are finished, and the receive direction finishes only when the FIN or the
// client's reset has been read, or reading is cancelled. A FIN that arrives
// after the request was read, or the reset of a client that gave up, is
// never read by a handler: without this every such request held a slot
// until the connection closed, and the client's next streams waited for
// ever. It first reads briefly for the FIN the client sends after its
// request (cancelling at once would make the client's own close fail), then
// cancels reading.
func release(s *quic.Stream) {
	s.SetReadDeadline(time.Now().Add(drainWait))
	io.CopyN(io.Discard, s, drainMax)
	s.CancelRead(0)
}

func permFor(op wire.Op, kind wire.Kind) captoken.Perm {
	if (kind == wire.KindManifest && (op == wire.OpGet || op == wire.OpHas)) || op == wire.OpHead || op == wire.OpLog {
		// Every holder needs the (encrypted) manifest: writers to commit,
		// listers to list. Any valid token of the volume may fetch it.
		return 0
	}
	switch op {
	case wire.OpPut, wire.OpCommit:
		return captoken.PermWrite
	case wire.OpDelete:
		return captoken.PermDelete
	case wire.OpList:
		return captoken.PermList
	}
	return captoken.PermRead
}

// revocations is the revocation list relays honour for vol.
func (n *Node) revocations(vol [32]byte) captoken.RevocationList {
	if n.cfg.Revocations != nil {
		return captoken.Revocations{n.revoked, n.cfg.Revocations(vol)}
	}
	return n.revoked
}

// authorize checks relay binding, freshness, replay, token and possession.
func (n *Node) authorize(ctx context.Context, req *wire.Request) (captoken.Caveats, error) {
	now := n.cfg.Now()
	if req.Relay != n.addr {
		return captoken.Caveats{}, fail(wire.StatusUnauthorized, "request addressed to relay %x", req.Relay)
	}
	skew := int64(n.cfg.ClockSkew / time.Second)
	if d := now.Unix() - req.Time; d > skew || d < -skew {
		return captoken.Caveats{}, fail(wire.StatusUnauthorized, "request time %d outside ±%ds", req.Time, skew)
	}
	if bytes.Equal(req.Token, wire.PeerToken) {
		if err := n.authorizePeer(ctx, req); err != nil {
			return captoken.Caveats{}, err
		}
		if !n.nonces.add(req.Nonce, now.Unix(), req.Time+skew+1) {
			return captoken.Caveats{}, fail(wire.StatusUnauthorized, "replayed request nonce")
		}
		return captoken.Caveats{Perms: captoken.PermRead | captoken.PermWrite}, nil
	}
	tok, err := captoken.Decode(req.Token)
	if err != nil {
		return captoken.Caveats{}, err
	}
	if err := tok.VerifyHolder(req.SigningHash(), req.Sig); err != nil {
		return captoken.Caveats{}, err
	}
	c, err := n.tokens.Check(ctx, tok, now, req.Volume, permFor(req.Op, req.Kind), n.revocations(req.Volume))
	if err != nil {
		return captoken.Caveats{}, err
	}
	if (req.Kind == wire.KindPlacement || req.Kind == wire.KindStripes) && (req.Op == wire.OpPut || req.Op == wire.OpDelete) && c.Prefix != "" {
		return captoken.Caveats{}, fail(wire.StatusUnauthorized, "path-restricted token (%q) may not write placement lists", c.Prefix)
	}
	if req.Kind == wire.KindManifest && (req.Op == wire.OpPut || req.Op == wire.OpDelete) && c.Prefix != "" {
		return captoken.Caveats{}, fail(wire.StatusUnauthorized, "path-restricted token (%q) may not replace the volume manifest", c.Prefix)
	}
	if req.Op == wire.OpCommit && c.Prefix != "" {
		return captoken.Caveats{}, fail(wire.StatusUnauthorized, "path-restricted token (%q) may not commit volume metadata", c.Prefix)
	}
	if req.Kind == wire.KindPending && req.Op == wire.OpPut {
		if len(req.Suffix) != 32 || wire.PendingID(c.Prefix, req.Suffix) != req.ID {
			return captoken.Caveats{}, fail(wire.StatusUnauthorized, "pending entry id not derived from the token prefix %q", c.Prefix)
		}
	}
	if req.Kind == wire.KindPending && (req.Op == wire.OpGet || req.Op == wire.OpList || req.Op == wire.OpDelete) && c.Prefix != "" {
		return captoken.Caveats{}, fail(wire.StatusUnauthorized, "only whole-volume tokens may read or remove pending entries")
	}
	// Only signed, valid requests consume nonce cache space.
	if !n.nonces.add(req.Nonce, now.Unix(), req.Time+skew+1) {
		return captoken.Caveats{}, fail(wire.StatusUnauthorized, "replayed request nonce")
	}
	return c, nil
}

func (n *Node) handle(ctx context.Context, req *wire.Request, s *quic.Stream) (*wire.Response, io.ReadCloser, uint64, error) {
	if req.Op == wire.OpStat {
		st := n.Stat()
		return &wire.Response{Stat: &st}, nil, 0, nil
	}
	if _, err := n.authorize(ctx, req); err != nil {
		return nil, nil, 0, err
	}
	switch req.Op {
	case wire.OpPut:
		if req.Kind == wire.KindPlacement {
			if err := n.putPlacement(ctx, req, s); err != nil {
				return nil, nil, 0, err
			}
			return &wire.Response{Hash: req.Hash}, nil, 0, nil
		}
		m := store.Meta{Kind: req.Kind, Version: req.Version, Size: req.Size, Hash: req.Hash}
		cr := &countReader{r: s}
		err := n.store.Put(ctx, req.Volume, req.ID, m, cr)
		n.m.bytesIn.Add(float64(cr.n))
		if err != nil {
			return nil, nil, 0, err
		}
		return &wire.Response{Hash: req.Hash}, nil, 0, nil
	case wire.OpGet:
		get := func() (store.Meta, io.ReadCloser, uint64, error) {
			return n.store.Get(ctx, req.Volume, req.ID, req.Offset, req.Length)
		}
		if req.Kind == wire.KindShard {
			// Clients verify shards themselves (AEAD tag, then the shard
			// hash); challenges re-hash. Skip the full re-hash per read.
			get = func() (store.Meta, io.ReadCloser, uint64, error) {
				return n.store.Read(req.Volume, req.ID, req.Offset, req.Length)
			}
		}
		m, r, ln, err := get()
		if err != nil {
			return nil, nil, 0, err
		}
		return &wire.Response{Hash: m.Hash}, r, ln, nil
	case wire.OpHas:
		m, err := n.store.Stat(req.Volume, req.ID)
		if errors.Is(err, store.ErrNotFound) {
			return &wire.Response{}, nil, 0, nil
		}
		if err != nil {
			return nil, nil, 0, err
		}
		return &wire.Response{Exists: true, Hash: m.Hash, Objects: []wire.ObjectInfo{{ID: req.ID, Kind: m.Kind, Version: m.Version, Size: m.Size, Hash: m.Hash}}}, nil, 0, nil
	case wire.OpDelete:
		if m, err := n.store.Stat(req.Volume, req.ID); err == nil && m.Kind != req.Kind {
			return nil, nil, 0, fail(wire.StatusBadRequest, "object kind mismatch")
		}
		if err := n.store.Delete(req.Volume, req.ID); err != nil {
			return nil, nil, 0, err
		}
		return &wire.Response{}, nil, 0, nil
	case wire.OpList:
		objs, err := n.store.List(req.Volume, req.Kind, 4096)
		if err != nil {
			return nil, nil, 0, err
		}
		return &wire.Response{Objects: objs}, nil, 0, nil
	case wire.OpCommit:
		if err := n.commitHead(ctx, req, s); err != nil {
			return nil, nil, 0, err
		}
		return &wire.Response{Hash: req.Hash}, nil, 0, nil
	case wire.OpHead:
		h, err := n.store.Head(req.Volume)
		if err != nil {
			return nil, nil, 0, err
		}
		return &wire.Response{Head: h}, nil, 0, nil
	case wire.OpLog:
		to := req.Version
		if to == 0 {
			to = ^uint64(0)
		}
		ents, err := n.store.Log(req.Volume, req.Offset, to, wire.MaxLog)
		if err != nil {
			return nil, nil, 0, err
		}
		b, err := wire.Marshal(ents)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("encode log: %w", err)
		}
		return &wire.Response{}, io.NopCloser(bytes.NewReader(b)), uint64(len(b)), nil
	case wire.OpChallenge:
		ch, err := n.store.Challenge(ctx, req.Volume, req.ID, req.Offset, req.Length)
		if err != nil {
			return nil, nil, 0, err
		}
		m, _ := n.store.Stat(req.Volume, req.ID)
		return &wire.Response{Hash: m.Hash, Challenge: ch}, nil, 0, nil
	}
	return nil, nil, 0, fail(wire.StatusBadRequest, "unsupported op %s", req.Op)
}

type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n += int64(k)
	return k, err
}
