package validators_test

import (
	"errors"
	"math/big"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/consensus/bls"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/systemtest"
	"github.com/cowboy-foundation/cowboy/chain/system/validators"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

func cby(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), big.NewInt(1e18)) }

func blsKey(t *testing.T, b byte) *bls.SecretKey {
	seed := make([]byte, 32)
	seed[0] = b
	k, err := bls.KeyFromSeed(seed)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// The registry as a module on its own: registration with stake and
// proof of possession, activation at the epoch boundary, exit, and the
// failure codes and typed events it reports.
func TestRegistryModule(t *testing.T) {
	m := validators.New(validators.Params{EpochLength: 4, MinStake: cby(100)}, 7)
	c := systemtest.New()
	g, n := types.Address{0x0a}, types.Address{0x0b}
	gk, nk := blsKey(t, 1), blsKey(t, 2)
	validators.SetGenesisValidators(c.State, []validators.GenesisValidator{{Address: g, BLSKey: gk.PublicKey().Bytes(), Stake: cby(1000)}}, 0)
	if err := c.Fund(types.ValidatorRegistryAddress, cby(1000)); err != nil {
		t.Fatal(err)
	}
	if err := c.Fund(n, cby(500)); err != nil {
		t.Fatal(err)
	}
	reg := types.ValidatorRegistryAddress
	run := func(from types.Address, value *big.Int, in types.Instruction) *systemtest.Result {
		t.Helper()
		return c.MustRun(t, m, from, reg, value, in)
	}

	// The stateless check: validator instructions go to the registry.
	if _, err := c.Run(m, n, types.StorageManagerAddress, nil, &types.ValidatorExit{}); !errors.Is(err, types.ErrMalformedTx) {
		t.Fatalf("wrong target: %v", err)
	}
	if _, err := c.Run(m, n, reg, big.NewInt(1), &types.ValidatorExit{}); !errors.Is(err, types.ErrMalformedTx) {
		t.Fatalf("value on exit: %v", err)
	}
	// A proof of possession by another key is refused, with its code.
	bad := &types.ValidatorRegister{BLSKey: nk.PublicKey().Bytes(), BLSPoP: gk.ProvePossession().Bytes()}
	if r := run(n, cby(200), bad); r.Code() != system.CodeInvalidProofOfPossession {
		t.Fatalf("foreign PoP: %v", r.Err)
	}
	if r := run(n, cby(50), &types.ValidatorRegister{BLSKey: nk.PublicKey().Bytes(), BLSPoP: nk.ProvePossession().Bytes()}); r.Code() != system.CodeInsufficientStake {
		t.Fatalf("low stake: %v", r.Err)
	}
	r := run(n, cby(200), &types.ValidatorRegister{BLSKey: nk.PublicKey().Bytes(), BLSPoP: nk.ProvePossession().Bytes()})
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if len(r.Events) != 1 || r.Events[0].Topic != validators.TopicValidatorRegistered {
		t.Fatalf("events %+v", r.Events)
	}
	var ev validators.ValidatorRegisteredEvent
	if err := codec.Unmarshal(r.Events[0].Data, &ev); err != nil || ev.Validator != n || ev.Stake.Cmp(cby(200)) != 0 {
		t.Fatalf("event %+v: %v", ev, err)
	}
	if bal, _ := c.Balance(n); bal.Cmp(cby(300)) != 0 {
		t.Fatalf("stake not moved: balance %s", bal)
	}
	// The key is n's now.
	if r := run(g, cby(200), &types.ValidatorRegister{BLSKey: nk.PublicKey().Bytes(), BLSPoP: nk.ProvePossession().Bytes()}); r.Code() != system.CodeBLSKeyInUse {
		t.Fatalf("key reuse: %v", r.Err)
	}
	// Pending until the epoch boundary (height 4), active after.
	for h := uint64(1); h <= 4; h++ {
		c.Env.Height, c.Env.Timestamp = h, 1000*h
		if err := c.EndBlock(m); err != nil {
			t.Fatal(err)
		}
	}
	ep, err := validators.ReadEpoch(c.State)
	if err != nil || ep.Number != 1 || len(ep.Members) != 2 || ep.StartHeight != 5 {
		t.Fatalf("epoch %+v: %v", ep, err)
	}
	if rec, _ := validators.ReadValidator(c.State, n); rec.Status != validators.ValidatorActive {
		t.Fatalf("status %d", rec.Status)
	}
	// Withdrawing before exiting fails; exiting then leaves at the next boundary.
	if r := run(n, nil, &types.ValidatorWithdraw{}); r.Code() != system.CodeNotExiting {
		t.Fatalf("early withdraw: %v", r.Err)
	}
	if r := run(n, nil, &types.ValidatorExit{}); r.Err != nil {
		t.Fatal(r.Err)
	}
	for h := uint64(5); h <= 8; h++ {
		c.Env.Height, c.Env.Timestamp = h, 1000*h
		if err := c.EndBlock(m); err != nil {
			t.Fatal(err)
		}
	}
	if ep, _ := validators.ReadEpoch(c.State); len(ep.Members) != 1 || ep.Members[0].Address != g {
		t.Fatalf("members after exit %+v", ep.Members)
	}
	if r := run(n, nil, &types.ValidatorWithdraw{}); r.Code() != system.CodeStillBonded {
		t.Fatalf("withdraw while unbonding: %v", r.Err)
	}
}
