package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/node"
)

// setEpochLength rewrites the shared genesis of tn, before anything
// starts, with shorter epochs than the default.
func (tn *tnet) setEpochLength(n uint64) {
	tn.t.Helper()
	for _, nd := range tn.man.Nodes {
		g, err := genesis.Load(node.GenesisPath(nd.Home))
		if err != nil {
			tn.t.Fatal(err)
		}
		g.Consensus.EpochLength = n
		if err := g.Save(node.GenesisPath(nd.Home)); err != nil {
			tn.t.Fatal(err)
		}
	}
}

// cliResult runs the cowboy CLI against d and returns its combined output
// and error, for commands that are expected to fail.
func cliResult(d *daemon, home string, args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(binDir, "cowboy"), append([]string{"--node", d.url(), "--home", home}, args...)...)
	cmd.Env = append(os.Environ(), "COWBOY_PASSWORD=e2e")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestTestnetLightClientVerify runs a 3-validator testnet with 16-block
// epochs and checks `cowboy account show --verify` as a light client
// holding only the genesis: a faucet grant (node0's faucet) read through
// node1 is verified against a certified header of epoch 1 or later (the
// client follows the validator-set hand-offs from the genesis set; the
// output names the QC's signers, k of 3), and the same proof checked
// against another network's genesis (a validator set that never signed)
// is refused with a non-zero exit and without the balance.
func TestTestnetLightClientVerify(t *testing.T) {
	tn := newTestnet(t, 3)
	// 16-block epochs, so that the proof is checked after the client has
	// followed at least one validator-set hand-off.
	d, home, gen := tn.startWithAlice(16)

	// The proof is anchored at the height the latest certified block
	// commits to, which trails the head by a block or two: poll until it
	// shows the grant in epoch 1 or later.
	out := waitVerifiedAlice(t, d, home, gen, false)
	if !strings.Contains(out, "Verified  finalized height") || !strings.Contains(out, "of 3 validators") {
		t.Fatalf("output does not say what it was verified against:\n%s", out)
	}
	t.Logf("%s", out)

	// A light client trusting another network's validators refuses it.
	other := newTestnet(t, 3)
	out, err := cliResult(d, home, "account", "show", "alice", "--verify", "--genesis", node.GenesisPath(other.man.Nodes[0].Home))
	if err == nil || !strings.Contains(out, "verification FAILED") || strings.Contains(out, "Balance") {
		t.Fatalf("verification against a foreign validator set: err %v\n%s", err, out)
	}
	// Without --genesis, --verify says what it needs.
	if out, err := cliResult(d, home, "account", "show", "alice", "--verify"); err == nil || !strings.Contains(out, "--genesis") {
		t.Fatalf("--verify without --genesis: err %v\n%s", err, out)
	}
}

// startWithAlice sets tn's epochs to epochLen blocks, starts its three
// validators, and grants 7 CBY from node0's faucet to a new key "alice"
// in a fresh CLI home. It returns node1 (the node the light client asks),
// that home and the trusted genesis.
func (tn *tnet) startWithAlice(epochLen uint64) (d *daemon, home, gen string) {
	t := tn.t
	t.Helper()
	tn.setEpochLength(epochLen)
	for i := range 3 {
		tn.start(i)
	}
	tn.waitHeight(2, 30*time.Second, 0, 1, 2)
	d = tn.procs[1]
	home = t.TempDir()
	gen = node.GenesisPath(tn.man.Nodes[0].Home)
	cli(t, d, home, "keys", "new", "alice", "--light-kdf")
	if out := cli(t, tn.procs[0], home, "faucet", "alice", "--value", "7"); !strings.Contains(out, "success") {
		t.Fatalf("faucet: %s", out)
	}
	return d, home, gen
}

// waitVerifiedAlice polls `account show alice --verify` on d until the
// verified balance shows the 7 CBY grant, verified in epoch 1 or later:
// the proof is anchored at the height the latest certified block commits
// to, which trails the head by a block or two. A refused verification
// fails the test at once unless tolerate is set (a pruning node may answer
// from a window that is moving).
func waitVerifiedAlice(t *testing.T, d *daemon, home, gen string, tolerate bool) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := cliResult(d, home, "account", "show", "alice", "--verify", "--genesis", gen)
		if err != nil && !tolerate {
			t.Fatalf("account show --verify: %v\n%s", err, out)
		}
		if err == nil && strings.Contains(out, "Balance   7 CBY") && strings.Contains(out, "Verified  finalized height") && !strings.Contains(out, "(epoch 0)") {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("verified balance never showed the grant in epoch 1 or later: %v\n%s", err, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
