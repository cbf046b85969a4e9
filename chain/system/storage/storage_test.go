package storage_test

import (
	"errors"
	"math/big"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/storage"
	"github.com/cowboy-foundation/cowboy/chain/system/systemtest"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/ethereum/go-ethereum/crypto"
)

func cby(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), big.NewInt(1e18)) }

// The Relay Registry and Storage Manager as a module on its own: a relay
// registers with its node key and stake, an owner creates a volume and
// commits versions placed on the relay, a stale version fails with
// VersionConflict, and the stake unbonds through the end-of-block step.
func TestStorageModule(t *testing.T) {
	m := storage.New(storage.Params{UnbondingBlocks: 3})
	c := systemtest.New()
	key, err := crypto.HexToECDSA("4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")
	if err != nil {
		t.Fatal(err)
	}
	relay := types.PubkeyToAddress(key.PublicKey)
	owner := types.Address{0x0e}
	for _, a := range []types.Address{relay, owner} {
		if err := c.Fund(a, cby(1000)); err != nil {
			t.Fatal(err)
		}
	}
	rr, sm := types.RelayRegistryAddress, types.StorageManagerAddress
	run := func(from, to types.Address, value *big.Int, in types.Instruction) *systemtest.Result {
		t.Helper()
		return c.MustRun(t, m, from, to, value, in)
	}
	reg := &types.RelayRegister{Addr: "127.0.0.1:7000", PubKey: crypto.CompressPubkey(&key.PublicKey), Capacity: 1 << 30}
	if _, err := c.Run(m, relay, sm, cby(100), reg); !errors.Is(err, types.ErrMalformedTx) {
		t.Fatalf("relay_register to the Storage Manager: %v", err)
	}
	if r := run(owner, rr, cby(100), reg); r.Code() != system.CodeInvalidRelayKey {
		t.Fatalf("foreign node key: %v", r.Err)
	}
	if r := run(relay, rr, cby(1), reg); r.Code() != system.CodeInsufficientStake {
		t.Fatalf("low stake: %v", r.Err)
	}
	r := run(relay, rr, cby(100), reg)
	if r.Err != nil || len(r.Events) != 1 || r.Events[0].Topic != storage.TopicRelayRegistered {
		t.Fatalf("register: %v %+v", r.Err, r.Events)
	}
	var vol types.Hash
	copy(vol[:], owner[:])
	vol[31] = 1
	if r := run(owner, sm, nil, &types.VolumeCreate{Volume: vol, K: 2, M: 1}); r.Err != nil {
		t.Fatal(r.Err)
	}
	place := []types.RelayPlacement{{Relay: relay, Bytes: 4096, Count: 3}}
	if r := run(owner, sm, nil, &types.CommitManifest{Volume: vol, Root: types.Hash{1}, Version: 2, Size: 10, Placement: place}); r.Code() != system.CodeVersionConflict {
		t.Fatalf("skipped version: %v", r.Err)
	}
	r = run(owner, sm, nil, &types.CommitManifest{Volume: vol, Root: types.Hash{1}, Version: 1, Size: 10, Placement: place})
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	var ev storage.StorageCommitmentEvent
	if err := codec.Unmarshal(r.Events[0].Data, &ev); err != nil || ev.Volume != vol || ev.Version != 1 || ev.Relays != 1 {
		t.Fatalf("commitment event %+v: %v", ev, err)
	}
	if v, err := storage.ReadVolume(c.State, vol); err != nil || v.Version != 1 || v.Root != (types.Hash{1}) {
		t.Fatalf("volume %+v: %v", v, err)
	}
	if r := run(types.Address{0x0f}, sm, nil, &types.CommitManifest{Volume: vol, Version: 2}); r.Code() != system.CodeNotVolumeOwner {
		t.Fatalf("foreign commit: %v", r.Err)
	}
	// Leaving bonds the stake for UnbondingBlocks; the end-of-block step returns it.
	if r := run(relay, rr, nil, &types.RelayDeregister{}); r.Err != nil {
		t.Fatal(r.Err)
	}
	before, _ := c.Balance(relay)
	for h := uint64(2); h <= 4; h++ {
		c.Env.Height = h
		if err := c.EndBlock(m); err != nil {
			t.Fatal(err)
		}
	}
	after, _ := c.Balance(relay)
	if new(big.Int).Sub(after, before).Cmp(cby(100)) != 0 {
		t.Fatalf("stake returned %s", new(big.Int).Sub(after, before))
	}
}
