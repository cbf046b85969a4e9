// Package mempool holds transactions waiting for a block: per-account queues
// ordered by nonce, replacement of a pending transaction by one paying more,
// per-account and global limits with eviction, and selection of executable
// transactions by effective fee (spec 002 §6.4), lane by lane (SelectLanes,
// §6.3/§17.9; docs/LANES.md). It checks nothing against state by itself:
// the caller passes in the account nonce and balance it validated against.
//
// A sender's transactions are of two kinds. Executable ones form the
// contiguous run of nonces from the sender's state nonce; gapped ones wait
// for an earlier nonce that is missing (never sent, or refused by
// execution). Gapped transactions are bounded per sender and overall, and
// expire after Config.GapLifetime, so they can never hold the pool: when it
// is full, an executable newcomer evicts gapped transactions first, then
// executable ones that cannot pay the basefee, and only then the cheapest
// executable tail, if it pays more (docs/CONSENSUS.md §8.4, *Saturation*).
package mempool

import (
	"container/heap"
	"fmt"
	"math/big"
	"sort"
	"sync"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/fees"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Admission failures with stable codes.
var (
	ErrAlreadyKnown = types.NewError("already_known", "transaction already in the pool")
	ErrUnderpriced  = types.NewError("replacement_underpriced", "replacement must raise the fee by at least the price bump")
	ErrAccountFull  = types.NewError("account_pool_full", "too many pending transactions from this account")
	ErrPoolFull     = types.NewError("pool_full", "transaction pool is full and this transaction pays too little to evict another")
	ErrGapFull      = types.NewError("nonce_gap_queue_full", "too many transactions waiting for an earlier nonce")
	ErrNonceTooLow  = types.ErrNonceTooLow
	ErrNonceGap     = types.ErrNonceGap
	ErrInsufficient = types.ErrInsufficientBalance
)

const (
	defaultPriceBump   = uint64(10)
	defaultMaxAccount  = 64
	defaultMaxTotal    = 10_000
	defaultMaxGap      = uint64(64)
	defaultGapAccount  = 32
	defaultGapLifetime = 2 * time.Minute
)

// Config sets the pool's limits. Zero values take defaults.
type Config struct {
	MaxPerAccount int    // transactions per sender, executable and gapped (64)
	MaxTotal      int    // transactions overall (10,000)
	MaxNonceGap   uint64 // how far ahead of the account nonce a transaction may be (64)
	PriceBumpPct  uint64 // minimum fee increase for a replacement, percent (10)
	// Gapped transactions: per sender (32; gossip can reorder a sender's
	// nonces), overall (MaxTotal/8), and how
	// long one may wait for its missing predecessor (2 min).
	MaxGappedPerAccount int
	MaxGapped           int
	GapLifetime         time.Duration
	Now                 func() time.Time // clock for GapLifetime; time.Now
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
	if c.MaxGappedPerAccount <= 0 {
		c.MaxGappedPerAccount = defaultGapAccount
	}
	if c.MaxGapped <= 0 {
		c.MaxGapped = max(c.MaxTotal/8, 1)
	}
	if c.GapLifetime <= 0 {
		c.GapLifetime = defaultGapLifetime
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

type entry struct {
	tx     *types.Tx
	in     types.Instruction
	from   types.Address
	gapped time.Time // when it last became gapped; zero while executable
	cost   *big.Int  // fees.MaxCost(tx), computed once at admission; read only
	// ordered: the transaction is in a proposed or final block that is
	// not executed yet (MarkOrdered).
	ordered bool
	fee     *big.Int // fees.EffectiveFee at feeBf (feeAt); read only
	feeBf   fees.Basefees
}

// feeAt is fees.EffectiveFee(e.tx, e.in, bf), kept for the last basefees
// asked: the victim scan and selection rank the same entries at the same
// basefees many times between blocks. Callers hold the pool's lock and do
// not modify the result.
func (e *entry) feeAt(bf fees.Basefees) *big.Int {
	if e.fee == nil || e.feeBf != bf {
		e.fee, e.feeBf = fees.EffectiveFee(e.tx, e.in, bf), bf
	}
	return e.fee
}

// account is one sender's transactions. Nonces [base, end) are present and
// executable; every other transaction is gapped.
type account struct {
	txs     map[uint64]*entry
	base    uint64 // the sender's state nonce, as last reported
	end     uint64
	top     uint64 // the highest nonce present
	ngapped int
}

// Pool is a transaction pool. It is safe for concurrent use.
type Pool struct {
	cfg      Config
	mu       sync.Mutex
	byHash   map[types.Hash]*entry
	accounts map[types.Address]*account
	ngapped  int
	nordered int // entries marked ordered
	// gen counts changes; victims caches the eviction candidates computed
	// at gen, so that refusing a flood of transactions at a full pool costs
	// one scan, not one per transaction.
	gen     uint64
	victims *victims
	// limit is the admission limit in force, at most MaxTotal (SetLimit).
	limit int
}

// New returns an empty pool.
func New(cfg Config) *Pool {
	cfg.fill()
	return &Pool{cfg: cfg, byHash: make(map[types.Hash]*entry), accounts: make(map[types.Address]*account), limit: cfg.MaxTotal}
}

// AccountState is what the caller read from state for the sender.
type AccountState struct {
	Nonce   uint64
	Balance *big.Int
}

// Add admits a transaction that already passed the stateless checks,
// within the admission limit (SetLimit). It returns the hash of a
// transaction it replaced or evicted, if any.
func (p *Pool) Add(tx *types.Tx, in types.Instruction, acc AccountState, bf fees.Basefees) (dropped *types.Hash, err error) {
	return p.add(tx, in, acc, bf, false)
}

// AddRelayed is Add for a transaction another validator admitted and
// relayed: it is held up to MaxTotal, not the admission limit, so that
// every validator's pool holds what the network admitted and the leader's
// blocks are full, while each validator's own clients are held to the
// limit.
func (p *Pool) AddRelayed(tx *types.Tx, in types.Instruction, acc AccountState, bf fees.Basefees) (dropped *types.Hash, err error) {
	return p.add(tx, in, acc, bf, true)
}

func (p *Pool) add(tx *types.Tx, in types.Instruction, acc AccountState, bf fees.Basefees, relayed bool) (dropped *types.Hash, err error) {
	from, err := tx.Sender()
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.byHash[tx.Hash()]; ok {
		return nil, ErrAlreadyKnown
	}
	gen0 := p.gen
	nonce := tx.Nonce()
	if nonce < acc.Nonce {
		return nil, fmt.Errorf("%w: nonce %d, account at %d", ErrNonceTooLow, nonce, acc.Nonce)
	}
	if nonce > acc.Nonce+p.cfg.MaxNonceGap {
		return nil, fmt.Errorf("%w: nonce %d, account at %d, limit +%d", ErrNonceGap, nonce, acc.Nonce, p.cfg.MaxNonceGap)
	}
	a := p.accounts[from]
	if a != nil && acc.Nonce > a.base {
		p.rebase(from, a, acc.Nonce)
		a = p.accounts[from]
	}
	// The balance must cover this transaction and every pending one before
	// it, each at its maximum cost.
	cost := fees.MaxCost(tx)
	need := new(big.Int).Set(cost)
	if a != nil {
		for n, e := range a.txs {
			if n < nonce {
				need.Add(need, e.cost)
			}
		}
	}
	if acc.Balance.Cmp(need) < 0 {
		return nil, fmt.Errorf("%w: balance %s, pending transactions up to nonce %d need %s", ErrInsufficient, acc.Balance, nonce, need)
	}
	ne := &entry{tx: tx, in: in, from: from, cost: cost}
	if a != nil {
		if old, ok := a.txs[nonce]; ok {
			if !p.outbids(ne, old, bf) {
				return nil, fmt.Errorf("%w: +%d%% on max fees and tips", ErrUnderpriced, p.cfg.PriceBumpPct)
			}
			h := old.tx.Hash()
			ne.gapped = old.gapped
			p.unorder(old)
			delete(p.byHash, h)
			a.txs[nonce] = ne
			p.byHash[tx.Hash()] = ne
			p.gen++
			return &h, nil
		}
		if len(a.txs) >= p.cfg.MaxPerAccount {
			return nil, fmt.Errorf("%w: %d pending", ErrAccountFull, len(a.txs))
		}
	}
	end := acc.Nonce
	if a != nil {
		end = a.end
	}
	gapped := nonce > end
	if gapped {
		if a != nil && a.ngapped >= p.cfg.MaxGappedPerAccount {
			return nil, fmt.Errorf("%w: %d from this account wait for nonce %d", ErrGapFull, a.ngapped, end)
		}
		if p.ngapped >= p.cfg.MaxGapped {
			v := p.victimsLocked(bf).gapped
			if v == nil || !p.expired(v) {
				return nil, fmt.Errorf("%w: %d in the pool", ErrGapFull, p.ngapped)
			}
			dropped = p.evict(v)
		}
	}
	limit := p.limit
	if relayed {
		limit = p.cfg.MaxTotal
	}
	if dropped == nil && len(p.byHash) >= limit {
		v := p.victimFor(tx, in, gapped, bf)
		if v == nil {
			return nil, ErrPoolFull
		}
		dropped = p.evict(v)
	}
	if a = p.accounts[from]; a == nil {
		a = &account{txs: make(map[uint64]*entry), base: acc.Nonce, end: acc.Nonce}
		p.accounts[from] = a
	}
	a.txs[nonce] = ne
	p.byHash[tx.Hash()] = ne
	p.recount(from, a)
	if p.gen == gen0+1 {
		p.foldVictims(from, a)
	}
	return dropped, nil
}

// victimFor picks what a newcomer to a full pool may evict: a gapped
// transaction (the one stuck longest) for an executable newcomer, or for a
// gapped one if that has expired; else, for an executable newcomer that can
// pay the basefee, an executable tail that cannot; else the cheapest
// executable tail if the newcomer pays strictly more. Only tails are
// evicted, so eviction never opens a gap. nil means refuse.
func (p *Pool) victimFor(tx *types.Tx, in types.Instruction, gapped bool, bf fees.Basefees) *entry {
	v := p.victimsLocked(bf)
	if v.gapped != nil && (!gapped || p.expired(v.gapped)) {
		return v.gapped
	}
	if gapped || fees.Includable(tx, bf) != nil {
		return nil
	}
	if v.stuck != nil {
		return v.stuck
	}
	if v.cheap != nil && v.cheapFee.Cmp(fees.EffectiveFee(tx, in, bf)) < 0 {
		return v.cheap
	}
	return nil
}

func (p *Pool) expired(e *entry) bool {
	return !e.gapped.IsZero() && p.cfg.Now().Sub(e.gapped) >= p.cfg.GapLifetime
}

// victims are the eviction candidates at one pool generation and basefee.
type victims struct {
	gen      uint64
	bf       fees.Basefees
	gapped   *entry // the gapped tail stuck longest
	stuck    *entry // an executable tail that cannot pay the basefee
	cheap    *entry // the cheapest executable tail
	cheapFee *big.Int
}

// victimsLocked scans every sender's tails once per pool generation.
func (p *Pool) victimsLocked(bf fees.Basefees) *victims {
	if v := p.victims; v != nil && v.gen == p.gen && v.bf == bf {
		return v
	}
	v := &victims{gen: p.gen, bf: bf}
	for _, a := range p.accounts {
		v.fold(a)
	}
	p.victims = v
	return v
}

// fold takes a's tails into the candidates.
func (v *victims) fold(a *account) {
	if a.ngapped > 0 {
		t := a.txs[a.top]
		if v.gapped == nil || t.gapped.Before(v.gapped.gapped) || (t.gapped.Equal(v.gapped.gapped) && lessHash(t.tx.Hash(), v.gapped.tx.Hash())) {
			v.gapped = t
		}
	}
	if a.end == a.base {
		return
	}
	t := a.txs[a.end-1]
	if fees.Includable(t.tx, v.bf) != nil {
		if v.stuck == nil || lessHash(t.tx.Hash(), v.stuck.tx.Hash()) {
			v.stuck = t
		}
		return
	}
	f := t.feeAt(v.bf)
	if v.cheap == nil || f.Cmp(v.cheapFee) < 0 || (f.Cmp(v.cheapFee) == 0 && lessHash(v.cheap.tx.Hash(), t.tx.Hash())) {
		v.cheap, v.cheapFee = t, f
	}
}

// foldVictims keeps the candidates current after an admission that
// changed only from's transactions (one generation, nothing evicted or
// rebased): the other senders' tails are as they were, so unless a
// candidate was one of from's, the candidates are the old ones folded with
// from's new tails. Under overload every admission (a client's or a
// relayed one) would otherwise make the next refusal scan every sender.
func (p *Pool) foldVictims(from types.Address, a *account) {
	v := p.victims
	if v == nil || v.gen+1 != p.gen {
		return
	}
	for _, e := range []*entry{v.gapped, v.stuck, v.cheap} {
		if e != nil && e.from == from {
			return // from's old tail may be a tail no more: scan again
		}
	}
	v.fold(a)
	v.gen = p.gen
}

func (p *Pool) evict(e *entry) *types.Hash {
	h := e.tx.Hash()
	p.removeLocked(e)
	return &h
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

func lessHash(a, b types.Hash) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// recount reclassifies a sender's transactions after a change: the run
// from its base is executable, the rest gapped (stamped when they became
// so). It drops nothing: a transaction removed because it was included
// leaves a hole until Prune moves the base past it, and those behind it
// are executable again then. Expiry and MaxGapped (Prune) bound what a
// refused nonce strands.
func (p *Pool) recount(from types.Address, a *account) {
	p.gen++
	p.ngapped -= a.ngapped
	a.end = a.base
	for a.txs[a.end] != nil {
		a.end++
	}
	a.top, a.ngapped = 0, 0
	var now time.Time
	for n, e := range a.txs {
		a.top = max(a.top, n)
		if n < a.end {
			e.gapped = time.Time{}
			continue
		}
		a.ngapped++
		if e.gapped.IsZero() {
			if now.IsZero() {
				now = p.cfg.Now()
			}
			e.gapped = now
		}
	}
	p.ngapped += a.ngapped
	if len(a.txs) == 0 {
		delete(p.accounts, from)
	}
}

// rebase moves a sender to a new state nonce, dropping what it passed.
func (p *Pool) rebase(from types.Address, a *account, nonce uint64) {
	for n, e := range a.txs {
		if n < nonce {
			p.unorder(e)
			delete(p.byHash, e.tx.Hash())
			delete(a.txs, n)
		}
	}
	a.base = nonce
	p.recount(from, a)
}

func (p *Pool) removeLocked(e *entry) {
	p.unorder(e)
	delete(p.byHash, e.tx.Hash())
	a := p.accounts[e.from]
	delete(a.txs, e.tx.Nonce())
	p.recount(e.from, a)
}

func (p *Pool) unorder(e *entry) {
	if e.ordered {
		e.ordered = false
		p.nordered--
	}
}

// MarkOrdered records that these transactions are in a block proposed or
// finalized but not executed yet (hashes not in the pool are ignored).
// They stay in the pool, and selectable, until execution moves their
// senders' nonces past them, or a later block includes them if the one
// that held them is abandoned; the mark only says they are already on
// their way.
func (p *Pool) MarkOrdered(hs ...types.Hash) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, h := range hs {
		if e, ok := p.byHash[h]; ok && !e.ordered {
			e.ordered = true
			p.nordered++
		}
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

// Len is the number of transactions in the pool, executable and gapped.
func (p *Pool) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.byHash)
}

// Gapped is the number of transactions waiting for a missing earlier nonce.
func (p *Pool) Gapped() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ngapped
}

// PendingNonce is the next nonce a sender should use given its state nonce:
// one past the end of its contiguous run of pending transactions.
func (p *Pool) PendingNonce(a types.Address, stateNonce uint64) uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := stateNonce
	acc := p.accounts[a]
	if acc == nil {
		return n
	}
	for acc.txs[n] != nil {
		n++
	}
	return n
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

// Prune moves every sender to its state nonce (nonceOf reads state),
// dropping the transactions below it (included elsewhere or replaced on
// chain), then drops gapped transactions that waited longer than
// GapLifetime, and the longest-waiting ones beyond MaxGapped.
func (p *Pool) Prune(nonceOf func(types.Address) (uint64, error)) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for from, a := range p.accounts {
		n, err := nonceOf(from)
		if err != nil {
			return err
		}
		if n > a.base {
			p.rebase(from, a, n) // may delete from the map: safe while ranging
		}
	}
	p.expireLocked()
	return nil
}

// expireLocked drops expired gapped transactions and, past MaxGapped, the
// ones that waited longest.
func (p *Pool) expireLocked() {
	if p.ngapped == 0 {
		return
	}
	var gapped []*entry
	for _, a := range p.accounts {
		if a.ngapped == 0 {
			continue
		}
		for n, e := range a.txs {
			if n > a.end {
				gapped = append(gapped, e)
			}
		}
	}
	sort.Slice(gapped, func(i, j int) bool {
		if !gapped[i].gapped.Equal(gapped[j].gapped) {
			return gapped[i].gapped.Before(gapped[j].gapped)
		}
		return lessHash(gapped[i].tx.Hash(), gapped[j].tx.Hash())
	})
	excess := p.ngapped - p.cfg.MaxGapped
	for i, e := range gapped {
		if i >= excess && !p.expired(e) {
			break
		}
		if _, ok := p.byHash[e.tx.Hash()]; ok {
			p.removeLocked(e)
		}
	}
}

// sortedAccounts lists the senders in a fixed order that favours no
// address range: by the hash of the address.
func (p *Pool) sortedAccounts() []types.Address {
	type keyed struct {
		a types.Address
		k types.Hash
	}
	ks := make([]keyed, 0, len(p.accounts))
	for a := range p.accounts {
		ks = append(ks, keyed{a, types.Keccak256(a[:])})
	}
	sort.Slice(ks, func(i, j int) bool { return lessHash(ks[i].k, ks[j].k) })
	out := make([]types.Address, len(ks))
	for i, k := range ks {
		out[i] = k.a
	}
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
	item := func(e *entry) *laneItem { return &laneItem{e: e, fee: e.feeAt(bf)} }
	next := map[types.Address]uint64{}
	for _, from := range p.sortedAccounts() {
		n, err := nonceOf(from)
		if err != nil {
			return nil, err
		}
		// A sender whose next transaction cannot pay the basefee waits.
		if e, ok := p.accounts[from].txs[n]; ok && fees.Includable(e.tx, bf) == nil {
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
		if ne, ok := p.accounts[e.from].txs[n]; ok && fees.Includable(ne.tx, bf) == nil {
			heap.Push(h, item(ne))
			next[e.from] = n + 1
		}
	}
	return out, nil
}

// Counts returns, read at once, the transactions marked ordered
// (MarkOrdered), and the others that are executable or gapped.
func (p *Pool) Counts() (executable, ordered, gapped int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ordered = p.nordered
	gapped = min(p.ngapped, len(p.byHash)-ordered) // an ordered one counts as ordered
	return len(p.byHash) - ordered - gapped, ordered, gapped
}

// Executable is the number of transactions that are not gapped.
func (p *Pool) Executable() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.byHash) - p.ngapped
}

// Refuses reports, without recovering the sender, that a full pool would
// refuse tx: nothing gapped or stuck to evict and the cheapest executable
// tail pays at least as much. The node asks before the signature check,
// so that excess load at a full pool costs a lookup, not a recovery; a
// false answer decides nothing (Add decides).
func (p *Pool) Refuses(tx *types.Tx, in types.Instruction, bf fees.Basefees) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.byHash) < p.limit {
		return false
	}
	v := p.victimsLocked(bf)
	if v.gapped != nil || v.stuck != nil {
		return false
	}
	if fees.Includable(tx, bf) != nil {
		return true
	}
	return v.cheap == nil || v.cheapFee.Cmp(fees.EffectiveFee(tx, in, bf)) >= 0
}

// Full reports whether the pool is at its admission limit.
func (p *Pool) Full() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.byHash) >= p.limit
}

// SetLimit sets the admission limit to n (at most MaxTotal, at least 1):
// a node sizes its pool to a few blocks of what it can execute, so that
// under overload the excess is refused at admission, cheaply and at once,
// instead of queueing for many intervals (what is already in stays).
func (p *Pool) SetLimit(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.limit = min(max(n, 1), p.cfg.MaxTotal)
}

// MaxTotal is the configured capacity (Config.MaxTotal after defaults).
func (p *Pool) MaxTotal() int { return p.cfg.MaxTotal }
