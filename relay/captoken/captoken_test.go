package captoken

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"
)

func key(t testing.TB) *ecdsa.PrivateKey {
	k, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func pub(k *ecdsa.PrivateKey) []byte { return crypto.CompressPubkey(&k.PublicKey) }

func TestTokenMatrix(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0)
	owner, alice, bob, mallory := key(t), key(t), key(t), key(t)
	vol := NewVolumeID(crypto.PubkeyToAddress(owner.PublicKey), [12]byte{1})
	other := NewVolumeID(crypto.PubkeyToAddress(owner.PublicKey), [12]byte{2})
	exp := now.Add(time.Hour).Unix()

	root, err := Issue(owner, vol, Caveats{Perms: PermRead | PermList | PermWrite, Prefix: "/data", Expiry: exp, Grantee: pub(alice)})
	if err != nil {
		t.Fatal(err)
	}
	deleg, err := root.Delegate(alice, Caveats{Perms: PermRead, Prefix: "/data/in", Expiry: exp - 60, Grantee: pub(bob)})
	if err != nil {
		t.Fatal(err)
	}
	// A forged root: signed by mallory for owner's volume.
	forgedSig, _ := crypto.Sign(make([]byte, 32), mallory)
	forged := &Token{Version: 1, Volume: vol, Links: []Link{{Caveats: root.Links[0].Caveats, Sig: forgedSig}}}
	fd := linkDigest(vol, [32]byte{}, &forged.Links[0].Caveats)
	forged.Links[0].Sig, _ = crypto.Sign(fd[:], mallory)
	// Widened delegation built by hand (Delegate refuses to build it).
	widened := &Token{Version: 1, Volume: vol, Links: append([]Link(nil), root.Links...)}
	wc := Caveats{Perms: PermRead | PermDelete, Prefix: "/data", Expiry: exp, Grantee: pub(bob)}
	wd := linkDigest(vol, root.ID(), &wc)
	wsig, _ := crypto.Sign(wd[:], alice)
	widened.Links = append(widened.Links, Link{Caveats: wc, Sig: wsig})
	// Delegation signed by someone other than the previous grantee.
	stolen := &Token{Version: 1, Volume: vol, Links: append([]Link(nil), root.Links...)}
	sc := Caveats{Perms: PermRead, Prefix: "/data", Expiry: exp, Grantee: pub(mallory)}
	sd := linkDigest(vol, root.ID(), &sc)
	ssig, _ := crypto.Sign(sd[:], mallory)
	stolen.Links = append(stolen.Links, Link{Caveats: sc, Sig: ssig})
	// Prefix widening in delegation.
	pwc := Caveats{Perms: PermRead, Prefix: "/dat", Expiry: exp, Grantee: pub(bob)}
	pwd := linkDigest(vol, root.ID(), &pwc)
	pwsig, _ := crypto.Sign(pwd[:], alice)
	prefixWide := &Token{Version: 1, Volume: vol, Links: append(append([]Link(nil), root.Links...), Link{Caveats: pwc, Sig: pwsig})}

	revoked := NewMemoryRevocations()
	revoked.Revoke(root.ID())

	cases := []struct {
		name   string
		tok    *Token
		now    time.Time
		vol    VolumeID
		perm   Perm
		rl     RevocationList
		signer *ecdsa.PrivateKey
		path   string
		want   error
	}{
		{"ok root", root, now, vol, PermRead, nil, alice, "/data/x", nil},
		{"ok delegated", deleg, now, vol, PermRead, nil, bob, "/data/in/f", nil},
		{"expired", root, now.Add(2 * time.Hour), vol, PermRead, nil, alice, "/data/x", ErrExpired},
		{"delegation expires first", deleg, now.Add(time.Hour - 30*time.Second), vol, PermRead, nil, bob, "/data/in/f", ErrExpired},
		{"forged signature", forged, now, vol, PermRead, nil, mallory, "/data/x", ErrBadSignature},
		{"widened perms", widened, now, vol, PermRead, nil, bob, "/data/x", ErrWidened},
		{"widened prefix", prefixWide, now, vol, PermRead, nil, bob, "/data/x", ErrWidened},
		{"link not signed by grantee", stolen, now, vol, PermRead, nil, mallory, "/data/x", ErrBadSignature},
		{"wrong volume", root, now, other, PermRead, nil, alice, "/data/x", ErrWrongVolume},
		{"wrong grantee", root, now, vol, PermRead, nil, bob, "/data/x", ErrWrongGrantee},
		{"revoked root revokes delegation", deleg, now, vol, PermRead, revoked, bob, "/data/in/f", ErrRevoked},
		{"missing perm", deleg, now, vol, PermWrite, nil, bob, "/data/in/f", ErrPermission},
		{"prefix escape dotdot", deleg, now, vol, PermRead, nil, bob, "/data/in/../secret", ErrPrefixEscaped},
		{"prefix escape sibling", root, now, vol, PermRead, nil, alice, "/database", ErrPrefixEscaped},
		{"relative path", root, now, vol, PermRead, nil, alice, "data/x", ErrPrefixEscaped},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// round trip through the wire form first
			tok, err := Decode(tc.tok.Encode())
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			err = func() error {
				c, err := tok.Check(ctx, tc.now, tc.vol, tc.perm, tc.rl)
				if err != nil {
					return err
				}
				req := [32]byte{9, 9}
				sig, _ := SignRequest(tc.signer, req)
				if err := tok.VerifyHolder(req, sig); err != nil {
					return err
				}
				return c.AllowsPath(tc.path)
			}()
			if !errors.Is(err, tc.want) && !(tc.want == nil && err == nil) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}

	if _, err := root.Delegate(alice, Caveats{Perms: PermAll, Prefix: "/data", Expiry: exp, Grantee: pub(bob)}); !errors.Is(err, ErrWidened) {
		t.Fatalf("Delegate widening: %v", err)
	}
	if _, err := root.Delegate(bob, Caveats{Perms: PermRead, Prefix: "/data", Expiry: exp, Grantee: pub(bob)}); !errors.Is(err, ErrWrongGrantee) {
		t.Fatalf("Delegate by non-holder: %v", err)
	}
	if _, err := Issue(mallory, vol, root.Links[0].Caveats); !errors.Is(err, ErrWrongVolume) {
		t.Fatalf("Issue by non-owner: %v", err)
	}
}

func TestDecodeRejectsNonCanonical(t *testing.T) {
	owner := key(t)
	vol := NewVolumeID(crypto.PubkeyToAddress(owner.PublicKey), [12]byte{})
	tok, err := Issue(owner, vol, Caveats{Perms: PermRead, Expiry: 99, Grantee: pub(owner)})
	if err != nil {
		t.Fatal(err)
	}
	b := tok.Encode()
	// Re-encode the top-level map header non-minimally: 0xa3 -> 0xb8 0x03.
	bad := append([]byte{0xb8, 0x03}, b[1:]...)
	if _, err := Decode(bad); !errors.Is(err, ErrMalformed) {
		t.Fatalf("non-canonical accepted: %v", err)
	}
	if _, err := Decode(append(b, 0)); !errors.Is(err, ErrMalformed) {
		t.Fatalf("trailing bytes accepted: %v", err)
	}
}

func TestFileRevocations(t *testing.T) {
	p := filepath.Join(t.TempDir(), "revoked")
	f := NewFileRevocations(p)
	id := [32]byte{7}
	if r, err := f.Revoked(context.Background(), id); err != nil || r {
		t.Fatalf("missing file: %v %v", r, err)
	}
	if err := AppendRevocation(p, id); err != nil {
		t.Fatal(err)
	}
	// force a different mtime
	os.Chtimes(p, time.Now().Add(time.Second), time.Now().Add(time.Second))
	if r, err := f.Revoked(context.Background(), id); err != nil || !r {
		t.Fatalf("after append: %v %v", r, err)
	}
}

func FuzzDecode(f *testing.F) {
	owner, _ := crypto.GenerateKey()
	vol := NewVolumeID(crypto.PubkeyToAddress(owner.PublicKey), [12]byte{})
	tok, _ := Issue(owner, vol, Caveats{Perms: PermRead, Prefix: "/a", Expiry: 99, Grantee: crypto.CompressPubkey(&owner.PublicKey)})
	f.Add(tok.Encode())
	f.Add([]byte{0xa0})
	f.Fuzz(func(t *testing.T, b []byte) {
		tok, err := Decode(b)
		if err != nil {
			return
		}
		if got := tok.Encode(); string(got) != string(b) {
			t.Fatalf("re-encode differs")
		}
		_, _ = tok.Verify(time.Unix(0, 0))
		_ = tok.LinkIDs()
	})
}
