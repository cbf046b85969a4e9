// Package treasury is the Treasury system actor (0x…08, spec 002 §9,
// §11.2): it holds the protocol's share of fees (1% of every job payment,
// paid by the Job Dispatcher) and its genesis allocation, and pays out only
// when a passed Tier 2 governance proposal executes (Disburse, called by
// the Governance actor). It owns no instructions.
package treasury

import (
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Module is the Treasury plugged into the executor.
type Module struct{}

// New returns the Treasury.
func New() *Module { return &Module{} }

// Name implements system.Module.
func (*Module) Name() string { return "treasury" }

// Kinds implements system.Module: the Treasury has no instructions of its
// own; it is spent through governance.
func (*Module) Kinds() []system.Kind { return nil }

// EndBlock implements system.Module: nothing to do.
func (*Module) EndBlock(system.Tx) error { return nil }

// Stats is the Treasury's record of its outflows (written at the first
// disbursement).
type Stats struct {
	_             struct{} `cbor:",toarray"`
	Disbursed     *big.Int // total paid out
	Disbursements uint64   // number of payments
}

// Info is the Treasury's balance and outflows.
type Info struct {
	Balance       *big.Int
	Disbursed     *big.Int
	Disbursements uint64
}

func statsKey() []byte { return system.Key(types.TreasuryAddress, []byte("stats")) }

// Read is the Treasury's balance and outflows in r.
func Read(r state.Reader) (Info, error) {
	acc, err := state.ReadAccount(r, types.TreasuryAddress)
	if err != nil {
		return Info{}, err
	}
	st, err := system.Get[Stats](r, statsKey(), "treasury stats")
	if err != nil {
		return Info{}, err
	}
	in := Info{Balance: new(big.Int), Disbursed: new(big.Int)}
	if acc != nil && acc.Balance != nil {
		in.Balance.Set(acc.Balance)
	}
	if st != nil {
		in.Disbursed.Set(st.Disbursed)
		in.Disbursements = st.Disbursements
	}
	return in, nil
}

// Disburse pays amount from the Treasury to to, for a passed proposal
// (the caller is the Governance actor). An amount beyond the balance is
// CodeTreasuryInsufficient, with nothing paid.
func Disburse(x system.Tx, to types.Address, amount *big.Int) error {
	if amount == nil || amount.Sign() <= 0 {
		return system.Failf(system.CodeInvalidProposal, "InvalidProposal: disbursement of %v", amount)
	}
	info, err := Read(x.State())
	if err != nil {
		return err
	}
	if info.Balance.Cmp(amount) < 0 {
		return system.Failf(system.CodeTreasuryInsufficient, "TreasuryInsufficient: %s requested, %s held", amount, info.Balance)
	}
	if err := x.MoveValue(types.TreasuryAddress, to, amount); err != nil {
		return err
	}
	st := Stats{Disbursed: info.Disbursed.Add(info.Disbursed, amount), Disbursements: info.Disbursements + 1}
	x.State().Set(statsKey(), codec.MustMarshal(&st))
	x.Emit(types.TreasuryAddress, DisbursedEvent{To: to, Amount: amount})
	return nil
}

// TopicDisbursed is the topic of DisbursedEvent.
const TopicDisbursed = "treasury.disbursed"

// DisbursedEvent records a payment out of the Treasury.
type DisbursedEvent struct {
	To     types.Address `cbor:"to" json:"to"`
	Amount *big.Int      `cbor:"amount" json:"amount"`
}

// Topic implements system.EventData.
func (DisbursedEvent) Topic() string { return TopicDisbursed }
