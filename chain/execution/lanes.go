package execution

import (
	"bytes"
	"container/heap"
	"fmt"
	"slices"

	"github.com/cowboy-foundation/cowboy/chain/fees"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Lanes returns the lane configuration (capacities and fee multipliers).
func (e *Executor) Lanes() fees.LaneSchedule { return e.cfg.Lanes }

// LaneCaps returns a block's lane capacities in cycles.
func (e *Executor) LaneCaps() fees.LaneCaps { return e.cfg.Lanes.Caps(e.cfg.Fees) }

// LaneBasefees returns what a transaction in lane l pays per cycle and per
// cell when the block's basefees are bf.
func (e *Executor) LaneBasefees(bf fees.Basefees, l fees.Lane) fees.Basefees {
	return e.cfg.Lanes.Basefees(bf, l)
}

// Errors of the block-level lane rules (Verify mode), matched with errors.Is.
var (
	ErrLaneBudget = types.NewError("lane_budget", "block exceeds its lane budgets")
	ErrLaneOrder  = types.NewError("lane_order", "block transactions are not in the canonical seed order")
)

// orderKey ranks a transaction in the block's seed order:
//
//	keccak256("cowboy/tx-order" ‖ seed ‖ tx_hash)
func orderKey(seed, h types.Hash) types.Hash {
	return types.Keccak256([]byte("cowboy/tx-order"), seed[:], h[:])
}

// CanonicalOrder returns txs in the block's seed order (spec 002 §6.4,
// §6.5: VRF ordering within the selected set) that keeps every sender's
// transactions in nonce order: each sender's transactions form a queue
// sorted by nonce (ties by hash), and the order repeatedly takes, among the
// queues' heads, the one with the smallest orderKey(seed, hash). It depends
// only on the set of transactions and the seed (BlockEnv.Seed: the parent
// hash until the VRF beacon lands), so a validator recomputes it, and
// dropping the tail of one sender's queue leaves the rest in the same
// relative order. Every transaction must have a valid signature.
func CanonicalOrder(txs []*types.Tx, seed types.Hash) ([]*types.Tx, error) {
	queues := map[types.Address][]*types.Tx{}
	var senders []types.Address
	for _, tx := range txs {
		from, err := tx.Sender()
		if err != nil {
			return nil, fmt.Errorf("tx %s: %w", tx.Hash(), err)
		}
		if _, ok := queues[from]; !ok {
			senders = append(senders, from)
		}
		queues[from] = append(queues[from], tx)
	}
	h := &orderHeap{}
	for _, s := range senders {
		q := queues[s]
		slices.SortStableFunc(q, func(a, b *types.Tx) int {
			if a.Nonce() != b.Nonce() {
				if a.Nonce() < b.Nonce() {
					return -1
				}
				return 1
			}
			ha, hb := a.Hash(), b.Hash()
			return bytes.Compare(ha[:], hb[:])
		})
		h.items = append(h.items, orderItem{q: q, key: orderKey(seed, q[0].Hash())})
	}
	heap.Init(h)
	out := make([]*types.Tx, 0, len(txs))
	for h.Len() > 0 {
		it := &h.items[0]
		out = append(out, it.q[0])
		if it.q = it.q[1:]; len(it.q) > 0 {
			it.key = orderKey(seed, it.q[0].Hash())
			heap.Fix(h, 0)
		} else {
			heap.Pop(h)
		}
	}
	return out, nil
}

type orderItem struct {
	q   []*types.Tx
	key types.Hash
}

type orderHeap struct{ items []orderItem }

func (h *orderHeap) Len() int { return len(h.items) }
func (h *orderHeap) Less(i, j int) bool {
	if c := bytes.Compare(h.items[i].key[:], h.items[j].key[:]); c != 0 {
		return c < 0
	}
	// Equal keys mean equal head hashes: the same transaction twice. Any
	// fixed rule will do; the duplicate fails its nonce check.
	a, b := h.items[i].q[0].Hash(), h.items[j].q[0].Hash()
	return bytes.Compare(a[:], b[:]) < 0
}
func (h *orderHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *orderHeap) Push(x any)    { h.items = append(h.items, x.(orderItem)) }
func (h *orderHeap) Pop() any {
	it := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return it
}

// laneTx is a transaction that passed the stateless checks, with its
// decoded instruction and lane.
type laneTx struct {
	tx   *types.Tx
	in   types.Instruction
	lane fees.Lane
}

// checkStateless runs CheckTx and the lane's basefee check.
func (e *Executor) checkStateless(tx *types.Tx, bf fees.Basefees) (laneTx, error) {
	in, err := e.CheckTx(tx)
	if err != nil {
		return laneTx{}, err
	}
	l := fees.LaneOf(tx, in)
	if err := fees.Includable(tx, e.LaneBasefees(bf, l)); err != nil {
		return laneTx{}, fmt.Errorf("%s lane: %w", l, err)
	}
	return laneTx{tx: tx, in: in, lane: l}, nil
}

// buildLanes is the proposer's side of the lane rules: it drops what fails
// the stateless checks (res.Rejected), fits the rest into the lanes in the
// order given — the mempool's priority order — with the block's claims
// charged first: the timer lane's, and the job callbacks' (charged to the
// runner lane, whose transactions get what is left of its reservation).
// What does not fit goes to res.Deferred, and so do a sender's
// transactions after one that was not taken. It returns the
// selection in canonical seed order. Blocks whose transaction list
// consensus finalized before execution (Ordered) go through here too: the
// list's order then only sets the fitting priority, and every node derives
// the same execution order from the seed.
func (e *Executor) buildLanes(txs []*types.Tx, bf fees.Basefees, cl blockClaims, seed types.Hash, res *Result) ([]laneTx, error) {
	// cands keeps every candidate in the given order; a zero laneTx marks
	// one that failed the stateless checks (it stops its sender there).
	cands := make([]laneTx, len(txs))
	senders := make([]types.Address, len(txs))
	for i, tx := range txs {
		senders[i], _ = tx.Sender() // a bad signature fails checkStateless
		lt, err := e.checkStateless(tx, bf)
		if err != nil {
			res.Rejected = append(res.Rejected, Rejection{Tx: tx, Err: err})
			continue
		}
		cands[i] = lt
	}
	meter := e.LaneCaps().Meter()
	meter.Add(fees.LaneTimer, cl.timers)
	meter.Add(fees.LaneRunner, cl.callbacks)
	var cells uint64
	taken := make([]bool, len(cands))
	fits := func(lt laneTx, reserved bool) bool {
		if cells+lt.tx.CellsLimit() > e.cfg.Fees.MaxBlockCells {
			return false
		}
		if reserved {
			return meter.FitsReserved(lt.lane, lt.tx.CyclesLimit())
		}
		return meter.Fits(lt.tx.CyclesLimit())
	}
	take := func(i int) {
		taken[i] = true
		meter.Add(cands[i].lane, cands[i].tx.CyclesLimit())
		cells += cands[i].tx.CellsLimit()
	}
	// Pass 1: reserved lanes within their reservations; a sender takes part
	// only up to its first transaction not taken here.
	stopped := map[types.Address]bool{}
	for i, lt := range cands {
		from := senders[i]
		if stopped[from] {
			continue
		}
		if lt.tx != nil && (lt.lane == fees.LaneSystem || lt.lane == fees.LaneRunner) && fits(lt, true) {
			take(i)
			continue
		}
		stopped[from] = true
	}
	// Pass 2: everything left, within what is left of the block. Once one
	// of a sender's transactions is not taken, its later ones wait.
	var sel []*types.Tx
	byTx := map[*types.Tx]laneTx{}
	blocked := map[types.Address]bool{}
	for i, lt := range cands {
		from := senders[i]
		switch {
		case lt.tx == nil: // rejected above
			blocked[from] = true
			continue
		case taken[i]:
		case blocked[from] || !fits(lt, false):
			blocked[from] = true
			res.Deferred = append(res.Deferred, lt.tx)
			continue
		default:
			take(i)
		}
		sel = append(sel, lt.tx)
		byTx[lt.tx] = lt
	}
	ordered, err := CanonicalOrder(sel, seed)
	if err != nil {
		return nil, err
	}
	out := make([]laneTx, len(ordered))
	for i, tx := range ordered {
		out[i] = byTx[tx]
	}
	return out, nil
}

// blockClaims are the cycles a block sets aside before its transactions,
// computed by every node from the state at the start of the block: the
// timer lane's (planTimers) and the job callbacks' (planCallbacks, taken
// out of the runner lane's reservation).
type blockClaims struct {
	timers, callbacks uint64
}

func (c blockClaims) total() uint64 { return c.timers + c.callbacks }

// verifyLanes is the validator's side: every transaction passes the
// stateless checks, the block's transactions reserve (by limits) at most
// the block's cycles minus the timer and callback claims and at most its
// cells, and they are in canonical seed order.
func (e *Executor) verifyLanes(txs []*types.Tx, bf fees.Basefees, cl blockClaims, seed types.Hash) ([]laneTx, error) {
	out := make([]laneTx, 0, len(txs))
	var used [fees.NumLanes]uint64
	var cycles, cells uint64
	for i, tx := range txs {
		lt, err := e.checkStateless(tx, bf)
		if err != nil {
			return nil, fmt.Errorf("execution: tx %d (%s): %w", i, tx.Hash(), err)
		}
		used[lt.lane] += tx.CyclesLimit()
		cycles += tx.CyclesLimit()
		cells += tx.CellsLimit()
		out = append(out, lt)
	}
	caps := e.LaneCaps()
	if cycles > caps.Total-min(cl.total(), caps.Total) {
		return nil, fmt.Errorf("execution: %w: transactions reserve %d cycles (system %d, runner %d, user %d), the timer lane claims %d and job callbacks %d; the block holds %d",
			ErrLaneBudget, cycles, used[fees.LaneSystem], used[fees.LaneRunner], used[fees.LaneUser], cl.timers, cl.callbacks, caps.Total)
	}
	if cells > e.cfg.Fees.MaxBlockCells {
		return nil, fmt.Errorf("execution: %w: transactions reserve %d cells; the block holds %d", ErrLaneBudget, cells, e.cfg.Fees.MaxBlockCells)
	}
	want, err := CanonicalOrder(txs, seed)
	if err != nil {
		return nil, fmt.Errorf("execution: %w", err)
	}
	for i := range txs {
		if txs[i] != want[i] {
			return nil, fmt.Errorf("execution: %w: tx %d is %s, the seed order puts %s there", ErrLaneOrder, i, txs[i].Hash(), want[i].Hash())
		}
	}
	return out, nil
}

// CallbackBudget is the most cycles job callbacks may claim in one block:
// OffchainParams.CallbackBlockCycles, or by default half the runner lane's
// reserved cycles. The claim is taken out of the runner lane's reservation
// before the block's runner-lane transactions, which get what is left of it
// (and compete for the rest of the block beyond that); with the default,
// runner transactions keep at least half the reservation however many
// callbacks are waiting, so results and reveals land on time under a
// callback backlog.
func (e *Executor) CallbackBudget() uint64 { return callbackBudget(e.cfg) }

func callbackBudget(cfg Config) uint64 {
	if b := cfg.Offchain.CallbackBlockCycles; b > 0 {
		return b
	}
	return cfg.Lanes.Caps(cfg.Fees).Reserved[fees.LaneRunner] / 2
}

// checkCallbackBudget refuses a configuration under which no callback could
// ever be delivered (one callback larger than the budget) or the callback
// claim could crowd the timer lane's reservation out of the block.
func checkCallbackBudget(cfg Config) error {
	caps := cfg.Lanes.Caps(cfg.Fees)
	b := callbackBudget(cfg)
	if per := cfg.Offchain.CallbackCycles; per > b {
		return fmt.Errorf("offchain: a job callback's %d cycles exceed the per-block callback budget %d", per, b)
	}
	if room := caps.Total - caps.Reserved[fees.LaneTimer]; b > room {
		return fmt.Errorf("offchain: callback budget %d exceeds the %d cycles a block holds beside the timer lane", b, room)
	}
	return nil
}
