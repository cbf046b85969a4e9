// Package payment is CIP-2 settlement arithmetic (spec 002 "Runner Resource
// Accounting", "Payment and Failure Handling", §5.2 delegation per CIP-13):
// the price min(reported_usage × rates, max_price), the 89 / 10 / 1 split
// between runners, burn and Treasury, the aggregator bonus, delegator shares
// by commission_bps, and refunds — as exact integer transfers. Every
// settlement moves exactly the escrow (max_price + tip): nothing is created
// or lost to rounding; each rounding remainder has a documented recipient.
package payment

import (
	"bytes"
	"errors"
	"fmt"
	"math/big"
	"slices"

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Split of every runner payment, in basis points of the payment X.
const (
	BurnBps     = 1_000 // 10% burned
	TreasuryBps = 100   // 1% to the Treasury
	RunnerBps   = 8_900 // 89% to runner(s) and delegators (receives the rounding remainder)
	bps         = 10_000
)

// DefaultAggregatorBonusBps is the aggregator bonus: 5% of the runners' share,
// carved out of it (so the job never costs more than max_price).
const DefaultAggregatorBonusBps = 500

// Outcome selects the row of the "Payment and Failure Handling" table.
type Outcome uint8

// Table rows.
const (
	Success       Outcome = 1 // 89% of min(usage×rates, max_price) + tip; refund max_price − payment
	RunnerFault   Outcome = 2 // timeout, invalid result, crash: 0 to runners, 100% refund
	ImpossibleJob Outcome = 3 // bounds too tight: pro-rata by progress, remainder refunded
	ActorFault    Outcome = 4 // malformed input: minimum fee, remainder refunded
	ExternalFault Outcome = 5 // API down, model unavailable: pro-rata by progress
)

// Delegation is delegated stake on a runner (CIP-13).
type Delegation struct {
	Delegator types.Address
	Amount    *big.Int
}

// Payee is one runner entitled to payment, with what is needed to price and
// split its share.
type Payee struct {
	Runner        types.Address
	SelfStake     *big.Int
	Delegations   []Delegation
	CommissionBps uint16 // runner's cut of delegator-attributed revenue
	Rates         job.RateCard
	Usage         job.Usage // as reported; clamped to the job's bounds
}

// Input describes one settlement.
type Input struct {
	Outcome   Outcome
	MaxPrice  *big.Int
	Tip       *big.Int
	Bounds    job.ResourceBounds
	Submitter types.Address // refund recipient
	Treasury  types.Address
	// Payees: the agreeing runners on Success; the runners that did the work
	// on ImpossibleJob / ExternalFault / ActorFault. Ignored on RunnerFault.
	Payees []Payee
	// Aggregator receives the bonus on Success if it is a payee.
	Aggregator types.Address
	// ProgressBps (0..10000) is the completed fraction for the pro-rata rows.
	ProgressBps uint16
	// MinFee is the gas-cost-recovery fee of the ActorFault row.
	MinFee *big.Int
}

// Params are governance-tunable settlement constants.
type Params struct {
	AggregatorBonusBps uint16
}

// DefaultParams returns the defaults.
func DefaultParams() Params { return Params{AggregatorBonusBps: DefaultAggregatorBonusBps} }

// Kind labels a transfer.
type Kind uint8

// Transfer kinds.
const (
	KindBurn      Kind = 1
	KindTreasury  Kind = 2
	KindRunner    Kind = 3
	KindDelegator Kind = 4
	KindRefund    Kind = 5
)

// Transfer moves Amount out of the escrow. For KindBurn To is the zero
// address; for KindDelegator Runner names the runner the stake is on.
type Transfer struct {
	Kind   Kind
	To     types.Address
	Runner types.Address
	Amount *big.Int
}

// Settlement is the result: transfers in a fixed order (burn, treasury, each
// payee by address followed by its delegators by address, refund), zero
// amounts omitted, and the totals.
type Settlement struct {
	Transfers []Transfer
	Payment   *big.Int // X, before the split (tip excluded)
	Refund    *big.Int
}

// ErrInput wraps every invalid input.
var ErrInput = errors.New("payment: invalid settlement input")

// Escrow is max_price + tip.
func (in *Input) Escrow() *big.Int { return new(big.Int).Add(nz(in.MaxPrice), nz(in.Tip)) }

func nz(x *big.Int) *big.Int {
	if x == nil {
		return new(big.Int)
	}
	return x
}

func clampUsage(u job.Usage, b job.ResourceBounds) job.Usage {
	return job.Usage{Tokens: min(u.Tokens, b.MaxTokens), WallTimeMs: min(u.WallTimeMs, b.MaxWallTimeMs), MemoryBytes: min(u.MemoryBytes, b.MaxMemoryBytes)}
}

// NeedsReview is the anomaly rule of "Runner Resource Accounting": reported
// wall time above 2 × expected_execution_ms triggers automatic review.
func NeedsReview(u job.Usage, s *job.ResultSchema) bool {
	return u.WallTimeMs > 2*s.ExpectedExecutionMs
}

func (in *Input) validate() error {
	if in.MaxPrice == nil || in.MaxPrice.Sign() <= 0 || nz(in.Tip).Sign() < 0 || nz(in.MinFee).Sign() < 0 {
		return fmt.Errorf("%w: max_price must be > 0, tip and min_fee >= 0", ErrInput)
	}
	if in.ProgressBps > bps {
		return fmt.Errorf("%w: progress_bps > 10000", ErrInput)
	}
	for i, p := range in.Payees {
		if i > 0 && bytes.Compare(in.Payees[i-1].Runner[:], p.Runner[:]) >= 0 {
			return fmt.Errorf("%w: payees must be strictly ascending by address", ErrInput)
		}
		if p.CommissionBps > bps || nz(p.SelfStake).Sign() < 0 || p.Rates.Validate() != nil {
			return fmt.Errorf("%w: payee %s: bad commission, stake or rates", ErrInput, p.Runner)
		}
		for k, d := range p.Delegations {
			if d.Amount == nil || d.Amount.Sign() < 0 || (k > 0 && bytes.Compare(p.Delegations[k-1].Delegator[:], d.Delegator[:]) >= 0) {
				return fmt.Errorf("%w: payee %s: delegations must be non-negative and strictly ascending by delegator", ErrInput, p.Runner)
			}
		}
	}
	switch in.Outcome {
	case Success, ImpossibleJob, ExternalFault, ActorFault:
		if len(in.Payees) == 0 {
			return fmt.Errorf("%w: outcome %d needs payees", ErrInput, in.Outcome)
		}
	case RunnerFault:
	default:
		return fmt.Errorf("%w: unknown outcome %d", ErrInput, in.Outcome)
	}
	return nil
}

// Settle computes the transfers for one job. The rules, with all divisions
// flooring:
//
//	cost_i   = Rates_i.Cost(clamp(Usage_i, bounds))
//	X        = Success:                 min(Σ cost_i, max_price)
//	           ImpossibleJob/External:  min(Σ cost_i, max_price·progress_bps/10^4)
//	           ActorFault:              min(min_fee, max_price)
//	           RunnerFault:             0
//	burn     = X·1000/10^4;  treasury = X·100/10^4;  pool = X − burn − treasury
//	bonus    = pool·bonus_bps/10^4 to the aggregator (Success, aggregator a payee)
//	payee_i  = (pool − bonus)·cost_i/Σcost (equal shares if Σcost = 0 or
//	           ActorFault) + tip/n on Success
//	dust     = all remainders of the payee split → the aggregator if a payee,
//	           else the lowest-address payee
//	refund   = escrow − X − (tip on Success)
//
// Each payee's amount is then split with its delegators (see splitDelegators).
func Settle(in Input, p Params) (Settlement, error) {
	if err := in.validate(); err != nil {
		return Settlement{}, err
	}
	if p.AggregatorBonusBps > bps {
		return Settlement{}, fmt.Errorf("%w: aggregator bonus > 10000 bps", ErrInput)
	}
	escrow := in.Escrow()
	x := new(big.Int)
	costs := make([]*big.Int, len(in.Payees))
	total := new(big.Int)
	for i, py := range in.Payees {
		costs[i] = py.Rates.Cost(clampUsage(py.Usage, in.Bounds))
		total.Add(total, costs[i])
	}
	switch in.Outcome {
	case Success:
		x = minInt(total, in.MaxPrice)
	case ImpossibleJob, ExternalFault:
		x = minInt(total, mulDiv(in.MaxPrice, uint64(in.ProgressBps), bps))
	case ActorFault:
		x = minInt(nz(in.MinFee), in.MaxPrice)
	}
	var st Settlement
	st.Payment = new(big.Int).Set(x)
	burn := mulDiv(x, BurnBps, bps)
	treasury := mulDiv(x, TreasuryBps, bps)
	pool := new(big.Int).Sub(x, burn)
	pool.Sub(pool, treasury)
	st.add(Transfer{Kind: KindBurn, Amount: burn})
	st.add(Transfer{Kind: KindTreasury, To: in.Treasury, Amount: treasury})

	n := len(in.Payees)
	shares := make([]*big.Int, n)
	for i := range shares {
		shares[i] = new(big.Int)
	}
	if in.Outcome != RunnerFault && n > 0 {
		dustTo := 0
		aggIdx := slices.IndexFunc(in.Payees, func(py Payee) bool { return py.Runner == in.Aggregator })
		if aggIdx >= 0 {
			dustTo = aggIdx
		}
		rest := new(big.Int).Set(pool)
		if in.Outcome == Success && aggIdx >= 0 {
			bonus := mulDiv(pool, uint64(p.AggregatorBonusBps), bps)
			shares[aggIdx].Add(shares[aggIdx], bonus)
			rest.Sub(rest, bonus)
		}
		weights := costs
		if total.Sign() == 0 || in.Outcome == ActorFault {
			weights = make([]*big.Int, n)
			for i := range weights {
				weights[i] = big.NewInt(1)
			}
		}
		distribute(rest, weights, shares, dustTo)
		if in.Outcome == Success {
			ones := make([]*big.Int, n)
			for i := range ones {
				ones[i] = big.NewInt(1)
			}
			distribute(nz(in.Tip), ones, shares, dustTo)
		}
	}
	for i, py := range in.Payees {
		st.Transfers = append(st.Transfers, splitDelegators(py, shares[i])...)
	}
	paidOut := new(big.Int)
	for _, t := range st.Transfers {
		paidOut.Add(paidOut, t.Amount)
	}
	st.Refund = new(big.Int).Sub(escrow, paidOut)
	if st.Refund.Sign() < 0 {
		return Settlement{}, fmt.Errorf("payment: internal error: payout %s exceeds escrow %s", paidOut, escrow)
	}
	st.add(Transfer{Kind: KindRefund, To: in.Submitter, Amount: st.Refund})
	return st, nil
}

func (s *Settlement) add(t Transfer) {
	if t.Amount.Sign() > 0 {
		s.Transfers = append(s.Transfers, t)
	}
}

// distribute adds amount·w_i/Σw to shares[i] (floor) and the remainder to
// shares[dustTo].
func distribute(amount *big.Int, weights, shares []*big.Int, dustTo int) {
	sum := new(big.Int)
	for _, w := range weights {
		sum.Add(sum, w)
	}
	if sum.Sign() == 0 || amount.Sign() == 0 {
		shares[dustTo].Add(shares[dustTo], amount)
		return
	}
	given := new(big.Int)
	for i, w := range weights {
		s := new(big.Int).Mul(amount, w)
		s.Quo(s, sum)
		shares[i].Add(shares[i], s)
		given.Add(given, s)
	}
	shares[dustTo].Add(shares[dustTo], new(big.Int).Sub(amount, given))
}

// splitDelegators splits a payee's amount P with its delegators (CIP-13):
//
//	delegated = Σ delegations;  effective = self_stake + delegated
//	D         = P·delegated/effective            (delegator-attributed revenue)
//	pool      = D − D·commission_bps/10^4        (runner keeps its commission)
//	d_k       = pool·amount_k/delegated
//	runner    = P − Σ d_k                         (commission + own share + dust)
func splitDelegators(py Payee, amount *big.Int) []Transfer {
	out := []Transfer{}
	delegated := new(big.Int)
	for _, d := range py.Delegations {
		delegated.Add(delegated, d.Amount)
	}
	effective := new(big.Int).Add(nz(py.SelfStake), delegated)
	runner := new(big.Int).Set(amount)
	var dts []Transfer
	if delegated.Sign() > 0 && amount.Sign() > 0 {
		d := new(big.Int).Mul(amount, delegated)
		d.Quo(d, effective)
		pool := new(big.Int).Sub(d, mulDiv(d, uint64(py.CommissionBps), bps))
		for _, dl := range py.Delegations {
			share := new(big.Int).Mul(pool, dl.Amount)
			share.Quo(share, delegated)
			runner.Sub(runner, share)
			if share.Sign() > 0 {
				dts = append(dts, Transfer{Kind: KindDelegator, To: dl.Delegator, Runner: py.Runner, Amount: share})
			}
		}
	}
	if runner.Sign() > 0 {
		out = append(out, Transfer{Kind: KindRunner, To: py.Runner, Runner: py.Runner, Amount: runner})
	}
	return append(out, dts...)
}

func mulDiv(x *big.Int, num, den uint64) *big.Int {
	r := new(big.Int).Mul(x, new(big.Int).SetUint64(num))
	return r.Quo(r, new(big.Int).SetUint64(den))
}

func minInt(a, b *big.Int) *big.Int {
	if a.Cmp(b) <= 0 {
		return new(big.Int).Set(a)
	}
	return new(big.Int).Set(b)
}
