package treasury_test

import (
	"math/big"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/systemtest"
	"github.com/cowboy-foundation/cowboy/chain/system/treasury"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Disburse pays from the Treasury's balance and records it; an amount
// beyond the balance or not positive is refused with its code.
func TestDisburse(t *testing.T) {
	c := systemtest.New()
	to := types.Address{0xab}
	if err := c.Fund(types.TreasuryAddress, big.NewInt(100)); err != nil {
		t.Fatal(err)
	}
	x := systemtest.Ctx(c)
	if err := treasury.Disburse(x, to, big.NewInt(101)); system.CodeOf(err) != system.CodeTreasuryInsufficient {
		t.Fatalf("overdraft: %v", err)
	}
	if err := treasury.Disburse(x, to, big.NewInt(0)); system.CodeOf(err) != system.CodeInvalidProposal {
		t.Fatalf("zero: %v", err)
	}
	for i := 0; i < 2; i++ {
		if err := treasury.Disburse(x, to, big.NewInt(30)); err != nil {
			t.Fatal(err)
		}
	}
	in, err := treasury.Read(c.State)
	if err != nil || in.Balance.Int64() != 40 || in.Disbursed.Int64() != 60 || in.Disbursements != 2 {
		t.Fatalf("%+v %v", in, err)
	}
	if b, _ := c.Balance(to); b.Int64() != 60 {
		t.Fatalf("recipient %s", b)
	}
	m := treasury.New()
	if m.Name() != "treasury" || len(m.Kinds()) != 0 || m.EndBlock(x) != nil {
		t.Fatal("the Treasury owns no instructions and no end-of-block step")
	}
}
