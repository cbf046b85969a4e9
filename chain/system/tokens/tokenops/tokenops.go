// Package tokenops serves the CIP-20 token module to actors: the host ops
// token_create, token_transfer, token_transfer_from, token_approve,
// token_balance_of, token_mint, token_burn and token_info
// (cowboy_sdk.tokens), each at the cost table's cycles and cells (spec 002
// §17.3), the calling actor acting as the sender. A failed op is a
// catchable HostError whose text starts with the failure's code name; it
// leaves no state change.
package tokenops

import (
	"errors"
	"fmt"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/actors"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/tokens"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/pvm"
)

// The actor ops.
const (
	OpCreate       = "token_create"
	OpTransfer     = "token_transfer"
	OpTransferFrom = "token_transfer_from"
	OpApprove      = "token_approve"
	OpBalanceOf    = "token_balance_of"
	OpMint         = "token_mint"
	OpBurn         = "token_burn"
	OpInfo         = "token_info" // metadata and supply; priced as token_balance_of
)

// Register registers the token ops on rt.
func Register(rt *actors.Runtime) error {
	for _, op := range []string{OpCreate, OpTransfer, OpTransferFrom, OpApprove, OpBalanceOf, OpMint, OpBurn, OpInfo} {
		if err := rt.Register(op, serve); err != nil {
			return err
		}
	}
	return nil
}

// args reads an op's keyword arguments.
type args struct {
	m   map[string]any
	err error
}

func (a *args) fail(format string, v ...any) {
	if a.err == nil {
		a.err = fmt.Errorf("bad arguments: "+format, v...)
	}
}

func (a *args) bytes(k string, n int) []byte {
	b, ok := a.m[k].([]byte)
	if !ok || (n > 0 && len(b) != n) {
		a.fail("%s must be %d bytes", k, n)
		return make([]byte, n)
	}
	return b
}

func (a *args) id() types.Hash              { return types.Hash(a.bytes("token", types.HashLength)) }
func (a *args) addr(k string) types.Address { return types.Address(a.bytes(k, types.AddressLength)) }

func (a *args) str(k string) string {
	s, ok := a.m[k].(string)
	if !ok {
		a.fail("%s must be a string", k)
	}
	return s
}

// amount reads an int argument (absent: zero).
func (a *args) amount(k string) *big.Int {
	switch v := a.m[k].(type) {
	case nil:
		return new(big.Int)
	case uint64:
		return new(big.Int).SetUint64(v)
	case int64:
		return big.NewInt(v)
	case big.Int:
		return &v
	case *big.Int:
		return new(big.Int).Set(v)
	}
	a.fail("%s must be an int", k)
	return new(big.Int)
}

// serve runs one token op.
func serve(h *actors.Host, req *pvm.HostRequest) (*pvm.HostResponse, error) {
	m, err := actors.HostArgs(req.Args)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", req.Op, err)
	}
	a := &args{m: m}
	x, me := h.Exec(), h.Actor()
	if req.Op == OpBalanceOf || req.Op == OpInfo {
		return read(x, req.Op, a)
	}
	if req.ReadOnly || x.ReadOnly() {
		return nil, fmt.Errorf("%s in a read-only call", req.Op)
	}
	var run func() (any, error)
	var cost tokens.Cost
	switch req.Op {
	case OpCreate:
		dec := a.amount("decimals")
		in := &types.TokenCreate{Name: a.str("name"), Symbol: a.str("symbol"), Cap: a.amount("cap"), Initial: a.amount("initial")}
		if !dec.IsUint64() || dec.Uint64() > 255 {
			a.fail("decimals must be 0..255")
		}
		in.Decimals = uint8(dec.Uint64())
		cost = tokens.CreateCost(in.Name, in.Symbol)
		run = func() (any, error) {
			id, err := tokens.Create(x, me, in)
			return id[:], err
		}
	case OpTransfer:
		id, to, v := a.id(), a.addr("to"), a.amount("amount")
		cost, run = tokens.CostOf(tokens.OpTransfer), func() (any, error) { return true, tokens.Transfer(x, id, me, to, v) }
	case OpTransferFrom:
		id, from, to, v := a.id(), a.addr("owner"), a.addr("to"), a.amount("amount")
		cost, run = tokens.CostOf(tokens.OpTransferFrom), func() (any, error) { return true, tokens.TransferFrom(x, id, me, from, to, v) }
	case OpApprove:
		id, sp, v := a.id(), a.addr("spender"), a.amount("amount")
		cost, run = tokens.CostOf(tokens.OpApprove), func() (any, error) { return true, tokens.Approve(x, id, me, sp, v) }
	case OpMint:
		id, to, v := a.id(), a.addr("to"), a.amount("amount")
		cost, run = tokens.CostOf(tokens.OpMint), func() (any, error) { return true, tokens.Mint(x, id, me, to, v) }
	case OpBurn:
		id, v := a.id(), a.amount("amount")
		cost, run = tokens.CostOf(tokens.OpBurn), func() (any, error) { return true, tokens.Burn(x, id, me, v) }
	default:
		return nil, fmt.Errorf("unsupported host call: %s", req.Op)
	}
	if a.err != nil {
		return nil, fmt.Errorf("%s: %w", req.Op, a.err)
	}
	mark := x.Mark()
	v, err := run()
	if err != nil {
		x.Rollback(mark)
		return nil, opError(req.Op, err)
	}
	return &pvm.HostResponse{Value: v, Cycles: cost.Cycles, Cells: cost.Cells}, nil
}

// read serves token_balance_of and token_info.
func read(x *actors.Exec, op string, a *args) (*pvm.HostResponse, error) {
	id := a.id()
	var holder types.Address
	if op == OpBalanceOf {
		holder = a.addr("owner")
	}
	if a.err != nil {
		return nil, fmt.Errorf("%s: %w", op, a.err)
	}
	cost := tokens.CostOf(tokens.OpBalanceOf)
	t, err := tokens.Read(x.State(), id)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", pvm.ErrHostFailure, err)
	}
	if t == nil {
		return nil, opError(op, system.Failf(system.CodeNoSuchToken, "NoSuchToken: no token %s", id))
	}
	if op == OpInfo {
		return &pvm.HostResponse{Cycles: cost.Cycles, Value: map[string]any{
			"id": t.ID[:], "name": t.Name, "symbol": t.Symbol, "decimals": uint64(t.Decimals),
			"cap": t.Cap, "supply": t.Supply, "admin": t.Admin[:],
		}}, nil
	}
	b, err := tokens.BalanceOf(x.State(), id, holder)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", pvm.ErrHostFailure, err)
	}
	return &pvm.HostResponse{Value: b, Cycles: cost.Cycles}, nil
}

// opError shows a failure to the actor as "<op>: <CodeName>: …" (the
// message starts with the code's name); anything else is a node failure.
func opError(op string, err error) error {
	var f *system.Failure
	if errors.As(err, &f) {
		return fmt.Errorf("%s: %v", op, err)
	}
	return fmt.Errorf("%w: %s: %v", pvm.ErrHostFailure, op, err)
}
