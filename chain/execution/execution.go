// Package execution is Cowboy's state transition function: given a state
// (through state.Reader), a block environment and an ordered list of
// transactions, it returns the state changes, receipts and meter totals —
// (state, block) → (state', receipts). It does no IO, reads no clock and
// holds no goroutines, so every node that applies the same block to the same
// state gets byte-identical results.
package execution

import (
	"context"
	"errors"
	"fmt"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/actors"
	"github.com/cowboy-foundation/cowboy/chain/actors/blobops"
	"github.com/cowboy-foundation/cowboy/chain/actors/sigops"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/fees"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/entitlements"
	"github.com/cowboy-foundation/cowboy/chain/system/ethbridge"
	"github.com/cowboy-foundation/cowboy/chain/system/governance"
	"github.com/cowboy-foundation/cowboy/chain/system/jobs"
	"github.com/cowboy-foundation/cowboy/chain/system/jobs/joblane"
	"github.com/cowboy-foundation/cowboy/chain/system/models"
	"github.com/cowboy-foundation/cowboy/chain/system/params"
	"github.com/cowboy-foundation/cowboy/chain/system/rent"
	"github.com/cowboy-foundation/cowboy/chain/system/runners"
	"github.com/cowboy-foundation/cowboy/chain/system/secrets"
	"github.com/cowboy-foundation/cowboy/chain/system/storage"
	"github.com/cowboy-foundation/cowboy/chain/system/tee"
	"github.com/cowboy-foundation/cowboy/chain/system/tokens"
	"github.com/cowboy-foundation/cowboy/chain/system/tokens/tokenops"
	"github.com/cowboy-foundation/cowboy/chain/system/treasury"
	"github.com/cowboy-foundation/cowboy/chain/system/validators"
	"github.com/cowboy-foundation/cowboy/chain/timers"
	"github.com/cowboy-foundation/cowboy/chain/timers/timerlane"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Config is the chain configuration the transition depends on.
type Config struct {
	ChainID uint64
	Fees    fees.Schedule
	// VM runs actor code. Without one, actor and library instructions are
	// refused as unsupported (a transfer-only node).
	VM      VM
	Limits  ActorLimits
	Storage StorageParams
	// Timers are the timer economics; the zero value takes
	// timers.DefaultParams.
	Timers timers.Params
	// Offchain are the off-chain compute parameters (Runner Registry, Job
	// Dispatcher, Result Verifier).
	Offchain runners.Params
	// Validators are the Validator Registry parameters (epochs, unbonding,
	// jailing, slashing); used only on chains with a registry.
	Validators ValidatorParams
	// TEE are the TEE Verifier and Secrets Manager parameters (tee.go).
	TEE TEEParams
	// Lanes are the block's execution lanes (lanes.go); the zero value
	// takes fees.DefaultLanes.
	Lanes fees.LaneSchedule
	// Governance configures the Governance actor and its parameter store.
	Governance governance.Params
	// Rent configures state rent and storage bonds (chain/system/rent);
	// nil: rent off.
	Rent *rent.Params
	// Bridge is the authorised Ethereum bridge set
	// (chain/system/ethbridge); nil: no bridge.
	Bridge *ethbridge.Params
}

// BlockEnv is what a block contributes besides its transactions.
type BlockEnv = system.Env

// Mode selects how invalid transactions are treated.
type Mode int

const (
	// Build is the proposer's mode: a transaction that is invalid against
	// the current state is left out of the block and reported.
	Build Mode = iota
	// Verify is the validator's mode: any invalid transaction makes the
	// whole block invalid.
	Verify
	// Ordered executes a block whose order consensus has already finalized
	// (execute-on-finality, docs/CONSENSUS.md §8.3): invalid or non-fitting
	// transactions are skipped as in Build, but a node failure is returned
	// as an error to retry, never a reason to leave a transaction out.
	Ordered
)

// Rejection is a transaction left out of a block being built.
type Rejection struct {
	Tx  *types.Tx
	Err error
}

// Result is the outcome of applying a block.
type Result struct {
	Included   []*types.Tx
	Rejected   []Rejection
	Deferred   []*types.Tx // valid but did not fit in the block's capacity
	Receipts   []*types.Receipt
	Writes     []state.Write // sorted by key
	Basefees   fees.Basefees // what this block charged
	Next       fees.Basefees // what the next block will charge
	CyclesUsed uint64
	CellsUsed  uint64
	// TimerReceipts is how many of Receipts, at their end, are timer
	// receipts (executions in the timer lane, then the deferral record);
	// the others belong to Included, in order.
	TimerReceipts int
	// TimerCyclesUsed and TimerCellsUsed are the timer lane's usage; they
	// are not part of CyclesUsed/CellsUsed (the transaction lanes, which
	// drive the basefees).
	TimerCyclesUsed uint64
	TimerCellsUsed  uint64
	// JobReceipts is how many of Receipts, at their very end (after the
	// timer receipts), belong to the off-chain job lane: delivered job
	// callbacks, then the job sweep's receipt. JobCallbackCycles/Cells are
	// the callbacks' usage, for the runner lane (offchain_lane.go); like
	// the timer lane they are not part of CyclesUsed/CellsUsed.
	// JobCallbackClaim is the cycles the callbacks claimed from the runner
	// lane before the transactions (their usage never exceeds it).
	JobReceipts       int
	JobCallbackCycles uint64
	JobCallbackCells  uint64
	JobCallbackClaim  uint64
}

// Executor applies blocks. It is stateless apart from its configuration.
type Executor struct {
	cfg     Config
	rt      *actors.Runtime
	storage StorageParams
	timers  *timerlane.Lane
	router  *router
	runners *runners.Module
	jobs    *joblane.Lane
	params  *params.Store
}

// Params returns the governed parameter store (chain/system/params).
func (e *Executor) Params() *params.Store { return e.params }

// New returns an Executor for cfg.
func New(cfg Config) (*Executor, error) {
	if err := cfg.Fees.Validate(); err != nil {
		return nil, err
	}
	cfg.Limits.Fill()
	registry := runners.New(cfg.Offchain)
	cfg.Offchain = registry.Params()
	if cfg.Timers == (timers.Params{}) {
		cfg.Timers = timers.DefaultParams()
	}
	if cfg.Lanes == (fees.LaneSchedule{}) {
		cfg.Lanes = fees.DefaultLanes()
	}
	if err := cfg.Lanes.Validate(); err != nil {
		return nil, fmt.Errorf("execution: %w", err)
	}
	if err := checkCallbackBudget(cfg); err != nil {
		return nil, fmt.Errorf("execution: %w", err)
	}
	q, err := timers.New(cfg.Timers)
	if err != nil {
		return nil, fmt.Errorf("execution: %w", err)
	}
	store := storage.New(cfg.Storage)
	cfg.Storage = store.Params()
	vals := validators.New(cfg.Validators, cfg.ChainID)
	cfg.Validators = vals.Params()
	verifier := tee.New(cfg.TEE, cfg.ChainID, runnerRegistry{})
	cfg.TEE = verifier.Params()
	dispatcher := jobs.New(registry, cfg.TEE.Policy)
	if cfg.Rent != nil && cfg.Rent.BaseQuota == 0 {
		p := *cfg.Rent
		p.BaseQuota = cfg.Limits.StorageQuota
		cfg.Rent = &p
	}
	rentMod := rent.New(cfg.Rent)
	bridge, err := ethbridge.New(cfg.Bridge)
	if err != nil {
		return nil, fmt.Errorf("execution: %w", err)
	}
	gov, err := governance.New(cfg.Governance, append(append(append(runners.ParamDefs(cfg.Offchain), validators.ParamDefs(cfg.Validators)...), rent.ParamDefs(cfg.Rent)...), ethbridge.ParamDefs(cfg.Bridge)...)...)
	if err != nil {
		return nil, fmt.Errorf("execution: %w", err)
	}
	dispatcher.UseParams(gov.Store())
	registry.UseParams(gov.Store())
	vals.UseParams(gov.Store())
	rentMod.UseParams(gov.Store())
	bridge.UseParams(gov.Store())
	modelRegistry := models.New(models.Params{})
	gov.UseModels(modelRegistry)
	// The Runner Registry's registered versions (spec 002 §11.4): a Tier 3
	// proposal switches the pointer; absent one, v1 serves.
	registryMod, err := gov.Versioned(types.RunnerRegistryAddress,
		governance.Version{Name: runners.VersionV1, Module: registry},
		governance.Version{Name: runners.VersionV2, Module: runners.NewV2(registry), Migrate: runners.MigrateV2})
	if err != nil {
		return nil, fmt.Errorf("execution: %w", err)
	}
	// The modules' end-of-block steps run in this order.
	r, err := newRouter(append(governance.Guard(registryMod, dispatcher, entitlements.New(), verifier, secrets.New(cfg.TEE, runnerRegistry{}), store, vals, modelRegistry, tokens.New(), rentMod, bridge), gov, treasury.New())...)
	if err != nil {
		return nil, err
	}
	r.publish = map[string]bool{rentMod.Name(): true}
	rt := actors.NewRuntime(cfg.VM, cfg.Limits, cfg.ChainID, cfg.Fees.MaxTxCells)
	ex := &Executor{cfg: cfg, rt: rt, storage: cfg.Storage, router: r, runners: registry, params: gov.Store()}
	if ex.timers, err = timerlane.New(q, rt, cfg.Fees.MaxTxCycles, cfg.Fees.MaxTxCells); err != nil {
		return nil, fmt.Errorf("execution: %w", err)
	}
	if ex.jobs, err = joblane.New(rt, dispatcher, cfg.Offchain, cfg.Fees.MaxTxCycles, cfg.Fees.MaxTxCells); err != nil {
		return nil, fmt.Errorf("execution: %w", err)
	}
	if rentMod.Enabled() {
		rentMod.UseTimers(ex.timers)
		rt.SetStorageHook(rentMod)
	}
	if err := tokenops.Register(rt); err != nil {
		return nil, fmt.Errorf("execution: %w", err)
	}
	if err := sigops.Register(rt); err != nil {
		return nil, fmt.Errorf("execution: %w", err)
	}
	if err := blobops.Register(rt); err != nil {
		return nil, fmt.Errorf("execution: %w", err)
	}
	return ex, nil
}

// TEEParams returns the TEE Verifier and Secrets Manager parameters.
func (e *Executor) TEEParams() TEEParams { return e.cfg.TEE }

// StorageParams returns the Relay Registry and Storage Manager parameters.
func (e *Executor) StorageParams() StorageParams { return e.storage }

// HasVM reports whether actor instructions are supported.
func (e *Executor) HasVM() bool { return e.rt.HasVM() }

// Config returns the executor's configuration.
func (e *Executor) Config() Config { return e.cfg }

// CheckTx runs the stateless validity checks (spec 002 §2.2 a, c, d, e) and
// returns the decoded instruction (nil for a plain transfer).
func (e *Executor) CheckTx(tx *types.Tx) (types.Instruction, error) {
	if err := types.ValidateBasic(tx, e.cfg.ChainID); err != nil {
		return nil, err
	}
	in, err := types.DecodeInstruction(tx.Payload())
	if err != nil {
		return nil, err
	}
	if err := e.cfg.Fees.CheckLimits(tx, in); err != nil {
		return nil, err
	}
	if k, ok := e.router.lookup(in); ok {
		if k.Check != nil {
			if err := k.Check(tx, in); err != nil {
				return nil, err
			}
		}
		return in, nil
	}
	to, hasTo := tx.To()
	switch in.(type) {
	}
	if in != nil && !e.rt.HasVM() {
		return nil, fmt.Errorf("%w: %s (this node runs without the PVM)", types.ErrUnsupported, in.InstructionKind())
	}
	switch v := in.(type) {
	case nil:
		if !hasTo {
			return nil, fmt.Errorf("%w: a transfer needs a recipient", types.ErrMalformedTx)
		}
		if to.IsReserved() {
			return nil, fmt.Errorf("%w: cannot transfer to %s", types.ErrReservedAddress, to)
		}
	case *types.Call:
		if !hasTo {
			return nil, fmt.Errorf("%w: a call needs the actor address in `to`", types.ErrMalformedTx)
		}
		if v.Handler == "" {
			return nil, fmt.Errorf("%w: call without a handler name", types.ErrBadPayload)
		}
	case *types.Deploy, *types.PublishLibrary, *types.RemoveLibrary:
		if hasTo {
			return nil, fmt.Errorf("%w: %s transactions have `to` = null", types.ErrMalformedTx, in.InstructionKind())
		}
		if p, ok := v.(*types.PublishLibrary); ok && !actors.LibraryNameRE.MatchString(p.Name) {
			return nil, fmt.Errorf("%w: library name %q must match %s", types.ErrBadPayload, p.Name, actors.LibraryNameRE)
		}
	default:
		return nil, fmt.Errorf("%w: %s", types.ErrUnsupported, in.InstructionKind())
	}
	return in, nil
}

// CheckState runs the stateful checks against r: nonce and balance (§2.2 b).
func (e *Executor) CheckState(r state.Reader, tx *types.Tx) error {
	from, err := tx.Sender()
	if err != nil {
		return err
	}
	acc, err := state.ReadAccount(r, from)
	if err != nil {
		return err
	}
	if tx.Nonce() < acc.Nonce {
		return fmt.Errorf("%w: nonce %d, account %s is at %d", types.ErrNonceTooLow, tx.Nonce(), from, acc.Nonce)
	}
	if tx.Nonce() > acc.Nonce {
		return fmt.Errorf("%w: nonce %d, account %s is at %d", types.ErrNonceGap, tx.Nonce(), from, acc.Nonce)
	}
	if need := fees.MaxCost(tx); acc.Balance.Cmp(need) < 0 {
		return fmt.Errorf("%w: %s has %s, needs %s", types.ErrInsufficientBalance, from, acc.Balance, need)
	}
	return nil
}

// Basefees returns the basefees the next block charges, as recorded in r.
func Basefees(r state.Reader) (fees.Basefees, error) {
	b, ok, err := r.Get(basefeesKey)
	if err != nil {
		return fees.Basefees{}, err
	}
	if !ok {
		return fees.Basefees{}, errors.New("execution: state has no basefee record (not initialised from a genesis)")
	}
	var rec basefeeRecord
	if err := codec.Unmarshal(b, &rec); err != nil {
		return fees.Basefees{}, fmt.Errorf("execution: decode basefees: %w", err)
	}
	return fees.Basefees{Cycle: rec.Cycle, Cell: rec.Cell}, nil
}

// basefeesKey lives in the Dual Basefee system actor's state (spec 002 §9, 0x06).
var basefeesKey = state.Key(state.PrefixSystem, types.DualBasefeeAddress[:], []byte("basefees"))

type basefeeRecord struct {
	_     struct{} `cbor:",toarray"`
	Cycle uint64
	Cell  uint64
}

// SetBasefees records the basefees the next block charges.
func SetBasefees(o *state.Overlay, b fees.Basefees) {
	o.Set(basefeesKey, codec.MustMarshal(&basefeeRecord{Cycle: b.Cycle, Cell: b.Cell}))
}

// Apply executes a block on top of r. The timer lane and the job
// callbacks are planned first (planTimers, planCallbacks) and their claims
// set aside; the transactions then run in the block's lanes (lanes.go).
// In Build mode txs are candidates in priority order: invalid ones are
// left out (Rejected), those that do not fit are deferred, and the rest
// run in canonical seed order (Included). In Verify mode txs are the
// block's, and any invalid transaction, a lane budget overrun or an order
// other than the canonical one fails the block.
func (e *Executor) Apply(ctx context.Context, r state.Reader, env BlockEnv, txs []*types.Tx, mode Mode) (*Result, error) {
	o := state.NewOverlay(r)
	meters := actors.NewBlockMeters()
	bf, err := Basefees(o)
	if err != nil {
		return nil, err
	}
	res := &Result{Basefees: bf}
	if err := e.rt.PruneDedup(o, env.Height); err != nil {
		return nil, err
	}
	// Deliver Timers, part 1 (spec 002 §3.3): the timer lane's claim is
	// fixed before the transactions so its unused reservation spills to them.
	plan, err := e.timers.Plan(e.rt.NewExec(ctx, o, env, nil, types.Address{}, nil, meters), e.LaneBasefees(bf, fees.LaneTimer), e.TimerLaneBudget())
	if err != nil {
		return nil, fmt.Errorf("execution: plan timers at %d: %w", env.Height, err)
	}
	var claims blockClaims
	if plan != nil {
		claims.timers = plan.Claim()
	}
	// The job callbacks due in this block claim their cycles from the
	// runner lane the same way (offchain_lane.go), so they run inside the
	// block's cycle cap.
	cbPlan, err := e.jobs.Plan(o, env.Height, e.CallbackBudget())
	if err != nil {
		return nil, fmt.Errorf("execution: plan job callbacks at %d: %w", env.Height, err)
	}
	claims.callbacks = cbPlan.Claim()
	res.JobCallbackClaim = cbPlan.Claim()
	var lts []laneTx
	if mode == Verify {
		lts, err = e.verifyLanes(txs, bf, claims, env.Seed)
	} else {
		lts, err = e.buildLanes(txs, bf, claims, env.Seed, res)
	}
	if err != nil {
		return nil, err
	}
	for i, lt := range lts {
		tx, in := lt.tx, lt.in
		if err := e.CheckState(o, tx); err != nil {
			if mode == Verify {
				return nil, fmt.Errorf("execution: tx %d (%s): %w", i, tx.Hash(), err)
			}
			res.Rejected = append(res.Rejected, Rejection{Tx: tx, Err: err})
			continue
		}
		before, metersBefore := o.Snapshot(), meters.Clone()
		rcpt, err := e.applyTx(ctx, o, env, e.LaneBasefees(bf, lt.lane), tx, in, meters)
		if err != nil {
			if mode == Build && errors.Is(err, actors.ErrInfra) && ctx.Err() == nil {
				// The node failed running this transaction (a crashed PVM
				// worker, say): leave it out, leaving no trace of the attempt,
				// rather than stall the chain retrying it every block.
				o.RevertTo(before)
				meters = metersBefore
				res.Rejected = append(res.Rejected, Rejection{Tx: tx, Err: err})
				continue
			}
			return nil, fmt.Errorf("execution: tx %d (%s): %w", i, tx.Hash(), err)
		}
		res.Included = append(res.Included, tx)
		res.Receipts = append(res.Receipts, rcpt)
		res.CyclesUsed += rcpt.CyclesUsed
		res.CellsUsed += rcpt.CellsUsed
	}
	// Deliver Timers, part 2: due timers run after the transactions.
	tx0 := e.rt.NewExec(ctx, o, env, nil, types.Address{}, nil, meters)
	trs, tcycles, tcells, err := e.timers.Deliver(tx0, plan)
	if err != nil {
		return nil, fmt.Errorf("execution: deliver timers at %d: %w", env.Height, err)
	}
	// The job lane (offchain_lane.go): deferred job callbacks, then the
	// end-of-block sweep (timeouts, re-selection, refunds, settlement).
	jobs, err := e.jobs.Advance(tx0, cbPlan)
	if err != nil {
		return nil, fmt.Errorf("execution: advance jobs at %d: %w", env.Height, err)
	}
	// The system modules' end-of-block steps: storage epochs (missed
	// challenges, stake returns, rent and challenges), then the Validator
	// Registry (rewards, downtime, epoch boundary).
	endEvents, err := e.router.endBlock(tx0)
	if err != nil {
		return nil, fmt.Errorf("execution: end of block %d: %w", env.Height, err)
	}
	res.Receipts = append(res.Receipts, trs...)
	res.TimerReceipts = len(trs)
	res.TimerCyclesUsed, res.TimerCellsUsed = tcycles, tcells
	res.Receipts = append(res.Receipts, jobs.Receipts...)
	res.JobReceipts, res.JobCallbackCycles, res.JobCallbackCells = len(jobs.Receipts), jobs.CallbackCycles, jobs.CallbackCells
	// The published end-of-block events (the rent sweep's) close the
	// block in one receipt, counted with the job lane's tail.
	if r := endBlockReceipt(env.Height, endEvents); r != nil {
		res.Receipts = append(res.Receipts, r)
		res.JobReceipts++
	}
	if active, err := timers.Active(o); err != nil {
		return nil, err
	} else if active {
		timers.SetLastUsage(o, res.CyclesUsed+tcycles)
	}
	res.Next = e.cfg.Fees.Next(bf, res.CyclesUsed, res.CellsUsed)
	SetBasefees(o, res.Next)
	res.Writes = o.Writes()
	return res, nil
}

// applyTx executes one valid transaction. Errors returned here are internal
// (state corruption); a transaction that fails on its own merits produces a
// failed receipt instead.
func (e *Executor) applyTx(ctx context.Context, o *state.Overlay, env BlockEnv, bf fees.Basefees, tx *types.Tx, in types.Instruction, meters *actors.BlockMeters) (*types.Receipt, error) {
	from, _ := tx.Sender()
	acc, err := o.Account(from)
	if err != nil {
		return nil, err
	}
	// Bump the nonce and reserve the maximum fee; both survive a failure.
	acc.Nonce++
	reserve := fees.MaxFee(tx)
	acc.Balance.Sub(acc.Balance, reserve)
	o.SetAccount(from, acc)

	run := &actors.Meter{CyclesLimit: tx.CyclesLimit(), CellsLimit: tx.CellsLimit()}
	run.Cycles, run.Cells = fees.Intrinsic(tx, in)
	x := e.rt.NewExec(ctx, o, env, tx, from, run, meters)
	snap := o.Snapshot()
	created, ret, execErr := e.dispatch(x, tx, in, from)
	failed := &types.Receipt{Status: types.ReceiptSuccess}
	if execErr != nil {
		if !actors.IsFailure(execErr) && !errors.Is(execErr, types.ErrInsufficientBalance) {
			return nil, execErr
		}
		o.RevertTo(snap)
		run.Events = nil
		created, ret = nil, nil
		actors.MarkFailed(failed, x.Records(), execErr, "reverted with the transaction")
	}
	run.Cycles = min(run.Cycles, tx.CyclesLimit())
	run.Cells = min(run.Cells, tx.CellsLimit())

	charge := fees.Settle(tx, bf, run.Cycles, run.Cells)
	refund := new(big.Int).Sub(reserve, charge.Fee)
	if refund.Sign() < 0 {
		return nil, fmt.Errorf("settlement exceeds reservation (%s > %s)", charge.Fee, reserve)
	}
	if err := o.AddBalance(from, refund); err != nil {
		return nil, err
	}
	if charge.Tip.Sign() > 0 {
		if err := o.AddBalance(env.Proposer, charge.Tip); err != nil {
			return nil, err
		}
	}
	if err := o.AddBigRecord(state.RecordBurned, charge.Burned); err != nil {
		return nil, err
	}
	if ret == nil {
		ret = []byte{}
	}
	return &types.Receipt{
		TxHash:        tx.Hash(),
		Status:        failed.Status,
		Code:          failed.Code,
		CyclesUsed:    run.Cycles,
		CellsUsed:     run.Cells,
		FeePaid:       charge.Fee,
		Burned:        charge.Burned,
		Tip:           charge.Tip,
		Events:        run.Events,
		Error:         failed.Error,
		Created:       created,
		Return:        ret,
		Messages:      x.Records(),
		FailedMessage: x.FailedMessage(),
	}, nil
}

func (e *Executor) dispatch(x *actors.Exec, tx *types.Tx, in types.Instruction, from types.Address) (*types.Address, []byte, error) {
	if k, ok := e.router.lookup(in); ok {
		ret, err := k.Handle(x, from, in)
		return nil, ret, err
	}
	switch v := in.(type) {
	case nil:
		to, _ := tx.To()
		return nil, nil, transfer(x.State(), from, to, tx.Value(), x.Meter())
	case *types.Deploy:
		return x.Deploy(from, v)
	case *types.Call:
		to, _ := tx.To()
		ret, err := x.Call(from, to, v)
		return nil, ret, err
	case *types.PublishLibrary:
		if tx.Value().Sign() != 0 {
			return nil, nil, system.Failf(system.CodeValueNotAccepted, "library instructions carry no value")
		}
		return nil, nil, x.PublishLibrary(from, v)
	case *types.RemoveLibrary:
		if tx.Value().Sign() != 0 {
			return nil, nil, system.Failf(system.CodeValueNotAccepted, "library instructions carry no value")
		}
		return nil, nil, x.RemoveLibrary(from, v)
	}
	return nil, nil, fmt.Errorf("%w: %s", types.ErrUnsupported, in.InstructionKind())
}

// Query runs a handler read-only against r: no state change, no fee, at
// most Limits.QueryCycles cycles. It returns the canonical CBOR result.
func (e *Executor) Query(ctx context.Context, r state.Reader, env BlockEnv, actor, caller types.Address, handler string, args []byte) ([]byte, uint64, error) {
	return e.rt.Query(ctx, r, env, actor, caller, handler, args, e.rt.Limits().QueryCycles)
}

// IsActorError reports whether err is a deterministic failure of actor
// code or of an actor instruction (as opposed to a node failure).
func IsActorError(err error) bool { return actors.IsFailure(err) }

// TransferEvent is the data of the "transfer" event every value transfer emits.
type TransferEvent struct {
	From  types.Address `cbor:"from" json:"from"`
	To    types.Address `cbor:"to" json:"to"`
	Value *big.Int      `cbor:"value" json:"value"`
}

// TransferTopic is the topic of native value transfer events.
const TransferTopic = "transfer"

func transfer(o *state.Overlay, from, to types.Address, v *big.Int, run *actors.Meter) error {
	if v.Sign() == 0 {
		return nil
	}
	if err := o.SubBalance(from, v); err != nil {
		return err
	}
	if err := o.AddBalance(to, v); err != nil {
		return err
	}
	run.Events = append(run.Events, types.Event{
		Emitter: from,
		Topic:   TransferTopic,
		Data:    codec.MustMarshal(&TransferEvent{From: from, To: to, Value: v}),
	})
	return nil
}

// Timers returns the executor's timer queue (read it over a state.Overlay).
func (e *Executor) Timers() *timers.Queue { return e.timers.Queue() }

// TimerLaneBudget is the cycles the timer lane may claim per block: its
// reservation, 20% of the block's target cycles at genesis (spec 002
// §17.9: 2,000,000 of 10,000,000; fees.LaneSchedule.TimerBps).
func (e *Executor) TimerLaneBudget() uint64 {
	return e.LaneCaps().Reserved[fees.LaneTimer]
}
