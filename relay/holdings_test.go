package relay_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/storage/challenge"
	"github.com/cowboy-foundation/cowboy/chain/storage/merkle"
	"github.com/cowboy-foundation/cowboy/relay"
	"github.com/cowboy-foundation/cowboy/relay/captoken"
	"github.com/cowboy-foundation/cowboy/relay/wire"
)

// The relay answers a chain challenge from its store and placement list;
// the answer verifies. A list that does not match the commitment is
// refusable; a corrupt shard is not (it is the relay's failure); a
// path-restricted token cannot write placement lists.
func TestNodeAnswersChallenges(t *testing.T) {
	h := newHarness(t, 0)
	all := h.token(captoken.Caveats{Perms: captoken.PermAll})
	var leaves []challenge.Leaf
	for i, n := range []int{3000, 1024, 0, 70000} {
		data := bytes.Repeat([]byte{byte(i + 1), 2, 3}, n/3+1)[:n]
		id := [32]byte{byte(10 + i)}
		if r, _ := h.send(&wire.Request{Op: wire.OpPut, ID: id, Hash: merkle.Sum(data), Size: uint64(n)}, all, data); r.Status != wire.StatusOK {
			t.Fatalf("put: %s %s", r.Status, r.Error)
		}
		leaves = append(leaves, challenge.Leaf{ID: id, Hash: merkle.Sum(data), Size: uint64(n)})
	}
	leaves, _ = challenge.SortLeaves(leaves)
	sum, _ := challenge.Summarize(leaves)
	body, _ := wire.Marshal(leaves)
	put := func(tok *captoken.Token, ver uint64) *wire.Response {
		r, _ := h.send(&wire.Request{Op: wire.OpPut, Kind: wire.KindPlacement, ID: wire.PlacementID(h.vol, ver, sum.ShardsRoot),
			Version: ver, Hash: merkle.Sum(body), Size: uint64(len(body))}, tok, body)
		return r
	}
	if r := put(h.token(captoken.Caveats{Perms: captoken.PermAll, Prefix: "/a"}), 1); r.Status != wire.StatusUnauthorized {
		t.Fatalf("prefix token wrote a placement list: %s", r.Status)
	}
	// The relay only takes a list of shards it holds, under its derived id.
	bogus := append([]challenge.Leaf{{ID: [32]byte{0xff}, Hash: [32]byte{1}, Size: 1}}, leaves...)
	bogus, _ = challenge.SortLeaves(bogus)
	bogusSum, _ := challenge.Summarize(bogus)
	bb, _ := wire.Marshal(bogus)
	if r, _ := h.send(&wire.Request{Op: wire.OpPut, Kind: wire.KindPlacement, ID: wire.PlacementID(h.vol, 1, bogusSum.ShardsRoot),
		Version: 1, Hash: merkle.Sum(bb), Size: uint64(len(bb))}, all, bb); r.Status != wire.StatusBadRequest || !strings.Contains(r.Error, "does not hold") {
		t.Fatalf("list naming a missing shard: %s %s", r.Status, r.Error)
	}
	if r, _ := h.send(&wire.Request{Op: wire.OpPut, Kind: wire.KindPlacement, ID: [32]byte{1},
		Version: 1, Hash: merkle.Sum(body), Size: uint64(len(body))}, all, body); r.Status != wire.StatusBadRequest {
		t.Fatalf("list under a foreign id: %s %s", r.Status, r.Error)
	}
	ctx := context.Background()
	if _, err := h.node.Answer(ctx, h.vol, 1, sum, [32]byte{1}); !relay.IsRefusable(err) {
		t.Fatalf("no list: %v", err)
	}
	if r := put(all, 1); r.Status != wire.StatusOK {
		t.Fatalf("put list: %s %s", r.Status, r.Error)
	}
	for e := range 16 {
		seed := challenge.Seed([32]byte{byte(e)}, h.vol, h.node.ID(), uint64(e))
		a, err := h.node.Answer(ctx, h.vol, 1, sum, seed)
		if err != nil {
			t.Fatal(err)
		}
		if err := challenge.Verify(sum, seed, a); err != nil {
			t.Fatalf("seed %d: %v", e, err)
		}
	}
	// An older version's list is pruned once a newer one is challenged.
	oldBody, _ := wire.Marshal(leaves[:1])
	oldSum, _ := challenge.Summarize(leaves[:1])
	if r, _ := h.send(&wire.Request{Op: wire.OpPut, Kind: wire.KindPlacement, ID: wire.PlacementID(h.vol, 0, oldSum.ShardsRoot),
		Version: 0, Hash: merkle.Sum(oldBody), Size: uint64(len(oldBody))}, all, oldBody); r.Status != wire.StatusOK {
		t.Fatalf("put old list: %s", r.Error)
	}
	if err := h.node.PrunePlacements(h.vol, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := h.node.Placement(ctx, h.vol, 0, oldSum); !relay.IsRefusable(err) {
		t.Fatalf("old list survived pruning: %v", err)
	}
	if _, err := h.node.Placement(ctx, h.vol, 1, sum); err != nil {
		t.Fatalf("current list pruned: %v", err)
	}
	// Challenge work shows in the relay's metrics.
	h.node.ChallengeEvent("answer", [32]byte{}, 1, nil)
	resp, err := http.Get("http://" + h.node.MetricsAddr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	mb, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(mb), `cbfs_relay_storage_challenges_total{kind="answer",result="ok"} 1`) {
		t.Fatal("challenge metric missing")
	}
	wrong := sum
	wrong.Bytes++
	if _, err := h.node.Answer(ctx, h.vol, 1, wrong, [32]byte{1}); !relay.IsRefusable(err) {
		t.Fatalf("misstated bytes: %v", err)
	}
	// Corrupt every shard on disk: answers fail, and not as refusable.
	for _, l := range leaves {
		if l.Size > 0 {
			os.WriteFile(h.node.Store().Path(h.vol, l.ID), bytes.Repeat([]byte{9}, int(l.Size)), 0o600)
		}
	}
	for e := range 8 {
		seed := challenge.Seed([32]byte{byte(e)}, h.vol, h.node.ID(), uint64(e))
		li := challenge.LeafIndex(seed, sum.Count)
		if leaves[li].Size == 0 {
			continue
		}
		if _, err := h.node.Answer(ctx, h.vol, 1, sum, seed); err == nil || relay.IsRefusable(err) {
			t.Fatalf("corrupt shard: %v", err)
		}
	}
}
