package execution_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/offchain/verify"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/system/jobs"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Failure rows of spec 002 "Payment and Failure Handling" not covered by
// offchain_test.go, each with exact balances and the supply audit.

const schemaJSON = `{"type":"object","required":["price"],"properties":{"price":{"type":"number"}}}`

// submitSchemaJob has a fresh oracle (MajorityVote over /price, 3 runners)
// submit a job whose results must match schemaJSON.
func submitSchemaJob(t *testing.T, c *chain, owner *ecdsa.PrivateKey, maxPrice *big.Int) (types.Address, types.Hash) {
	t.Helper()
	src := strings.Replace(oracleActor, `"data_format": 3,`, `"data_format": 3, "json_schema": b'`+schemaJSON+`',`, 1)
	salt++
	oracle := deployValue(c, owner, src, fmt.Sprint("s", salt), genesis.CBY(50), nil)
	rs := c.ok(c.tx(owner, &oracle, &types.Call{Handler: "ask", Args: cborArgs([]any{"https://api.example.com/p", maxPrice, 0, 5})}, 0))
	var raw []byte
	if err := codec.Unmarshal(rs[0].Return, &raw); err != nil {
		t.Fatal(err)
	}
	id, _ := types.BytesToHash(raw)
	return oracle, id
}

// commitAndSubmit commits every reveal and has the aggregator submit them
// with claim (computed locally when nil).
func commitAndSubmit(t *testing.T, c *chain, id types.Hash, rmap map[types.Address]testRunner, reveals []verify.Reveal) *types.Receipt {
	t.Helper()
	disp, verifier := types.JobDispatcherAddress, types.ResultVerifierAddress
	var txs []*types.Tx
	for _, rv := range reveals {
		txs = append(txs, c.tx(rmap[rv.Runner].key, &disp, &types.CommitResult{JobID: id, Commitment: verify.Commitment(rv.Result, rv.Signature)}, 0))
	}
	c.ok(txs...)
	j := readJob(t, c, id)
	slices.SortFunc(reveals, func(a, b verify.Reveal) int { return bytes.Compare(a.Runner[:], b.Runner[:]) })
	keys := map[types.Address]ed25519.PublicKey{}
	for _, rv := range reveals {
		keys[rv.Runner] = rmap[rv.Runner].ed.Public().(ed25519.PublicKey)
	}
	out, _ := verify.Verify(verify.Input{Spec: &j.Spec, Commitments: j.Commitments, Keys: keys, Reveals: reveals})
	sub := verify.Submission{Claim: out.Claim(id), Reveals: reveals}
	enc, err := sub.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return c.ok(c.tx(rmap[j.Aggregator].key, &verifier, &types.SubmitResult{JobID: id, Submission: enc}, 0))[0]
}

func TestJobSchemaViolationDissents(t *testing.T) {
	alice, _ := genKey()
	c, runners := newJobChain(t, 3, alice)
	rmap := byAddr(runners)
	oracle, id := submitSchemaJob(t, c, alice, genesis.CBY(1))
	j := readJob(t, c, id)
	var bad types.Address
	var reveals []verify.Reveal
	for _, a := range j.Runners {
		res := `{"price": 42}`
		if a != j.Aggregator && bad == (types.Address{}) {
			bad, res = a, `{"price": "42"}` // a string: violates the schema
		}
		reveals = append(reveals, rmap[a].reveal(id, res))
	}
	rs := commitAndSubmit(t, c, id, rmap, reveals)
	if !hasEvent(rs, types.ResultVerifierAddress, "JobVerified") {
		t.Fatalf("verification %+v", rs)
	}
	j = readJob(t, c, id)
	if len(j.Agreed) != 2 || !slices.Equal(j.Dissented, []types.Address{bad}) {
		t.Fatalf("agreed %v dissented %v (bad %s)", j.Agreed, j.Dissented, bad)
	}
	before := balances(t, c, append(slices.Clone(j.Runners), oracle, types.TreasuryAddress)...)
	burnBefore := burned(t, c)
	for readJob(t, c, id).State != job.StateFinalized {
		c.ok()
	}
	// Only the two schema-conforming runners are paid (bounds priced at the
	// base rate, no reports); the violator gets nothing.
	x := new(big.Int).Mul(runnerBase, big.NewInt(2))
	burn, treas := mulDiv(x, 1_000, 10_000), mulDiv(x, 100, 10_000)
	pool := sub(sub(x, burn), treas)
	bonus := mulDiv(pool, 500, 10_000)
	share := new(big.Int).Quo(sub(pool, bonus), big.NewInt(2))
	want := map[types.Address]*big.Int{oracle: sub(genesis.CBY(1), x), types.TreasuryAddress: treas}
	for _, a := range j.Agreed {
		want[a] = new(big.Int).Set(share)
		if a == j.Aggregator {
			want[a] = add(share, add(bonus, sub(sub(pool, bonus), new(big.Int).Mul(share, big.NewInt(2)))))
		}
	}
	checkDeltas(t, c, before, want)
	if got := sub(burned(t, c), burnBefore); got.Cmp(burn) != 0 {
		t.Fatalf("burned %s, want %s", got, burn)
	}
	auditSupply(t, c)
}

func TestJobFaultRows(t *testing.T) {
	alice, _ := genKey()
	c, runners := newJobChain(t, 3, alice)
	rmap := byAddr(runners)
	maxPrice, tip := genesis.CBY(1), big.NewInt(7)
	base3 := new(big.Int).Mul(runnerBase, big.NewInt(3)) // Σ cost_i: the runners price only a base fee
	for _, tc := range []struct {
		name     string
		fault    uint8
		progress func(i int) uint16
		outcome  uint8
		x        *big.Int
	}{
		// min(Σ cost_i, max_price × lowest progress): the progress cap binds.
		{"impossible", verify.FaultImpossibleJob, func(i int) uint16 { return uint16(100 + 1_000*i) }, 3, mulDiv(maxPrice, 100, 10_000)},
		// Σ cost_i is below the cap.
		{"external", verify.FaultExternalFault, func(i int) uint16 { return 5_000 }, 5, base3},
		// min(Σ base rates, max_price).
		{"actor", verify.FaultActorFault, func(i int) uint16 { return 0 }, 4, base3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			oracle, id, _ := submitOracleJob(t, c, alice, maxPrice, tip, 5)
			j := readJob(t, c, id)
			var reveals []verify.Reveal
			for i, a := range j.Runners {
				rep := verify.Report{Usage: job.Usage{WallTimeMs: 5_000}, Fault: tc.fault, ProgressBps: tc.progress(i)}
				reveals = append(reveals, rmap[a].revealReport(id, `{"error": "cannot"}`, rep))
			}
			before := balances(t, c, append(slices.Clone(j.Runners), oracle, types.TreasuryAddress)...)
			burnBefore := burned(t, c)
			rs := commitAndSubmit(t, c, id, rmap, reveals)
			if !hasEvent(rs, types.ResultVerifierAddress, "JobRejected") {
				t.Fatalf("rejection %+v", rs)
			}
			if j := readJob(t, c, id); j.State != job.StateFailed || j.Fail != job.FailVerification {
				t.Fatalf("job %s %d", j.State, j.Fail)
			}
			var pays *jobs.JobPayments
			c.st.View(func(v *store.View) (err error) { pays, err = jobs.ReadJobPayments(v, id); return err })
			// X split 10/1/89, the 89% equally (equal costs) with the
			// remainder to the aggregator; the tip and the rest refunded.
			burn, treas := mulDiv(tc.x, 1_000, 10_000), mulDiv(tc.x, 100, 10_000)
			pool := sub(sub(tc.x, burn), treas)
			each := new(big.Int).Quo(pool, big.NewInt(3))
			dust := sub(pool, new(big.Int).Mul(each, big.NewInt(3)))
			if pays == nil || pays.Outcome != tc.outcome || pays.Payment.Cmp(tc.x) != 0 || pays.Refund.Cmp(sub(add(maxPrice, tip), tc.x)) != 0 {
				t.Fatalf("payments %+v", pays)
			}
			// Runners also paid transaction fees meanwhile: check their
			// payments in the settlement record, the others' balances exactly.
			paid := map[types.Address]*big.Int{}
			for _, tr := range pays.Transfers {
				if tr.Kind == "runner" {
					paid[tr.To] = tr.Amount
				}
			}
			for _, a := range j.Runners {
				w := new(big.Int).Set(each)
				if a == j.Aggregator {
					w.Add(w, dust)
				}
				if paid[a] == nil || paid[a].Cmp(w) != 0 {
					t.Fatalf("runner %s paid %v, want %s", a, paid[a], w)
				}
			}
			checkDeltas(t, c, map[types.Address]*big.Int{oracle: before[oracle], types.TreasuryAddress: before[types.TreasuryAddress]},
				map[types.Address]*big.Int{oracle: sub(add(maxPrice, tip), tc.x), types.TreasuryAddress: treas})
			if got := sub(burned(t, c), burnBefore); got.Cmp(burn) < 0 {
				t.Fatalf("burned %s, want at least %s", got, burn)
			}
			if b := balanceOf(t, c, types.JobDispatcherAddress); b.Sign() != 0 {
				t.Fatalf("dispatcher keeps %s", b)
			}
			c.ok() // the failure callback
			if got := c.query(oracle, "get", []any{"results"}).([]any); len(got) != 1 || got[0].([]any)[0] != "failed" {
				t.Fatalf("callback %v", got)
			}
			auditSupply(t, c)
		})
	}
}

func TestJobInvalidSignatureMovesNothing(t *testing.T) {
	alice, _ := genKey()
	c, runners := newJobChain(t, 3, alice)
	rmap := byAddr(runners)
	oracle, id, _ := submitOracleJob(t, c, alice, genesis.CBY(1), big.NewInt(0), 5)
	j := readJob(t, c, id)
	_, wrong, _ := genEd25519()
	var reveals []verify.Reveal
	for i, a := range j.Runners {
		r := rmap[a]
		if i == 0 {
			r.ed = wrong
		}
		reveals = append(reveals, r.reveal(id, `{"price": 42}`))
	}
	disp, verifier := types.JobDispatcherAddress, types.ResultVerifierAddress
	var txs []*types.Tx
	for _, rv := range reveals {
		txs = append(txs, c.tx(rmap[rv.Runner].key, &disp, &types.CommitResult{JobID: id, Commitment: verify.Commitment(rv.Result, rv.Signature)}, 0))
	}
	c.ok(txs...)
	slices.SortFunc(reveals, func(a, b verify.Reveal) int { return bytes.Compare(a.Runner[:], b.Runner[:]) })
	agreed := []types.Address{}
	for _, rv := range reveals {
		agreed = append(agreed, rv.Runner)
	}
	enc, _ := (&verify.Submission{Claim: verify.VerifiedResult{JobID: id, ResultHash: types.Keccak256([]byte(`{"price": 42}`)), Agreed: agreed,
		Dissented: []types.Address{}}, Reveals: reveals}).Encode()
	agg := rmap[j.Aggregator]
	aggAddr := agg.addr
	before := balances(t, c, append(slices.Clone(j.Runners), oracle, types.JobDispatcherAddress, types.TreasuryAddress)...)
	rs := c.block(c.tx(agg.key, &verifier, &types.SubmitResult{JobID: id, Submission: enc}, 0))
	if rs[0].Status != types.ReceiptFailed || !strings.Contains(rs[0].Error, "bad signature") {
		t.Fatalf("invalid signature: %+v", rs[0])
	}
	// Only the submitter's fee moved; the job still awaits a valid result.
	checkDeltas(t, c, before, map[types.Address]*big.Int{aggAddr: new(big.Int).Neg(rs[0].FeePaid)})
	if s := readJob(t, c, id).State; s != job.StateCommitted {
		t.Fatalf("job %s", s)
	}
	auditSupply(t, c)
}
