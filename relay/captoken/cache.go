package captoken

import (
	"context"
	"crypto/sha256"
	"sync"
	"time"
)

// VerifiedCache remembers token chains whose signatures and caveats have
// been verified, keyed by the hash of the token's encoding, so that a relay
// answering many requests under one token recovers its chain's signing keys
// once instead of once per request. Only the offline part is remembered: a
// cached chain is used only while every link is unexpired, and revocation of
// every link and the permission asked for are checked on every call, so a
// revocation takes effect at once. It is safe for concurrent use; a nil
// *VerifiedCache verifies every time.
type VerifiedCache struct {
	mu  sync.Mutex
	max int
	m   map[[32]byte]verifiedChain
}

type verifiedChain struct {
	caveats Caveats
	expiry  int64 // earliest link expiry, unix seconds
	ids     [][32]byte
}

// NewVerifiedCache returns a cache of at most max chains (0: 1,024).
func NewVerifiedCache(max int) *VerifiedCache {
	if max <= 0 {
		max = 1024
	}
	return &VerifiedCache{max: max, m: map[[32]byte]verifiedChain{}}
}

// Check is t.Check with the chain's verification remembered.
func (vc *VerifiedCache) Check(ctx context.Context, t *Token, now time.Time, vol VolumeID, perm Perm, rl RevocationList) (Caveats, error) {
	if vc == nil {
		return t.Check(ctx, now, vol, perm, rl)
	}
	if t.Volume != vol {
		return Caveats{}, ErrWrongVolume
	}
	key := sha256.Sum256(t.Encode())
	vc.mu.Lock()
	v, ok := vc.m[key]
	vc.mu.Unlock()
	if !ok || now.Unix() >= v.expiry {
		c, err := t.Verify(now)
		if err != nil {
			return Caveats{}, err
		}
		v = verifiedChain{caveats: c, expiry: c.Expiry, ids: t.LinkIDs()}
		for _, l := range t.Links {
			v.expiry = min(v.expiry, l.Caveats.Expiry)
		}
		vc.mu.Lock()
		if len(vc.m) >= vc.max {
			clear(vc.m)
		}
		vc.m[key] = v
		vc.mu.Unlock()
	}
	return v.caveats, grants(ctx, v.caveats, v.ids, perm, rl)
}
