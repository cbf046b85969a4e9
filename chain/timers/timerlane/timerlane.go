// Package timerlane is the timer lane of a block (spec 002 §3.3, CIP
// timers): the actor ops set_timer, set_interval and cancel_timer, and the
// block's "Deliver Timers" step — plan the due timers and their Gas Bidding
// Agents' bids before the transactions, fire or defer them after. The
// queue itself (tiers, economics) is chain/timers; running the handlers is
// chain/actors.
package timerlane

import (
	"errors"
	"fmt"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/actors"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/fees"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/timers"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/pvm"
)

// Host-call costs of the timer ops (spec 002 §17.3). set_timer and
// set_interval also charge one cell per byte of handler name and data.
const (
	SetTimerCycles    = 1_000
	CancelTimerCycles = 500
)

// Timer extension ops served by actorHost.HostCall.
const (
	OpSetTimer    = "set_timer"
	OpSetInterval = "set_interval"
	OpCancelTimer = "cancel_timer"
)

// Timer event topics. Every timer event is emitted by TimerEscrowAddress (an
// actor cannot forge it) and carries the owner in its data.
const (
	TopicTimerScheduled = "TimerScheduled"
	TopicTimerFired     = "TimerFired"
	TopicTimerDeferred  = "TimerDeferred"
	TopicTimerCancelled = "TimerCancelled"
)

// TimerEvent is the data of the four timer events.
type TimerEvent struct {
	ID       types.Hash    `cbor:"id" json:"id"`
	Owner    types.Address `cbor:"owner" json:"owner"`
	Handler  string        `cbor:"handler" json:"handler"`
	Target   uint64        `cbor:"target" json:"target"`
	Interval uint64        `cbor:"interval" json:"interval"`
	// Amount is the deposit held (scheduled) or refunded (cancelled, or a
	// fired one-shot timer); Burned the scheduling surcharge.
	Amount *big.Int `cbor:"amount" json:"amount"`
	Burned *big.Int `cbor:"burned,omitempty" json:"burned,omitempty"`
	// Deferrals is the deferral count (TimerDeferred).
	Deferrals uint64 `cbor:"deferrals,omitempty" json:"deferrals,omitempty"`
}

// GBAQueryCycles bounds the read-only get_gas_bid call made to a timer's
// Gas Bidding Agent.
const GBAQueryCycles = 100_000

// GBAHandler is the handler a Gas Bidding Agent implements.
const GBAHandler = "get_gas_bid"

// TimerReceiptHash is the TxHash of the receipt of timer id executed in
// the block at height:
//
//	keccak256("cowboy/timer" ‖ id ‖ height_be8)
func TimerReceiptHash(id types.Hash, height uint64) types.Hash {
	return types.Keccak256([]byte("cowboy/timer"), id[:], system.BE8(height))
}

// TimerDeferralsHash is the TxHash of the block's timer-lane receipt that
// carries the TimerDeferred events (one per block with deferrals):
//
//	keccak256("cowboy/timer-deferrals" ‖ height_be8)
func TimerDeferralsHash(height uint64) types.Hash {
	return types.Keccak256([]byte("cowboy/timer-deferrals"), system.BE8(height))
}

// Lane runs the timer lane over a timer queue and an actor runtime.
type Lane struct {
	q                       *timers.Queue
	rt                      *actors.Runtime
	maxTxCycles, maxTxCells uint64
}

// New returns the timer lane of q, and registers the timer ops on rt. A
// bid's limits above maxTxCycles / maxTxCells are refused (the default bid
// is used).
func New(q *timers.Queue, rt *actors.Runtime, maxTxCycles, maxTxCells uint64) (*Lane, error) {
	l := &Lane{q: q, rt: rt, maxTxCycles: maxTxCycles, maxTxCells: maxTxCells}
	for _, op := range []string{OpSetTimer, OpSetInterval, OpCancelTimer} {
		if err := rt.Register(op, l.timerOp); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// Queue returns the lane's timer queue.
func (l *Lane) Queue() *timers.Queue { return l.q }

// timerArgs are the arguments of the timer ops, as sent by pvm_host.host_call.
type timerArgs struct {
	Height, Every      uint64
	Handler            string
	Data, GBA, TimerID []byte
}

func decodeTimerArgs(raw any) (timerArgs, error) {
	var a timerArgs
	m, err := actors.HostArgs(raw)
	if err != nil {
		return a, err
	}
	u64 := func(k string) uint64 {
		x, ok := m[k]
		if !ok || err != nil {
			return 0
		}
		n, isU := x.(uint64)
		if !isU {
			err = fmt.Errorf("bad arguments: %s must be a non-negative int", k)
		}
		return n
	}
	bs := func(k string) []byte {
		x, ok := m[k]
		if !ok || x == nil || err != nil {
			return nil
		}
		b, isB := x.([]byte)
		if !isB {
			err = fmt.Errorf("bad arguments: %s must be bytes", k)
		}
		return b
	}
	a.Height, a.Every = u64("height"), u64("every")
	a.Data, a.GBA, a.TimerID = bs("data"), bs("gba"), bs("timer_id")
	if h, ok := m["handler"]; ok {
		s, isS := h.(string)
		if !isS {
			return a, errors.New("bad arguments: handler must be a string")
		}
		a.Handler = s
	}
	return a, err
}

// timerOp serves set_timer, set_interval and cancel_timer.
func (l *Lane) timerOp(h *actors.Host, req *pvm.HostRequest) (*pvm.HostResponse, error) {
	if req.ReadOnly || h.Exec().ReadOnly() {
		return nil, fmt.Errorf("%s in a read-only call", req.Op)
	}
	if err := gateTimers(h, req.Op); err != nil { // spec 002 §15 syscall gate
		return nil, err
	}
	a, err := decodeTimerArgs(req.Args)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", req.Op, err)
	}
	if req.Op == OpCancelTimer {
		return l.cancelTimer(h, a)
	}
	return l.setTimer(h, req.Op, a)
}

func (l *Lane) setTimer(h *actors.Host, op string, a timerArgs) (*pvm.HostResponse, error) {
	x, o := h.Exec(), h.Exec().State()
	now := x.Env().Height
	t := timers.Timer{Owner: h.Actor(), Handler: a.Handler, CreatedAt: now}
	switch op {
	case OpSetTimer:
		if a.Height <= now {
			return nil, fmt.Errorf("set_timer: height %d is not in the future (current height %d)", a.Height, now)
		}
		t.Target = a.Height
	case OpSetInterval:
		if a.Every == 0 {
			return nil, errors.New("set_interval: every_n_blocks must be positive")
		}
		if a.Every > ^uint64(0)-now {
			return nil, errors.New("set_interval: every_n_blocks too large")
		}
		t.Target, t.Interval = now+a.Every, a.Every
	}
	if a.Handler == "" {
		return nil, fmt.Errorf("%s: handler must be a non-empty string", op)
	}
	if len(a.Data) > 0 {
		if err := codec.Valid(a.Data); err != nil {
			return nil, fmt.Errorf("%s: data is not canonical CBOR: %v", op, err)
		}
		t.Data = append([]byte(nil), a.Data...)
	}
	if a.GBA != nil {
		g, err := types.BytesToAddress(a.GBA)
		if err != nil {
			return nil, fmt.Errorf("%s: gba: %v", op, err)
		}
		t.GBA = &g
	}
	q := l.q
	quote, err := q.Quote(o, h.Actor(), t.Target)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	need := new(big.Int).Add(quote.Deposit, quote.Burn)
	acc, err := o.Account(h.Actor())
	if err != nil {
		return nil, fmt.Errorf("%w: %v", pvm.ErrHostFailure, err)
	}
	if acc.Balance.Cmp(need) < 0 {
		return nil, fmt.Errorf("%s: insufficient balance: deposit %s + surcharge %s, actor has %s", op, quote.Deposit, quote.Burn, acc.Balance)
	}
	snap := o.Snapshot()
	id, charge, err := q.Schedule(o, t)
	if err != nil {
		o.RevertTo(snap)
		if errors.Is(err, timers.ErrCorrupt) {
			return nil, fmt.Errorf("%w: %v", pvm.ErrHostFailure, err)
		}
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if err := payTimer(h, charge); err != nil {
		o.RevertTo(snap)
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	x.AppendEvent(timerEvent(TopicTimerScheduled, TimerEvent{
		ID: id, Owner: h.Actor(), Handler: t.Handler, Target: t.Target, Interval: t.Interval,
		Amount: charge.Deposit, Burned: charge.Burn,
	}))
	return &pvm.HostResponse{Value: id[:], Cycles: SetTimerCycles, Cells: uint64(len(t.Handler) + len(t.Data))}, nil
}

// payTimer moves the deposit to the escrow and burns the surcharge.
func payTimer(h *actors.Host, c timers.Charge) error {
	o := h.Exec().State()
	total := new(big.Int).Add(c.Deposit, c.Burn)
	if err := o.SubBalance(h.Actor(), total); err != nil {
		return fmt.Errorf("insufficient balance: %v", err)
	}
	if err := o.AddBalance(types.TimerEscrowAddress, c.Deposit); err != nil {
		return fmt.Errorf("%w: %v", pvm.ErrHostFailure, err)
	}
	if err := o.AddBigRecord(state.RecordBurned, c.Burn); err != nil {
		return fmt.Errorf("%w: %v", pvm.ErrHostFailure, err)
	}
	return nil
}

func (l *Lane) cancelTimer(h *actors.Host, a timerArgs) (*pvm.HostResponse, error) {
	x, o := h.Exec(), h.Exec().State()
	id, err := types.BytesToHash(a.TimerID)
	if err != nil {
		return nil, fmt.Errorf("cancel_timer: timer_id: %v", err)
	}
	t, err := l.q.Get(o, id)
	if err != nil {
		if errors.Is(err, timers.ErrNotFound) {
			return nil, fmt.Errorf("cancel_timer: no pending timer %s", id)
		}
		return nil, fmt.Errorf("%w: %v", pvm.ErrHostFailure, err)
	}
	snap := o.Snapshot()
	refund, err := l.q.Cancel(o, h.Actor(), id)
	if err != nil {
		o.RevertTo(snap)
		if errors.Is(err, timers.ErrNotOwner) {
			return nil, fmt.Errorf("cancel_timer: timer %s belongs to another actor", id)
		}
		return nil, fmt.Errorf("%w: %v", pvm.ErrHostFailure, err)
	}
	if err := refundDeposit(o, h.Actor(), refund); err != nil {
		return nil, fmt.Errorf("%w: %v", pvm.ErrHostFailure, err)
	}
	x.AppendEvent(timerEvent(TopicTimerCancelled, TimerEvent{
		ID: id, Owner: h.Actor(), Handler: t.Handler, Target: t.Target, Interval: t.Interval, Amount: refund,
	}))
	return &pvm.HostResponse{Value: refund, Cycles: CancelTimerCycles}, nil
}

// refundDeposit moves a deposit from the escrow back to its owner.
func refundDeposit(o *state.Overlay, owner types.Address, amount *big.Int) error {
	if amount == nil || amount.Sign() == 0 {
		return nil
	}
	if err := o.SubBalance(types.TimerEscrowAddress, amount); err != nil {
		return fmt.Errorf("timer escrow: %w", err)
	}
	return o.AddBalance(owner, amount)
}

func timerEvent(topic string, ev TimerEvent) types.Event {
	if ev.Amount == nil {
		ev.Amount = new(big.Int)
	}
	return types.Event{Emitter: types.TimerEscrowAddress, Topic: topic, Data: codec.MustMarshal(&ev)}
}

// MaxTimerCandidates bounds the due timers considered per block (and so
// the GBA calls a producer makes), oldest first (timers.Queue.DueLimit);
// the rest stay due for later blocks.
const MaxTimerCandidates = 256

// Plan is the timer lane of one block, decided before its
// transactions run: which due timers fire, with which bids, and which are
// deferred. Claim is the cycles it reserves (the Fire bids' cycles
// limits); the transactions get the rest of the block, so the timer
// lane's unused reservation spills to them.
type Plan struct {
	sel   timers.Selection
	bf    fees.Basefees // the timer lane's basefees
	claim uint64
}

// Claim is the cycles the plan reserves in the block.
func (p *Plan) Claim() uint64 { return p.claim }

// Plan is the first half of the STF's "Deliver Timers" step (spec
// 002 §3.3), run before the block's transactions: it advances the queue to
// the block's height, asks each due timer's Gas Bidding Agent for a bid (on
// the state before the transactions) and selects the timers that fit in
// the timer lane: bf are the timer lane's basefees, budget the cycles it
// may claim. A nil plan means the chain has no timer state.
func (l *Lane) Plan(x0 *actors.Exec, bf fees.Basefees, budget uint64) (*Plan, error) {
	o, env := x0.State(), x0.Env()
	active, err := timers.Active(o)
	if err != nil || !active || !l.rt.HasVM() {
		return nil, err
	}
	q := l.q
	due, err := q.DueLimit(o, env.Height, MaxTimerCandidates)
	if err != nil {
		return nil, fmt.Errorf("timers: due at %d: %w", env.Height, err)
	}
	plan := &Plan{bf: bf}
	if len(due) == 0 {
		return plan, nil
	}
	last, err := timers.LastUsage(o)
	if err != nil {
		return nil, err
	}
	cands := make([]timers.Candidate, 0, len(due))
	for _, t := range due {
		bid, err := l.timerBid(x0, t, plan.bf, last)
		if err != nil {
			return nil, err
		}
		cands = append(cands, timers.Candidate{Timer: t, Bid: bid})
	}
	plan.sel = timers.Select(cands, plan.bf, budget)
	plan.claim = plan.sel.Cycles
	return plan, nil
}

// Deliver is the second half of "Deliver Timers", run after the
// block's transactions: it runs each planned timer as a message to
// owner.handler(data), paid by the owner at the timer lane's basefees, and
// defers the others. Selected timers are marked fired before they run (a
// one-shot's deposit is refunded, an interval is re-enqueued), so a
// handler may cancel or reschedule freely; timers cancelled since the plan
// are skipped. It returns the receipts, in execution order, followed by
// one receipt carrying the TimerDeferred events if any timer was deferred.
func (l *Lane) Deliver(x0 *actors.Exec, plan *Plan) ([]*types.Receipt, uint64, uint64, error) {
	o, env := x0.State(), x0.Env()
	if plan == nil {
		// A transaction of this block may have created the timer state:
		// bring the queue to this height, as every later block does.
		if active, err := timers.Active(o); err != nil || !active || !l.rt.HasVM() {
			return nil, 0, 0, err
		}
		if _, err := l.q.DueLimit(o, env.Height, 1); err != nil {
			return nil, 0, 0, fmt.Errorf("timers: advance to %d: %w", env.Height, err)
		}
		return nil, 0, 0, nil
	}
	q, sel, bf := l.q, plan.sel, plan.bf
	var out []*types.Receipt
	var cycles, cells uint64
	for _, c := range sel.Fire {
		// A transaction or an earlier timer's handler may have cancelled it.
		if gone, err := timerGone(q, o, c.Timer.ID); err != nil || gone {
			if err != nil {
				return nil, 0, 0, err
			}
			continue
		}
		r, err := l.fireTimer(x0, c, bf)
		if err != nil {
			return nil, 0, 0, fmt.Errorf("timer %s: %w", c.Timer.ID, err)
		}
		out = append(out, r)
		cycles += r.CyclesUsed
		cells += r.CellsUsed
	}
	if len(sel.Defer) > 0 && deferredLeft(q, o, sel.Defer) {
		evs := make([]types.Event, 0, len(sel.Defer))
		for _, c := range sel.Defer {
			if gone, err := timerGone(q, o, c.Timer.ID); err != nil {
				return nil, 0, 0, err
			} else if gone {
				continue
			}
			if err := q.Defer(o, c.Timer.ID, env.Height); err != nil {
				return nil, 0, 0, fmt.Errorf("timers: defer %s: %w", c.Timer.ID, err)
			}
			evs = append(evs, timerEvent(TopicTimerDeferred, TimerEvent{
				ID: c.Timer.ID, Owner: c.Timer.Owner, Handler: c.Timer.Handler, Target: c.Timer.Target,
				Interval: c.Timer.Interval, Deferrals: c.Timer.Deferrals + 1,
			}))
		}
		out = append(out, &types.Receipt{TxHash: TimerDeferralsHash(env.Height), Status: types.ReceiptSuccess,
			FeePaid: new(big.Int), Burned: new(big.Int), Tip: new(big.Int), Events: evs, Return: []byte{}})
	}
	return out, cycles, cells, nil
}

// timerGone reports whether timer id no longer exists (cancelled by a
// handler that ran earlier in the block).
func timerGone(q *timers.Queue, o *state.Overlay, id types.Hash) (bool, error) {
	_, err := q.Get(o, id)
	switch {
	case errors.Is(err, timers.ErrNotFound):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("timers: read %s: %w", id, err)
	}
	return false, nil
}

// deferredLeft reports whether any of cs still exists.
func deferredLeft(q *timers.Queue, o *state.Overlay, cs []timers.Candidate) bool {
	for _, c := range cs {
		if gone, err := timerGone(q, o, c.Timer.ID); err != nil || !gone {
			return true
		}
	}
	return false
}

// timerBid asks t's Gas Bidding Agent for its bid with a bounded read-only
// call to get_gas_bid(context); any failure (no GBA, an error, running out
// of its GBAQueryCycles, an undecodable answer, limits above the per-tx
// maximums) gives the network default bid.
func (l *Lane) timerBid(x0 *actors.Exec, t timers.Timer, bf fees.Basefees, lastUsage uint64) (timers.Bid, error) {
	acc, err := x0.State().Account(t.Owner)
	if err != nil {
		return timers.Bid{}, err
	}
	bc := timers.BidContext{TriggerHeight: t.Target, CurrentHeight: x0.Env().Height, BasefeeCycle: bf.Cycle,
		BasefeeCell: bf.Cell, LastBlockCycleUsage: lastUsage, OwnerBalance: acc.Balance}
	def := l.q.Params().DefaultBid(bc)
	if t.GBA == nil {
		return def, nil
	}
	ctxArg := map[string]any{
		"timer_id": t.ID[:], "owner": t.Owner[:], "handler": t.Handler, "deferrals": t.Deferrals,
		"trigger_block_height": bc.TriggerHeight, "current_block_height": bc.CurrentHeight,
		"basefee_cycle": bc.BasefeeCycle, "basefee_cell": bc.BasefeeCell,
		"last_block_cycle_usage": bc.LastBlockCycleUsage, "owner_actor_balance": bc.OwnerBalance,
	}
	ret, _, err := l.rt.Query(x0.Context(), x0.State(), x0.Env(), *t.GBA, types.TimerEscrowAddress, GBAHandler, codec.MustMarshal([]any{ctxArg}), GBAQueryCycles)
	if err != nil {
		if errors.Is(err, actors.ErrInfra) || !actors.IsFailure(err) {
			return timers.Bid{}, fmt.Errorf("gba %s: %w", *t.GBA, err)
		}
		return def, nil
	}
	bid, ok := decodeBid(ret)
	if !ok || bid.CyclesLimit > l.maxTxCycles || bid.CellsLimit > l.maxTxCells {
		return def, nil
	}
	return bid, nil
}

// decodeBid accepts a GBA's answer as the canonical Bid array
// [cycles_limit, cells_limit, max_fee_per_cycle, max_fee_per_cell,
// tip_per_cycle, tip_per_cell] or as a map with those keys.
func decodeBid(b []byte) (timers.Bid, bool) {
	if bid, err := timers.DecodeBid(b); err == nil {
		return bid, true
	}
	var m struct {
		CyclesLimit    uint64 `cbor:"cycles_limit"`
		CellsLimit     uint64 `cbor:"cells_limit"`
		MaxFeePerCycle uint64 `cbor:"max_fee_per_cycle"`
		MaxFeePerCell  uint64 `cbor:"max_fee_per_cell"`
		TipPerCycle    uint64 `cbor:"tip_per_cycle"`
		TipPerCell     uint64 `cbor:"tip_per_cell"`
	}
	if err := codec.Unmarshal(b, &m); err != nil {
		return timers.Bid{}, false
	}
	return timers.Bid{CyclesLimit: m.CyclesLimit, CellsLimit: m.CellsLimit, MaxFeePerCycle: m.MaxFeePerCycle,
		MaxFeePerCell: m.MaxFeePerCell, TipPerCycle: m.TipPerCycle, TipPerCell: m.TipPerCell}, true
}

// fireTimer marks c fired and runs it. The owner reserves the bid's
// maximum fee (limits × max fees) and pays cycles and cells used at the
// basefees plus the effective tips, like a transaction (fees.Settle): the
// basefee part is burned, the tip goes to the proposer. An owner that
// cannot reserve the maximum fee gets a failed receipt and pays nothing.
func (l *Lane) fireTimer(x0 *actors.Exec, c timers.Candidate, bf fees.Basefees) (*types.Receipt, error) {
	o, env, t, bid := x0.State(), x0.Env(), c.Timer, c.Bid
	refund, err := l.q.MarkFired(o, t.ID, env.Height)
	if err != nil {
		return nil, fmt.Errorf("mark fired: %w", err)
	}
	if err := refundDeposit(o, t.Owner, refund); err != nil {
		return nil, err
	}
	fired := timerEvent(TopicTimerFired, TimerEvent{ID: t.ID, Owner: t.Owner, Handler: t.Handler, Target: t.Target,
		Interval: t.Interval, Amount: refund, Deferrals: t.Deferrals})
	rcpt := &types.Receipt{TxHash: TimerReceiptHash(t.ID, env.Height), Status: types.ReceiptFailed,
		FeePaid: new(big.Int), Burned: new(big.Int), Tip: new(big.Int), Return: []byte{}}

	reserve := new(big.Int).Add(mulU(bid.CyclesLimit, bid.MaxFeePerCycle), mulU(bid.CellsLimit, bid.MaxFeePerCell))
	acc, err := o.Account(t.Owner)
	if err != nil {
		return nil, err
	}
	if acc.Balance.Cmp(reserve) < 0 {
		rcpt.Code = uint32(system.CodeInsufficientBalance)
		rcpt.Error = fmt.Sprintf("InsufficientBalance: timer owner %s has %s, the bid's maximum fee is %s", t.Owner, acc.Balance, reserve)
		rcpt.Events = []types.Event{fired}
		return rcpt, nil
	}
	if err := o.SubBalance(t.Owner, reserve); err != nil {
		return nil, err
	}
	run := &actors.Meter{CyclesLimit: bid.CyclesLimit, CellsLimit: bid.CellsLimit}
	x := l.rt.NewExec(x0.Context(), o, env, nil, types.TimerEscrowAddress, run, x0.Block())
	var payload []byte
	if len(t.Data) > 0 {
		payload = append([]byte{0x81}, t.Data...) // CBOR [data]: the handler gets data as its one argument
	}
	snap := o.Snapshot()
	ret, execErr := x.Invoke(t.Owner, types.TimerEscrowAddress, new(big.Int), t.Handler, payload)
	rcpt.Status = types.ReceiptSuccess
	if execErr != nil {
		if !actors.IsFailure(execErr) && !errors.Is(execErr, types.ErrInsufficientBalance) {
			return nil, execErr
		}
		o.RevertTo(snap)
		run.Events, ret = nil, nil
		actors.MarkFailed(rcpt, x.Records(), execErr, "reverted with the timer message")
	}
	run.Cycles = min(run.Cycles, bid.CyclesLimit)
	run.Cells = min(run.Cells, bid.CellsLimit)
	tipCycle, _ := bid.EffectiveTip(bf)
	tipCell := min(bid.TipPerCell, bid.MaxFeePerCell-bf.Cell)
	burned := new(big.Int).Add(mulU(run.Cycles, bf.Cycle), mulU(run.Cells, bf.Cell))
	tip := new(big.Int).Add(mulU(run.Cycles, tipCycle), mulU(run.Cells, tipCell))
	fee := new(big.Int).Add(burned, tip)
	back := new(big.Int).Sub(reserve, fee)
	if back.Sign() < 0 {
		return nil, fmt.Errorf("timer fee %s exceeds reservation %s", fee, reserve)
	}
	if err := o.AddBalance(t.Owner, back); err != nil {
		return nil, err
	}
	if tip.Sign() > 0 {
		if err := o.AddBalance(env.Proposer, tip); err != nil {
			return nil, err
		}
	}
	if err := o.AddBigRecord(state.RecordBurned, burned); err != nil {
		return nil, err
	}
	if ret == nil {
		ret = []byte{}
	}
	rcpt.CyclesUsed, rcpt.CellsUsed = run.Cycles, run.Cells
	rcpt.FeePaid, rcpt.Burned, rcpt.Tip = fee, burned, tip
	rcpt.Events = append([]types.Event{fired}, run.Events...)
	rcpt.Return = ret
	rcpt.Messages, rcpt.FailedMessage = x.Records(), x.FailedMessage()
	return rcpt, nil
}

func mulU(a, b uint64) *big.Int {
	return new(big.Int).Mul(new(big.Int).SetUint64(a), new(big.Int).SetUint64(b))
}

// gateTimers is the syscall gate of set_timer / set_interval (spec 002 §15).
func gateTimers(h *actors.Host, op string) error {
	if op != OpSetTimer && op != OpSetInterval {
		return nil
	}
	m, err := h.Requires()
	if err != nil {
		return err
	}
	return m.CheckTimers(op)
}

// PruneOwner cancels every pending timer of owner and refunds their
// deposits to it (the rent module's eviction, spec 002 "Grace Period and
// Eviction": active timers are pruned). It returns how many it cancelled.
func (l *Lane) PruneOwner(o *state.Overlay, owner types.Address) (int, error) {
	refund, n, err := l.q.DropOwner(o, owner)
	if err != nil {
		return 0, err
	}
	return n, refundDeposit(o, owner, refund)
}
