package execution_test

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/sha256"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/cowboy-foundation/cowboy/attest"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/execution"
	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/node"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/store"
	registry "github.com/cowboy-foundation/cowboy/chain/system/runners"
	"github.com/cowboy-foundation/cowboy/chain/system/secrets"
	"github.com/cowboy-foundation/cowboy/chain/system/tee"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/ethereum/go-ethereum/crypto"
)

// teeRunner is an in-test runner with an enclave: a simulated attester, the
// enclave-held result key and seal key.
type teeRunner struct {
	key  *ecdsa.PrivateKey
	addr types.Address
	ed   ed25519.PrivateKey
	seal *ecdh.PrivateKey
	att  *attest.Simulation
}

// seededKey derives a secp256k1 key from a label, so two test chains share
// a genesis.
func seededKey(t *testing.T, label string) *ecdsa.PrivateKey {
	h := sha256.Sum256([]byte(label))
	k, err := crypto.ToECDSA(h[:])
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func newTEERunner(t *testing.T, label string) teeRunner {
	k := seededKey(t, label)
	h := sha256.Sum256([]byte(label + "/ed"))
	ed := ed25519.NewKeyFromSeed(h[:])
	s := sha256.Sum256([]byte(label + "/seal"))
	seal, err := ecdh.X25519().NewPrivateKey(s[:])
	if err != nil {
		t.Fatal(err)
	}
	p := sha256.Sum256([]byte(label + "/platform"))
	att, err := attest.NewSimulation(ed25519.NewKeyFromSeed(p[:]), attest.SimOptions{UniqueID: bytes.Repeat([]byte{0xe1}, 32), SecurityVersion: 2})
	if err != nil {
		t.Fatal(err)
	}
	return teeRunner{key: k, addr: types.PubkeyToAddress(k.PublicKey), ed: ed, seal: seal, att: att}
}

// attestTx is the runner's tee_attest transaction (evidence binding its
// address, result key and seal key).
func (r teeRunner) attestIn(t *testing.T) *types.TEEAttest {
	rd := attest.ReportDataForKey(r.addr, r.ed.Public().(ed25519.PublicKey), r.seal.PublicKey().Bytes())
	e, err := r.att.Attest(context.Background(), rd)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := e.Encode()
	return &types.TEEAttest{Evidence: b, SealKey: r.seal.PublicKey().Bytes()}
}

// newTEEChain is a dev-id chain (7357) with the given TEE parameters and
// funded keys; min runner stake 10 CBY.
func newTEEChain(t *testing.T, tee execution.TEEParams, keys ...*ecdsa.PrivateKey) *chain {
	c := newChainFrom(t, seededKey(t, "faucet"), keys...)
	ex, err := execution.New(execution.Config{ChainID: c.g.ChainID, Fees: c.g.Fees, VM: sharedEngine(t), TEE: tee,
		Offchain: execution.OffchainParams{MinRunnerStake: genesis.CBY(10), HeartbeatTimeout: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	c.ex = ex
	return c
}

func registerTEE(c *chain, r teeRunner, tee bool) *types.Tx {
	reg := types.RunnerRegistryAddress
	return c.txValue(r.key, &reg, &types.RunnerRegister{ResultKey: types.Bytes(r.ed.Public().(ed25519.PublicKey)),
		JobTypes: []uint64{uint64(job.JobTypeHTTP)}, TEE: tee, RateBase: big.NewInt(1), MaxConcurrentJobs: 4}, genesis.CBY(100))
}

func audit(t *testing.T, c *chain) {
	t.Helper()
	if err := c.st.View(func(v *store.View) error { _, err := node.AuditSupply(v); return err }); err != nil {
		t.Fatal(err)
	}
}

// expectFail checks a failed receipt naming want.
func expectFail(t *testing.T, r *types.Receipt, want string) {
	t.Helper()
	if r.Status != types.ReceiptFailed || !strings.Contains(r.Error, want) {
		t.Fatalf("want failure %q, got status %d %q", want, r.Status, r.Error)
	}
}

// feeOnly checks that each sender paid exactly its receipts' fees.
func feeOnly(t *testing.T, c *chain, before map[types.Address]*big.Int, txs []*types.Tx, rs []*types.Receipt) {
	t.Helper()
	paid := map[types.Address]*big.Int{}
	for i, tx := range txs {
		from, _ := tx.Sender()
		if paid[from] == nil {
			paid[from] = new(big.Int)
		}
		paid[from].Add(paid[from], rs[i].FeePaid)
	}
	for a, p := range paid {
		if got := new(big.Int).Sub(before[a], balanceOf(t, c, a)); got.Cmp(p) != 0 {
			t.Fatalf("%s paid %s, fees %s", a, got, p)
		}
	}
}

func teeBalances(t *testing.T, c *chain, as ...types.Address) map[types.Address]*big.Int {
	m := map[types.Address]*big.Int{}
	for _, a := range as {
		m[a] = balanceOf(t, c, a)
	}
	return m
}

func view[T any](t *testing.T, c *chain, f func(v *store.View) (T, error)) T {
	t.Helper()
	var out T
	if err := c.st.View(func(v *store.View) (err error) { out, err = f(v); return err }); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestTEEVerifierAndSecretsManager(t *testing.T) {
	a, b, cr, d := newTEERunner(t, "a"), newTEERunner(t, "b"), newTEERunner(t, "c"), newTEERunner(t, "d")
	owner, stranger := seededKey(t, "owner"), seededKey(t, "stranger")
	oaddr := types.PubkeyToAddress(owner.PublicKey)
	const ttl = 30
	c := newTEEChain(t, execution.TEEParams{AttestationTTL: ttl}, a.key, b.key, cr.key, d.key, owner, stranger)
	if p := c.ex.TEEParams().Policy; !p.AllowSimulation {
		t.Fatalf("dev chain id did not get the dev policy: %+v", p)
	}
	c.ok(registerTEE(c, a, true), registerTEE(c, b, true), registerTEE(c, cr, true))
	c.ok(registerTEE(c, d, false))
	tv, sm := types.TEEVerifierAddress, types.SecretsManagerAddress
	supplyBefore := view(t, c, func(v *store.View) (*node.Supply, error) { return node.AuditSupply(v) })

	// Attestation: a and b succeed; refusals leave no record and cost only the fee.
	wrongKey := b.attestIn(t)
	wrongKey.SealKey = a.seal.PublicKey().Bytes() // evidence binds b's seal key, not a's
	strangerIn := a.attestIn(t)
	txs := []*types.Tx{c.tx(a.key, &tv, a.attestIn(t), 0), c.tx(b.key, &tv, wrongKey, 0), c.tx(d.key, &tv, d.attestIn(t), 0), c.tx(stranger, &tv, strangerIn, 0)}
	before := teeBalances(t, c, a.addr, b.addr, d.addr, types.PubkeyToAddress(stranger.PublicKey))
	rs := c.block(txs...)
	if rs[0].Status != types.ReceiptSuccess || !hasEvent(rs[0], tv, "AttestationVerified") {
		t.Fatalf("attest a: %+v", rs[0])
	}
	expectFail(t, rs[1], "AttestationRefused")
	expectFail(t, rs[2], "NoTEESupport")
	expectFail(t, rs[3], "NotARunner")
	feeOnly(t, c, before, txs, rs)
	// Verification is paid up front (also by refused evidence); the record's
	// bytes are paid in cells only when stored.
	if rs[0].CyclesUsed < tee.AttestSimCycles || rs[3].CyclesUsed != rs[0].CyclesUsed || rs[0].CellsUsed <= rs[3].CellsUsed {
		t.Fatalf("attestation charge: %d/%d cycles, %d/%d cells", rs[0].CyclesUsed, rs[3].CyclesUsed, rs[0].CellsUsed, rs[3].CellsUsed)
	}
	h := c.head().Height
	att := view(t, c, func(v *store.View) (*tee.Attestation, error) { return tee.ReadAttestation(v, a.addr) })
	if att == nil || att.ExpiresAt != h+ttl || att.VerifiedAt != h || !bytes.Equal(att.SealKey, a.seal.PublicKey().Bytes()) ||
		attest.Backend(att.Backend) != attest.BackendSimulation || att.SecurityVersion != 2 || !bytes.Equal(att.UniqueID, bytes.Repeat([]byte{0xe1}, 32)) {
		t.Fatalf("attestation record %+v", att)
	}
	if v := view(t, c, func(v *store.View) (*tee.Attestation, error) { return tee.ReadAttestation(v, b.addr) }); v != nil {
		t.Fatalf("refused attestation recorded: %+v", v)
	}
	c.ok(c.tx(b.key, &tv, b.attestIn(t), 0))

	// A tee_required Deterministic job selects only attested runners: a and
	// b, never c (declared TEE, no attestation) or d (no TEE).
	spec := &job.JobSpec{JobType: job.JobTypeHTTP, Bounds: job.ResourceBounds{MaxWallTimeMs: 1000, MaxMemoryBytes: 1 << 20},
		Verification: job.VerificationConfig{Mode: job.ModeDeterministic, Runners: 2}, MaxPrice: genesis.CBY(1), Tip: new(big.Int),
		TimeoutBlocks: 50, Callback: job.CallbackInfo{Actor: oaddr, Handler: "on_result"}, TEERequired: true,
		ResultSchema: job.ResultSchema{MaxReturnBytes: 100, ExpectedExecutionMs: 100, DataFormat: job.FormatText}, Input: []byte("x")}
	sb, err := spec.Encode()
	if err != nil {
		t.Fatal(err)
	}
	jd := types.JobDispatcherAddress
	rs = c.ok(c.tx(owner, &jd, &types.SubmitJob{Spec: sb}, 0))
	var idb []byte
	if err := codec.Unmarshal(rs[0].Return, &idb); err != nil || len(idb) != 32 {
		t.Fatalf("job id %x: %v", rs[0].Return, err)
	}
	jobID := types.Hash(idb)
	j := readJob(t, c, jobID)
	want := []types.Address{a.addr, b.addr}
	slices.SortFunc(want, func(x, y types.Address) int { return bytes.Compare(x[:], y[:]) })
	got := slices.Clone(j.Runners)
	slices.SortFunc(got, func(x, y types.Address) int { return bytes.Compare(x[:], y[:]) })
	if j.State != job.StateAssigned || !slices.Equal(got, want) {
		t.Fatalf("tee job: state %s runners %v, want %v", j.State, j.Runners, want)
	}

	// Per-job evidence: a attests its result; a wrong binding, a runner off
	// the committee and an unknown job are refused.
	result := types.Keccak256([]byte("42"))
	resIn := func(r teeRunner, id, bind, claim types.Hash) *types.TEEAttestResult {
		e, _ := r.att.Attest(context.Background(), attest.ReportDataForResult(r.addr, id, bind))
		eb, _ := e.Encode()
		return &types.TEEAttestResult{JobID: id, ResultHash: claim, Evidence: eb}
	}
	rs = c.block(c.tx(a.key, &tv, resIn(a, jobID, result, result), 0), c.tx(b.key, &tv, resIn(b, jobID, result, types.Hash{1}), 0),
		c.tx(cr.key, &tv, resIn(cr, jobID, result, result), 0), c.tx(b.key, &tv, resIn(b, types.Hash{9}, result, result), 0))
	if rs[0].Status != types.ReceiptSuccess || !hasEvent(rs[0], tv, "ResultAttested") {
		t.Fatalf("result attestation: %+v", rs[0])
	}
	expectFail(t, rs[1], "AttestationRefused")
	expectFail(t, rs[2], "NotAttested")
	expectFail(t, rs[3], "NoSuchJob")
	if ok := view(t, c, func(v *store.View) (bool, error) { return tee.ResultAttested(v, jobID, a.addr, result) }); !ok {
		t.Fatal("a's result not attested")
	}
	if ok := view(t, c, func(v *store.View) (bool, error) { return tee.ResultAttested(v, jobID, b.addr, result) }); ok {
		t.Fatal("b's refused result attested")
	}

	// Secrets: put (owner key derived from the account key), grant to the
	// attested runner a, refusals, open on the runner side.
	ownerSeal, err := attest.SealKeyFromSeed(crypto.FromECDSA(owner), "secrets")
	if err != nil {
		t.Fatal(err)
	}
	put := func(name string, pol attest.Policy, plaintext string) (*types.SecretPut, []byte) {
		dek, ct, err := attest.EncryptSecret(detRand(), []byte(plaintext), attest.SecretAAD(oaddr, name))
		if err != nil {
			t.Fatal(err)
		}
		ok, err := attest.Seal(detRand(), ownerSeal.PublicKey().Bytes(), dek, attest.GrantAAD(oaddr, name, oaddr, ownerSeal.PublicKey().Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		pb, _ := pol.Encode()
		return &types.SecretPut{Name: name, Policy: pb, Ciphertext: ct, OwnerKey: ok}, dek
	}
	grant := func(name string, dek []byte, r teeRunner, sealKey []byte) *types.SecretGrant {
		sealed, err := attest.Seal(detRand(), sealKey, dek, attest.GrantAAD(oaddr, name, r.addr, sealKey))
		if err != nil {
			t.Fatal(err)
		}
		return &types.SecretGrant{Name: name, Runner: r.addr, SealKey: sealKey, SealedKey: sealed}
	}
	pinned := attest.Policy{UniqueID: bytes.Repeat([]byte{0xe1}, 32), AllowSimulation: true}
	other := attest.Policy{UniqueID: bytes.Repeat([]byte{0xe2}, 32), AllowSimulation: true}
	p1, dek1 := put("openai", pinned, "sk-live-1")
	p2, dek2 := put("strict", other, "sk-strict")
	c.ok(c.tx(owner, &sm, p1, 0), c.tx(owner, &sm, p2, 0))
	bad := *p1
	bad.Name = "bad name!"
	big1 := *p1
	big1.Name, big1.Ciphertext = "big", make([]byte, 16*1024+1)
	rs = c.block(c.tx(owner, &sm, &bad, 0), c.tx(owner, &sm, &big1, 0), c.tx(owner, &sm, &types.SecretPut{Name: "p", Policy: []byte{0x80}, Ciphertext: p1.Ciphertext, OwnerKey: p1.OwnerKey}, 0))
	expectFail(t, rs[0], "InvalidSecretName")
	expectFail(t, rs[1], "InvalidCiphertext")
	expectFail(t, rs[2], "InvalidPolicy")

	before = teeBalances(t, c, oaddr)
	txs = []*types.Tx{
		c.tx(owner, &sm, grant("openai", dek1, a, a.seal.PublicKey().Bytes()), 0),
		c.tx(owner, &sm, grant("openai", dek1, cr, cr.seal.PublicKey().Bytes()), 0),  // c never attested
		c.tx(owner, &sm, grant("openai", dek1, b, a.seal.PublicKey().Bytes()), 0),    // not b's attested key
		c.tx(owner, &sm, grant("strict", dek2, a, a.seal.PublicKey().Bytes()), 0),    // a's measurement is not the policy's
		c.tx(stranger, &sm, grant("openai", dek1, b, b.seal.PublicKey().Bytes()), 0), // not the owner's secret
	}
	rs = append(c.block(txs[:3]...), c.block(txs[3:]...)...) // four 5M-cycle transactions fill a block
	if rs[0].Status != types.ReceiptSuccess || !hasEvent(rs[0], sm, "SecretGranted") {
		t.Fatalf("grant: %+v", rs[0])
	}
	expectFail(t, rs[1], "NotAttested")
	expectFail(t, rs[2], "StaleSealKey")
	expectFail(t, rs[3], "PolicyMismatch")
	expectFail(t, rs[4], "NoSuchSecret")
	feeOnly(t, c, map[types.Address]*big.Int{oaddr: before[oaddr], types.PubkeyToAddress(stranger.PublicKey): balanceOf(t, c, types.PubkeyToAddress(stranger.PublicKey))}, txs[:4], rs[:4])

	sec := view(t, c, func(v *store.View) (*secrets.Secret, error) { return secrets.ReadSecret(v, oaddr, "openai") })
	g := view(t, c, func(v *store.View) (*secrets.SecretGrant, error) {
		return secrets.ReadSecretGrant(v, oaddr, "openai", a.addr)
	})
	if sec == nil || sec.Version != 1 || sec.Grants != 1 || g == nil || g.Version != 1 {
		t.Fatalf("secret %+v grant %+v", sec, g)
	}
	pt, err := attest.OpenSecret(a.seal, oaddr, "openai", a.addr, g.SealedKey, sec.Ciphertext)
	if err != nil || string(pt) != "sk-live-1" {
		t.Fatalf("runner open: %q %v", pt, err)
	}
	// The owner's own copy opens with its derived key; nobody else's key
	// opens either copy.
	if dek, err := attest.Open(ownerSeal, sec.OwnerKey, attest.GrantAAD(oaddr, "openai", oaddr, ownerSeal.PublicKey().Bytes())); err != nil || !bytes.Equal(dek, dek1) {
		t.Fatalf("owner open: %v", err)
	}
	if _, err := attest.OpenSecret(b.seal, oaddr, "openai", a.addr, g.SealedKey, sec.Ciphertext); err == nil {
		t.Fatal("another enclave opened a's grant")
	}
	if gs := view(t, c, func(v *store.View) ([]*secrets.SecretGrant, error) { return secrets.ListRunnerGrants(v, a.addr) }); len(gs) != 1 || gs[0].Name != "openai" {
		t.Fatalf("runner grant index %+v", gs)
	}

	// A new version drops the grants: the old sealed key opens nothing new.
	p1v2, dek1v2 := put("openai", pinned, "sk-live-2")
	rs = c.ok(c.tx(owner, &sm, p1v2, 0))
	sec = view(t, c, func(v *store.View) (*secrets.Secret, error) { return secrets.ReadSecret(v, oaddr, "openai") })
	if sec.Version != 2 || sec.Grants != 0 {
		t.Fatalf("v2 %+v", sec)
	}
	if _, err := attest.OpenSecret(a.seal, oaddr, "openai", a.addr, g.SealedKey, sec.Ciphertext); err == nil {
		t.Fatal("v1 grant opened v2")
	}
	if gs := view(t, c, func(v *store.View) ([]*secrets.SecretGrant, error) { return secrets.ListRunnerGrants(v, a.addr) }); len(gs) != 0 {
		t.Fatalf("stale runner grants %+v", gs)
	}
	c.ok(c.tx(owner, &sm, grant("openai", dek1v2, a, a.seal.PublicKey().Bytes()), 0), c.tx(owner, &sm, grant("openai", dek1v2, b, b.seal.PublicKey().Bytes()), 0))
	rs = c.block(c.tx(owner, &sm, &types.SecretRevoke{Name: "openai", Runner: b.addr}, 0), c.tx(owner, &sm, &types.SecretRevoke{Name: "openai", Runner: cr.addr}, 0))
	if rs[0].Status != types.ReceiptSuccess {
		t.Fatal(rs[0].Error)
	}
	expectFail(t, rs[1], "NoSuchGrant")
	gs := view(t, c, func(v *store.View) ([]*secrets.SecretGrant, error) {
		return secrets.ListSecretGrants(v, oaddr, "openai")
	})
	if len(gs) != 1 || gs[0].Runner != a.addr {
		t.Fatalf("grants after revoke %+v", gs)
	}
	c.ok(c.tx(owner, &sm, &types.SecretDelete{Name: "openai"}, 0))
	if s := view(t, c, func(v *store.View) ([]*secrets.Secret, error) { return secrets.ListSecrets(v, oaddr) }); len(s) != 1 || s[0].Name != "strict" {
		t.Fatalf("after delete: %+v", s)
	}
	if g := view(t, c, func(v *store.View) (*secrets.SecretGrant, error) {
		return secrets.ReadSecretGrant(v, oaddr, "openai", a.addr)
	}); g != nil {
		t.Fatalf("grant survived delete: %+v", g)
	}

	// Expiry: after the TTL a's attestation is no longer in force — no new
	// grants, and tee_required jobs find no candidates.
	for c.head().Height <= att.ExpiresAt {
		c.ok()
	}
	p3, dek3 := put("late", pinned, "x")
	c.ok(c.tx(owner, &sm, p3, 0))
	rs = c.block(c.tx(owner, &sm, grant("late", dek3, a, a.seal.PublicKey().Bytes()), 0))
	expectFail(t, rs[0], "NotAttested")
	rs = c.ok(c.tx(owner, &jd, &types.SubmitJob{Spec: sb}, 0))
	var id2 []byte
	codec.Unmarshal(rs[0].Return, &id2)
	if j := readJob(t, c, types.Hash(id2)); j.State != job.StateFailed || j.Fail != job.FailNoCandidates {
		t.Fatalf("expired attestations: job %s %d", j.State, j.Fail)
	}

	// Supply: conserved, nothing minted; fees are burned or tipped and the
	// two system actors hold no value.
	audit(t, c)
	supplyAfter := view(t, c, func(v *store.View) (*node.Supply, error) { return node.AuditSupply(v) })
	if supplyAfter.Minted.Cmp(supplyBefore.Minted) != 0 || supplyAfter.Burned.Cmp(supplyBefore.Burned) <= 0 {
		t.Fatalf("supply before %+v after %+v", supplyBefore, supplyAfter)
	}
	if bal := balanceOf(t, c, types.TEEVerifierAddress); bal.Sign() != 0 {
		t.Fatalf("TEE verifier holds %s", bal)
	}
	if bal := balanceOf(t, c, types.SecretsManagerAddress); bal.Sign() != 0 {
		t.Fatalf("secrets manager holds %s", bal)
	}
}

func TestTEEProductionPolicyRefusesSimulation(t *testing.T) {
	a := newTEERunner(t, "a")
	c := newTEEChain(t, execution.TEEParams{Policy: attest.Policy{UniqueID: bytes.Repeat([]byte{0xe1}, 32)}}, a.key)
	c.ok(registerTEE(c, a, true))
	tv := types.TEEVerifierAddress
	rs := c.block(c.tx(a.key, &tv, a.attestIn(t), 0))
	expectFail(t, rs[0], "SIMULATION")
	// Wrong destination and value are refused before execution.
	if _, err := c.ex.CheckTx(c.tx(a.key, &types.SecretsManagerAddress, a.attestIn(t), 0)); err == nil {
		t.Fatal("tee_attest to the secrets manager accepted")
	}
	if _, err := c.ex.CheckTx(c.txValue(a.key, &tv, a.attestIn(t), big.NewInt(1))); err == nil {
		t.Fatal("tee_attest with value accepted")
	}
	audit(t, c)
}

// TestTEEDeterminism applies the same blocks to two executors and demands
// identical state roots and receipts.
func TestTEEDeterminism(t *testing.T) {
	a, owner := newTEERunner(t, "a"), seededKey(t, "owner")
	c1 := newTEEChain(t, execution.TEEParams{}, a.key, owner)
	c2 := newTEEChain(t, execution.TEEParams{}, a.key, owner)
	tv, sm := types.TEEVerifierAddress, types.SecretsManagerAddress
	oaddr := types.PubkeyToAddress(owner.PublicKey)
	pol := attest.DevPolicy()
	pb, _ := pol.Encode()
	dek, ct, _ := attest.EncryptSecret(detRand(), []byte("s"), attest.SecretAAD(oaddr, "k"))
	ok, _ := attest.Seal(detRand(), a.seal.PublicKey().Bytes(), dek, nil)
	sealed, _ := attest.Seal(detRand(), a.seal.PublicKey().Bytes(), dek, attest.GrantAAD(oaddr, "k", a.addr, a.seal.PublicKey().Bytes()))
	blocks := [][]*types.Tx{
		{registerTEE(c1, a, true)},
		{c1.tx(a.key, &tv, a.attestIn(t), 0), c1.tx(owner, &sm, &types.SecretPut{Name: "k", Policy: pb, Ciphertext: ct, OwnerKey: ok}, 0)},
		{c1.tx(owner, &sm, &types.SecretGrant{Name: "k", Runner: a.addr, SealKey: a.seal.PublicKey().Bytes(), SealedKey: sealed}, 0)},
	}
	for _, txs := range blocks {
		r1, r2 := c1.ok(txs...), c2.ok(txs...)
		if types.ReceiptsRoot(r1) != types.ReceiptsRoot(r2) {
			t.Fatal("receipts differ")
		}
		if c1.head().StateRoot != c2.head().StateRoot {
			t.Fatalf("state roots differ at %d", c1.head().Height)
		}
	}
}

// TestTEEAttestationFollowsResultKey: re-registering with another result
// key voids the attestation (it bound the old key) until the runner attests
// again.
func TestTEEAttestationFollowsResultKey(t *testing.T) {
	a, owner := newTEERunner(t, "a"), seededKey(t, "owner")
	c := newTEEChain(t, execution.TEEParams{}, a.key, owner)
	tv := types.TEEVerifierAddress
	c.ok(registerTEE(c, a, true))
	c.ok(c.tx(a.key, &tv, a.attestIn(t), 0))
	policy := c.ex.TEEParams().Policy
	inForce := func() bool {
		return view(t, c, func(v *store.View) (bool, error) {
			rn, err := registry.ReadRunner(v, a.addr)
			if err != nil {
				return false, err
			}
			return tee.Attested(v, rn.Address, rn.ResultKey, v.Head().Height, &policy)
		})
	}
	if !inForce() {
		t.Fatal("fresh attestation not in force")
	}
	h := sha256.Sum256([]byte("a/ed2"))
	a.ed = ed25519.NewKeyFromSeed(h[:])
	c.ok(registerTEE(c, a, true))
	if inForce() {
		t.Fatal("attestation of the old result key still in force")
	}
	c.ok(c.tx(a.key, &tv, a.attestIn(t), 0))
	if !inForce() {
		t.Fatal("re-attestation not in force")
	}
}

// TestTEENoPolicy: a chain that is not the devnet and configures no policy
// refuses all evidence and says why.
func TestTEENoPolicy(t *testing.T) {
	a := newTEERunner(t, "a")
	c := newChainFrom(t, seededKey(t, "faucet"), a.key)
	ex, err := execution.New(execution.Config{ChainID: 99, Fees: c.g.Fees, VM: sharedEngine(t),
		Offchain: execution.OffchainParams{MinRunnerStake: genesis.CBY(10)}})
	if err != nil {
		t.Fatal(err)
	}
	if p := ex.TEEParams().Policy; !p.IsZero() {
		t.Fatalf("policy on a non-dev chain: %+v", p)
	}
	c.ex, c.g.ChainID = ex, 99 // transactions are signed for chain 99 from here on
	c.ok(registerTEE(c, a, true))
	tv := types.TEEVerifierAddress
	expectFail(t, c.block(c.tx(a.key, &tv, a.attestIn(t), 0))[0], "NoTEEPolicy")
}
