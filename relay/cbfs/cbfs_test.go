package cbfs_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/relay"
	"github.com/cowboy-foundation/cowboy/relay/captoken"
	"github.com/cowboy-foundation/cowboy/relay/cbfs"
	"github.com/ethereum/go-ethereum/crypto"
)

type cluster struct {
	nodes []*relay.Node
	dir   cbfs.MemDirectory
	keys  []*ecdsa.PrivateKey
	dirs  []string
}

func startCluster(t *testing.T, n int, capacity uint64) *cluster {
	t.Helper()
	cl := &cluster{}
	for i := 0; i < n; i++ {
		key, _ := crypto.GenerateKey()
		data := t.TempDir()
		cl.keys, cl.dirs = append(cl.keys, key), append(cl.dirs, data)
		node, err := relay.New(relay.Config{Key: key, DataDir: data, Capacity: capacity})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- node.Run(context.Background()) }()
		t.Cleanup(func() {
			node.Close()
			<-done
		})
		select {
		case <-node.Ready():
		case err := <-done:
			t.Fatal(err)
		}
		cl.nodes = append(cl.nodes, node)
		cl.dir = append(cl.dir, cbfs.RelayInfo{ID: cbfs.RelayID(node.ID()), Addr: node.Addr().String(), PubKey: node.PubKey(), Healthy: true})
	}
	return cl
}

func newClient(t *testing.T, key *ecdsa.PrivateKey, dir cbfs.Directory, anchor cbfs.Anchor) *cbfs.Client {
	t.Helper()
	c, err := cbfs.New(cbfs.Config{Key: key, Directory: dir, Anchor: anchor, SegmentSize: 64 << 10, RequestTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestRoundTripsFailuresGrants(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl := startCluster(t, 6, 0)
	owner, _ := crypto.GenerateKey()
	anchor := &cbfs.MemAnchor{}
	c := newClient(t, owner, cl.dir, anchor)
	vol, err := c.CreateVolume(ctx, cbfs.VolumeOptions{SegmentSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 1))
	seg := 64 << 10
	files := map[string][]byte{}
	for _, n := range []int{0, 1, seg - 1, seg, seg + 1, 3*seg + 5} {
		p := "/f/" + string(rune('a'+len(files)))
		data := randBytes(r, n)
		files[p] = data
		fi, err := vol.Put(ctx, p, bytes.NewReader(data))
		if err != nil {
			t.Fatalf("put %d bytes: %v", n, err)
		}
		if fi.Size != int64(n) {
			t.Fatalf("size %d want %d", fi.Size, n)
		}
	}
	check := func(v *cbfs.Volume) {
		t.Helper()
		for p, want := range files {
			t1 := time.Now()
			var got bytes.Buffer
			if _, err := v.Get(ctx, p, &got); err != nil {
				t.Fatalf("get %s: %v", p, err)
			}
			t.Logf("get %s %v", p, time.Since(t1))
			if !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("get %s: content mismatch (%d vs %d bytes)", p, got.Len(), len(want))
			}
		}
	}
	t0 := time.Now()
	check(vol)
	t.Logf("check %v", time.Since(t0))
	big := files["/f/f"]
	for _, rg := range [][2]int64{{0, 0}, {0, 1}, {int64(seg) - 3, 7}, {int64(seg), int64(seg)}, {100, -1}, {int64(len(big)), 5}} {
		var got bytes.Buffer
		if _, err := vol.GetRange(ctx, "/f/f", rg[0], rg[1], &got); err != nil {
			t.Fatalf("range %v: %v", rg, err)
		}
		end := int64(len(big))
		if rg[1] >= 0 {
			end = min(end, rg[0]+rg[1])
		}
		if !bytes.Equal(got.Bytes(), big[rg[0]:end]) {
			t.Fatalf("range %v: mismatch", rg)
		}
	}
	list, err := vol.List(ctx, "/f")
	if err != nil || len(list) != len(files) {
		t.Fatalf("list: %v %d", err, len(list))
	}
	if _, err := vol.Get(ctx, "/nope", &bytes.Buffer{}); !errors.Is(err, cbfs.ErrNotFound) {
		t.Fatalf("missing file: %v", err)
	}

	// Overwrite and remove.
	files["/f/a"] = []byte("replaced")
	if _, err := vol.Put(ctx, "/f/a", bytes.NewReader(files["/f/a"])); err != nil {
		t.Fatal(err)
	}
	if err := vol.Remove(ctx, "/f/b"); err != nil {
		t.Fatal(err)
	}
	delete(files, "/f/b")
	if err := vol.Remove(ctx, "/f/b"); !errors.Is(err, cbfs.ErrNotFound) {
		t.Fatalf("double remove: %v", err)
	}

	// Recovery with only the owner key and the volume id (fresh anchor).
	t.Logf("before recovery %v", time.Since(t0))
	c2 := newClient(t, owner, cl.dir, &cbfs.MemAnchor{})
	v2, err := c2.OpenVolume(ctx, vol.ID())
	if err != nil {
		t.Fatal(err)
	}
	if v2.Root() != vol.Root() {
		t.Fatalf("recovered root differs")
	}
	check(v2)

	t.Logf("after recovery %v", time.Since(t0))
	// Grants: read-only under /f for alice.
	alice, _ := crypto.GenerateKey()
	tok, err := vol.Grant(ctx, cbfs.GrantOptions{Grantee: &alice.PublicKey, Perms: captoken.PermRead | captoken.PermList, Prefix: "/f", TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	tok2, _ := captoken.ParseHex(tok.Hex())
	ca := newClient(t, alice, cl.dir, anchor)
	va, err := ca.OpenShared(ctx, tok2)
	if err != nil {
		t.Fatal(err)
	}
	check(va)
	if _, err := va.Put(ctx, "/f/x", bytes.NewReader([]byte("x"))); !errors.Is(err, cbfs.ErrPermission) {
		t.Fatalf("read-only put: %v", err)
	}
	// Delegation: alice (read+list under /f) hands bob read under /f/c only.
	bob, _ := crypto.GenerateKey()
	tokB, err := va.Grant(ctx, cbfs.GrantOptions{Grantee: &bob.PublicKey, Perms: captoken.PermRead | captoken.PermList, Prefix: "/f/c"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := va.Grant(ctx, cbfs.GrantOptions{Grantee: &bob.PublicKey, Perms: captoken.PermWrite}); !errors.Is(err, cbfs.ErrPermission) {
		t.Fatalf("widening delegation: %v", err)
	}
	vb, err := newClient(t, bob, cl.dir, anchor).OpenShared(ctx, tokB)
	if err != nil {
		t.Fatal(err)
	}
	var gb bytes.Buffer
	if _, err := vb.Get(ctx, "/f/c", &gb); err != nil || !bytes.Equal(gb.Bytes(), files["/f/c"]) {
		t.Fatalf("delegated read: %v", err)
	}
	if _, err := vb.Get(ctx, "/f/c/../d", &gb); !errors.Is(err, cbfs.ErrPermission) {
		t.Fatalf("prefix escape: %v", err)
	}
	if l, err := vb.List(ctx, ""); err != nil || len(l) != 1 {
		t.Fatalf("delegated list: %v %v", l, err)
	}
	// A write-only grant can upload (it reads the encrypted manifest to
	// commit) but not read files back.
	carol, _ := crypto.GenerateKey()
	tokW, _ := vol.Grant(ctx, cbfs.GrantOptions{Grantee: &carol.PublicKey, Perms: captoken.PermWrite, Prefix: "/in"})
	vw, err := newClient(t, carol, cl.dir, anchor).OpenShared(ctx, tokW)
	if err != nil {
		t.Fatal(err)
	}
	// A prefix-restricted writer's file is stored as a pending entry and
	// becomes visible when a whole-volume writer merges it.
	fi, err := vw.Put(ctx, "/in/pending", bytes.NewReader([]byte("pending data")))
	if err != nil || !fi.Pending {
		t.Fatalf("prefix writer put: %v %+v", err, fi)
	}
	if _, err := vw.Put(ctx, "/elsewhere", bytes.NewReader([]byte("x"))); !errors.Is(err, cbfs.ErrPermission) {
		t.Fatalf("prefix writer outside prefix: %v", err)
	}
	if _, err := vol.Stat(ctx, "/in/pending"); !errors.Is(err, cbfs.ErrNotFound) {
		t.Fatalf("pending file visible before merge: %v", err)
	}
	if _, err := vw.MergePending(ctx); !errors.Is(err, cbfs.ErrPermission) {
		t.Fatalf("prefix writer merging: %v", err)
	}
	if n, err := vol.MergePending(ctx); err != nil || n != 1 {
		t.Fatalf("merge: %d %v", n, err)
	}
	if n, err := vol.MergePending(ctx); err != nil || n != 0 {
		t.Fatalf("second merge: %d %v", n, err)
	}
	files["/in/pending"] = []byte("pending data")
	tokW2, _ := vol.Grant(ctx, cbfs.GrantOptions{Grantee: &carol.PublicKey, Perms: captoken.PermWrite})
	vw2, err := newClient(t, carol, cl.dir, anchor).OpenShared(ctx, tokW2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := vw2.Put(ctx, "/in/upload", bytes.NewReader([]byte("from carol"))); err != nil {
		t.Fatalf("write-only whole-volume put: %v", err)
	}
	if _, err := vw2.Get(ctx, "/in/upload", &bytes.Buffer{}); !errors.Is(err, cbfs.ErrPermission) {
		t.Fatalf("write-only read: %v", err)
	}
	files["/in/upload"] = []byte("from carol")
	// Expired token is refused by relays.
	expired, _ := vol.Grant(ctx, cbfs.GrantOptions{Grantee: &alice.PublicKey, Perms: captoken.PermRead, TTL: time.Second})
	time.Sleep(2100 * time.Millisecond)
	if _, err := ca.OpenShared(ctx, expired); !errors.Is(err, cbfs.ErrTokenExpired) {
		t.Fatalf("expired: %v", err)
	}

	// Two relays die: reads still succeed.
	cl.nodes[0].Close()
	cl.nodes[3].Close()
	t.Logf("closed %v", time.Since(t0))
	c3 := newClient(t, owner, cl.dir, anchor)
	v3, err := c3.OpenVolume(ctx, vol.ID())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("before final %v", time.Since(t0))
	check(v3)
	t.Logf("end %v", time.Since(t0))
}

func TestRelayFull(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := startCluster(t, 6, 200<<10)
	owner, _ := crypto.GenerateKey()
	c := newClient(t, owner, cl.dir, &cbfs.MemAnchor{})
	vol, err := c.CreateVolume(ctx, cbfs.VolumeOptions{SegmentSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	data := randBytes(rand.New(rand.NewPCG(7, 7)), 2<<20)
	_, err = vol.Put(ctx, "/too-big", bytes.NewReader(data))
	if !errors.Is(err, cbfs.ErrRelayFull) || !errors.Is(err, cbfs.ErrInsufficientRelays) {
		t.Fatalf("want relay full: %v", err)
	}
	if _, err := vol.Stat(ctx, "/too-big"); !errors.Is(err, cbfs.ErrNotFound) {
		t.Fatalf("failed upload visible: %v", err)
	}
	// The aborted upload's shards were deleted: a small file fits again.
	if _, err := vol.Put(ctx, "/small", bytes.NewReader(data[:100<<10])); err != nil {
		t.Fatalf("small put after cleanup: %v", err)
	}
}

func TestUploadAbortIdempotent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := startCluster(t, 6, 0)
	owner, _ := crypto.GenerateKey()
	c := newClient(t, owner, cl.dir, &cbfs.MemAnchor{})
	vol, err := c.CreateVolume(ctx, cbfs.VolumeOptions{SegmentSize: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	objects := func() (n uint64) {
		for _, node := range cl.nodes {
			n += node.Stat().Objects
		}
		return n
	}
	// The volume's first (full) manifest, one copy per relay: commits
	// return at a relay majority, the others finish in the background.
	for deadline := time.Now().Add(10 * time.Second); objects() < uint64(len(cl.nodes)) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	before := objects() // manifest copies only
	u, err := vol.Upload(ctx, "/aborted")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := u.Write(randBytes(rand.New(rand.NewPCG(9, 9)), 100_000)); err != nil {
		t.Fatal(err)
	}
	if err := u.Abort(); err != nil {
		t.Fatal(err)
	}
	if err := u.Abort(); !errors.Is(err, cbfs.ErrUploadDone) {
		t.Fatalf("second abort: %v", err)
	}
	if _, err := u.Commit(); !errors.Is(err, cbfs.ErrUploadDone) {
		t.Fatalf("commit after abort: %v", err)
	}
	if _, err := u.Write([]byte("x")); !errors.Is(err, cbfs.ErrUploadDone) {
		t.Fatalf("write after abort: %v", err)
	}
	if after := objects(); after != before {
		t.Fatalf("aborted upload left %d objects on relays", after-before)
	}
	if _, err := vol.Stat(ctx, "/aborted"); !errors.Is(err, cbfs.ErrNotFound) {
		t.Fatalf("aborted file visible: %v", err)
	}
}
