package execution_test

import (
	"crypto/ecdsa"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/execution"
	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/node"
	"github.com/cowboy-foundation/cowboy/chain/storage/challenge"
	"github.com/cowboy-foundation/cowboy/chain/storage/merkle"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/system/storage"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/ethereum/go-ethereum/crypto"
)

// Test storage epochs: E blocks, answers within W.
const E, W = 20, 8

// rentParams are small storage epochs for tests.
var rentParams = execution.StorageParams{EpochBlocks: E, ResponseWindow: W, RentRate: big.NewInt(1000),
	GraceEpochs: 1, ClaimEpochs: 2, SlashAfter: 2, SlashBps: 1000, FlagEpochs: 2, UnbondingBlocks: 5}

// shardSet is what one relay holds of a volume: its shards and their leaves.
type shardSet struct {
	leaves []challenge.Leaf
	data   map[[32]byte][]byte
}

func makeShards(seed byte, sizes ...int) *shardSet {
	s := &shardSet{data: map[[32]byte][]byte{}}
	for i, n := range sizes {
		b := make([]byte, n)
		rand.NewChaCha8([32]byte{seed, byte(i)}).Read(b)
		id := crypto.Keccak256Hash([]byte{seed, byte(i)})
		s.data[id] = b
		s.leaves = append(s.leaves, challenge.Leaf{ID: id, Hash: merkle.Sum(b), Size: uint64(n)})
	}
	s.leaves, _ = challenge.SortLeaves(s.leaves)
	return s
}

// answer builds a relay's answer to c from the shards it holds.
func (s *shardSet) answer(t *testing.T, c *storage.Challenge) *types.StorageProof {
	t.Helper()
	i := c.LeafIndex()
	l := s.leaves[i]
	lp, err := challenge.LeafProof(s.leaves, i)
	if err != nil {
		t.Fatal(err)
	}
	data := s.data[l.ID]
	ci := challenge.ChunkIndex(c.Seed, l.Size)
	cp, err := merkle.ProveChunk(data, ci)
	if err != nil {
		t.Fatal(err)
	}
	end := min(uint64(len(data)), (ci+1)*merkle.ChunkSize)
	return &types.StorageProof{Volume: c.Volume, Epoch: c.Epoch, ShardID: l.ID, ShardHash: l.Hash, ShardSize: l.Size,
		LeafPath: toHashes(lp), Chunk: append([]byte(nil), data[ci*merkle.ChunkSize:end]...), ChunkPath: toHashes(cp.Siblings)}
}

func toHashes(hs []merkle.Hash) []types.Hash {
	out := make([]types.Hash, len(hs))
	for i, h := range hs {
		out[i] = types.Hash(h)
	}
	return out
}

func (s *shardSet) placement(relay types.Address) types.RelayPlacement {
	sum, err := challenge.Summarize(s.leaves)
	if err != nil {
		panic(err)
	}
	return types.RelayPlacement{Relay: relay, Bytes: sum.Bytes, Count: sum.Count, ShardsRoot: sum.ShardsRoot}
}

func rentChain(t *testing.T, keys ...*ecdsa.PrivateKey) *chain {
	c := newChainWithGenesisKey(t, keys...)
	cfg := c.ex.Config()
	cfg.Storage = rentParams
	ex, err := execution.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.ex = ex
	return c
}

// one applies tx alone in a block and returns its receipt.
func (c *chain) one(tx *types.Tx) *types.Receipt { return c.block(tx)[0] }

func (c *chain) until(height uint64) {
	for c.head().Height < height {
		c.block()
	}
}

func (c *chain) view(f func(v *store.View)) {
	c.t.Helper()
	if err := c.st.View(func(v *store.View) error {
		if _, err := node.AuditSupply(v); err != nil {
			c.t.Fatal(err)
		}
		f(v)
		return nil
	}); err != nil {
		c.t.Fatal(err)
	}
}

func (c *chain) challengeOf(epoch uint64, vol types.Hash, relay types.Address) *storage.Challenge {
	c.t.Helper()
	var ch *storage.Challenge
	c.view(func(v *store.View) {
		var err error
		if ch, err = storage.ReadChallenge(v, epoch, vol, relay); err != nil || ch == nil {
			c.t.Fatalf("challenge %d %s: %v %v", epoch, relay, ch, err)
		}
	})
	return ch
}

func (c *chain) account(vol types.Hash) *storage.VolumeAccount {
	var a *storage.VolumeAccount
	c.view(func(v *store.View) { a, _ = storage.ReadVolumeAccount(v, vol) })
	return a
}

func (c *chain) stats(id types.Address) *storage.RelayStats {
	var s *storage.RelayStats
	c.view(func(v *store.View) { s, _ = storage.ReadRelayStats(v, id) })
	return s
}

func fixedKey(t *testing.T, hex string) *ecdsa.PrivateKey {
	k, err := crypto.HexToECDSA(hex)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// rentScenario runs challenges, billing, slashing, eviction and unbonding
// on a chain and returns its final state root.
func rentScenario(t *testing.T) types.Hash {
	owner := fixedKey(t, "1111111111111111111111111111111111111111111111111111111111111111")
	keys := []*ecdsa.PrivateKey{
		fixedKey(t, "2222222222222222222222222222222222222222222222222222222222222222"),
		fixedKey(t, "3333333333333333333333333333333333333333333333333333333333333333"),
		fixedKey(t, "4444444444444444444444444444444444444444444444444444444444444444"),
	}
	c := rentChain(t, append([]*ecdsa.PrivateKey{owner}, keys...)...)
	reg, mgr := types.RelayRegistryAddress, types.StorageManagerAddress
	ids := make([]types.Address, len(keys))
	stake := genesis.CBY(100)
	for i, k := range keys {
		ids[i] = types.PubkeyToAddress(k.PublicKey)
		c.ok(c.txValue(k, &reg, &types.RelayRegister{Addr: "127.0.0.1:7000", PubKey: crypto.CompressPubkey(&k.PublicKey), Capacity: 1 << 30}, stake))
	}
	// Sorted relay order for the placement.
	sets := map[types.Address]*shardSet{ids[0]: makeShards(1, 3000, 1024), ids[1]: makeShards(2, 2500), ids[2]: makeShards(3, 0, 5000, 100)}
	var place []types.RelayPlacement
	for _, id := range sortedAddrs(ids) {
		place = append(place, sets[id].placement(id))
	}
	var vol types.Hash
	oaddr := types.PubkeyToAddress(owner.PublicKey)
	copy(vol[:], oaddr[:])
	vol[31] = 1
	c.ok(c.tx(owner, &mgr, &types.VolumeCreate{Volume: vol, K: 2, M: 1}, 0))

	// Placement naming a non-relay, or unsorted: refused.
	for _, r := range []*types.Receipt{
		c.one(c.tx(owner, &mgr, &types.CommitManifest{Volume: vol, Root: types.Hash{1}, Version: 1, Size: 10, Placement: []types.RelayPlacement{place[1], place[0]}}, 0)),
		c.one(c.tx(owner, &mgr, &types.CommitManifest{Volume: vol, Root: types.Hash{1}, Version: 1, Size: 10, Placement: []types.RelayPlacement{{Relay: types.Address{0xee}, Bytes: 1, Count: 1}}}, 0)),
	} {
		if r.Status != types.ReceiptFailed || !strings.Contains(r.Error, "InvalidPlacement") {
			t.Fatalf("bad placement accepted: %+v", r)
		}
	}
	c.ok(c.tx(owner, &mgr, &types.CommitManifest{Volume: vol, Root: types.Hash{1}, Version: 1, Size: 10, Placement: place}, 0))
	rent := func(id types.Address) *big.Int {
		p := sets[id].placement(id)
		return new(big.Int).Mul(new(big.Int).SetUint64(p.Bytes), rentParams.RentRate)
	}
	D := new(big.Int).Add(new(big.Int).Add(rent(ids[0]), rent(ids[1])), rent(ids[2]))
	fund := new(big.Int).Mul(D, big.NewInt(2))
	c.ok(c.txValue(owner, &mgr, &types.VolumeFund{Volume: vol}, fund))
	if a := c.account(vol); a.Escrow.Cmp(fund) != 0 || a.Funded.Cmp(fund) != 0 {
		t.Fatalf("escrow %s funded %s, want %s", a.Escrow, a.Funded, fund)
	}
	escrow := new(big.Int).Set(fund)
	if h := c.head().Height; h >= E {
		t.Fatalf("setup ran to height %d", h)
	}

	// Epoch 1 starts at height E: the rent is reserved, one challenge per relay.
	c.until(E)
	escrow.Sub(escrow, D)
	if a := c.account(vol); a.Escrow.Cmp(escrow) != 0 {
		t.Fatalf("escrow after epoch 1 reservation %s, want %s", a.Escrow, escrow)
	}
	ch := map[types.Address]*storage.Challenge{}
	for _, id := range ids {
		ch[id] = c.challengeOf(1, vol, id)
		if ch[id].Status != storage.ChallengeOpen || ch[id].Rent.Cmp(rent(id)) != 0 || ch[id].Deadline != E+W {
			t.Fatalf("challenge %+v", ch[id])
		}
	}
	// Relay 0 proves its data; relay 1 sends a wrong chunk; a non-challenged
	// sender and an early claim are refused; relay 2 stays silent.
	wrong := sets[ids[1]].answer(t, ch[ids[1]])
	wrong.Chunk[0] ^= 1
	rs := []*types.Receipt{c.one(c.tx(keys[0], &mgr, sets[ids[0]].answer(t, ch[ids[0]]), 0)), c.one(c.tx(keys[1], &mgr, wrong, 0)),
		c.one(c.tx(owner, &mgr, sets[ids[0]].answer(t, ch[ids[0]]), 0)), c.one(c.tx(keys[0], &mgr, &types.ClaimRent{Epoch: 1, Volumes: []types.Hash{vol}}, 0))}
	if rs[0].Status != types.ReceiptSuccess || rs[1].Status != types.ReceiptSuccess || !hasEvent(rs[1], mgr, "ChallengeFailed") ||
		!strings.Contains(rs[2].Error, "NoSuchChallenge") || !strings.Contains(rs[3].Error, "EpochNotOver") {
		t.Fatalf("answers: %+v", rs)
	}
	if r := c.one(c.tx(keys[1], &mgr, sets[ids[1]].answer(t, ch[ids[1]]), 0)); !strings.Contains(r.Error, "ChallengeClosed") {
		t.Fatalf("second answer after a failure: %+v", r)
	}
	if got := c.challengeOf(1, vol, ids[1]).Status; got != storage.ChallengeFailed {
		t.Fatalf("wrong proof: status %d", got)
	}
	escrow.Add(escrow, rent(ids[1]))
	c.until(E + W) // the window closes: relay 2 missed
	escrow.Add(escrow, rent(ids[2]))
	if got := c.challengeOf(1, vol, ids[2]).Status; got != storage.ChallengeMissed {
		t.Fatalf("silent relay: status %d", got)
	}
	if a := c.account(vol); a.Escrow.Cmp(escrow) != 0 {
		t.Fatalf("escrow after refunds %s, want %s", a.Escrow, escrow)
	}
	for i, want := range []storage.RelayStats{{Answered: 1}, {Failed: 1, Consecutive: 1}, {Missed: 1, Consecutive: 1}} {
		st := c.stats(ids[i])
		if st.Answered != want.Answered || st.Failed != want.Failed || st.Missed != want.Missed || st.Consecutive != want.Consecutive {
			t.Fatalf("relay %d stats %+v", i, st)
		}
		if flagged := st.Flagged(1); flagged != (i > 0) || (i > 0 && st.Reputation != storage.MaxReputation-storage.ReputationPenalty) {
			t.Fatalf("relay %d flagged=%v reputation %d", i, flagged, st.Reputation)
		}
	}

	// Epoch 2: relay 0 claims epoch 1's rent (exact balance), relays 0 and 1
	// answer, relay 2 misses again and is slashed 10% (burned).
	c.until(2 * E)
	escrow.Sub(escrow, D)
	before := balanceOf(t, c, ids[0])
	rs = c.ok(c.tx(keys[0], &mgr, &types.ClaimRent{Epoch: 1, Volumes: []types.Hash{vol}}, 0))
	if got, want := balanceOf(t, c, ids[0]), new(big.Int).Sub(new(big.Int).Add(before, rent(ids[0])), rs[0].FeePaid); got.Cmp(want) != 0 {
		t.Fatalf("relay balance after claim %s, want %s", got, want)
	}
	rs = []*types.Receipt{c.one(c.tx(keys[0], &mgr, &types.ClaimRent{Epoch: 1, Volumes: []types.Hash{vol}}, 0)), c.one(c.tx(keys[1], &mgr, &types.ClaimRent{Epoch: 1, Volumes: []types.Hash{vol}}, 0))}
	if !strings.Contains(rs[0].Error, "claimed") || !strings.Contains(rs[1].Error, "failed") {
		t.Fatalf("double or failed claims: %q %q", rs[0].Error, rs[1].Error)
	}
	for i := 0; i < 2; i++ {
		c.ok(c.tx(keys[i], &mgr, sets[ids[i]].answer(t, c.challengeOf(2, vol, ids[i])), 0))
	}
	regBefore := balanceOf(t, c, reg)
	c.until(2*E + W)
	escrow.Add(escrow, rent(ids[2]))
	slash := new(big.Int).Div(stake, big.NewInt(10))
	if got := new(big.Int).Sub(regBefore, balanceOf(t, c, reg)); got.Cmp(slash) != 0 {
		t.Fatalf("slashed %s, want %s", got, slash)
	}
	if st := c.stats(ids[2]); st.Slashed.Cmp(slash) != 0 || st.Consecutive != 2 {
		t.Fatalf("slashed relay stats %+v", st)
	}
	if st := c.stats(ids[1]); st.Consecutive != 0 || !st.Flagged(2) || st.Flagged(3) {
		t.Fatalf("an answer ends the streak, the flag runs its epochs: %+v", st)
	}
	if a := c.account(vol); a.Escrow.Cmp(escrow) != 0 || a.Paid.Cmp(rent(ids[0])) != 0 {
		t.Fatalf("escrow %s paid %s, want %s %s", a.Escrow, a.Paid, escrow, rent(ids[0]))
	}

	// Relay 0 leaves: its stake is returned only after the unbonding delay.
	before = balanceOf(t, c, ids[0])
	rs = c.ok(c.tx(keys[0], &reg, &types.RelayDeregister{}, 0))
	afterDereg := new(big.Int).Sub(before, rs[0].FeePaid)
	if got := balanceOf(t, c, ids[0]); got.Cmp(afterDereg) != 0 {
		t.Fatalf("stake returned before unbonding: %s vs %s", got, afterDereg)
	}
	c.until(c.head().Height + rentParams.UnbondingBlocks)
	if got := balanceOf(t, c, ids[0]); got.Cmp(new(big.Int).Add(afterDereg, stake)) != 0 {
		t.Fatalf("stake after unbonding %s, want %s", got, new(big.Int).Add(afterDereg, stake))
	}

	// From epoch 3 relays 0 and 1 answer and claim (relay 0 still holds the
	// data while unbonding) and relay 2 keeps missing: the escrow runs dry,
	// the volume goes into arrears for the grace period and is evicted;
	// what is left returns to the owner.
	ownerBefore := balanceOf(t, c, types.PubkeyToAddress(owner.PublicKey))
	sawArrears := false
	for e := uint64(3); c.account(vol).Evicted == 0; e++ {
		if e > 15 {
			t.Fatalf("never evicted: %+v", c.account(vol))
		}
		c.until(e * E)
		if c.account(vol).Arrears > 0 {
			sawArrears = true
		}
		for i := 0; i < 2; i++ {
			var cur, prev *storage.Challenge
			c.view(func(v *store.View) {
				cur, _ = storage.ReadChallenge(v, e, vol, ids[i])
				prev, _ = storage.ReadChallenge(v, e-1, vol, ids[i])
			})
			if cur != nil && cur.Status == storage.ChallengeOpen {
				c.ok(c.tx(keys[i], &mgr, sets[ids[i]].answer(t, cur), 0))
			}
			if prev != nil && prev.Status == storage.ChallengeAnswered {
				c.ok(c.tx(keys[i], &mgr, &types.ClaimRent{Epoch: e - 1, Volumes: []types.Hash{vol}}, 0))
			}
		}
	}
	if !sawArrears {
		t.Fatal("the volume was evicted without a grace period")
	}
	c.until(c.head().Height + (rentParams.ClaimEpochs+2)*rentParams.EpochBlocks)
	a := c.account(vol)
	if a.Evicted == 0 || a.Escrow.Sign() != 0 {
		t.Fatalf("not evicted: %+v", a)
	}
	if got := new(big.Int).Sub(balanceOf(t, c, types.PubkeyToAddress(owner.PublicKey)), ownerBefore); got.Cmp(a.Refunded) != 0 || got.Sign() <= 0 {
		t.Fatalf("owner refund %s, recorded %s", got, a.Refunded)
	}
	c.view(func(v *store.View) {
		if p, _ := storage.ReadPlacement(v, vol); p != nil {
			t.Fatalf("placement survives eviction: %+v", p)
		}
	})
	// An evicted volume takes no commitment until it is funded again.
	if r := c.one(c.tx(owner, &mgr, &types.CommitManifest{Volume: vol, Root: types.Hash{2}, Version: 2, Size: 10}, 0)); !strings.Contains(r.Error, "VolumeEvicted") {
		t.Fatalf("commit to an evicted volume: %+v", r)
	}
	refunded := new(big.Int).Set(a.Refunded)
	// Every reserved unit ended with a relay or back with the owner: the
	// manager holds nothing once the claim windows are over.
	if got := balanceOf(t, c, mgr); got.Sign() != 0 {
		t.Fatalf("storage manager still holds %s", got)
	}
	if a := c.account(vol); a.Refunded.Cmp(refunded) < 0 {
		t.Fatalf("refunds shrank: %s < %s", a.Refunded, refunded)
	}
	// Funding revives it: commitments are accepted again.
	c.ok(c.txValue(owner, &mgr, &types.VolumeFund{Volume: vol}, D))
	if a := c.account(vol); a.Evicted != 0 || a.Arrears != 0 || a.Escrow.Cmp(D) != 0 {
		t.Fatalf("revived account %+v", a)
	}
	c.ok(c.tx(owner, &mgr, &types.CommitManifest{Volume: vol, Root: types.Hash{2}, Version: 2, Size: 10, Placement: place[1:2]}, 0))
	return c.head().StateRoot
}

func sortedAddrs(as []types.Address) []types.Address {
	out := append([]types.Address(nil), as...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if string(out[j][:]) < string(out[i][:]) {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestStorageChallengesAndRent(t *testing.T) {
	rentScenario(t)
}

// Two executors applying the same blocks reach the same state root.
func TestStorageRentDeterministic(t *testing.T) {
	a, b := rentScenario(t), rentScenario(t)
	if a != b {
		t.Fatalf("state roots differ: %s vs %s", a, b)
	}
}

func TestChallengeVerify(t *testing.T) {
	s := makeShards(9, 4096, 10, 1025)
	sum, err := challenge.Summarize(s.leaves)
	if err != nil {
		t.Fatal(err)
	}
	for e := uint64(0); e < 20; e++ {
		c := &storage.Challenge{Seed: challenge.Seed([32]byte{byte(e)}, [32]byte{1}, [20]byte{2}, e), Bytes: sum.Bytes, Count: sum.Count, ShardsRoot: sum.ShardsRoot}
		p := s.answer(t, c)
		a := &challenge.Answer{Leaf: challenge.Leaf{ID: p.ShardID, Hash: p.ShardHash, Size: p.ShardSize}, Chunk: p.Chunk}
		for _, h := range p.LeafPath {
			a.LeafPath = append(a.LeafPath, merkle.Hash(h))
		}
		for _, h := range p.ChunkPath {
			a.ChunkPath = append(a.ChunkPath, merkle.Hash(h))
		}
		if err := challenge.Verify(sum, c.Seed, a); err != nil {
			t.Fatalf("epoch %d: %v", e, err)
		}
		bad := *a
		bad.Leaf.Size++
		if challenge.Verify(sum, c.Seed, &bad) == nil {
			t.Fatal("a misstated shard size verified")
		}
		bad = *a
		bad.Chunk = append([]byte{}, a.Chunk...)
		bad.Chunk = append(bad.Chunk, 0)
		if challenge.Verify(sum, c.Seed, &bad) == nil {
			t.Fatal("a longer chunk verified")
		}
		other := challenge.Seed([32]byte{byte(e + 1)}, [32]byte{1}, [20]byte{2}, e)
		if challenge.LeafIndex(other, sum.Count) != challenge.LeafIndex(c.Seed, sum.Count) || challenge.ChunkIndex(other, a.Leaf.Size) != challenge.ChunkIndex(c.Seed, a.Leaf.Size) {
			if challenge.Verify(sum, other, a) == nil {
				t.Fatal("an answer to another challenge verified")
			}
		}
	}
}

// A relay that finds the commitment misstating its holdings refuses it: it
// leaves the placement, its open challenge closes without penalty and the
// reserved rent returns to the escrow.
func TestRefusePlacement(t *testing.T) {
	owner, _ := genKey()
	rk, _ := genKey()
	c := rentChain(t, owner, rk)
	reg, mgr := types.RelayRegistryAddress, types.StorageManagerAddress
	id := types.PubkeyToAddress(rk.PublicKey)
	c.ok(c.txValue(rk, &reg, &types.RelayRegister{Addr: "127.0.0.1:1", PubKey: crypto.CompressPubkey(&rk.PublicKey)}, genesis.CBY(100)))
	var vol types.Hash
	oaddr := types.PubkeyToAddress(owner.PublicKey)
	copy(vol[:], oaddr[:])
	c.ok(c.tx(owner, &mgr, &types.VolumeCreate{Volume: vol, K: 1, M: 0}, 0))
	set := makeShards(5, 2048)
	c.ok(c.tx(owner, &mgr, &types.CommitManifest{Volume: vol, Root: types.Hash{1}, Version: 1, Size: 2048, Placement: []types.RelayPlacement{set.placement(id)}}, 0))
	// Value rules: only volume_fund carries value.
	if _, err := c.ex.CheckTx(c.txValue(rk, &mgr, &types.ClaimRent{Epoch: 1, Volumes: []types.Hash{vol}}, big.NewInt(1))); err == nil {
		t.Fatal("claim_rent with value accepted")
	}
	c.nonce[id]--
	fund := genesis.CBY(1)
	c.ok(c.txValue(owner, &mgr, &types.VolumeFund{Volume: vol}, fund))
	c.until(E)
	ch := c.challengeOf(1, vol, id)
	if r := c.one(c.tx(rk, &mgr, &types.RefusePlacement{Volume: vol, Version: 2}, 0)); !strings.Contains(r.Error, "NoSuchPlacement") {
		t.Fatalf("refusing another version: %+v", r)
	}
	c.ok(c.tx(rk, &mgr, &types.RefusePlacement{Volume: vol, Version: 1}, 0))
	if got := c.challengeOf(1, vol, id); got.Status != storage.ChallengeRefused {
		t.Fatalf("challenge after refusal: %d", got.Status)
	}
	if a := c.account(vol); a.Escrow.Cmp(fund) != 0 {
		t.Fatalf("escrow %s, want the reserved %s back: %s", a.Escrow, ch.Rent, fund)
	}
	if st := c.stats(id); st.Missed+st.Failed != 0 || st.Flagged(1) || st.Reputation != storage.MaxReputation {
		t.Fatalf("refusal penalised: %+v", st)
	}
	c.view(func(v *store.View) {
		if p, _ := storage.ReadPlacement(v, vol); p != nil {
			t.Fatalf("placement kept: %+v", p)
		}
	})
	c.until(2 * E)
	c.view(func(v *store.View) {
		if ch, _ := storage.ReadChallenge(v, 2, vol, id); ch != nil {
			t.Fatal("a refused placement was challenged again")
		}
	})
}

// A new commitment while a challenge is open supersedes it: no penalty,
// and the reserved rent stays claimable by the relay.
func TestSupersededChallenge(t *testing.T) {
	owner, _ := genKey()
	rk, _ := genKey()
	c := rentChain(t, owner, rk)
	reg, mgr := types.RelayRegistryAddress, types.StorageManagerAddress
	id := types.PubkeyToAddress(rk.PublicKey)
	c.ok(c.txValue(rk, &reg, &types.RelayRegister{Addr: "127.0.0.1:1", PubKey: crypto.CompressPubkey(&rk.PublicKey)}, genesis.CBY(100)))
	var vol types.Hash
	oaddr := types.PubkeyToAddress(owner.PublicKey)
	copy(vol[:], oaddr[:])
	c.ok(c.tx(owner, &mgr, &types.VolumeCreate{Volume: vol, K: 1, M: 0}, 0))
	set := makeShards(6, 4096)
	c.ok(c.tx(owner, &mgr, &types.CommitManifest{Volume: vol, Root: types.Hash{1}, Version: 1, Size: 4096, Placement: []types.RelayPlacement{set.placement(id)}}, 0))
	c.ok(c.txValue(owner, &mgr, &types.VolumeFund{Volume: vol}, genesis.CBY(1)))
	c.until(E)
	rent := c.challengeOf(1, vol, id).Rent
	c.ok(c.tx(owner, &mgr, &types.CommitManifest{Volume: vol, Root: types.Hash{2}, Version: 2, Size: 4096, Placement: []types.RelayPlacement{set.placement(id)}}, 0))
	if ch := c.challengeOf(1, vol, id); ch.Status != storage.ChallengeSuperseded {
		t.Fatalf("status %d", ch.Status)
	}
	c.until(2 * E)
	if st := c.stats(id); st.Missed+st.Failed+st.Answered != 0 || st.Flagged(2) {
		t.Fatalf("superseded challenge counted: %+v", st)
	}
	before := balanceOf(t, c, id)
	rs := c.ok(c.tx(rk, &mgr, &types.ClaimRent{Epoch: 1, Volumes: []types.Hash{vol}}, 0))
	if got, want := balanceOf(t, c, id), new(big.Int).Sub(new(big.Int).Add(before, rent), rs[0].FeePaid); got.Cmp(want) != 0 {
		t.Fatalf("balance %s, want %s", got, want)
	}
}
