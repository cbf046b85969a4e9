package cli

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/offchain/verify"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/cowboy-foundation/cowboy/sdk/keystore"
)

// TestRunnerAndJobCommands runs examples/jobs/oracle.py end to end on a
// devnet node: three runners register through the CLI, the oracle actor
// submits an HTTP job, the committee commits and the aggregator submits
// signed results (SDK), the actor's callback stores the verified price, and
// runner list/status and job show report it all.
func TestRunnerAndJobCommands(t *testing.T) {
	h := newActorHarness(t)
	h.must("keys", "new", "alice", "--light-kdf")
	h.must("faucet", "alice", "--value", "10")
	names := []string{"r1", "r2", "r3"}
	eds := map[types.Address]ed25519.PrivateKey{}
	for _, n := range names {
		h.must("keys", "new", n, "--light-kdf")
		h.must("faucet", n, "--value", "20000")
		seed := sha256.Sum256([]byte("runner " + n))
		keyFile := writeFile(t, n+".ed25519", hex.EncodeToString(seed[:]))
		out := h.must("runner", "register", "--from", n, "--result-key-file", keyFile, "--job-types", "http",
			"--domains", "api.example.com", "--base", "0.01", "--stake", "10000")
		if !strings.Contains(out, "success") {
			t.Fatalf("register %s: %s", n, out)
		}
		addr, err := (&Factory{Home: h.home}).resolveAddress(n)
		if err != nil {
			t.Fatal(err)
		}
		eds[addr] = ed25519.NewKeyFromSeed(seed[:])
	}
	if out := h.must("runner", "list"); strings.Count(out, "healthy") != 3 || !strings.Contains(out, "rep 100") {
		t.Fatalf("runner list: %s", out)
	}
	// Too little stake is refused by the chain (the devnet genesis sets the
	// minimum to 10 CBY).
	h.must("keys", "new", "poor", "--light-kdf")
	h.must("faucet", "poor", "--value", "200")
	if out, err := h.run("", "runner", "register", "--from", "poor", "--result-key", "0x"+strings.Repeat("11", 32), "--stake", "5"); err == nil || !strings.Contains(out+err.Error(), "InsufficientStake") {
		t.Fatalf("small stake: %v %s", err, out)
	}

	src, err := os.ReadFile("../../examples/jobs/oracle.py")
	if err != nil {
		t.Fatal(err)
	}
	oracle := deployed(t, h.must("actor", "deploy", "--code", writeFile(t, "oracle.py", string(src)), "--salt", "o", "--value", "1", "--from", "alice",
		"--init-payload", `{"timeout_blocks": 5000}`))
	// Devnet blocks come every 20 ms here: heartbeat so that all three are
	// within the 60-block health window.
	for _, n := range names {
		h.must("runner", "heartbeat", "--from", n)
	}
	h.must("actor", "call", oracle, "request", "--from", "alice", "--payload", `["https://api.example.com/btc", "api.example.com"]`)
	m := regexp.MustCompile(`0x[0-9a-f]{64}`).FindString(h.must("actor", "query", oracle, "pending"))
	if m == "" {
		t.Fatal("no pending job id")
	}
	id, _ := types.ParseHash(m)
	c := sdk.New(h.url)
	ctx := context.Background()
	j, err := c.Job(ctx, id)
	if err != nil || j.Status != "assigned" || len(j.Committee) != 3 {
		t.Fatalf("job %s: %+v %v", id, j, err)
	}
	ks, err := keystore.Open(filepath.Join(h.home, "keys"))
	if err != nil {
		t.Fatal(err)
	}
	var last types.Hash
	wait := func(tx *types.Tx, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		last = tx.Hash()
		wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		r, err := c.WaitForReceipt(wctx, tx.Hash())
		if err != nil || r.Receipt == nil || r.Receipt.Status != "success" {
			t.Fatalf("tx %s: %+v %v", tx.Hash(), r.Receipt, err)
		}
	}
	result := []byte(`{"price": 97000.5}`)
	var reveals []verify.Reveal
	var aggKey string
	for _, n := range names {
		addr, _ := (&Factory{Home: h.home}).resolveAddress(n)
		key, err := ks.Unlock(n, "pw")
		if err != nil {
			t.Fatal(err)
		}
		sig := verify.Sign(eds[addr], id, addr, result, nil)
		reveals = append(reveals, verify.Reveal{Runner: addr, Result: result, Signature: sig})
		wait(c.CommitResult(ctx, key, id, verify.Commitment(result, sig), sdk.TxOptions{}))
		if addr == j.Aggregator {
			aggKey = n
		}
	}
	slices.SortFunc(reveals, func(a, b verify.Reveal) int { return strings.Compare(string(a.Runner[:]), string(b.Runner[:])) })
	agreed := []types.Address{}
	for _, r := range reveals {
		agreed = append(agreed, r.Runner)
	}
	key, err := ks.Unlock(aggKey, "pw")
	if err != nil {
		t.Fatal(err)
	}
	wait(c.SubmitVerifiedResult(ctx, key, &verify.Submission{Claim: verify.VerifiedResult{JobID: id, ResultHash: types.Keccak256(result),
		Agreed: agreed, Dissented: []types.Address{}}, Reveals: reveals}, sdk.TxOptions{}))
	if out := h.must("actor", "query", oracle, "latest"); !strings.Contains(out, "97000.5") {
		r, _ := c.Tx(ctx, last)
		t.Fatalf("oracle latest: %s\n%+v", out, r.Receipt.Messages)
	}
	out := h.must("job", "show", id.String())
	for _, want := range []string{"verified", "majority_vote", "Aggregator  " + j.Aggregator.String(), "Commitment", "97000.5"} {
		if !strings.Contains(out, want) {
			t.Fatalf("job show lacks %q:\n%s", want, out)
		}
	}
	// A job submitted from a spec file by an account; the oracle gets the callback.
	spec, err := os.ReadFile("../../examples/jobs/spec.json")
	if err != nil {
		t.Fatal(err)
	}
	specFile := writeFile(t, "spec.json", strings.Replace(string(spec), `"actor": "0x0000000000000000000000000000000000000000"`, `"actor": "`+oracle+`"`, 1))
	for _, n := range names {
		h.must("runner", "heartbeat", "--from", n)
	}
	out = h.must("job", "submit", "--spec", specFile, "--from", "alice")
	if !strings.Contains(out, "JobSubmitted") || !strings.Contains(out, "JobAssigned") {
		t.Fatalf("job submit: %s", out)
	}
	id2 := regexp.MustCompile(`Job id: (0x[0-9a-f]{64})`).FindStringSubmatch(out)
	if id2 == nil {
		t.Fatalf("job submit printed no job id: %s", out)
	}
	if out := h.must("job", "show", id2[1]); !strings.Contains(out, "assigned") || !strings.Contains(out, "http, majority_vote") {
		t.Fatalf("job show (submitted from a file): %s", out)
	}
	if out := h.must("runner", "status", names[0]); !strings.Contains(out, "Reputation  100") || !strings.Contains(out, "1 active of 4") {
		t.Fatalf("runner status: %s", out)
	}
}
