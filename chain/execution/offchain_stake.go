package execution

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/offchain/payment"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/runners"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Runner staking (spec 002 §5.2, CIP-13): delegations, self-bond changes,
// unbonding tranches and slashing. Every bonded or unbonding amount sits in
// the Runner Registry account (0x…01), so node.AuditSupply holds throughout:
// a slash debits that account and either credits the challenger or records
// the burn.

// Delegation is one delegator's active stake on a runner.
type Delegation struct {
	_         struct{}      `cbor:",toarray"`
	Delegator types.Address `json:"delegator"`
	Amount    *big.Int      `json:"amount"`
	Since     uint64        `json:"since"` // height of the first delegation
}

// Tranche is stake on its way out: released to Owner at Release. Runner is
// the runner it was bonded to (Owner itself for a runner's own self-bond);
// it stays slashable for that runner's faults until withdrawn.
type Tranche struct {
	_       struct{}      `cbor:",toarray"`
	Owner   types.Address `json:"owner"`
	Runner  types.Address `json:"runner"`
	Amount  *big.Int      `json:"amount"`
	Release uint64        `json:"release"`
}

// DelegationKey is the state key of delegator's stake on runner.
func DelegationKey(runner, delegator types.Address) []byte {
	return offKey(types.RunnerRegistryAddress, []byte("deleg/"), runner[:], delegator[:])
}

func delegationPrefix(runner types.Address) []byte {
	return offKey(types.RunnerRegistryAddress, []byte("deleg/"), runner[:])
}

// trancheKey indexes a tranche by owner (withdrawal, the per-owner limit);
// trancheRunnerKey by runner (slashing).
func trancheKey(owner, runner types.Address, release uint64) []byte {
	return offKey(types.RunnerRegistryAddress, []byte("unb/"), owner[:], runner[:], system.BE8(release))
}
func tranchePrefix(owner types.Address) []byte {
	return offKey(types.RunnerRegistryAddress, []byte("unb/"), owner[:])
}
func trancheRunnerKey(runner, owner types.Address, release uint64) []byte {
	return offKey(types.RunnerRegistryAddress, []byte("unbr/"), runner[:], owner[:], system.BE8(release))
}
func trancheRunnerPrefix(runner types.Address) []byte {
	return offKey(types.RunnerRegistryAddress, []byte("unbr/"), runner[:])
}

// ReadDelegations returns runner's delegations in delegator order.
func ReadDelegations(r state.Reader, runner types.Address) ([]Delegation, error) {
	var out []Delegation
	err := r.Scan(delegationPrefix(runner), func(_, v []byte) error {
		var d Delegation
		if err := codec.Unmarshal(v, &d); err != nil {
			return fmt.Errorf("decode delegation: %w", err)
		}
		out = append(out, d)
		return nil
	})
	return out, err
}

// ReadTranches returns owner's unbonding tranches ordered by (runner, release).
func ReadTranches(r state.Reader, owner types.Address) ([]Tranche, error) {
	var out []Tranche
	err := r.Scan(tranchePrefix(owner), func(_, v []byte) error {
		var t Tranche
		if err := codec.Unmarshal(v, &t); err != nil {
			return fmt.Errorf("decode tranche: %w", err)
		}
		out = append(out, t)
		return nil
	})
	return out, err
}

func (x *txExec) saveRunner(rn *Runner) { x.o.Set(RunnerKey(rn.Address), codec.MustMarshal(rn)) }

// addTranche starts unbonding amount of owner's stake on runner, releasing
// at height + UnbondingBlocks (merged with a tranche of the same runner and
// release). force skips the per-owner tranche limit (ejection by slashing
// must not be blockable). It returns the release height.
func (x *txExec) addTranche(owner, runner types.Address, amount *big.Int, force bool) (uint64, error) {
	p := &x.ex.cfg.Offchain
	release := x.env.Height + p.UnbondingBlocks
	if amount.Sign() <= 0 {
		return release, nil
	}
	k := trancheKey(owner, runner, release)
	t := Tranche{Owner: owner, Runner: runner, Amount: new(big.Int), Release: release}
	b, ok, err := x.o.Get(k)
	if err != nil {
		return 0, err
	}
	if ok {
		if err := codec.Unmarshal(b, &t); err != nil {
			return 0, fmt.Errorf("decode tranche: %w", err)
		}
	} else if !force {
		ts, err := ReadTranches(x.o, owner)
		if err != nil {
			return 0, err
		}
		if len(ts) >= p.MaxTranches {
			return 0, failf(system.CodeTooManyTranches, "TooManyTranches: %s already has %d unbonding tranches (withdraw matured ones first)", owner, len(ts))
		}
	}
	t.Amount = new(big.Int).Add(t.Amount, amount)
	x.o.Set(k, codec.MustMarshal(&t))
	x.o.Set(trancheRunnerKey(runner, owner, release), []byte{1})
	return release, nil
}

func (x *txExec) runnerDelegate(from types.Address, in *types.RunnerDelegateStake) error {
	p := &x.ex.cfg.Offchain
	amount := x.tx.Value()
	if amount.Sign() <= 0 {
		return failf(system.CodeInvalidAmount, "InvalidAmount: delegate a positive value")
	}
	if from == in.Runner {
		return failf(system.CodeInvalidDelegation, "InvalidDelegation: a runner adds to its own stake with runner_stake")
	}
	rn, err := x.activeRunner(in.Runner)
	if err != nil {
		return err
	}
	k := DelegationKey(in.Runner, from)
	d := Delegation{Delegator: from, Amount: new(big.Int), Since: x.env.Height}
	b, ok, err := x.o.Get(k)
	if err != nil {
		return err
	}
	if ok {
		if err := codec.Unmarshal(b, &d); err != nil {
			return fmt.Errorf("decode delegation: %w", err)
		}
	} else {
		if rn.Delegators >= p.MaxDelegators {
			return failf(system.CodeTooManyDelegators, "TooManyDelegators: runner %s has the maximum %d delegators", in.Runner, p.MaxDelegators)
		}
		rn.Delegators++
	}
	rn.Delegated = new(big.Int).Add(bigOr0(rn.Delegated), amount)
	if !selfBondOK(bigOr0(rn.Stake), rn.EffectiveStake(), p.MinSelfBondBps) {
		return failf(system.CodeInsufficientSelfBond, "InsufficientSelfBond: runner %s's self-bond %s would fall below %d bps of the effective stake %s",
			in.Runner, rn.Stake, p.MinSelfBondBps, rn.EffectiveStake())
	}
	if err := x.moveValue(from, types.RunnerRegistryAddress, amount); err != nil {
		return err
	}
	d.Amount = new(big.Int).Add(d.Amount, amount)
	x.o.Set(k, codec.MustMarshal(&d))
	x.saveRunner(rn)
	x.emit(types.RunnerRegistryAddress, &runners.StakeDelegatedEvent{Runner: in.Runner, Delegator: from, Amount: amount, Total: d.Amount})
	return nil
}

func (x *txExec) runnerUndelegate(from types.Address, in *types.RunnerUndelegateStake) error {
	if in.Amount == nil || in.Amount.Sign() <= 0 {
		return failf(system.CodeInvalidAmount, "InvalidAmount: undelegate a positive amount")
	}
	rn, err := ReadRunner(x.o, in.Runner)
	if err != nil {
		return err
	}
	k := DelegationKey(in.Runner, from)
	b, ok, err := x.o.Get(k)
	if err != nil {
		return err
	}
	if rn == nil || !ok {
		return failf(system.CodeNoDelegation, "NoDelegation: %s has no stake delegated to %s", from, in.Runner)
	}
	var d Delegation
	if err := codec.Unmarshal(b, &d); err != nil {
		return fmt.Errorf("decode delegation: %w", err)
	}
	if in.Amount.Cmp(d.Amount) > 0 {
		return failf(system.CodeInvalidAmount, "InvalidAmount: %s exceeds the delegation %s", in.Amount, d.Amount)
	}
	release, err := x.addTranche(from, in.Runner, in.Amount, false)
	if err != nil {
		return err
	}
	d.Amount = new(big.Int).Sub(d.Amount, in.Amount)
	if d.Amount.Sign() == 0 {
		x.o.Delete(k)
		rn.Delegators--
	} else {
		x.o.Set(k, codec.MustMarshal(&d))
	}
	rn.Delegated = new(big.Int).Sub(bigOr0(rn.Delegated), in.Amount)
	x.saveRunner(rn)
	x.emit(types.RunnerRegistryAddress, &runners.StakeUndelegatedEvent{Runner: in.Runner, Delegator: from, Amount: in.Amount, Release: release})
	return nil
}

func (x *txExec) runnerStake(from types.Address) error {
	amount := x.tx.Value()
	if amount.Sign() <= 0 {
		return failf(system.CodeInvalidAmount, "InvalidAmount: stake a positive value")
	}
	rn, err := x.activeRunner(from)
	if err != nil {
		return err
	}
	if err := x.moveValue(from, types.RunnerRegistryAddress, amount); err != nil {
		return err
	}
	rn.Stake = new(big.Int).Add(bigOr0(rn.Stake), amount)
	x.saveRunner(rn)
	x.emit(types.RunnerRegistryAddress, &runners.RunnerStakedEvent{Runner: from, Amount: amount, Stake: rn.Stake})
	return nil
}

func (x *txExec) runnerUnstake(from types.Address, in *types.RunnerUnstake) error {
	p := &x.ex.cfg.Offchain
	if in.Amount == nil || in.Amount.Sign() <= 0 {
		return failf(system.CodeInvalidAmount, "InvalidAmount: unstake a positive amount")
	}
	rn, err := x.activeRunner(from)
	if err != nil {
		return err
	}
	if in.Amount.Cmp(bigOr0(rn.Stake)) > 0 {
		return failf(system.CodeInvalidAmount, "InvalidAmount: %s exceeds the self-bond %s", in.Amount, rn.Stake)
	}
	rn.Stake = new(big.Int).Sub(rn.Stake, in.Amount)
	if !p.StakeEligible(rn) {
		return failf(system.CodeInsufficientStake, "InsufficientStake: unstaking %s would break the stake rules (effective %s ≥ %s, self-bond ≥ %d bps); deregister to leave",
			in.Amount, rn.EffectiveStake(), p.MinRunnerStakeFor(rn.MaxJobValue), p.MinSelfBondBps)
	}
	release, err := x.addTranche(from, from, in.Amount, false)
	if err != nil {
		return err
	}
	x.saveRunner(rn)
	x.emit(types.RunnerRegistryAddress, &runners.RunnerUnstakedEvent{Runner: from, Amount: in.Amount, Release: release})
	return nil
}

func (x *txExec) runnerSetCommission(from types.Address, in *types.RunnerSetCommission) error {
	if in.CommissionBps > 10_000 {
		return failf(system.CodeInvalidCommission, "InvalidCommission: commission_bps is 0..10000")
	}
	rn, err := x.activeRunner(from)
	if err != nil {
		return err
	}
	rn.CommissionBps = uint16(in.CommissionBps)
	x.saveRunner(rn)
	x.emit(types.RunnerRegistryAddress, &runners.CommissionSetEvent{Runner: from, CommissionBps: in.CommissionBps})
	return nil
}

// runnerWithdraw pays out every tranche of the sender whose release height
// has been reached.
func (x *txExec) runnerWithdraw(from types.Address) error {
	ts, err := ReadTranches(x.o, from)
	if err != nil {
		return err
	}
	total, matured := new(big.Int), 0
	for _, t := range ts {
		if t.Release > x.env.Height {
			continue
		}
		matured++ // a tranche slashed to nothing is cleared all the same
		total.Add(total, t.Amount)
		x.o.Delete(trancheKey(t.Owner, t.Runner, t.Release))
		x.o.Delete(trancheRunnerKey(t.Runner, t.Owner, t.Release))
	}
	if matured == 0 {
		return failf(system.CodeNothingToWithdraw, "NothingToWithdraw: %s has no matured unbonding tranche", from)
	}
	if total.Sign() > 0 {
		if err := x.moveValue(types.RunnerRegistryAddress, from, total); err != nil {
			return err
		}
	}
	x.emit(types.RunnerRegistryAddress, &runners.StakeWithdrawnEvent{Owner: from, Amount: total})
	return nil
}

// slashRunner takes SlashBps of everything bonded to runner a — self-bond,
// each delegation, and each tranche still unbonding from it — each piece
// rounded down, and returns the total (still in the registry account; the
// caller pays it out). The runner loses SlashThreshold reputation and is
// ejected (status exited, remaining self-bond to unbonding) after
// MaxConsecutiveSlashes.
func (x *txExec) slashRunner(a types.Address) (*big.Int, error) {
	p := &x.ex.cfg.Offchain
	rn, err := ReadRunner(x.o, a)
	if err != nil || rn == nil {
		return new(big.Int), err
	}
	cut := func(v *big.Int) *big.Int {
		c := new(big.Int).Mul(bigOr0(v), new(big.Int).SetUint64(p.SlashBps))
		return c.Quo(c, big.NewInt(10_000))
	}
	total := cut(rn.Stake)
	rn.Stake = new(big.Int).Sub(bigOr0(rn.Stake), total)
	ds, err := ReadDelegations(x.o, a)
	if err != nil {
		return nil, err
	}
	delegated := new(big.Int)
	for _, d := range ds {
		c := cut(d.Amount)
		d.Amount = new(big.Int).Sub(d.Amount, c)
		total.Add(total, c)
		delegated.Add(delegated, d.Amount)
		x.o.Set(DelegationKey(a, d.Delegator), codec.MustMarshal(&d))
	}
	rn.Delegated = delegated
	var tkeys [][]byte
	if err := x.o.Scan(trancheRunnerPrefix(a), func(k, _ []byte) error {
		tkeys = append(tkeys, bytes.Clone(k))
		return nil
	}); err != nil {
		return nil, err
	}
	pre := len(trancheRunnerPrefix(a))
	for _, k := range tkeys {
		owner, _ := types.BytesToAddress(k[pre : pre+20])
		release := binary.BigEndian.Uint64(k[pre+20:])
		tk := trancheKey(owner, a, release)
		b, ok, err := x.o.Get(tk)
		if err != nil || !ok {
			return nil, fmt.Errorf("tranche index of %s points nowhere: %v", a, err)
		}
		var t Tranche
		if err := codec.Unmarshal(b, &t); err != nil {
			return nil, fmt.Errorf("decode tranche: %w", err)
		}
		c := cut(t.Amount)
		t.Amount = new(big.Int).Sub(t.Amount, c)
		total.Add(total, c)
		x.o.Set(tk, codec.MustMarshal(&t))
	}
	rn.ConsecutiveSlashes++
	rn.Reputation -= min(rn.Reputation, x.ex.cfg.Offchain.Job.SlashThreshold)
	if rn.Status == RunnerActive && rn.ConsecutiveSlashes >= p.MaxConsecutiveSlashes {
		if _, err := x.addTranche(a, a, rn.Stake, true); err != nil {
			return nil, err
		}
		x.emit(types.RunnerRegistryAddress, &runners.RunnerEjectedEvent{Runner: a, Unbonding: rn.Stake, Slashes: uint64(rn.ConsecutiveSlashes)})
		rn.Stake, rn.Status = new(big.Int), RunnerExited
	}
	x.saveRunner(rn)
	return total, nil
}

// payees builds the settlement payee of each runner (address order) with
// its registry economics: self-bond, delegations, commission.
func (x *txExec) payee(a types.Address) (payment.Payee, error) {
	py := payment.Payee{Runner: a, SelfStake: new(big.Int)}
	rn, err := ReadRunner(x.o, a)
	if err != nil || rn == nil {
		return py, err
	}
	py.SelfStake, py.Rates, py.CommissionBps = bigOr0(rn.Stake), rn.Rates, rn.CommissionBps
	if rn.Status != RunnerActive {
		// A runner that left after doing the job: its self-bond is still
		// bonded in its own unbonding tranches, and counts as its stake.
		ts, err := ReadTranches(x.o, a)
		if err != nil {
			return py, err
		}
		self := new(big.Int)
		for _, t := range ts {
			if t.Runner == a {
				self.Add(self, t.Amount)
			}
		}
		py.SelfStake = self
	}
	ds, err := ReadDelegations(x.o, a)
	if err != nil {
		return py, err
	}
	for _, d := range ds {
		if d.Amount.Sign() > 0 {
			py.Delegations = append(py.Delegations, payment.Delegation{Delegator: d.Delegator, Amount: d.Amount})
		}
	}
	return py, nil
}
