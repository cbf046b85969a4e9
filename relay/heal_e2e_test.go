package relay_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/relay/cbfs"
	"github.com/cowboy-foundation/cowboy/relay/onchain"
	"github.com/ethereum/go-ethereum/crypto"
)

// TestSelfHealingOnDevnet is issue #13's "Done means" for self-healing: six
// relays on a devnet, a many-file write through the client while two of the
// relays are killed. Nothing acknowledged is lost, and without any owner
// command the relays rebuild the lost redundancy: every stripe is back on
// K+M distinct healthy relays that hold the shard files, with the moves
// recorded on chain (repair_placement) where readers find them.
func TestSelfHealingOnDevnet(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process devnet test")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dn := startDevnet(t, ctx, 6, "--heal-interval", "300ms", "--repair-budget", fmt.Sprint(64<<20))
	c := dn.c
	owner, _ := crypto.GenerateKey()
	dn.fund(t, ctx)(types.PubkeyToAddress(owner.PublicKey), "100")
	anchor := &onchain.Anchor{Client: c, Key: owner, K: 2, M: 2}
	newClient := func() *cbfs.Client {
		cc, err := cbfs.New(cbfs.Config{Key: owner, Directory: onchain.Directory{Client: c}, Anchor: anchor, RequestTimeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cc.Close() })
		return cc
	}
	vol, err := newClient().CreateVolume(ctx, cbfs.VolumeOptions{K: 2, M: 2})
	if err != nil {
		t.Fatal(err)
	}

	// The source tree: files above the inline limit, so each has stripes.
	const nFiles, killAfter = 18, 6
	src := map[string][]byte{}
	var paths []string
	for i := range nFiles {
		p := fmt.Sprintf("/tree/d%d/f%02d.bin", i%3, i)
		b := make([]byte, 20<<10+i*3<<10)
		(&patterned{n: int64(len(b)), seed: byte(i)}).Read(b)
		src[p], paths = b, append(paths, p)
	}
	dead := []relayProc{dn.relays[1], dn.relays[4]}
	acked := map[string]bool{}
	for i, p := range paths {
		if i == killAfter {
			for _, r := range dead {
				r.cmd.Process.Signal(syscall.SIGKILL)
			}
			t.Logf("killed relays %s and %s after %d files", dead[0].id, dead[1].id, i)
		}
		// A write that fails is not acknowledged; like a user, retry it.
		for attempt := 0; attempt < 10 && !acked[p]; attempt++ {
			if _, err := vol.Put(ctx, p, bytes.NewReader(src[p])); err != nil {
				t.Logf("put %s (attempt %d): %v", p, attempt+1, err)
				continue
			}
			acked[p] = true
		}
	}
	if len(acked) != nFiles {
		t.Fatalf("%d of %d files acknowledged", len(acked), nFiles)
	}
	// Anchor what was acknowledged (the writer's sync; not a repair).
	t.Logf("%d files acknowledged", len(acked))
	if err := vol.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("checkpoint anchored")
	waitFor(t, 60*time.Second, "the registry to mark the killed relays unhealthy", func() bool {
		for _, r := range dead {
			if rel, err := c.Relays().Get(ctx, r.id); err != nil || rel.Healthy {
				return false
			}
		}
		return true
	})

	t.Logf("killed relays unhealthy")
	homes := map[types.Address]string{}
	for _, r := range dn.relays {
		homes[r.id] = r.home
	}
	vid := types.Hash(vol.ID())
	var lastState string
	healed := func() bool {
		sm, err := vol.StripeMap(ctx)
		if err != nil {
			lastState = err.Error()
			return false
		}
		moved, err := c.Volumes().MovedShards(ctx, vid)
		if err != nil {
			lastState = err.Error()
			return false
		}
		mv := map[types.Hash]types.Address{}
		for _, m := range moved.Shards {
			mv[m.Shard] = m.Holder
		}
		rs, err := c.Relays().List(ctx)
		if err != nil {
			return false
		}
		healthy := map[types.Address]bool{}
		for _, r := range rs {
			healthy[r.ID] = r.Healthy
		}
		bad := 0
		for _, st := range sm.Stripes {
			at := map[types.Address]bool{}
			for _, sh := range st.Shards {
				loc := types.Address(sh.Relay)
				if h, ok := mv[types.Hash(sh.ID)]; ok && !healthy[loc] {
					loc = h
				}
				key := hex.EncodeToString(append(vid[:], sh.ID[:]...))
				fi, err := os.Stat(filepath.Join(homes[loc], "data", "objects", key[:4], key))
				if !healthy[loc] || at[loc] || err != nil || fi.Size() < int64(st.ShardSize) {
					bad++
					break
				}
				at[loc] = true
			}
		}
		lastState = fmt.Sprintf("%d of %d stripes short of K+M healthy locations; %d shards moved", bad, len(sm.Stripes), len(moved.Shards))
		return bad == 0 && len(sm.Stripes) > 0
	}
	deadline := time.Now().Add(90 * time.Second)
	for !healed() {
		if time.Now().After(deadline) {
			t.Fatalf("redundancy not rebuilt: %s", lastState)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("healed: %s", lastState)

	// Nothing acknowledged is lost: a fresh client reads every file back.
	v2, err := newClient().OpenVolume(ctx, vol.ID())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		var got bytes.Buffer
		if _, err := v2.Get(ctx, p, &got); err != nil || !bytes.Equal(got.Bytes(), src[p]) {
			t.Fatalf("read back %s: %v (%d of %d bytes)", p, err, got.Len(), len(src[p]))
		}
	}
}
