package sdk

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/fees"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// ChainService is the client's service for the chain itself: node status,
// fees, accounts, transactions and receipts, blocks, events, state proofs,
// the devnet faucet and the block subscription (/v1/status, /v1/fees,
// /v1/accounts, /v1/txs, /v1/blocks, /v1/events, /v1/proofs, /v1/light,
// /v1/faucet, /v1/stream). Signed transfers and generic system instructions
// are on Account.
type ChainService struct{ c *Client }

// Chain returns the service for the chain itself.
func (c *Client) Chain() *ChainService { return &ChainService{c: c} }

// Status returns the node's chain status.
func (s *ChainService) Status(ctx context.Context) (*apitypes.Status, error) {
	var st apitypes.Status
	return &st, s.c.do(ctx, http.MethodGet, "/v1/status", nil, &st)
}

// Fees returns the current basefees and per-transaction maxima.
func (s *ChainService) Fees(ctx context.Context) (*apitypes.Fees, error) {
	var f apitypes.Fees
	return &f, s.c.do(ctx, http.MethodGet, "/v1/fees", nil, &f)
}

// Account returns an account's balance and nonces.
func (s *ChainService) Account(ctx context.Context, a types.Address) (*apitypes.Account, error) {
	var acc apitypes.Account
	return &acc, s.c.do(ctx, http.MethodGet, "/v1/accounts/"+a.String(), nil, &acc)
}

// Balance returns an account's balance in base units.
func (s *ChainService) Balance(ctx context.Context, a types.Address) (*big.Int, error) {
	acc, err := s.c.Chain().Account(ctx, a)
	if err != nil {
		return nil, err
	}
	return ParseAmount(acc.Balance)
}

// SubmitRaw submits an encoded transaction.
func (s *ChainService) SubmitRaw(ctx context.Context, raw []byte) (types.Hash, error) {
	var r apitypes.SubmitTxResult
	err := s.c.do(ctx, http.MethodPost, "/v1/txs", apitypes.SubmitTx{Tx: hex.EncodeToString(raw)}, &r)
	return r.Hash, err
}

// Submit submits a signed transaction.
func (s *ChainService) Submit(ctx context.Context, tx *types.Tx) (types.Hash, error) {
	return s.c.Chain().SubmitRaw(ctx, tx.Encode())
}

// Tx returns a transaction and, once included, its receipt.
func (s *ChainService) Tx(ctx context.Context, h types.Hash) (*apitypes.TxResult, error) {
	var r apitypes.TxResult
	return &r, s.c.do(ctx, http.MethodGet, "/v1/txs/"+h.String(), nil, &r)
}

// Block returns a block by id: a height, a 0x hash or "latest".
func (s *ChainService) Block(ctx context.Context, id string, withReceipts bool) (*apitypes.Block, error) {
	var b apitypes.Block
	path := "/v1/blocks/" + url.PathEscape(id)
	if withReceipts {
		path += "?receipts=true"
	}
	return &b, s.c.do(ctx, http.MethodGet, path, nil, &b)
}

// Events returns one page of events.
func (s *ChainService) Events(ctx context.Context, q EventQuery) (*apitypes.Events, error) {
	v := url.Values{}
	if q.Emitter != nil {
		v.Set("emitter", q.Emitter.String())
	}
	if q.Topic != "" {
		v.Set("topic", q.Topic)
	}
	if q.From != 0 {
		v.Set("from", strconv.FormatUint(q.From, 10))
	}
	if q.To != 0 {
		v.Set("to", strconv.FormatUint(q.To, 10))
	}
	if q.Limit != 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Cursor != "" {
		v.Set("cursor", q.Cursor)
	}
	var out apitypes.Events
	return &out, s.c.do(ctx, http.MethodGet, "/v1/events?"+v.Encode(), nil, &out)
}

// Proof returns a state key's value and Merkle proof at height (nil: head).
func (s *ChainService) Proof(ctx context.Context, key []byte, height *uint64) (*apitypes.Proof, error) {
	path := "/v1/proofs/0x" + hex.EncodeToString(key)
	if height != nil {
		path += "?height=" + strconv.FormatUint(*height, 10)
	}
	var p apitypes.Proof
	return &p, s.c.do(ctx, http.MethodGet, path, nil, &p)
}

// Faucet asks a devnet node to send value base units to a.
func (s *ChainService) Faucet(ctx context.Context, a types.Address, value *big.Int) (types.Hash, error) {
	var r apitypes.SubmitTxResult
	err := s.c.do(ctx, http.MethodPost, "/v1/faucet", apitypes.Faucet{Address: a, Value: value.String()}, &r)
	return r.Hash, err
}

// WaitForReceipt polls until h is included and returns the result. It
// returns ErrTimeout wrapped if ctx ends first.
func (s *ChainService) WaitForReceipt(ctx context.Context, h types.Hash) (*apitypes.TxResult, error) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		r, err := s.c.Chain().Tx(ctx, h)
		if err == nil && r.Status == apitypes.TxIncluded {
			return r, nil
		}
		if err != nil && !errors.Is(err, ErrNotFound) && ctx.Err() == nil {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: receipt of %s: %v", ErrTimeout, h, ctx.Err())
		case <-tick.C:
		}
	}
}

// GetJSON fetches any GET route of the node API into out.
func (s *ChainService) GetJSON(ctx context.Context, path string, out any) error {
	return s.c.do(ctx, http.MethodGet, path, nil, out)
}

// LightProof fetches GET /v1/light/proofs/{key}.
func (s *ChainService) LightProof(ctx context.Context, key []byte) (*apitypes.LightProof, error) {
	var p apitypes.LightProof
	return &p, s.c.do(ctx, http.MethodGet, "/v1/light/proofs/0x"+hex.EncodeToString(key), nil, &p)
}

// Subscribe streams blocks (with receipts and events) starting at height
// from, calling fn for each in order. If the connection drops it reconnects
// and resumes after the last block delivered, so fn sees every block exactly
// once. It returns when ctx ends (nil) or fn returns an error (that error).
func (s *ChainService) Subscribe(ctx context.Context, from uint64, fn func(apitypes.Block) error) error {
	next := from
	backoff := 100 * time.Millisecond
	for {
		err := s.c.streamOnce(ctx, &next, fn)
		var stop *stopError
		if errors.As(err, &stop) {
			return stop.err
		}
		if ctx.Err() != nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		if backoff < 5*time.Second {
			backoff *= 2
		}
	}
}

// EstimateFees suggests limits and prices for req against the node's current
// basefees (spec 002 §17.10; see fees.Schedule.Suggest).
func (s *ChainService) EstimateFees(ctx context.Context, req TxRequest, payload []byte) (fees.Estimate, error) {
	f, err := s.c.Chain().Fees(ctx)
	if err != nil {
		return fees.Estimate{}, err
	}
	probe, err := types.NewTx(types.TxData{To: req.To, Payload: payload})
	if err != nil {
		return fees.Estimate{}, err
	}
	ic, ib := fees.Intrinsic(probe, req.Instruction)
	sched := fees.Default()
	sched.MaxTxCycles, sched.MaxTxCells = f.MaxTxCycles, f.MaxTxCells
	est := sched.Suggest(fees.Basefees{Cycle: f.BasefeeCycle, Cell: f.BasefeeCell}, ic+req.ExpectCycles, ib+req.ExpectCells, req.Options.TipPerCycle, req.Options.TipPerCell)
	if req.Instruction == nil && req.ExpectCycles == 0 {
		// A plain transfer uses exactly its intrinsic cost.
		est.CyclesLimit, est.CellsLimit = ic, ib
	}
	return est, nil
}
