package runner

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/ethereum/go-ethereum/crypto"
)

// TestToolchainDigestRefused (issue 19 item 5): a job pinning a toolchain
// digest other than the runner's is refused before execution and never
// committed; a job pinning the runner's digest runs and finalizes.
func TestToolchainDigestRefused(t *testing.T) {
	n := newTestNet(t)
	mine, theirs := types.Hash{0x70, 1}, types.Hash{0x70, 2}
	key, _ := crypto.GenerateKey()
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	n.fund(t, types.PubkeyToAddress(key.PublicKey), "100")
	r := &testRunner{key: key, ed: ed, dir: t.TempDir(), exec: &fixedExecutor{out: []byte(`{"price": 1}`)},
		opts: func(o *Options) { o.Executors.SetToolchainDigest(mine) }}
	r.start(t, n)

	spec := httpSpec(1)
	spec.Verification = job.VerificationConfig{Mode: job.ModeNone, Runners: 1}
	spec.ToolchainDigest = theirs
	refused := n.submit(t, spec)
	rec := waitState(t, r, refused, 30*time.Second, StateFailed)
	if r.exec.calls.Load() != 0 {
		t.Fatalf("the executor ran a job pinning another toolchain (record %+v)", rec)
	}
	if j, err := n.client.Jobs().Get(context.Background(), refused); err != nil || len(j.Commitments) != 0 {
		t.Fatalf("refused job committed: %+v %v", j, err)
	}

	spec.ToolchainDigest = mine
	ok := n.submit(t, spec)
	if j := n.waitJob(t, ok, 30*time.Second, finished); j.Status != job.StateFinalized {
		t.Fatalf("job pinning the runner's toolchain: %+v", j)
	}
}
