package execution_test

import (
	"math/big"
	"strings"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/node"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/system/storage"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/ethereum/go-ethereum/crypto"
)

func TestRelayRegistryAndStorageManager(t *testing.T) {
	relayKey, _ := genKey()
	owner, _ := genKey()
	c := rentChain(t, relayKey, owner)
	reg, mgr := types.RelayRegistryAddress, types.StorageManagerAddress
	relayID := types.PubkeyToAddress(relayKey.PublicKey)
	pub := crypto.CompressPubkey(&relayKey.PublicKey)

	// Stake below the minimum, or a registration sent by another key: refused.
	rs := c.block(c.tx(relayKey, &reg, &types.RelayRegister{Addr: "127.0.0.1:7000", PubKey: pub, Capacity: 1 << 30}, 1))
	if rs[0].Status != types.ReceiptFailed || !strings.Contains(rs[0].Error, "InsufficientStake") {
		t.Fatalf("low stake: %+v", rs[0])
	}
	rs = c.block(c.tx(owner, &reg, &types.RelayRegister{Addr: "127.0.0.1:7000", PubKey: pub}, 0))
	if rs[0].Status != types.ReceiptFailed || !strings.Contains(rs[0].Error, "InvalidRelayKey") {
		t.Fatalf("foreign key: %+v", rs[0])
	}
	stake := genesis.CBY(100)
	c.ok(c.txValue(relayKey, &reg, &types.RelayRegister{Addr: "127.0.0.1:7000", PubKey: pub, Capacity: 1 << 30}, stake))
	c.ok(c.tx(relayKey, &reg, &types.RelayHeartbeat{Used: 5, Capacity: 1 << 30}, 0))
	c.st.View(func(v *store.View) error {
		r, err := storage.ReadRelay(v, relayID)
		if err != nil || r == nil || r.Stake.Cmp(stake) != 0 || r.Used != 5 || !r.Healthy(v.Head().Height, 60) {
			t.Fatalf("relay %+v %v", r, err)
		}
		if _, err := node.AuditSupply(v); err != nil {
			t.Fatal(err)
		}
		return nil
	})

	// Volumes: owner-prefixed ids, versioned commitments, revocations.
	var vol types.Hash
	oaddr := types.PubkeyToAddress(owner.PublicKey)
	copy(vol[:], oaddr[:])
	vol[31] = 7
	c.ok(c.tx(owner, &mgr, &types.VolumeCreate{Volume: vol, K: 4, M: 2}, 0))
	root := types.Keccak256([]byte("manifest v1"))
	c.ok(c.tx(owner, &mgr, &types.CommitManifest{Volume: vol, Root: root, Version: 1, Size: 100}, 0))
	rs = c.block(c.tx(owner, &mgr, &types.CommitManifest{Volume: vol, Root: root, Version: 1, Size: 100}, 0),
		c.tx(relayKey, &mgr, &types.CommitManifest{Volume: vol, Root: root, Version: 2, Size: 100}, 0))
	if !strings.Contains(rs[0].Error, "VersionConflict") || !strings.Contains(rs[1].Error, "NotVolumeOwner") {
		t.Fatalf("conflicts: %q %q", rs[0].Error, rs[1].Error)
	}
	c.ok(c.tx(owner, &mgr, &types.RevokeToken{Volume: vol, TokenID: types.Hash{9}}, 0))
	c.st.View(func(v *store.View) error {
		vv, _ := storage.ReadVolume(v, vol)
		if vv.Root != root || vv.Version != 1 {
			t.Fatalf("volume %+v", vv)
		}
		if _, ok, _ := v.Get(storage.RevokedKey(vol, types.Hash{9})); !ok {
			t.Fatal("revocation missing")
		}
		return nil
	})
	// Deregistering returns the stake after the unbonding delay.
	before := balanceOf(t, c, relayID)
	rs = c.ok(c.tx(relayKey, &reg, &types.RelayDeregister{}, 0))
	left := new(big.Int).Sub(before, rs[0].FeePaid)
	if got := balanceOf(t, c, relayID); got.Cmp(left) != 0 {
		t.Fatalf("stake returned at once: %s, want %s", got, left)
	}
	c.until(c.head().Height + c.ex.StorageParams().UnbondingBlocks)
	if got := balanceOf(t, c, relayID); got.Cmp(new(big.Int).Add(left, stake)) != 0 {
		t.Fatalf("stake after unbonding %s, want %s", got, new(big.Int).Add(left, stake))
	}
}
