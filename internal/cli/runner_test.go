package cli

import (
	"context"
	"crypto/ecdsa"
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

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
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
		addr, err := (&Factory{Home: h.home}).ResolveAddress(n)
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
		"--manifest", "../../examples/jobs/oracle.manifest.json", "--init-payload", `{"timeout_blocks": 5000}`))
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
	j, err := c.Jobs().Get(ctx, id)
	if err != nil || j.Status != job.StateAssigned || len(j.Committee) != 3 {
		t.Fatalf("job %s: %+v %v", id, j, err)
	}
	ks, err := keystore.Open(filepath.Join(h.home, "keys"))
	if err != nil {
		t.Fatal(err)
	}
	var last types.Hash
	var sent []types.Hash
	send := func(tx *types.Tx, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		sent = append(sent, tx.Hash())
	}
	waitAll := func() {
		t.Helper()
		for _, h := range sent {
			last = h
			wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			r, err := c.Chain().WaitForReceipt(wctx, h)
			cancel()
			if err != nil || r.Receipt == nil || r.Receipt.Status != "success" {
				t.Fatalf("tx %s: %+v %v", h, r.Receipt, err)
			}
		}
		sent = nil
	}
	wait := func(tx *types.Tx, err error) { t.Helper(); send(tx, err); waitAll() }
	result := []byte(`{"price": 97000.5}`)
	var reveals []verify.Reveal
	keys := map[types.Address]*ecdsa.PrivateKey{}
	for _, n := range names {
		addr, _ := (&Factory{Home: h.home}).ResolveAddress(n)
		key, err := ks.Unlock(n, "pw")
		if err != nil {
			t.Fatal(err)
		}
		keys[addr] = key
		sig := verify.Sign(eds[addr], id, addr, result, nil)
		reveals = append(reveals, verify.Reveal{Runner: addr, Result: result, Signature: sig})
	}
	slices.SortFunc(reveals, func(a, b verify.Reveal) int { return strings.Compare(string(a.Runner[:]), string(b.Runner[:])) })
	agreed := []types.Address{}
	for _, r := range reveals {
		agreed = append(agreed, r.Runner)
	}
	// The devnet's aggregator window is 10 blocks (20 ms each here): commit
	// all at once, and have the aggregator's submission signed beforehand
	// (its nonce follows its commit) so that it goes out as soon as the job
	// is committed.
	var subTx *types.Tx
	for _, rv := range reveals {
		tx, err := c.Account(keys[rv.Runner]).Jobs().Commit(ctx, id, verify.Commitment(rv.Result, rv.Signature), sdk.TxOptions{})
		send(tx, err)
		if rv.Runner == j.Aggregator {
			sub := &verify.Submission{Claim: verify.VerifiedResult{JobID: id, ResultHash: types.Keccak256(result), Agreed: agreed,
				Dissented: []types.Address{}}, Reveals: reveals}
			enc, err := sub.Encode()
			if err != nil {
				t.Fatal(err)
			}
			nonce, verifier := tx.Nonce()+1, types.ResultVerifierAddress
			if subTx, err = c.Account(keys[rv.Runner]).BuildTx(ctx, sdk.TxRequest{To: &verifier, Instruction: &types.SubmitResult{JobID: id, Submission: enc},
				ExpectCycles: sdk.OffchainExpectCycles, ExpectCells: sdk.OffchainExpectCells, Options: sdk.TxOptions{Nonce: &nonce}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	sent = nil
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		if jj, err := c.Jobs().Get(ctx, id); err == nil && jj.Status == job.StateCommitted {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("job not committed: %+v %v", jj, err)
		}
	}
	if _, err := c.Chain().Submit(ctx, subTx); err != nil {
		t.Fatal(err)
	}
	wait(subTx, nil)
	// The callback arrives as a message in a later block.
	deadline := time.Now().Add(10 * time.Second)
	for out := h.must("actor", "query", oracle, "latest"); !strings.Contains(out, "97000.5"); out = h.must("actor", "query", oracle, "latest") {
		if time.Now().After(deadline) {
			r, _ := c.Chain().Tx(ctx, last)
			t.Fatalf("oracle latest: %s\n%+v", out, r.Receipt.Events)
		}
		time.Sleep(50 * time.Millisecond)
	}
	out := h.must("job", "show", id.String())
	// The devnet's challenge window is 5 blocks: the job may already be settled.
	if !strings.Contains(out, "verified") && !strings.Contains(out, "finalized") {
		t.Fatalf("job show: not verified:\n%s", out)
	}
	for _, want := range []string{"majority_vote", "Aggregator  " + j.Aggregator.String(), "Commitment", "97000.5", "Callback    verified delivered at"} {
		if !strings.Contains(out, want) {
			t.Fatalf("job show lacks %q:\n%s", want, out)
		}
	}
	// Anyone can recompute the committee from the stored snapshot.
	sel := strings.Fields(h.must("job", "select", "--job", id.String()))
	if len(sel) < 3 || !slices.Equal(sel[:3], []string{j.Committee[0].String(), j.Committee[1].String(), j.Committee[2].String()}) {
		t.Fatalf("job select --job: %v, committee %v", sel, j.Committee)
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

// TestStakingAndEntitlementCommands: delegation, commission and unbonding
// through the CLI, then a runner pool granted with `pool grant` and read
// back with `entitlement list|check`.
func TestStakingAndEntitlementCommands(t *testing.T) {
	h := newActorHarness(t)
	for _, n := range []string{"r1", "dave", "owner"} {
		h.must("keys", "new", n, "--light-kdf")
		h.must("faucet", n, "--value", "20000")
	}
	h.must("runner", "register", "--from", "r1", "--result-key", "0x"+strings.Repeat("22", 32), "--job-types", "http", "--stake", "100")
	h.must("runner", "commission", "500", "--from", "r1")
	if out, err := h.run("", "runner", "delegate", "r1", "901", "--from", "dave"); err == nil || !strings.Contains(out+err.Error(), "InsufficientSelfBond") {
		t.Fatalf("over-delegation: %v %s", err, out)
	}
	h.must("runner", "delegate", "r1", "300", "--from", "dave")
	out := h.must("runner", "status", "r1")
	for _, want := range []string{"100 CBY self + 300 CBY delegated by 1 = 400 CBY effective", "Commission  500 bps; eligible true"} {
		if !strings.Contains(out, want) {
			t.Fatalf("runner status lacks %q:\n%s", want, out)
		}
	}
	if out := h.must("runner", "delegations", "r1"); !strings.Contains(out, "300 CBY") {
		t.Fatalf("delegations: %s", out)
	}
	h.must("runner", "undelegate", "r1", "100", "--from", "dave")
	if out := h.must("runner", "unbonding", "--from", "dave"); !strings.Contains(out, "100 CBY from runner") {
		t.Fatalf("unbonding: %s", out)
	}

	out = h.must("pool", "grant", "gpu", "r1", "--from", "owner")
	m := regexp.MustCompile(`Entitlement (0x[0-9a-f]{64})`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("pool grant printed no id: %s", out)
	}
	if out := h.must("entitlement", "list", "r1"); !strings.Contains(out, m[1]) || !strings.Contains(out, "join_pool:gpu on pool:gpu") {
		t.Fatalf("entitlement list: %s", out)
	}
	if out := h.must("entitlement", "check", "r1", "--scope", "pool:gpu", "--action", "join_pool:gpu"); !strings.HasSuffix(strings.TrimSpace(out), "allowed") {
		t.Fatalf("check: %s", out)
	}
	if out, err := h.run("", "pool", "grant", "gpu", "dave", "--from", "dave"); err == nil || !strings.Contains(out+err.Error(), "Unauthorized") {
		t.Fatalf("foreign pool grant: %v %s", err, out)
	}
	// Roles: owner's namespace role for dave.
	out = h.must("entitlement", "role-create", "ops", "--scopes", "namespace:build", "--actions", "custom:deploy", "--from", "owner")
	rm := regexp.MustCompile(`Role (0x[0-9a-f]{64})`).FindStringSubmatch(out)
	if rm == nil {
		t.Fatalf("role-create printed no id: %s", out)
	}
	h.must("entitlement", "role-assign", rm[1], "dave", "--from", "owner")
	if out := h.must("entitlement", "check", "dave", "--scope", "namespace:build", "--action", "custom:deploy"); !strings.HasSuffix(strings.TrimSpace(out), "allowed") {
		t.Fatalf("check via role: %s", out)
	}
	h.must("entitlement", "role-revoke", rm[1], "dave", "--from", "owner")
	if out := h.must("entitlement", "check", "dave", "--scope", "namespace:build", "--action", "custom:deploy"); !strings.HasSuffix(strings.TrimSpace(out), "denied") {
		t.Fatalf("check after role revoke: %s", out)
	}
	h.must("entitlement", "revoke", m[1], "--from", "owner")
	if out := h.must("entitlement", "check", "r1", "--scope", "pool:gpu", "--action", "join_pool:gpu"); !strings.HasSuffix(strings.TrimSpace(out), "denied") {
		t.Fatalf("check after revoke: %s", out)
	}
}
