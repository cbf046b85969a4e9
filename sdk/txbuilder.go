package sdk

import (
	"context"
	"crypto/ecdsa"
	"fmt"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/fees"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// TxOptions overrides what BuildTx would otherwise fill in. Zero fields are
// filled from the node.
type TxOptions struct {
	Nonce          *uint64
	CyclesLimit    uint64
	CellsLimit     uint64
	MaxFeePerCycle uint64
	MaxFeePerCell  uint64
	TipPerCycle    uint64
	TipPerCell     uint64
	AccessList     []types.AccessTuple
}

// TxRequest describes a transaction to build: To nil for an actor
// deployment, Instruction nil for a plain transfer.
type TxRequest struct {
	To          *types.Address
	Value       *big.Int
	Instruction types.Instruction
	// ExpectCycles and ExpectCells are the caller's estimate of execution
	// beyond the intrinsic cost (0 for a transfer).
	ExpectCycles, ExpectCells uint64
	Options                   TxOptions
}

// EstimateFees suggests limits and prices for req against the node's current
// basefees (spec 002 §17.10; see fees.Schedule.Suggest).
func (c *Client) EstimateFees(ctx context.Context, req TxRequest, payload []byte) (fees.Estimate, error) {
	f, err := c.Fees(ctx)
	if err != nil {
		return fees.Estimate{}, err
	}
	probe, err := types.NewTx(types.TxData{To: req.To, Payload: payload})
	if err != nil {
		return fees.Estimate{}, err
	}
	ic, ib := fees.Intrinsic(probe, req.Instruction)
	s := fees.Default()
	s.MaxTxCycles, s.MaxTxCells = f.MaxTxCycles, f.MaxTxCells
	est := s.Suggest(fees.Basefees{Cycle: f.BasefeeCycle, Cell: f.BasefeeCell}, ic+req.ExpectCycles, ib+req.ExpectCells, req.Options.TipPerCycle, req.Options.TipPerCell)
	if req.Instruction == nil && req.ExpectCycles == 0 {
		// A plain transfer uses exactly its intrinsic cost.
		est.CyclesLimit, est.CellsLimit = ic, ib
	}
	return est, nil
}

// BuildTx fills in chain id, nonce (counting the sender's pending
// transactions) and fees, and signs with key.
func (c *Client) BuildTx(ctx context.Context, key *ecdsa.PrivateKey, req TxRequest) (*types.Tx, error) {
	st, err := c.Status(ctx)
	if err != nil {
		return nil, err
	}
	from := types.PubkeyToAddress(key.PublicKey)
	var payload []byte
	if req.Instruction != nil {
		if payload, err = types.EncodeInstruction(req.Instruction); err != nil {
			return nil, err
		}
	}
	o := req.Options
	est, err := c.EstimateFees(ctx, req, payload)
	if err != nil {
		return nil, err
	}
	pick := func(v, d uint64) uint64 {
		if v != 0 {
			return v
		}
		return d
	}
	var nonce uint64
	if o.Nonce != nil {
		nonce = *o.Nonce
	} else {
		acc, err := c.Account(ctx, from)
		if err != nil {
			return nil, err
		}
		nonce = acc.PendingNonce
	}
	value := req.Value
	if value == nil {
		value = new(big.Int)
	}
	tx, err := types.NewTx(types.TxData{
		ChainID: st.ChainID, Nonce: nonce, To: req.To, Value: value,
		CyclesLimit: pick(o.CyclesLimit, est.CyclesLimit), CellsLimit: pick(o.CellsLimit, est.CellsLimit),
		MaxFeePerCycle: pick(o.MaxFeePerCycle, est.MaxFeePerCycle), MaxFeePerCell: pick(o.MaxFeePerCell, est.MaxFeePerCell),
		TipPerCycle: pick(o.TipPerCycle, est.TipPerCycle), TipPerCell: pick(o.TipPerCell, est.TipPerCell),
		AccessList: o.AccessList, Payload: payload,
	})
	if err != nil {
		return nil, err
	}
	signed, err := types.SignTx(tx, key)
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	return signed, nil
}

// Transfer builds, signs and submits a value transfer and returns its hash.
func (c *Client) Transfer(ctx context.Context, key *ecdsa.PrivateKey, to types.Address, value *big.Int, o TxOptions) (*types.Tx, error) {
	tx, err := c.BuildTx(ctx, key, TxRequest{To: &to, Value: value, Options: o})
	if err != nil {
		return nil, err
	}
	if _, err := c.Submit(ctx, tx); err != nil {
		return nil, err
	}
	return tx, nil
}
