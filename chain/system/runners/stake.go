// Stake (CIP-13): delegations, unbonding tranches, the registry's stake
// instructions, and the slashing and payee records the Job Dispatcher and
// Result Verifier use.

package runners

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

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
	return system.Key(types.RunnerRegistryAddress, []byte("deleg/"), runner[:], delegator[:])
}

func delegationPrefix(runner types.Address) []byte {
	return system.Key(types.RunnerRegistryAddress, []byte("deleg/"), runner[:])
}

// trancheKey indexes a tranche by owner (withdrawal, the per-owner limit);
// trancheRunnerKey by runner (slashing).
func trancheKey(owner, runner types.Address, release uint64) []byte {
	return system.Key(types.RunnerRegistryAddress, []byte("unb/"), owner[:], runner[:], system.BE8(release))
}
func tranchePrefix(owner types.Address) []byte {
	return system.Key(types.RunnerRegistryAddress, []byte("unb/"), owner[:])
}
func trancheRunnerKey(runner, owner types.Address, release uint64) []byte {
	return system.Key(types.RunnerRegistryAddress, []byte("unbr/"), runner[:], owner[:], system.BE8(release))
}
func trancheRunnerPrefix(runner types.Address) []byte {
	return system.Key(types.RunnerRegistryAddress, []byte("unbr/"), runner[:])
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

func (x *Tx) SaveRunner(rn *Runner) { x.State().Set(RunnerKey(rn.Address), codec.MustMarshal(rn)) }

// addTranche starts unbonding amount of owner's stake on runner, releasing
// at height + UnbondingBlocks (merged with a tranche of the same runner and
// release). force skips the per-owner tranche limit (ejection by slashing
// must not be blockable). It returns the release height.
func (x *Tx) AddTranche(owner, runner types.Address, amount *big.Int, force bool) (uint64, error) {
	p, err := x.m.Governed(x.State())
	if err != nil {
		return 0, err
	}
	release := x.Env().Height + p.UnbondingBlocks
	if amount.Sign() <= 0 {
		return release, nil
	}
	k := trancheKey(owner, runner, release)
	t := Tranche{Owner: owner, Runner: runner, Amount: new(big.Int), Release: release}
	b, ok, err := x.State().Get(k)
	if err != nil {
		return 0, err
	}
	if ok {
		if err := codec.Unmarshal(b, &t); err != nil {
			return 0, fmt.Errorf("decode tranche: %w", err)
		}
	} else if !force {
		ts, err := ReadTranches(x.State(), owner)
		if err != nil {
			return 0, err
		}
		if len(ts) >= p.MaxTranches {
			return 0, system.Failf(system.CodeTooManyTranches, "TooManyTranches: %s already has %d unbonding tranches (withdraw matured ones first)", owner, len(ts))
		}
	}
	t.Amount = new(big.Int).Add(t.Amount, amount)
	x.State().Set(k, codec.MustMarshal(&t))
	x.State().Set(trancheRunnerKey(runner, owner, release), []byte{1})
	return release, nil
}

func (x *Tx) runnerDelegate(from types.Address, in *types.RunnerDelegateStake) error {
	p, err := x.m.Governed(x.State())
	if err != nil {
		return err
	}
	amount := x.Transaction().Value()
	if amount.Sign() <= 0 {
		return system.Failf(system.CodeInvalidAmount, "InvalidAmount: delegate a positive value")
	}
	if from == in.Runner {
		return system.Failf(system.CodeInvalidDelegation, "InvalidDelegation: a runner adds to its own stake with runner_stake")
	}
	rn, err := x.ActiveRunner(in.Runner)
	if err != nil {
		return err
	}
	k := DelegationKey(in.Runner, from)
	d := Delegation{Delegator: from, Amount: new(big.Int), Since: x.Env().Height}
	b, ok, err := x.State().Get(k)
	if err != nil {
		return err
	}
	if ok {
		if err := codec.Unmarshal(b, &d); err != nil {
			return fmt.Errorf("decode delegation: %w", err)
		}
	} else {
		if rn.Delegators >= p.MaxDelegators {
			return system.Failf(system.CodeTooManyDelegators, "TooManyDelegators: runner %s has the maximum %d delegators", in.Runner, p.MaxDelegators)
		}
		rn.Delegators++
	}
	rn.Delegated = new(big.Int).Add(OrZero(rn.Delegated), amount)
	if !selfBondOK(OrZero(rn.Stake), rn.EffectiveStake(), p.MinSelfBondBps) {
		return system.Failf(system.CodeInsufficientSelfBond, "InsufficientSelfBond: runner %s's self-bond %s would fall below %d bps of the effective stake %s",
			in.Runner, rn.Stake, p.MinSelfBondBps, rn.EffectiveStake())
	}
	if err := x.MoveValue(from, types.RunnerRegistryAddress, amount); err != nil {
		return err
	}
	d.Amount = new(big.Int).Add(d.Amount, amount)
	x.State().Set(k, codec.MustMarshal(&d))
	x.SaveRunner(rn)
	x.Emit(types.RunnerRegistryAddress, &StakeDelegatedEvent{Runner: in.Runner, Delegator: from, Amount: amount, Total: d.Amount})
	return nil
}

func (x *Tx) runnerUndelegate(from types.Address, in *types.RunnerUndelegateStake) error {
	if in.Amount == nil || in.Amount.Sign() <= 0 {
		return system.Failf(system.CodeInvalidAmount, "InvalidAmount: undelegate a positive amount")
	}
	rn, err := ReadRunner(x.State(), in.Runner)
	if err != nil {
		return err
	}
	k := DelegationKey(in.Runner, from)
	b, ok, err := x.State().Get(k)
	if err != nil {
		return err
	}
	if rn == nil || !ok {
		return system.Failf(system.CodeNoDelegation, "NoDelegation: %s has no stake delegated to %s", from, in.Runner)
	}
	var d Delegation
	if err := codec.Unmarshal(b, &d); err != nil {
		return fmt.Errorf("decode delegation: %w", err)
	}
	if in.Amount.Cmp(d.Amount) > 0 {
		return system.Failf(system.CodeInvalidAmount, "InvalidAmount: %s exceeds the delegation %s", in.Amount, d.Amount)
	}
	release, err := x.AddTranche(from, in.Runner, in.Amount, false)
	if err != nil {
		return err
	}
	d.Amount = new(big.Int).Sub(d.Amount, in.Amount)
	if d.Amount.Sign() == 0 {
		x.State().Delete(k)
		rn.Delegators--
	} else {
		x.State().Set(k, codec.MustMarshal(&d))
	}
	rn.Delegated = new(big.Int).Sub(OrZero(rn.Delegated), in.Amount)
	x.SaveRunner(rn)
	x.Emit(types.RunnerRegistryAddress, &StakeUndelegatedEvent{Runner: in.Runner, Delegator: from, Amount: in.Amount, Release: release})
	return nil
}

func (x *Tx) runnerStake(from types.Address) error {
	amount := x.Transaction().Value()
	if amount.Sign() <= 0 {
		return system.Failf(system.CodeInvalidAmount, "InvalidAmount: stake a positive value")
	}
	rn, err := x.ActiveRunner(from)
	if err != nil {
		return err
	}
	if err := x.MoveValue(from, types.RunnerRegistryAddress, amount); err != nil {
		return err
	}
	rn.Stake = new(big.Int).Add(OrZero(rn.Stake), amount)
	x.SaveRunner(rn)
	x.Emit(types.RunnerRegistryAddress, &RunnerStakedEvent{Runner: from, Amount: amount, Stake: rn.Stake})
	return nil
}

func (x *Tx) runnerUnstake(from types.Address, in *types.RunnerUnstake) error {
	p, err := x.m.Governed(x.State())
	if err != nil {
		return err
	}
	if in.Amount == nil || in.Amount.Sign() <= 0 {
		return system.Failf(system.CodeInvalidAmount, "InvalidAmount: unstake a positive amount")
	}
	rn, err := x.ActiveRunner(from)
	if err != nil {
		return err
	}
	if in.Amount.Cmp(OrZero(rn.Stake)) > 0 {
		return system.Failf(system.CodeInvalidAmount, "InvalidAmount: %s exceeds the self-bond %s", in.Amount, rn.Stake)
	}
	rn.Stake = new(big.Int).Sub(rn.Stake, in.Amount)
	if !p.StakeEligible(rn) {
		return system.Failf(system.CodeInsufficientStake, "InsufficientStake: unstaking %s would break the stake rules (effective %s ≥ %s, self-bond ≥ %d bps); deregister to leave",
			in.Amount, rn.EffectiveStake(), p.MinRunnerStakeFor(rn.MaxJobValue), p.MinSelfBondBps)
	}
	release, err := x.AddTranche(from, from, in.Amount, false)
	if err != nil {
		return err
	}
	x.SaveRunner(rn)
	x.Emit(types.RunnerRegistryAddress, &RunnerUnstakedEvent{Runner: from, Amount: in.Amount, Release: release})
	return nil
}

func (x *Tx) runnerSetCommission(from types.Address, in *types.RunnerSetCommission) error {
	if in.CommissionBps > 10_000 {
		return system.Failf(system.CodeInvalidCommission, "InvalidCommission: commission_bps is 0..10000")
	}
	rn, err := x.ActiveRunner(from)
	if err != nil {
		return err
	}
	rn.CommissionBps = uint16(in.CommissionBps)
	x.SaveRunner(rn)
	x.Emit(types.RunnerRegistryAddress, &CommissionSetEvent{Runner: from, CommissionBps: in.CommissionBps})
	return nil
}

// runnerWithdraw pays out every tranche of the sender whose release height
// has been reached.
func (x *Tx) runnerWithdraw(from types.Address) error {
	ts, err := ReadTranches(x.State(), from)
	if err != nil {
		return err
	}
	total, matured := new(big.Int), 0
	for _, t := range ts {
		if t.Release > x.Env().Height {
			continue
		}
		matured++ // a tranche slashed to nothing is cleared all the same
		total.Add(total, t.Amount)
		x.State().Delete(trancheKey(t.Owner, t.Runner, t.Release))
		x.State().Delete(trancheRunnerKey(t.Runner, t.Owner, t.Release))
	}
	if matured == 0 {
		return system.Failf(system.CodeNothingToWithdraw, "NothingToWithdraw: %s has no matured unbonding tranche", from)
	}
	if total.Sign() > 0 {
		if err := x.MoveValue(types.RunnerRegistryAddress, from, total); err != nil {
			return err
		}
	}
	x.Emit(types.RunnerRegistryAddress, &StakeWithdrawnEvent{Owner: from, Amount: total})
	return nil
}

// slashRunner takes SlashBps of everything bonded to runner a — self-bond,
// each delegation, and each tranche still unbonding from it — each piece
// rounded down, and returns the total (still in the registry account; the
// caller pays it out). The runner loses SlashThreshold reputation and is
// ejected (status exited, remaining self-bond to unbonding) after
// MaxConsecutiveSlashes.
func (x *Tx) SlashRunner(a types.Address) (*big.Int, error) {
	p, err := x.m.Governed(x.State())
	if err != nil {
		return nil, err
	}
	rn, err := ReadRunner(x.State(), a)
	if err != nil || rn == nil {
		return new(big.Int), err
	}
	cut := func(v *big.Int) *big.Int {
		c := new(big.Int).Mul(OrZero(v), new(big.Int).SetUint64(p.SlashBps))
		return c.Quo(c, big.NewInt(10_000))
	}
	total := cut(rn.Stake)
	rn.Stake = new(big.Int).Sub(OrZero(rn.Stake), total)
	ds, err := ReadDelegations(x.State(), a)
	if err != nil {
		return nil, err
	}
	delegated := new(big.Int)
	for _, d := range ds {
		c := cut(d.Amount)
		d.Amount = new(big.Int).Sub(d.Amount, c)
		total.Add(total, c)
		delegated.Add(delegated, d.Amount)
		x.State().Set(DelegationKey(a, d.Delegator), codec.MustMarshal(&d))
	}
	rn.Delegated = delegated
	var tkeys [][]byte
	if err := x.State().Scan(trancheRunnerPrefix(a), func(k, _ []byte) error {
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
		b, ok, err := x.State().Get(tk)
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
		x.State().Set(tk, codec.MustMarshal(&t))
	}
	rn.ConsecutiveSlashes++
	rn.Reputation -= min(rn.Reputation, x.m.p.Job.SlashThreshold)
	if rn.Status == RunnerActive && rn.ConsecutiveSlashes >= p.MaxConsecutiveSlashes {
		if _, err := x.AddTranche(a, a, rn.Stake, true); err != nil {
			return nil, err
		}
		x.Emit(types.RunnerRegistryAddress, &RunnerEjectedEvent{Runner: a, Unbonding: rn.Stake, Slashes: uint64(rn.ConsecutiveSlashes)})
		rn.Stake, rn.Status = new(big.Int), RunnerExited
	}
	x.SaveRunner(rn)
	return total, nil
}
