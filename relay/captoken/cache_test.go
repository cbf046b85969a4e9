package captoken

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"
)

// TestVerifiedCache: a cached chain gives the same answers as Token.Check —
// a revocation of any link takes effect on the very next call, expiry is
// respected, permissions and volume are checked per call, and a forged
// chain is never cached.
func TestVerifiedCache(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0)
	owner, alice, bob := key(t), key(t), key(t)
	vol := NewVolumeID(crypto.PubkeyToAddress(owner.PublicKey), [12]byte{1})
	other := NewVolumeID(crypto.PubkeyToAddress(owner.PublicKey), [12]byte{2})
	root, err := Issue(owner, vol, Caveats{Perms: PermRead | PermWrite, Expiry: now.Add(time.Hour).Unix(), Grantee: pub(alice)})
	if err != nil {
		t.Fatal(err)
	}
	// The delegated link expires before the root.
	deleg, err := root.Delegate(alice, Caveats{Perms: PermRead, Expiry: now.Add(time.Minute).Unix(), Grantee: pub(bob)})
	if err != nil {
		t.Fatal(err)
	}
	rl := NewMemoryRevocations()
	vc := NewVerifiedCache(0)
	for i := range 2 { // miss, then hit
		if _, err := vc.Check(ctx, deleg, now, vol, PermRead, rl); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if len(vc.m) != 1 {
		t.Fatalf("%d chains cached, want 1", len(vc.m))
	}
	if _, err := vc.Check(ctx, deleg, now, vol, PermWrite, rl); !errors.Is(err, ErrPermission) {
		t.Fatalf("write under a read-only delegation: %v", err)
	}
	if _, err := vc.Check(ctx, deleg, now, other, PermRead, rl); !errors.Is(err, ErrWrongVolume) {
		t.Fatalf("other volume: %v", err)
	}
	if _, err := vc.Check(ctx, deleg, now.Add(2*time.Minute), vol, PermRead, rl); !errors.Is(err, ErrExpired) {
		t.Fatalf("after the delegated link expired: %v", err)
	}
	if _, err := vc.Check(ctx, root, now.Add(2*time.Minute), vol, PermRead, rl); err != nil {
		t.Fatalf("root still valid: %v", err)
	}
	// Revoking the root link revokes the cached delegation at once.
	rl.Revoke(root.LinkIDs()[0])
	if _, err := vc.Check(ctx, deleg, now, vol, PermRead, rl); !errors.Is(err, ErrRevoked) {
		t.Fatalf("after revoking the root link: %v", err)
	}
	if _, err := vc.Check(ctx, root, now, vol, PermRead, rl); !errors.Is(err, ErrRevoked) {
		t.Fatalf("root after its revocation: %v", err)
	}
	// A forged link (bob signs for alice's grant) fails and is not cached.
	forged := *deleg
	forged.Links = append([]Link(nil), deleg.Links...)
	forged.Links[1].Caveats.Perms = PermRead | PermWrite
	for range 2 {
		if _, err := vc.Check(ctx, &forged, now, vol, PermWrite, nil); !errors.Is(err, ErrBadSignature) {
			t.Fatalf("forged chain: %v", err)
		}
	}
	if len(vc.m) != 2 {
		t.Fatalf("%d chains cached, want 2 (the forged one must not be)", len(vc.m))
	}
	var nilCache *VerifiedCache
	if _, err := nilCache.Check(ctx, root, now, vol, PermRead, nil); err != nil {
		t.Fatalf("nil cache: %v", err)
	}
}

func BenchmarkTokenCheck(b *testing.B) {
	ctx := context.Background()
	now := time.Now()
	owner := key(b)
	vol := NewVolumeID(crypto.PubkeyToAddress(owner.PublicKey), [12]byte{1})
	tok, err := Issue(owner, vol, Caveats{Perms: PermAll, Expiry: now.Add(time.Hour).Unix(), Grantee: pub(owner)})
	if err != nil {
		b.Fatal(err)
	}
	rl := NewMemoryRevocations()
	b.Run("verify", func(b *testing.B) {
		for range b.N {
			if _, err := tok.Check(ctx, now, vol, PermWrite, rl); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		vc := NewVerifiedCache(0)
		for range b.N {
			if _, err := vc.Check(ctx, tok, now, vol, PermWrite, rl); err != nil {
				b.Fatal(err)
			}
		}
	})
}
