// Package mempool holds transactions waiting for a block: per-account queues
// ordered by nonce, replacement of a pending transaction by one paying more,
// per-account and global limits with eviction of the cheapest, and selection
// of executable transactions by effective fee (spec 002 §6.4), lane by lane
// (SelectLanes, §6.3/§17.9; docs/LANES.md). It checks
// nothing against state by itself: the caller passes in the account nonce
// and balance it validated against.
package mempool

import (
	"container/heap"
	"fmt"
	"math/big"
	"sort"
	"sync"

	"github.com/cowboy-foundation/cowboy/chain/fees"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Admission failures with stable codes.
var (
	ErrAlreadyKnown   = types.NewError("already_known", "transaction already in the pool")
	ErrUnderpriced    = types.NewError("replacement_underpriced", "replacement must raise the fee by at least the price bump")
	ErrAccountFull    = types.NewError("account_pool_full", "too many pending transactions from this account")
	ErrPoolFull       = types.NewError("pool_full", "transaction pool is full and this transaction pays too little to evict another")
	ErrNonceTooLow    = types.ErrNonceTooLow
	ErrNonceGap       = types.ErrNonceGap
	ErrInsufficient   = types.ErrInsufficientBalance
	defaultPriceBump  = uint64(10)
	defaultMaxAccount = 64
	defaultMaxTotal   = 10_000
	defaultMaxGap     = uint64(64)
)

// Config sets the pool's limits. Zero values take defaults.
type Config struct {
	MaxPerAccount int    // pending transactions per sender (64)
	MaxTotal      int    // pending transactions overall (10,000)
	MaxNonceGap   uint64 // how far ahead of the account nonce a transaction may be (64)
	PriceBumpPct  uint64 // minimum fee increase for a replacement, percent (10)
}

func (c *Config) fill() {
	if c.MaxPerAccount <= 0 {
		c.MaxPerAccount = defaultMaxAccount
	}
	if c.MaxTotal <= 0 {
		c.MaxTotal = defaultMaxTotal
	}
	if c.MaxNonceGap == 0 {
		c.MaxNonceGap = defaultMaxGap
	}
	if c.PriceBumpPct == 0 {
		c.PriceBumpPct = defaultPriceBump
	}
}

type entry struct {
	tx   *types.Tx
	in   types.Instruction
	from types.Address
}

// Pool is a transaction pool. It is safe for concurrent use.
type Pool struct {
	cfg      Config
	mu       sync.Mutex
	byHash   map[types.Hash]*entry
	accounts map[types.Address]map[uint64]*entry
}

// New returns an empty pool.
func New(cfg Config) *Pool {
	cfg.fill()
	return &Pool{cfg: cfg, byHash: make(map[types.Hash]*entry), accounts: make(map[types.Address]map[uint64]*entry)}
}

// AccountState is what the caller read from state for the sender.
type AccountState struct {
	Nonce   uint64
	Balance *big.Int
}

// Add admits a transaction that already passed the stateless checks. It
// returns the hash of a transaction it replaced or evicted, if any.
func (p *Pool) Add(tx *types.Tx, in types.Instruction, acc AccountState, bf fees.Basefees) (dropped *types.Hash, err error) {
	from, err := tx.Sender()
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.byHash[tx.Hash()]; ok {
		return nil, ErrAlreadyKnown
	}
	if tx.Nonce() < acc.Nonce {
		return nil, fmt.Errorf("%w: nonce %d, account at %d", ErrNonceTooLow, tx.Nonce(), acc.Nonce)
	}
	if tx.Nonce() > acc.Nonce+p.cfg.MaxNonceGap {
		return nil, fmt.Errorf("%w: nonce %d, account at %d, limit +%d", ErrNonceGap, tx.Nonce(), acc.Nonce, p.cfg.MaxNonceGap)
	}
	q := p.accounts[from]
	// The balance must cover this transaction and every pending one before
	// it, each at its maximum cost.
	need := fees.MaxCost(tx)
	for n, e := range q {
		if n < tx.Nonce() {
			need.Add(need, fees.MaxCost(e.tx))
		}
	}
	if acc.Balance.Cmp(need) < 0 {
		return nil, fmt.Errorf("%w: balance %s, pending transactions up to nonce %d need %s", ErrInsufficient, acc.Balance, tx.Nonce(), need)
	}
	ne := &entry{tx: tx, in: in, from: from}
	if old, ok := q[tx.Nonce()]; ok {
		if !p.outbids(ne, old, bf) {
			return nil, fmt.Errorf("%w: +%d%% on max fees and tips", ErrUnderpriced, p.cfg.PriceBumpPct)
		}
		h := old.tx.Hash()
		delete(p.byHash, h)
		q[tx.Nonce()] = ne
		p.byHash[tx.Hash()] = ne
		return &h, nil
	}
	if len(q) >= p.cfg.MaxPerAccount {
		return nil, fmt.Errorf("%w: %d pending", ErrAccountFull, len(q))
	}
	if len(p.byHash) >= p.cfg.MaxTotal {
		victim := p.cheapestTail(bf)
		if victim == nil || fees.EffectiveFee(victim.tx, victim.in, bf).Cmp(fees.EffectiveFee(tx, in, bf)) >= 0 {
			return nil, ErrPoolFull
		}
		h := victim.tx.Hash()
		p.removeLocked(victim)
		dropped = &h
	}
	if q == nil {
		q = make(map[uint64]*entry)
		p.accounts[from] = q
	}
	q[tx.Nonce()] = ne
	p.byHash[tx.Hash()] = ne
	return dropped, nil
}

// outbids reports whether n may replace old: max fee and tip per cycle both
// raised by the price bump, and the cell prices raised likewise when the
// transaction uses cells (otherwise merely not lowered).
func (p *Pool) outbids(n, old *entry, bf fees.Basefees) bool {
	bump := func(newV, oldV uint64) bool {
		return new(big.Int).Mul(new(big.Int).SetUint64(newV), big.NewInt(100)).Cmp(
			new(big.Int).Mul(new(big.Int).SetUint64(oldV), new(big.Int).SetUint64(100+p.cfg.PriceBumpPct))) >= 0
	}
	if !bump(n.tx.MaxFeePerCycle(), old.tx.MaxFeePerCycle()) || !bump(n.tx.TipPerCycle(), old.tx.TipPerCycle()) {
		return false
	}
	if n.tx.CellsLimit() > 0 {
		return bump(n.tx.MaxFeePerCell(), old.tx.MaxFeePerCell()) && bump(n.tx.TipPerCell(), old.tx.TipPerCell())
	}
	return n.tx.MaxFeePerCell() >= old.tx.MaxFeePerCell() && n.tx.TipPerCell() >= old.tx.TipPerCell()
}

// cheapestTail is the lowest-paying highest-nonce transaction of any
// account; evicting a tail never leaves a nonce hole.
func (p *Pool) cheapestTail(bf fees.Basefees) *entry {
	var worst *entry
	var worstFee *big.Int
	for _, q := range p.accounts {
		var tail *entry
		for _, e := range q {
			if tail == nil || e.tx.Nonce() > tail.tx.Nonce() {
				tail = e
			}
		}
		if tail == nil {
			continue
		}
		f := fees.EffectiveFee(tail.tx, tail.in, bf)
		if worst == nil || f.Cmp(worstFee) < 0 || (f.Cmp(worstFee) == 0 && lessHash(worst.tx.Hash(), tail.tx.Hash())) {
			worst, worstFee = tail, f
		}
	}
	return worst
}

func lessHash(a, b types.Hash) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

func (p *Pool) removeLocked(e *entry) {
	delete(p.byHash, e.tx.Hash())
	q := p.accounts[e.from]
	delete(q, e.tx.Nonce())
	if len(q) == 0 {
		delete(p.accounts, e.from)
	}
}

// Get returns a pending transaction.
func (p *Pool) Get(h types.Hash) (*types.Tx, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e, ok := p.byHash[h]
	if !ok {
		return nil, false
	}
	return e.tx, true
}

// Len is the number of pending transactions.
func (p *Pool) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.byHash)
}

// PendingNonce is the next nonce a sender should use given its state nonce:
// one past the end of its contiguous run of pending transactions.
func (p *Pool) PendingNonce(a types.Address, stateNonce uint64) uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := stateNonce
	for {
		if _, ok := p.accounts[a][n]; !ok {
			return n
		}
		n++
	}
}

// Remove drops transactions by hash (included or found invalid).
func (p *Pool) Remove(hs ...types.Hash) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, h := range hs {
		if e, ok := p.byHash[h]; ok {
			p.removeLocked(e)
		}
	}
}

// Prune drops every transaction whose nonce is below its sender's state
// nonce (included elsewhere or replaced on chain). nonceOf reads state.
func (p *Pool) Prune(nonceOf func(types.Address) (uint64, error)) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, from := range p.sortedAccounts() {
		n, err := nonceOf(from)
		if err != nil {
			return err
		}
		for nonce, e := range p.accounts[from] {
			if nonce < n {
				p.removeLocked(e)
			}
		}
	}
	return nil
}

func (p *Pool) sortedAccounts() []types.Address {
	out := make([]types.Address, 0, len(p.accounts))
	for a := range p.accounts {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return lessHash(types.Keccak256(out[i][:]), types.Keccak256(out[j][:])) })
	return out
}

// Select returns up to max executable transactions: for each sender the
// contiguous run starting at its state nonce, merged across senders by
// effective fee (highest first, ties by hash), never reordering one sender's
// nonces.
func (p *Pool) Select(nonceOf func(types.Address) (uint64, error), bf fees.Basefees, max int) ([]*types.Tx, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	h := &laneHeap{}
	item := func(e *entry) *laneItem { return &laneItem{e: e, fee: fees.EffectiveFee(e.tx, e.in, bf)} }
	next := map[types.Address]uint64{}
	for _, from := range p.sortedAccounts() {
		n, err := nonceOf(from)
		if err != nil {
			return nil, err
		}
		// A sender whose next transaction cannot pay the basefee waits.
		if e, ok := p.accounts[from][n]; ok && fees.Includable(e.tx, bf) == nil {
			h.items = append(h.items, item(e))
			next[from] = n + 1
		}
	}
	heap.Init(h)
	var out []*types.Tx
	for h.Len() > 0 && len(out) < max {
		e := heap.Pop(h).(*laneItem).e
		out = append(out, e.tx)
		n := next[e.from]
		if ne, ok := p.accounts[e.from][n]; ok && fees.Includable(ne.tx, bf) == nil {
			heap.Push(h, item(ne))
			next[e.from] = n + 1
		}
	}
	return out, nil
}
