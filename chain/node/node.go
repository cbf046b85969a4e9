// Package node wires a single Cowboy validator together: the chain store,
// the executor, the mempool, block production on a clock, the devnet faucet
// and the notification feed behind the API's event stream. Everything that
// touches disk, the clock or the network lives here or further out; the
// state transition itself is chain/execution.
package node

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/execution"
	"github.com/cowboy-foundation/cowboy/chain/fees"
	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/mempool"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/state/smt"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/pvm"
)

// Config configures a node. Home is required; everything else has defaults.
type Config struct {
	Home          string
	BlockInterval time.Duration // default 1s; on a network, the pace of empty blocks
	// MinBlockGap is how soon after its parent a block with transactions
	// (or one that finalizes transactions) may be proposed on a network;
	// default BlockInterval/10 (build.go).
	MinBlockGap time.Duration
	MaxBlockTxs int      // default 5,000
	FaucetMax   *big.Int // largest single faucet grant; default 1,000,000 CBY
	Mempool     mempool.Config
	// VM runs actor code (a *pvm.Engine); nil makes a transfer-only node.
	VM execution.VM
	// Network makes the node a validator of a consensus network; it is
	// required when the genesis lists validators with BLS keys and unused
	// on a single-validator devnet.
	Network *Network
	Logger  *slog.Logger
	Now     func() time.Time
	Metrics Metrics // block timings; nil records nothing
	// PruneKeep is how many recent heights' state (Merkle nodes) the node
	// keeps for proofs, light clients and snapshots; older state is
	// deleted while the node runs (default DefaultPruneKeep). Blocks and
	// receipts are kept unless PruneHistory is set. Archive keeps every height's state.
	PruneKeep uint64
	Archive   bool
	// PruneHistory, when not 0, also deletes the block history (headers,
	// transactions, receipts and their indexes) below the last
	// PruneHistory heights (chain/store/prune_history.go): the API then
	// serves blocks, receipts and events of that window only. 0 keeps all
	// history (the default); an archive node keeps all.
	PruneHistory uint64
}

func (c *Config) fill() {
	if c.BlockInterval <= 0 {
		c.BlockInterval = time.Second
	}
	if c.MinBlockGap <= 0 || c.MinBlockGap > c.BlockInterval {
		c.MinBlockGap = c.BlockInterval / 10
	}
	if c.MaxBlockTxs <= 0 {
		c.MaxBlockTxs = 5000
	}
	if c.FaucetMax == nil {
		c.FaucetMax = genesis.CBY(1_000_000)
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.PruneKeep == 0 {
		c.PruneKeep = DefaultPruneKeep
	}
}

// Paths of a node home directory.
func GenesisPath(home string) string   { return filepath.Join(home, "genesis.json") }
func DBPath(home string) string        { return filepath.Join(home, "data", "chain.db") }
func FaucetKeyPath(home string) string { return filepath.Join(home, "faucet.key") }

// Node is a running single-validator chain node.
type Node struct {
	cfg    Config
	log    *slog.Logger
	gen    *genesis.Genesis
	store  *store.Store
	exec   *execution.Executor
	pool   *mempool.Pool
	faucet *ecdsa.PrivateKey // nil unless devnet
	// checked holds decoded transactions whose sender is recovered, so
	// that a proposal or a finalized block does not recover it again.
	checked *checkedTxs
	// txWake is signalled when a transaction is admitted; a waiting
	// block builder takes it.
	txWake chan struct{}
	pace   execPace // execution rate, for the mempool's admission limit
	admit  admitStats
	// bf caches the basefees of the latest head read (basefees).
	bf atomic.Pointer[basefeesAt]

	produceMu sync.Mutex // one block at a time
	faucetMu  sync.Mutex // faucet nonces are assigned in order

	feedMu sync.Mutex
	feedCh chan struct{} // closed and replaced on every new head

	consMu sync.Mutex
	cons   *ConsensusStatus // nil on a devnet
	// gossip relays an admitted transaction to the other validators while
	// the consensus loop runs.
	gossip atomic.Pointer[func(*types.Tx)]
	// flog is the validator loop's finalized-block log while it runs
	// (LightAnchor reads it).
	flog atomic.Pointer[finalLog]

	snapBusy atomic.Bool    // a snapshot is being written (snapshot.go)
	bg       sync.WaitGroup // background work Close waits for
}

// checkedTxsMax bounds the checked-transaction cache: a few blocks beyond
// what the mempool holds.
const checkedTxsMax = 1 << 15

// ErrNoFaucet is returned by Faucet on a node without a faucet key.
var ErrNoFaucet = types.NewError("faucet_disabled", "this node has no faucet (devnet only)")

// ErrFaucetLimit is returned for a faucet request above the per-request cap.
var ErrFaucetLimit = types.NewError("faucet_limit", "faucet request above the per-request limit")

// Open loads the genesis from home, opens the database (writing the genesis
// block on first start) and loads the faucet key if the home has one.
func Open(cfg Config) (*Node, error) {
	cfg.fill()
	if cfg.Home == "" {
		return nil, errors.New("node: home directory is required")
	}
	gen, err := genesis.Load(GenesisPath(cfg.Home))
	if err != nil {
		return nil, fmt.Errorf("node: %w (run `cowboyd init --dev --home %s` first)", err, cfg.Home)
	}
	exec, err := execution.New(execution.Config{ChainID: gen.ChainID, Fees: gen.Fees, VM: cfg.VM, Offchain: gen.OffchainParams(), Storage: gen.StorageParams(), Validators: gen.ValidatorParams(), Governance: gen.GovernanceParams(), Rent: gen.Rent, Bridge: gen.Bridge})
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(DBPath(cfg.Home)), 0o700); err != nil {
		return nil, fmt.Errorf("node: %w", err)
	}
	st, err := store.Open(DBPath(cfg.Home))
	if err != nil {
		return nil, err
	}
	st.SetArchive(cfg.Archive)
	n := &Node{cfg: cfg, log: cfg.Logger, gen: gen, store: st, exec: exec, pool: mempool.New(cfg.Mempool), feedCh: make(chan struct{}),
		checked: newCheckedTxs(checkedTxsMax), txWake: make(chan struct{}, 1)}
	if _, err := st.Head(); errors.Is(err, store.ErrNotInitialized) {
		blk, err := st.Commit(gen.State(), func(root types.Hash) (*types.Block, []*types.Receipt, error) {
			return gen.Block(root), nil, nil
		})
		if err != nil {
			st.Close()
			return nil, fmt.Errorf("node: write genesis: %w", err)
		}
		n.log.Info("genesis written", "chain_id", gen.ChainID, "hash", blk.Hash(), "state_root", blk.Header.StateRoot)
	} else if err != nil {
		st.Close()
		return nil, err
	} else if err := n.checkGenesis(); err != nil {
		st.Close()
		return nil, err
	}
	if gen.Faucet != nil {
		key, err := LoadKeyFile(FaucetKeyPath(cfg.Home))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			st.Close()
			return nil, fmt.Errorf("node: faucet key: %w", err)
		}
		if key != nil && types.PubkeyToAddress(key.PublicKey) == *gen.Faucet {
			n.faucet = key
		}
	}
	return n, nil
}

// checkGenesis refuses a database that was created from a different genesis.
func (n *Node) checkGenesis() error {
	tree := smt.New(smt.NewMemStore(), smt.EmptyRoot)
	for _, w := range n.gen.State() {
		if err := tree.Update(w.Key, w.Value); err != nil {
			return err
		}
	}
	want := n.gen.Block(types.Hash(tree.Root()))
	return n.store.View(func(v *store.View) error {
		g0, err := v.Block(0)
		if err != nil {
			return err
		}
		if g0.Hash() != want.Hash() {
			return fmt.Errorf("node: database genesis %s does not match %s (expected %s)", g0.Hash(), GenesisPath(n.cfg.Home), want.Hash())
		}
		return nil
	})
}

// Close releases the database.
func (n *Node) Close() error { n.bg.Wait(); return n.store.Close() }

// Genesis returns the genesis document.
func (n *Node) Genesis() *genesis.Genesis { return n.gen }

// Store exposes the chain database for read access.
func (n *Node) Store() *store.Store { return n.store }

// Pool exposes the mempool.
func (n *Node) Pool() *mempool.Pool { return n.pool }

// Query runs a read-only handler call against the latest state.
func (n *Node) Query(ctx context.Context, actor, caller types.Address, handler string, args []byte) (ret []byte, cycles uint64, height uint64, err error) {
	err = n.store.View(func(v *store.View) error {
		h := v.Head()
		height = h.Height
		seed, err := n.seedOf(v, h)
		if err != nil {
			return err
		}
		env := execution.BlockEnv{Height: h.Height, Timestamp: h.Timestamp, Proposer: h.Proposer, Seed: seed}
		ret, cycles, err = n.exec.Query(ctx, v, env, actor, caller, handler, args)
		return err
	})
	return ret, cycles, height, err
}

// seedOf is the randomness seed block h was executed with: on a consensus
// network the parent's beacon value R_{h-1} (the genesis seed for block
// 1), on a devnet the parent block hash.
func (n *Node) seedOf(v *store.View, h *types.Header) (types.Hash, error) {
	if !n.gen.Multi() {
		return h.ParentHash, nil
	}
	if h.Height <= 1 {
		g, err := v.Block(0)
		if err != nil {
			return types.Hash{}, err
		}
		return n.gen.Seed(g.Hash()), nil
	}
	p, err := v.Header(h.Height - 1)
	if err != nil {
		return types.Hash{}, err
	}
	return p.VRFOutput, nil
}

// Executor exposes the state transition.
func (n *Node) Executor() *execution.Executor { return n.exec }

// Run runs the node until ctx is cancelled: on a consensus network it
// takes part in consensus as a validator; on a devnet it produces a block
// every BlockInterval.
func (n *Node) Run(ctx context.Context) error {
	defer n.startPruner(ctx)()
	if n.gen.Multi() {
		if n.cfg.Network != nil && n.cfg.Network.Full {
			return n.runFull(ctx)
		}
		return n.runValidator(ctx)
	}
	head, err := n.store.Head()
	if err != nil {
		return err
	}
	n.log.Info("producing blocks", "height", head.Height, "interval", n.cfg.BlockInterval, "proposer", n.gen.Proposer())
	t := time.NewTicker(n.cfg.BlockInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			blk, err := n.ProduceBlock(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				// Nothing was committed; the next tick retries with the same
				// state. A node failure (a crashed PVM worker, say) must not
				// take the chain down.
				n.log.Error("block production failed; retrying", "err", err)
				continue
			}
			if len(blk.Txs) > 0 {
				n.log.Info("block", "height", blk.Header.Height, "txs", len(blk.Txs), "hash", blk.Hash())
			} else {
				n.log.Debug("block", "height", blk.Header.Height, "hash", blk.Hash())
			}
		}
	}
}

// ProduceBlock builds, executes and commits one block from the mempool.
func (n *Node) ProduceBlock(ctx context.Context) (*types.Block, error) {
	n.produceMu.Lock()
	defer n.produceMu.Unlock()
	var (
		head *types.Header
		env  execution.BlockEnv
		res  *execution.Result
	)
	err := n.store.View(func(v *store.View) error {
		head = v.Head()
		bf, err := execution.Basefees(v)
		if err != nil {
			return err
		}
		txs, err := n.selectTxs(v, bf, nil)
		if err != nil {
			return err
		}
		env = execution.BlockEnv{Height: head.Height + 1, Timestamp: n.timestamp(head), Proposer: n.gen.Proposer(), Seed: head.Hash()}
		start := time.Now()
		res, err = n.exec.Apply(ctx, v, env, txs, execution.Build)
		n.observeExecution(start, len(txs))
		return err
	})
	if err != nil {
		return nil, err
	}
	// The header carries the timestamp the block executed with (env's),
	// not a second reading of the clock.
	commitStart := time.Now()
	blk, err := n.store.CommitEncoded(res.Writes, func(root types.Hash) (*types.Block, []*types.Receipt, [][]byte, error) {
		blk, encoded := res.BlockEncoded(n.gen.ChainID, head, env, root)
		return blk, res.Receipts, encoded, nil
	})
	if err != nil {
		return nil, err
	}
	n.observeCommit(commitStart)
	if err := n.afterCommit(res); err != nil {
		return nil, err
	}
	return blk, nil
}

// selectTxs picks the payload of the next block from the mempool against
// the state in v at basefees bf. pending holds transactions already ordered
// on top of v (blocks proposed or finalized but not yet executed, on a
// consensus network): they are not picked again, and their senders' nonces
// count as used. This is the one place block building chooses
// transactions.
func (n *Node) selectTxs(v *store.View, bf fees.Basefees, pending []*types.Tx) ([]*types.Tx, error) {
	used := map[types.Hash]bool{}
	next := map[types.Address]uint64{}
	for _, tx := range pending {
		used[tx.Hash()] = true
		if from, err := tx.Sender(); err == nil {
			next[from] = max(next[from], tx.Nonce()+1)
		}
	}
	nonceOf := func(a types.Address) (uint64, error) {
		acc, err := state.ReadAccount(v, a)
		if err != nil {
			return 0, err
		}
		return max(acc.Nonce, next[a]), nil
	}
	txs, err := n.pool.SelectLanes(nonceOf, bf, n.cfg.MaxBlockTxs, n.exec.Lanes(), n.exec.LaneCaps())
	if err != nil || len(used) == 0 {
		return txs, err
	}
	out := txs[:0]
	for _, tx := range txs {
		if !used[tx.Hash()] {
			out = append(out, tx)
		}
	}
	return out, nil
}

// afterCommit tidies the mempool once a block is durable and wakes the
// event stream.
func (n *Node) afterCommit(res *execution.Result) error {
	drop := make([]types.Hash, 0, len(res.Rejected))
	for _, r := range res.Rejected {
		// A nonce gap (an earlier transaction of the sender was refused) may
		// close later; everything else is permanently invalid here.
		if errors.Is(r.Err, types.ErrNonceGap) {
			continue
		}
		n.log.Info("dropping invalid transaction", "tx", r.Tx.Hash(), "err", r.Err)
		drop = append(drop, r.Tx.Hash())
	}
	// Prune first: it moves every sender past its included transactions,
	// so that removing the refused ones leaves gaps only where a nonce
	// really is missing.
	if err := n.store.View(func(v *store.View) error {
		return n.pool.Prune(func(a types.Address) (uint64, error) {
			acc, err := state.ReadAccount(v, a)
			if err != nil {
				return 0, err
			}
			return acc.Nonce, nil
		})
	}); err != nil {
		return err
	}
	n.pool.Remove(drop...)
	n.notify()
	return nil
}

// timestamp is the wall clock in milliseconds, kept strictly increasing.
func (n *Node) timestamp(parent *types.Header) uint64 {
	now := uint64(n.cfg.Now().UnixMilli())
	if now <= parent.Timestamp {
		return parent.Timestamp + 1
	}
	return now
}

// SubmitTx validates and admits an encoded transaction to the mempool.
func (n *Node) SubmitTx(raw []byte) (types.Hash, error) {
	tx, _, err := n.decode(raw)
	if err != nil {
		return types.Hash{}, err
	}
	return n.submit(tx, true)
}

// ErrInvalidCode is returned at admission for actor or library source that
// the PVM validator refuses; the message names line, column and rule.
var ErrInvalidCode = types.NewError("invalid_code", "code refused by the PVM validator")

// submit admits tx to the mempool and, if relay is set (a client's
// transaction, not a relayed one), gossips it to the other validators of a
// consensus network. A client's transaction is held to the pool's
// admission limit; a relayed one only to its capacity.
func (n *Node) submit(tx *types.Tx, relay bool) (types.Hash, error) {
	h, err := n.admitTx(tx, relay)
	if err != nil {
		n.admit.refuse(err, !relay)
	}
	return h, err
}

func (n *Node) admitTx(tx *types.Tx, relay bool) (types.Hash, error) {
	if relay && n.refusedEarly(tx) {
		return types.Hash{}, mempool.ErrPoolFull
	}
	in, err := n.exec.CheckTx(tx)
	if err != nil {
		return types.Hash{}, err
	}
	// Refuse code that can never deploy before it costs anyone a fee. The
	// executor validates again: this check is a courtesy, not consensus.
	var code []byte
	switch v := in.(type) {
	case *types.Deploy:
		code = v.Code
	case *types.PublishLibrary:
		code = v.Code
	}
	if code != nil {
		src, err := types.CanonicalSource(code)
		if err != nil {
			return types.Hash{}, fmt.Errorf("%w: %v", ErrInvalidCode, err)
		}
		if _, err := n.cfg.VM.Validate(context.Background(), src); err != nil {
			var ve *pvm.ValidationError
			if errors.As(err, &ve) {
				return types.Hash{}, fmt.Errorf("%w: line %d col %d [%s] %s", ErrInvalidCode, ve.Line, ve.Col, ve.Rule, ve.Message)
			}
			return types.Hash{}, fmt.Errorf("validate code: %w", err)
		}
	}
	from, _ := tx.Sender()
	err = n.store.View(func(v *store.View) error {
		acc, err := state.ReadAccount(v, from)
		if err != nil {
			return err
		}
		// Every included transaction advanced its sender's nonce past its
		// own, so only a transaction below the account's nonce can be on
		// chain: the index lookup (a random-key bbolt search) is paid only
		// to name a stale transaction's refusal.
		if tx.Nonce() < acc.Nonce {
			if _, _, _, err := v.FindTx(tx.Hash()); err == nil {
				return fmt.Errorf("%w: included on chain", mempool.ErrAlreadyKnown)
			}
		}
		bf, err := n.basefees(v)
		if err != nil {
			return err
		}
		as := mempool.AccountState{Nonce: acc.Nonce, Balance: acc.Balance}
		if relay {
			_, err = n.pool.Add(tx, in, as, bf)
		} else {
			_, err = n.pool.AddRelayed(tx, in, as, bf)
		}
		return err
	})
	if err != nil {
		return types.Hash{}, err
	}
	n.checked.put(tx)
	select {
	case n.txWake <- struct{}{}:
	default:
	}
	if g := n.gossip.Load(); relay && g != nil {
		(*g)(tx)
	}
	return tx.Hash(), nil
}

// refusedEarly reports that the full mempool would refuse tx whoever sent
// it, checked before the signature is: overload costs a lookup per excess
// transaction.
func (n *Node) refusedEarly(tx *types.Tx) bool {
	if !n.pool.Full() {
		return false
	}
	in, err := types.DecodeInstruction(tx.Payload())
	if err != nil {
		return false // CheckTx says why
	}
	// The basefees of the last head read, without a read transaction: a
	// refusal here is advisory (a block later they may differ slightly).
	var bf fees.Basefees
	if c := n.bf.Load(); c != nil {
		bf = c.bf
	} else if err := n.store.View(func(v *store.View) error {
		bf, err = n.basefees(v)
		return err
	}); err != nil {
		return false
	}
	return n.pool.Refuses(tx, in, bf)
}

// basefeesAt is the basefees in the state of one height.
type basefeesAt struct {
	height uint64
	bf     fees.Basefees
}

// basefees reads the basefees of v's state, decoding them once per head.
func (n *Node) basefees(v *store.View) (fees.Basefees, error) {
	if c := n.bf.Load(); c != nil && c.height == v.Height() {
		return c.bf, nil
	}
	bf, err := execution.Basefees(v)
	if err != nil {
		return fees.Basefees{}, err
	}
	n.bf.Store(&basefeesAt{height: v.Height(), bf: bf})
	return bf, nil
}

// Faucet sends value from the devnet faucet to addr and returns the hash of
// the transfer it submitted.
func (n *Node) Faucet(to types.Address, value *big.Int) (types.Hash, error) {
	if n.faucet == nil {
		return types.Hash{}, ErrNoFaucet
	}
	if value.Sign() <= 0 {
		return types.Hash{}, fmt.Errorf("%w: value must be positive", types.ErrMalformedTx)
	}
	if value.Cmp(n.cfg.FaucetMax) > 0 {
		return types.Hash{}, fmt.Errorf("%w: %s > %s base units", ErrFaucetLimit, value, n.cfg.FaucetMax)
	}
	n.faucetMu.Lock()
	defer n.faucetMu.Unlock()
	from := *n.gen.Faucet
	var d types.TxData
	err := n.store.View(func(v *store.View) error {
		acc, err := state.ReadAccount(v, from)
		if err != nil {
			return err
		}
		bf, err := execution.Basefees(v)
		if err != nil {
			return err
		}
		est := n.gen.Fees.Suggest(bf, fees.TransferCycles, 0, 0, 0)
		d = types.TxData{
			ChainID: n.gen.ChainID, Nonce: n.pool.PendingNonce(from, acc.Nonce), To: &to, Value: value,
			CyclesLimit: fees.TransferCycles, CellsLimit: 0,
			MaxFeePerCycle: est.MaxFeePerCycle, MaxFeePerCell: est.MaxFeePerCell,
			TipPerCycle: est.TipPerCycle, TipPerCell: est.TipPerCell,
			Payload: types.Bytes{},
		}
		return nil
	})
	if err != nil {
		return types.Hash{}, err
	}
	tx, err := types.NewTx(d)
	if err != nil {
		return types.Hash{}, err
	}
	signed, err := types.SignTx(tx, n.faucet)
	if err != nil {
		return types.Hash{}, err
	}
	return n.submit(signed, true)
}

// HasFaucet reports whether the faucet is enabled.
func (n *Node) HasFaucet() bool { return n.faucet != nil }

// notify wakes everything waiting in NewHead.
func (n *Node) notify() {
	n.feedMu.Lock()
	close(n.feedCh)
	n.feedCh = make(chan struct{})
	n.feedMu.Unlock()
}

// NewHead returns a channel that is closed when the next block is committed.
func (n *Node) NewHead() <-chan struct{} {
	n.feedMu.Lock()
	defer n.feedMu.Unlock()
	return n.feedCh
}

// SetBlockInterval changes the target time between blocks; call it before
// Run.
func (n *Node) SetBlockInterval(d time.Duration) {
	if d > 0 {
		n.cfg.BlockInterval = d
		n.cfg.MinBlockGap = d / 10
	}
}
