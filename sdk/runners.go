package sdk

import (
	"context"
	"math/big"
	"net/http"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// RunnersService is the client's service for the Runner Registry: registered
// runners, their self-bond, delegations, commission and unbonding tranches
// (/v1/runners, /v1/delegations, /v1/unbonding).
type RunnersService struct{ c *Client }

// Runners returns the service for the Runner Registry.
func (c *Client) Runners() *RunnersService { return &RunnersService{c: c} }

// AccountRunners is the Runners service bound to an account: its transaction
// methods sign with the account's key and submit as Account describes
// (nonces, fees, waiting); its reads are those of RunnersService.
type AccountRunners struct {
	*RunnersService
	a *Account
}

// Runners returns the Runners service bound to a.
func (a *Account) Runners() *AccountRunners {
	return &AccountRunners{RunnersService: a.c.Runners(), a: a}
}

// List lists the registered runners (GET /v1/runners); all includes
// runners that have deregistered.
func (s *RunnersService) List(ctx context.Context, all bool) ([]apitypes.Runner, error) {
	var r []apitypes.Runner
	path := "/v1/runners"
	if all {
		path += "?all=true"
	}
	return r, s.c.do(ctx, http.MethodGet, path, nil, &r)
}

// Get returns one runner record (GET /v1/runners/{addr}).
func (s *RunnersService) Get(ctx context.Context, addr types.Address) (*apitypes.Runner, error) {
	var r apitypes.Runner
	return &r, s.c.do(ctx, http.MethodGet, "/v1/runners/"+addr.String(), nil, &r)
}

// Register registers (or updates) the account as a runner; stake adds to its
// self-bond.
func (s *AccountRunners) Register(ctx context.Context, in *types.RunnerRegister, stake *big.Int, o TxOptions) (*types.Tx, error) {
	return s.a.sendSystem(ctx, types.RunnerRegistryAddress, stake, in, o)
}

// Heartbeat reports the account's runner alive.
func (s *AccountRunners) Heartbeat(ctx context.Context, o TxOptions) (*types.Tx, error) {
	return s.a.sendSystem(ctx, types.RunnerRegistryAddress, nil, &types.RunnerHeartbeat{}, o)
}

// Deregister removes the account's runner and returns its self-bond.
func (s *AccountRunners) Deregister(ctx context.Context, o TxOptions) (*types.Tx, error) {
	return s.a.sendSystem(ctx, types.RunnerRegistryAddress, nil, &types.RunnerDeregister{}, o)
}

// Delegate delegates amount of the account's balance to runner (CIP-13).
func (s *AccountRunners) Delegate(ctx context.Context, runner types.Address, amount *big.Int, o TxOptions) (*types.Tx, error) {
	return s.a.sendSystem(ctx, types.RunnerRegistryAddress, amount, &types.RunnerDelegateStake{Runner: runner}, o)
}

// Undelegate starts unbonding amount of the account's delegation on runner.
func (s *AccountRunners) Undelegate(ctx context.Context, runner types.Address, amount *big.Int, o TxOptions) (*types.Tx, error) {
	return s.a.sendSystem(ctx, types.RunnerRegistryAddress, nil, &types.RunnerUndelegateStake{Runner: runner, Amount: amount}, o)
}

// WithdrawUnbonded pays the account every matured unbonding tranche.
func (s *AccountRunners) WithdrawUnbonded(ctx context.Context, o TxOptions) (*types.Tx, error) {
	return s.a.sendSystem(ctx, types.RunnerRegistryAddress, nil, &types.RunnerWithdraw{}, o)
}

// Stake adds amount to the account's runner self-bond.
func (s *AccountRunners) Stake(ctx context.Context, amount *big.Int, o TxOptions) (*types.Tx, error) {
	return s.a.sendSystem(ctx, types.RunnerRegistryAddress, amount, &types.RunnerStake{}, o)
}

// Unstake starts unbonding amount of the account's runner self-bond.
func (s *AccountRunners) Unstake(ctx context.Context, amount *big.Int, o TxOptions) (*types.Tx, error) {
	return s.a.sendSystem(ctx, types.RunnerRegistryAddress, nil, &types.RunnerUnstake{Amount: amount}, o)
}

// SetCommission sets the account's runner commission on delegator revenue.
func (s *AccountRunners) SetCommission(ctx context.Context, bps uint64, o TxOptions) (*types.Tx, error) {
	return s.a.sendSystem(ctx, types.RunnerRegistryAddress, nil, &types.RunnerSetCommission{CommissionBps: bps}, o)
}

// Delegations lists the delegations on a runner.
func (s *RunnersService) Delegations(ctx context.Context, runner types.Address) ([]apitypes.Delegation, error) {
	var r []apitypes.Delegation
	return r, s.c.do(ctx, http.MethodGet, "/v1/runners/"+runner.String()+"/delegations", nil, &r)
}

// Unbonding lists an address's unbonding tranches.
func (s *RunnersService) Unbonding(ctx context.Context, owner types.Address) ([]apitypes.Tranche, error) {
	var r []apitypes.Tranche
	return r, s.c.do(ctx, http.MethodGet, "/v1/unbonding/"+owner.String(), nil, &r)
}
