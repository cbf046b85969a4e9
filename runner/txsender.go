package runner

import (
	"context"
	"crypto/ecdsa"
	"fmt"
	"math/big"
	"sync"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/fees"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/sdk"
)

// maxAhead bounds how many of the runner's transactions may be pending at
// once: the node's mempool holds at most 64 per account (and refuses nonces
// more than 64 ahead), so building more only produces refusals and rebuilds.
const maxAhead = 60

// txSender builds and signs the daemon's transactions without a round trip
// to the node per transaction, so many jobs' commits and submissions can be
// in flight in the same block (the old path queried status, fees and the
// pending nonce for every transaction while holding one lock over the
// submission, which capped a runner near 25 transactions per second).
//
//   - The nonce is kept locally. It starts at the node's pending nonce, or
//     past the highest nonce of a transaction journaled in the job store
//     (signed and persisted before a crash, maybe never sent), and resyncs
//     from the node after a refusal (a hole left by a refused transaction is
//     then filled by the next one).
//   - Chain id is read once; basefees and the account's state nonce once per
//     block.
//   - Limits are sized from what this runner's transactions of the same kind
//     used (receipts): cycles and cells above the intrinsic cost, scaled by
//     payload size, with 3× headroom, never above the generic off-chain
//     estimate the old path always used. Off-chain transactions declaring 2M
//     cycles and 100k cells each filled a block after ten of them; sized
//     limits let the block's capacity, not the declared worst case, bound a
//     runner.
//
// Submission is the caller's: build, persist, then submit without holding
// the sender's lock; the mempool accepts nonces out of order within its gap.
type txSender struct {
	client *sdk.Client
	key    *ecdsa.PrivateKey
	from   types.Address

	mu        sync.Mutex
	chainID   uint64
	started   bool
	next      uint64          // next nonce to build
	inflight  map[uint64]bool // built, submission not yet answered
	resync    bool            // re-read the pending nonce before the next build
	refreshed uint64          // block height basefees and stateNonce were read at
	basefees  fees.Basefees
	maxTx     [2]uint64 // max tx cycles, cells
	state     uint64    // account nonce at `refreshed`
	holes     int       // consecutive refreshes that saw a hole below next
	refill    uint64    // after a resync, next before it: resync again until past
	usage     map[string]*kindUsage
}

// kindUsage is what transactions of one kind used beyond their intrinsic
// cost: the maximum, and the maximum per payload byte, over samples
// receipts.
type kindUsage struct {
	cycles, cells               uint64
	cyclesPerByte, cellsPerByte float64
	samples                     int
}

// usageSamples is how many receipts of a kind are read to size its limits;
// later transactions are not looked up unless their await step reads the
// receipt anyway.
const usageSamples = 16

// wantsSample reports whether a receipt of kind should be fetched to size
// the kind's limits.
func (s *txSender) wantsSample(kind string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.usage[kind]
	return u == nil || u.samples < usageSamples
}

func newTxSender(c *sdk.Client, key *ecdsa.PrivateKey) *txSender {
	return &txSender{client: c, key: key, from: types.PubkeyToAddress(key.PublicKey), inflight: map[uint64]bool{}, usage: map[string]*kindUsage{}}
}

// start reads the chain id and the pending nonce; floor is one past the
// highest nonce journaled in the store, which the node may never have seen.
func (s *txSender) start(ctx context.Context, floor uint64) error {
	st, err := s.client.Chain().Status(ctx)
	if err != nil {
		return fmt.Errorf("node status: %w", err)
	}
	acc, err := s.client.Chain().Account(ctx, s.from)
	if err != nil {
		return fmt.Errorf("account %s: %w", s.from, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chainID, s.started = st.ChainID, true
	s.next = max(acc.PendingNonce, floor)
	s.state = acc.Nonce
	return nil
}

// refresh re-reads basefees and the account nonce once per block (and the
// pending nonce after a refusal). Called with mu held.
func (s *txSender) refresh(ctx context.Context, height uint64) error {
	if s.refreshed == height && height != 0 && !s.resync {
		return nil
	}
	f, err := s.client.Chain().Fees(ctx)
	if err != nil {
		return fmt.Errorf("fees: %w", err)
	}
	acc, err := s.client.Chain().Account(ctx, s.from)
	if err != nil {
		return fmt.Errorf("account %s: %w", s.from, err)
	}
	s.basefees = fees.Basefees{Cycle: f.BasefeeCycle, Cell: f.BasefeeCell}
	s.maxTx = [2]uint64{f.MaxTxCycles, f.MaxTxCells}
	s.state, s.refreshed = acc.Nonce, height
	// A nonce below next that is neither pending at the node nor being
	// submitted is a hole: a journaled transaction whose job ended without
	// re-sending it, or one lost by the node. Everything after it waits, so
	// after two blocks (a re-send gets one) the next build fills it.
	if acc.PendingNonce < s.next && !s.inflight[acc.PendingNonce] {
		s.holes++
		if s.holes >= 2 {
			s.resync = true
		}
	} else {
		s.holes = 0
	}
	if s.resync {
		s.holes = 0
		s.resync = false
		s.refill = max(s.refill, s.next)
		s.next = acc.PendingNonce
		for s.inflight[s.next] {
			s.next++
		}
	}
	if s.next < acc.Nonce {
		s.next = acc.Nonce
	}
	return nil
}

// build signs the next transaction of kind. It waits for the next block
// (wait) while maxAhead transactions are pending. Every built transaction
// must be reported to submitted, whether or not it was sent.
func (s *txSender) build(ctx context.Context, kind string, to types.Address, value *big.Int, in types.Instruction,
	height func() uint64, wait func(context.Context) error) (*types.Tx, error) {
	payload, err := types.EncodeInstruction(in)
	if err != nil {
		return nil, err
	}
	if value == nil {
		value = new(big.Int)
	}
	for {
		s.mu.Lock()
		if !s.started {
			s.mu.Unlock()
			return nil, fmt.Errorf("tx sender not started")
		}
		if err := s.refresh(ctx, height()); err != nil {
			s.mu.Unlock()
			return nil, err
		}
		// Before the daemon follows blocks (registration, attestation at
		// start) there is no block to wait for: send and let a refusal
		// resync.
		if s.next-min(s.next, s.state) >= maxAhead && height() > 0 {
			s.mu.Unlock()
			if err := wait(ctx); err != nil {
				return nil, err
			}
			continue
		}
		probe, err := types.NewTx(types.TxData{To: &to, Payload: payload})
		if err != nil {
			s.mu.Unlock()
			return nil, err
		}
		ic, ib := fees.Intrinsic(probe, in)
		cy, ce := s.expect(kind, ic, ib, uint64(len(payload)))
		sch := fees.Default()
		sch.MaxTxCycles, sch.MaxTxCells = s.maxTx[0], s.maxTx[1]
		est := sch.Suggest(s.basefees, cy, ce, 0, 0)
		tx, err := types.NewTx(types.TxData{ChainID: s.chainID, Nonce: s.next, To: &to, Value: value,
			CyclesLimit: est.CyclesLimit, CellsLimit: est.CellsLimit, MaxFeePerCycle: est.MaxFeePerCycle, MaxFeePerCell: est.MaxFeePerCell,
			TipPerCycle: est.TipPerCycle, TipPerCell: est.TipPerCell, Payload: payload})
		if err == nil {
			tx, err = types.SignTx(tx, s.key)
		}
		if err != nil {
			s.mu.Unlock()
			return nil, fmt.Errorf("build %s: %w", kind, err)
		}
		s.inflight[s.next] = true
		s.next++
		if s.next < s.refill {
			// Filling a hole: the nonces after it may be pending at the
			// node, so ask again where the contiguous run ends.
			s.resync = true
		} else {
			s.refill = 0
		}
		s.mu.Unlock()
		return tx, nil
	}
}

// expect is the cycles and cells to declare for a transaction of kind:
// the generic off-chain estimate until one was seen, then the intrinsic
// cost plus three times what the kind used beyond it (scaled up to this
// payload if it is larger), capped at the generic estimate.
func (s *txSender) expect(kind string, ic, ib, payload uint64) (uint64, uint64) {
	defCy, defCe := ic+sdk.OffchainExpectCycles, ib+sdk.OffchainExpectCells
	u := s.usage[kind]
	if u == nil {
		return defCy, defCe
	}
	cy := max(u.cycles, uint64(u.cyclesPerByte*float64(payload)))
	ce := max(u.cells, uint64(u.cellsPerByte*float64(payload)))
	return min(defCy, ic+3*cy+10_000), min(defCe, ib+3*ce+1_000)
}

// submitted reports the node's answer to a built transaction; a refusal
// (or a transaction never sent) makes the next build resync the nonce.
func (s *txSender) submitted(tx *types.Tx, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.inflight, tx.Nonce())
	if err != nil {
		s.resync = true
	}
}

// refused makes the next build resync the nonce (a journaled transaction
// the node would no longer take).
func (s *txSender) refused() {
	s.mu.Lock()
	s.resync = true
	s.mu.Unlock()
}

// observe records what an included transaction of kind used.
func (s *txSender) observe(kind string, raw []byte, r *apitypes.Receipt) {
	tx, err := types.DecodeTx(raw)
	if err != nil || r == nil || r.Status != "success" {
		return
	}
	in, err := types.DecodeInstruction(tx.Payload())
	if err != nil {
		return
	}
	ic, ib := fees.Intrinsic(tx, in)
	n := float64(max(len(tx.Payload()), 1))
	cy, ce := r.CyclesUsed-min(r.CyclesUsed, ic), r.CellsUsed-min(r.CellsUsed, ib)
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.usage[kind]
	if u == nil {
		u = &kindUsage{}
		s.usage[kind] = u
	}
	u.samples++
	u.cycles, u.cells = max(u.cycles, cy), max(u.cells, ce)
	u.cyclesPerByte, u.cellsPerByte = max(u.cyclesPerByte, float64(cy)/n), max(u.cellsPerByte, float64(ce)/n)
}
