package relay

import (
	"context"
	"fmt"
	"io"

	"github.com/cowboy-foundation/cowboy/chain/storage/merkle"
	"github.com/cowboy-foundation/cowboy/relay/captoken"
	"github.com/cowboy-foundation/cowboy/relay/internal/store"
	"github.com/cowboy-foundation/cowboy/relay/wire"
)

// maxDelta bounds the body of a change-set commit, which is kept in the
// index rather than as an object file.
const maxDelta = 16 << 20

// commitHead serves wire.OpCommit: it verifies the writer's signed head,
// stores its body (a full manifest as an object, a change set in the log)
// and swaps the head if the version follows the current one.
func (n *Node) commitHead(ctx context.Context, req *wire.Request, body io.Reader) error {
	h, err := wire.DecodeHead(req.Head)
	if err != nil {
		return err
	}
	// The head's token must be valid now and not revoked, like the
	// request's; it is usually the very token authorize just checked.
	tok, err := captoken.Decode(h.Token)
	if err != nil {
		return err
	}
	same := string(h.Token) == string(req.Token)
	if !same {
		if _, err := n.tokens.Check(ctx, tok, n.cfg.Now(), req.Volume, captoken.PermWrite, n.revocations(req.Volume)); err != nil {
			return err
		}
	}
	if err := h.CheckWith(req.Volume, tok, !same); err != nil {
		return err
	}
	if h.BodyHash != req.Hash || h.BodySize != req.Size {
		return fail(wire.StatusBadRequest, "head does not describe the request body")
	}
	// One commit per volume at a time: the check below, the body and the
	// swap form one step, and a retried identical commit finds the first.
	mu := &n.commitMu[req.Volume[31]]
	mu.Lock()
	defer mu.Unlock()
	hash := wire.HeadHash(req.Head)
	check := func(cur []byte) error {
		if cur == nil {
			return nil // first head this relay sees for the volume
		}
		if wire.HeadHash(cur) == hash {
			return errSameHead
		}
		c, err := wire.DecodeHead(cur)
		if err != nil {
			return fmt.Errorf("stored head: %w", err)
		}
		// Catching up jumps over versions: only to a full manifest, so
		// that the log stays readable from there.
		if req.Catchup && h.Full && h.Version > c.Version {
			return nil
		}
		if h.Version != c.Version+1 || h.Prev != wire.HeadHash(cur) {
			return fmt.Errorf("%w: head is v%d, commit of v%d", store.ErrHeadConflict, c.Version, h.Version)
		}
		return nil
	}
	// Refuse before receiving the body when the head already moved on.
	if cur, err := n.store.Head(req.Volume); err == nil {
		if err := check(cur); err == errSameHead {
			io.Copy(io.Discard, io.LimitReader(body, int64(req.Size)))
			return nil
		} else if err != nil {
			return err
		}
	}
	var delta []byte
	if h.Full {
		m := store.Meta{Kind: wire.KindManifest, Version: h.Version, Size: req.Size, Hash: req.Hash}
		cr := &countReader{r: body}
		err := n.store.Put(ctx, req.Volume, h.Object, m, cr)
		n.m.bytesIn.Add(float64(cr.n))
		if err != nil {
			return err
		}
	} else {
		if req.Size > maxDelta {
			return fmt.Errorf("%w: change set of %d bytes", store.ErrTooLarge, req.Size)
		}
		delta = make([]byte, req.Size)
		if _, err := io.ReadFull(body, delta); err != nil {
			return fmt.Errorf("receive change set: %w", err)
		}
		n.m.bytesIn.Add(float64(len(delta)))
		if merkle.Sum(delta) != req.Hash {
			return store.ErrHashMismatch
		}
	}
	err = n.store.CommitHead(req.Volume, h.Version, req.Head, delta, check)
	if err == errSameHead {
		return nil
	}
	return err
}

var errSameHead = fmt.Errorf("relay: head already stored")
