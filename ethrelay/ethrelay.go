// Package ethrelay is a bridge member's relayer (spec 002 §16.3;
// docs/ETHEREUM.md): it watches Ethereum contract logs with go-ethereum's
// ethclient (FilterLogs over confirmed blocks only: a log is relayed once
// its block has Confirmations blocks on top) and submits each to the
// Cowboy chain as the member's attestation, through the bridge module
// (chain/system/ethbridge): bridge_event for a subscribing actor, and
// bridge_mint for a deposit of a wrapped asset. Resubmission is safe: the
// chain delivers each (chain, tx hash, log index) once, and the relayer
// takes EventDelivered and AlreadyAttested as done.
package ethrelay

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	ethtypes "github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
)

// Watch is one contract event the relayer follows.
type Watch struct {
	Contract common.Address
	Topic    common.Hash // topic 0, the event signature hash
	// Actor, if set, receives each log as a bridge_event (it must be
	// subscribed).
	Actor *types.Address
	// MintAsset, if set, treats each log as a deposit of that asset's
	// wrapped token: topic 2 is the Cowboy recipient (left-padded) and
	// the first 32 bytes of data the amount (the Deposit layout of
	// VaultSource).
	MintAsset *types.Address
}

// Config configures a relayer. Eth, Node, Key and Watches are required.
type Config struct {
	Eth           *ethclient.Client
	Node          *sdk.Client
	Key           *ecdsa.PrivateKey // the bridge member's key
	ChainID       uint64            // Ethereum chain id; 0: asked of Eth
	Confirmations uint64            // blocks on top of a log's block before it is relayed
	FromBlock     uint64
	Poll          time.Duration // 0: 1s
	Watches       []Watch
	Logger        *slog.Logger
	// Delivered, if set, is called after each log is settled on chain.
	Delivered func(l ethtypes.Log, code system.Code)
}

// MaxRange is the most blocks one FilterLogs call covers.
const MaxRange = 2000

// Relayer relays confirmed logs; Run drives it.
type Relayer struct {
	cfg  Config
	next uint64
	log  *slog.Logger
}

// ErrConfig is returned by New for an incomplete configuration.
var ErrConfig = errors.New("ethrelay: bad configuration")

// New checks cfg and returns a relayer.
func New(cfg Config) (*Relayer, error) {
	if cfg.Eth == nil || cfg.Node == nil || cfg.Key == nil || len(cfg.Watches) == 0 {
		return nil, fmt.Errorf("%w: Eth, Node, Key and at least one Watch are required", ErrConfig)
	}
	for _, w := range cfg.Watches {
		if w.Actor == nil && w.MintAsset == nil {
			return nil, fmt.Errorf("%w: watch of %s delivers nowhere (set Actor or MintAsset)", ErrConfig, w.Contract)
		}
	}
	if cfg.Poll == 0 {
		cfg.Poll = time.Second
	}
	l := cfg.Logger
	if l == nil {
		l = slog.New(slog.DiscardHandler)
	}
	return &Relayer{cfg: cfg, next: cfg.FromBlock, log: l}, nil
}

// Run relays until ctx ends; it returns ctx's error, or the first error
// that is not a transient one of the Ethereum or Cowboy node.
func (r *Relayer) Run(ctx context.Context) error {
	if r.cfg.ChainID == 0 {
		id, err := r.cfg.Eth.ChainID(ctx)
		if err != nil {
			return fmt.Errorf("ethrelay: chain id: %w", err)
		}
		r.cfg.ChainID = id.Uint64()
	}
	tick := time.NewTicker(r.cfg.Poll)
	defer tick.Stop()
	for {
		if err := r.Step(ctx); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			r.log.Warn("ethrelay: step", "err", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// Step relays the logs of the blocks confirmed since the last step.
func (r *Relayer) Step(ctx context.Context) error {
	head, err := r.cfg.Eth.BlockNumber(ctx)
	if err != nil {
		return fmt.Errorf("ethrelay: head: %w", err)
	}
	if head < r.cfg.Confirmations {
		return nil
	}
	safe := head - r.cfg.Confirmations
	if safe < r.next {
		return nil
	}
	// Nodes bound eth_getLogs ranges: scan at most MaxRange blocks a step.
	safe = min(safe, r.next+MaxRange-1)
	for _, w := range r.cfg.Watches {
		logs, err := r.cfg.Eth.FilterLogs(ctx, ethereum.FilterQuery{FromBlock: new(big.Int).SetUint64(r.next), ToBlock: new(big.Int).SetUint64(safe),
			Addresses: []common.Address{w.Contract}, Topics: [][]common.Hash{{w.Topic}}})
		if err != nil {
			return fmt.Errorf("ethrelay: filter logs %d..%d: %w", r.next, safe, err)
		}
		for _, l := range logs {
			if l.Removed {
				continue
			}
			if err := r.relay(ctx, w, l); err != nil {
				return err
			}
		}
	}
	r.next = safe + 1
	return nil
}

// relay submits l for w and waits for its receipt.
func (r *Relayer) relay(ctx context.Context, w Watch, l ethtypes.Log) error {
	var ins []types.Instruction
	if w.Actor != nil {
		ev := &types.BridgeEvent{Actor: *w.Actor, ChainID: r.cfg.ChainID, Contract: types.Address(l.Address), BlockNumber: l.BlockNumber,
			TxHash: types.Hash(l.TxHash), LogIndex: uint64(l.Index), Data: l.Data}
		for _, t := range l.Topics {
			ev.Topics = append(ev.Topics, types.Hash(t))
		}
		ins = append(ins, ev)
	}
	if w.MintAsset != nil {
		if len(l.Topics) < 3 || len(l.Data) < 32 {
			r.log.Warn("ethrelay: deposit log without recipient or amount", "tx", l.TxHash, "index", l.Index)
		} else {
			ins = append(ins, &types.BridgeMint{ChainID: r.cfg.ChainID, Asset: *w.MintAsset, TxHash: types.Hash(l.TxHash), LogIndex: uint64(l.Index),
				To: types.Address(l.Topics[2][12:]), Amount: new(big.Int).SetBytes(l.Data[:32])})
		}
	}
	for _, in := range ins {
		code, err := r.submit(ctx, in)
		var rej *RejectedError
		switch {
		case errors.As(err, &rej):
			// The chain refused the log for good (not subscribed, unpaid,
			// not entitled…): skip it rather than stall every later log.
			r.log.Warn("ethrelay: refused", "kind", in.InstructionKind(), "eth_block", l.BlockNumber, "tx", l.TxHash, "index", l.Index, "err", err)
		case err != nil:
			return err
		default:
			r.log.Info("ethrelay: relayed", "kind", in.InstructionKind(), "eth_block", l.BlockNumber, "tx", l.TxHash, "index", l.Index, "code", code)
		}
		if r.cfg.Delivered != nil {
			r.cfg.Delivered(l, code) // code: why the chain refused it, or OK/EventDelivered/AlreadyAttested
		}
	}
	return nil
}

// submit sends in and waits for it; a delivered or already attested log
// is settled.
func (r *Relayer) submit(ctx context.Context, in types.Instruction) (system.Code, error) {
	tx, err := r.cfg.Node.Account(r.cfg.Key).Bridge().Send(ctx, in, nil, sdk.TxOptions{})
	if err != nil {
		return 0, fmt.Errorf("ethrelay: submit %s: %w", in.InstructionKind(), err)
	}
	res, err := r.cfg.Node.Chain().WaitForReceipt(ctx, tx.Hash())
	if err != nil {
		return 0, fmt.Errorf("ethrelay: receipt of %s: %w", tx.Hash(), err)
	}
	code := receiptCode(res)
	switch code {
	case system.CodeOK, system.CodeEventDelivered, system.CodeAlreadyAttested:
		return code, nil
	}
	return code, &RejectedError{Kind: in.InstructionKind(), Tx: tx.Hash(), Code: code, Msg: res.Receipt.Error}
}

// RejectedError is a relayed log the chain refused with a failure code.
type RejectedError struct {
	Kind types.InstructionKind
	Tx   types.Hash
	Code system.Code
	Msg  string
}

func (e *RejectedError) Error() string {
	return fmt.Sprintf("ethrelay: %s %s failed: %s", e.Kind, e.Tx, e.Msg)
}

func receiptCode(res *apitypes.TxResult) system.Code {
	if res.Receipt == nil {
		return system.CodeOK
	}
	return system.Code(res.Receipt.Code)
}
