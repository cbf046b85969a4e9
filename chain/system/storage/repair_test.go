package storage_test

import (
	"crypto/ecdsa"
	"math/big"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/storage/challenge"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/storage"
	"github.com/cowboy-foundation/cowboy/chain/system/systemtest"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/ethereum/go-ethereum/crypto"
)

// repairFixture is a volume placed on relays a, b and d, with relay e
// registered but holding nothing. After setup every relay but d has sent a
// recent heartbeat, so d is unhealthy (missed heartbeats).
type repairFixture struct {
	t          *testing.T
	m          *storage.Module
	c          *systemtest.Chain
	a, b, d, e types.Address
	vol        types.Hash
	dLeaves    []challenge.Leaf
	dSum       challenge.Summary
}

func newRepairFixture(t *testing.T) *repairFixture {
	t.Helper()
	f := &repairFixture{t: t, m: storage.New(storage.Params{HeartbeatTimeout: 10}), c: systemtest.New()}
	keys := make([]*ecdsa.PrivateKey, 4)
	addrs := make([]types.Address, 4)
	for i := range keys {
		k, err := crypto.GenerateKey()
		if err != nil {
			t.Fatal(err)
		}
		keys[i], addrs[i] = k, types.PubkeyToAddress(k.PublicKey)
		if err := f.c.Fund(addrs[i], cby(1000)); err != nil {
			t.Fatal(err)
		}
		f.ok(addrs[i], types.RelayRegistryAddress, &types.RelayRegister{Addr: "127.0.0.1:7000", PubKey: crypto.CompressPubkey(&k.PublicKey), Capacity: 1 << 30}, cby(100))
	}
	f.a, f.b, f.d, f.e = addrs[0], addrs[1], addrs[2], addrs[3]
	owner := types.Address{0x0e}
	copy(f.vol[:], owner[:])
	f.vol[31] = 1
	f.ok(owner, types.StorageManagerAddress, &types.VolumeCreate{Volume: f.vol, K: 2, M: 1}, nil)
	leaves := func(seed byte, n int) ([]challenge.Leaf, challenge.Summary) {
		var ls []challenge.Leaf
		for i := range n {
			ls = append(ls, challenge.Leaf{ID: types.Hash{seed, byte(i)}, Hash: types.Hash{seed, byte(i), 1}, Size: 4096})
		}
		ls, err := challenge.SortLeaves(ls)
		if err != nil {
			t.Fatal(err)
		}
		s, err := challenge.Summarize(ls)
		if err != nil {
			t.Fatal(err)
		}
		return ls, s
	}
	var place []types.RelayPlacement
	for i, id := range []types.Address{f.a, f.b, f.d} {
		ls, s := leaves(byte(i+1), 3)
		if id == f.d {
			f.dLeaves, f.dSum = ls, s
		}
		place = append(place, types.RelayPlacement{Relay: id, Bytes: s.Bytes, Count: s.Count, ShardsRoot: s.ShardsRoot})
	}
	sortPlacement(place)
	f.ok(owner, types.StorageManagerAddress, &types.CommitManifest{Volume: f.vol, Root: types.Hash{9}, Version: 1, Size: 10, Placement: place}, nil)
	// d misses its heartbeats; the others keep theirs.
	f.c.Env.Height = 30
	for _, id := range []types.Address{f.a, f.b, f.e} {
		f.ok(id, types.RelayRegistryAddress, &types.RelayHeartbeat{Capacity: 1 << 30}, nil)
	}
	return f
}

func sortPlacement(p []types.RelayPlacement) {
	for i := range p {
		for j := i + 1; j < len(p); j++ {
			if string(p[j].Relay[:]) < string(p[i].Relay[:]) {
				p[i], p[j] = p[j], p[i]
			}
		}
	}
}

func (f *repairFixture) run(from types.Address, in types.Instruction) *systemtest.Result {
	f.t.Helper()
	r, err := f.c.Run(f.m, from, types.StorageManagerAddress, nil, in)
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

func (f *repairFixture) ok(from, to types.Address, in types.Instruction, value *big.Int) {
	f.t.Helper()
	r, err := f.c.Run(f.m, from, to, value, in)
	if err != nil || r.Err != nil {
		f.t.Fatalf("%s: %v %v", in.InstructionKind(), err, r.Err)
	}
}

// move is a repair_placement of d's leaf i, proved against d's summary.
func (f *repairFixture) move(i int, to types.Address) *types.RepairPlacement {
	f.t.Helper()
	path, err := challenge.LeafProof(f.dLeaves, uint64(i))
	if err != nil {
		f.t.Fatal(err)
	}
	l := f.dLeaves[i]
	in := &types.RepairPlacement{Volume: f.vol, Version: 1, From: f.d, To: to, ShardID: l.ID, ShardHash: l.Hash, ShardSize: l.Size, LeafIndex: uint64(i)}
	for _, h := range path {
		in.LeafPath = append(in.LeafPath, types.Hash(h))
	}
	return in
}

// TestRepairPlacement: a healthy holder moves a shard of the relay that
// missed its heartbeats to a healthy relay outside the placement; the
// override names the new holder, who may then repair in turn; a second move
// of the same shard from d fails.
func TestRepairPlacement(t *testing.T) {
	f := newRepairFixture(t)
	if r := f.run(f.a, f.move(0, f.e)); r.Err != nil {
		t.Fatal(r.Err)
	} else if len(r.Events) != 1 || r.Events[0].Topic != storage.TopicShardMoved {
		t.Fatalf("events %+v", r.Events)
	}
	mv, err := storage.ReadMoved(f.c.State, f.vol, f.dLeaves[0].ID)
	if err != nil || mv == nil || mv.Holder != f.e || mv.Origin != f.d || mv.Repairer != f.a {
		t.Fatalf("override %+v: %v", mv, err)
	}
	if r := f.run(f.b, f.move(0, f.b)); r.Code() != system.CodeShardNotHeld {
		t.Fatalf("moving a moved shard from its old holder: %v", r.Err)
	}
	// A relay the commitment left out (the writer could not reach it) has
	// no summary to prove against: its shard moves unproved, with no path.
	out := &types.RepairPlacement{Volume: f.vol, Version: 1, From: types.Address{0x55}, To: f.e, ShardID: types.Hash{0x55}, ShardHash: types.Hash{1}, ShardSize: 10}
	if r := f.run(f.a, out); r.Err != nil {
		t.Fatalf("move off a relay outside the placement: %v", r.Err)
	}
	// e holds part of the volume now (by the override) and may repair.
	if r := f.run(f.e, f.move(1, f.b)); r.Err != nil {
		t.Fatalf("repair by an override holder: %v", r.Err)
	}
}

// One test per failure code of repair_placement.
func TestRepairPlacementFailures(t *testing.T) {
	f := newRepairFixture(t)
	zero := f.move(0, f.e)
	zero.ShardSize = 0
	deep := f.move(0, f.e)
	deep.LeafPath = make([]types.Hash, challenge.MaxProofDepth+1)
	fromA := f.move(0, f.e)
	fromA.From = f.a
	self := f.move(0, f.d)
	badIdx := f.move(0, f.e)
	badIdx.LeafIndex = 1
	badVer := f.move(0, f.e)
	badVer.Version = 2
	forged := f.move(0, f.e)
	forged.ShardHash = types.Hash{0xff}
	outPath := f.move(0, f.e)
	outPath.From = types.Address{0x55}
	unknown := f.move(0, f.e)
	unknown.To = types.Address{0x77}
	for _, tc := range []struct {
		name   string
		sender types.Address
		in     *types.RepairPlacement
		code   system.Code
	}{
		{"zero size", f.a, zero, system.CodeInvalidRepair},
		{"proof too deep", f.a, deep, system.CodeInvalidRepair},
		{"sender outside the placement", f.e, f.move(0, f.b), system.CodeNotRepairer},
		{"sender unhealthy", f.d, f.move(0, f.e), system.CodeNotRepairer},
		{"source healthy", f.b, fromA, system.CodeSourceHealthy},
		{"target is the source", f.a, self, system.CodeBadRepairTarget},
		{"target not a relay", f.a, unknown, system.CodeBadRepairTarget},
		{"wrong leaf index", f.a, badIdx, system.CodeShardNotHeld},
		{"wrong version", f.a, badVer, system.CodeShardNotHeld},
		{"forged leaf", f.a, forged, system.CodeShardNotHeld},
		{"path for a relay outside the placement", f.a, outPath, system.CodeShardNotHeld},
	} {
		if r := f.run(tc.sender, tc.in); r.Code() != tc.code {
			t.Errorf("%s: got %v, want code %d", tc.name, r.Err, tc.code)
		}
	}
	// A relay flagged by failed challenges is as unhealthy as a silent one
	// (RelayUsable), and an unknown volume fails before any check.
	if r := f.run(f.a, &types.RepairPlacement{Volume: types.Hash{1}, ShardSize: 1}); r.Code() != system.CodeNoSuchVolume {
		t.Errorf("unknown volume: %v", r.Err)
	}
	if mv, _ := storage.ReadMoved(f.c.State, f.vol, f.dLeaves[0].ID); mv != nil {
		t.Fatalf("a failed repair left an override: %+v", mv)
	}
}
