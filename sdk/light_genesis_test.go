package sdk

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/consensus/bls"
	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// TestLightConfigFromGenesis: the light client's reading of a genesis file
// agrees with chain/genesis's own, and a devnet genesis is refused.
func TestLightConfigFromGenesis(t *testing.T) {
	var vals []genesis.Validator
	for i := byte(1); i <= 3; i++ {
		seed := make([]byte, 32)
		seed[0] = i
		k, err := bls.KeyFromSeed(seed)
		if err != nil {
			t.Fatal(err)
		}
		vals = append(vals, genesis.Validator{Address: types.Address{i}, Stake: 1000 * uint64(i),
			BLSKey: k.PublicKey().Bytes(), BLSPoP: k.ProvePossession().Bytes()})
	}
	g := genesis.Testnet(1_700_000_000_000, vals, types.Address{9}, genesis.Consensus{EpochLength: 16})
	path := filepath.Join(t.TempDir(), "genesis.json")
	if err := g.Save(path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := LightConfigFromGenesis(data)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]consensus.Validator, len(vals))
	for i, v := range vals {
		want[i] = consensus.Validator{Address: v.Address, PubKey: v.BLSKey, Stake: v.Stake}
	}
	if cfg.ChainID != g.ChainID || cfg.EpochLength != 16 || !reflect.DeepEqual(cfg.Validators, want) {
		t.Fatalf("config %+v, want chain %d epoch 16 validators %+v", cfg, g.ChainID, want)
	}
	dev := filepath.Join(t.TempDir(), "dev.json")
	if err := genesis.Dev(1_700_000_000_000, types.Address{1}, types.Address{2}).Save(dev); err != nil {
		t.Fatal(err)
	}
	data, _ = os.ReadFile(dev)
	if _, err := LightConfigFromGenesis(data); !errors.Is(err, ErrNoValidatorSet) {
		t.Fatalf("devnet genesis: %v, want ErrNoValidatorSet", err)
	}
	if _, err := LightConfigFromGenesis([]byte("{")); err == nil {
		t.Fatal("garbage genesis accepted")
	}
}
