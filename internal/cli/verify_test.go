package cli

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/consensus/bls"
	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/internal/cli/verify"
)

// TestVerifyRefusals: --verify never prints an unverified value. Without
// a trusted genesis, with a genesis that has no validator set, against a
// node that cannot anchor a proof (a devnet has no QCs), and for actor
// state without one exact key, the command fails with a clear error and
// prints nothing as verified. (The success path runs against a real
// testnet in e2e TestTestnetLightClientVerify.)
func TestVerifyRefusals(t *testing.T) {
	h := newHarness(t)
	h.must("keys", "new", "alice", "--light-kdf")
	h.must("faucet", "alice", "--value", "5")

	key, err := bls.KeyFromSeed(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	multi := filepath.Join(t.TempDir(), "genesis.json")
	g := genesis.Testnet(1_700_000_000_000, []genesis.Validator{{Address: types.Address{1}, Stake: 10_000,
		BLSKey: key.PublicKey().Bytes(), BLSPoP: key.ProvePossession().Bytes()}}, types.Address{2}, genesis.Consensus{})
	if err := g.Save(multi); err != nil {
		t.Fatal(err)
	}
	dev := filepath.Join(t.TempDir(), "dev.json")
	if err := genesis.Dev(1_700_000_000_000, types.Address{1}, types.Address{2}).Save(dev); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"account", "show", "alice", "--verify"}, "--genesis"},
		{[]string{"account", "show", "alice", "--verify", "--genesis", dev}, "no BLS validators"},
		{[]string{"account", "show", "alice", "--verify", "--genesis", multi}, "verification FAILED"},
		{[]string{"account", "show", "alice", "--verify", "--genesis", multi, "--json"}, "verification FAILED"},
		{[]string{"actor", "state", "alice", "--verify", "--genesis", multi}, "one storage key"},
		{[]string{"actor", "state", "alice", "count", "--verify", "--genesis", multi}, "verification FAILED"},
	} {
		out, err := h.run("", c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("cowboy %s: err %v, want %q", strings.Join(c.args, " "), err, c.want)
		}
		if out != "" {
			t.Errorf("cowboy %s printed %q", strings.Join(c.args, " "), out)
		}
	}
	if _, err := h.run("", "account", "show", "alice", "--verify"); !errors.Is(err, verify.ErrNoGenesis) {
		t.Errorf("without --genesis: %v", err)
	}
}
