package sdk

import (
	"context"
	"crypto/ecdsa"
	"fmt"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Account is a Client bound to one signing key: its service handles
// (a.Jobs(), a.Tokens(), …) build, sign and submit transactions from the
// key's address, so callers pass the key once instead of to every call.
//
// Nonces: every submission through an Account (and through any other
// Account of the same Client for the same key) holds the address's send
// lock from reading the node's pending nonce until the node has admitted
// the transaction, so concurrent submissions from one account take
// consecutive nonces instead of racing for the same one. The pending nonce
// is read from the node each time (it counts the sender's transactions in
// the mempool), so a transaction the node refused or dropped leaves no
// gap. TxOptions.Nonce overrides this and takes no lock.
//
// Fees and limits are filled from the node (Chain().EstimateFees) unless
// TxOptions sets them. With TxOptions.Wait a method also waits for the
// receipt and returns a failed receipt as a *ReceiptError, which matches
// its code's sentinel (errors.Is(err, ErrVersionConflict)).
type Account struct {
	c    *Client
	key  *ecdsa.PrivateKey
	addr types.Address
}

// Account returns c bound to key. Handles are cheap; the handles of one
// Client for the same key share its send lock.
func (c *Client) Account(key *ecdsa.PrivateKey) *Account {
	return &Account{c: c, key: key, addr: types.PubkeyToAddress(key.PublicKey)}
}

// Address is the account's address.
func (a *Account) Address() types.Address { return a.addr }

// send builds req, signs and submits it under the address's send lock
// (unless req.Options.Nonce is set) and, with req.Options.Wait, waits for
// its receipt.
func (a *Account) send(ctx context.Context, req TxRequest) (*types.Tx, error) {
	tx, err := a.submit(ctx, req)
	if err != nil || !req.Options.Wait {
		return tx, err
	}
	r, err := a.c.Chain().WaitForReceipt(ctx, tx.Hash())
	if err != nil {
		return tx, err
	}
	if r.Receipt == nil {
		return tx, fmt.Errorf("receipt of %s: %w", tx.Hash(), ErrNotFound)
	}
	return tx, ReceiptErr(r.Receipt)
}

func (a *Account) submit(ctx context.Context, req TxRequest) (*types.Tx, error) {
	if req.Options.Nonce == nil {
		mu := a.c.sendLock(a.addr)
		mu.Lock()
		defer mu.Unlock()
	}
	tx, err := a.BuildTx(ctx, req)
	if err != nil {
		return nil, err
	}
	if _, err := a.c.Chain().Submit(ctx, tx); err != nil {
		return nil, err
	}
	return tx, nil
}

// SendSystem builds, signs and submits a system-actor instruction (relay
// registry, storage manager) to the system address `to`.
func (a *Account) SendSystem(ctx context.Context, to types.Address, in types.Instruction, value *big.Int) (*types.Tx, error) {
	return a.send(ctx, TxRequest{To: &to, Value: value, Instruction: in, ExpectCycles: 0})
}

// Transfer builds, signs and submits a value transfer.
func (a *Account) Transfer(ctx context.Context, to types.Address, value *big.Int, o TxOptions) (*types.Tx, error) {
	return a.send(ctx, TxRequest{To: &to, Value: value, Options: o})
}

// OffchainExpectCycles is the execution estimate used for off-chain compute
// instructions (selection, verification and the callback run inside them).
const OffchainExpectCycles = 2_000_000

// OffchainExpectCells is the matching cell estimate (a callback writes the
// result into its actor's storage).
const OffchainExpectCells = 100_000

// sendSystem builds, signs and submits a system-actor instruction to `to`
// with value (nil for none) and the off-chain execution estimate.
func (a *Account) sendSystem(ctx context.Context, to types.Address, value *big.Int, in types.Instruction, o TxOptions) (*types.Tx, error) {
	return a.send(ctx, TxRequest{To: &to, Value: value, Instruction: in, ExpectCycles: OffchainExpectCycles, ExpectCells: OffchainExpectCells, Options: o})
}

// BuildTx fills in chain id, nonce (counting the sender's pending
// transactions) and fees, and signs with the account's key.
func (a *Account) BuildTx(ctx context.Context, req TxRequest) (*types.Tx, error) {
	st, err := a.c.Chain().Status(ctx)
	if err != nil {
		return nil, err
	}
	from := a.addr
	var payload []byte
	if req.Instruction != nil {
		if payload, err = types.EncodeInstruction(req.Instruction); err != nil {
			return nil, err
		}
	}
	o := req.Options
	est, err := a.c.Chain().EstimateFees(ctx, req, payload)
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
		acc, err := a.c.Chain().Account(ctx, from)
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
	signed, err := types.SignTx(tx, a.key)
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	return signed, nil
}
