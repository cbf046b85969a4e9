package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"strconv"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// ActorsService is the client's service for deployed actors (PVM code):
// their records, code and state, read-only handler queries, published
// libraries and callback statistics (/v1/actors, /v1/code, /v1/libraries,
// /v1/callbacks).
type ActorsService struct{ c *Client }

// Actors returns the service for deployed actors.
func (c *Client) Actors() *ActorsService { return &ActorsService{c: c} }

// AccountActors is the Actors service bound to an account: its transaction
// methods sign with the account's key and submit as Account describes
// (nonces, fees, waiting); its reads are those of ActorsService.
type AccountActors struct {
	*ActorsService
	a *Account
}

// Actors returns the Actors service bound to a.
func (a *Account) Actors() *AccountActors { return &AccountActors{ActorsService: a.c.Actors(), a: a} }

// Default execution budgets for actor transactions when the caller gives
// none. Unused limits are refunded, so generous defaults only raise the
// balance a sender must hold, not what it pays.
const (
	DefaultActorCycles = 5_000_000
	DefaultActorCells  = 50_000
)

func (c *Client) raw(ctx context.Context, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		var e apitypes.Error
		if json.Unmarshal(data, &e) == nil && e.Error.Code != "" {
			return nil, &APIError{Status: resp.StatusCode, Code: e.Error.Code, Message: e.Error.Message}
		}
		return nil, &APIError{Status: resp.StatusCode, Code: "http_" + strconv.Itoa(resp.StatusCode), Message: string(data)}
	}
	return data, nil
}

// JSONArgs converts JSON handler arguments to the canonical CBOR the PVM
// takes: an array is positional arguments, an object keyword arguments, any
// other value one positional argument. Integers stay integers (arbitrary
// size); numbers with a fraction or exponent become floats.
func JSONArgs(js string) ([]byte, error) {
	if js == "" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(js)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("arguments are not JSON: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("arguments: trailing data after the JSON value")
	}
	conv, err := jsonToCBORValue(v)
	if err != nil {
		return nil, err
	}
	return codec.Marshal(conv)
}

func jsonToCBORValue(v any) (any, error) {
	switch x := v.(type) {
	case json.Number:
		if i, ok := new(big.Int).SetString(x.String(), 10); ok {
			if i.IsInt64() {
				return i.Int64(), nil
			}
			return i, nil
		}
		f, err := x.Float64()
		if err != nil {
			return nil, fmt.Errorf("number %s: %w", x, err)
		}
		return f, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			c, err := jsonToCBORValue(e)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			c, err := jsonToCBORValue(e)
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, nil
	}
	return v, nil
}

// Get returns an actor's metadata: code hash, owner, pins, balance.
func (s *ActorsService) Get(ctx context.Context, a types.Address) (*apitypes.Actor, error) {
	var out apitypes.Actor
	return &out, s.c.do(ctx, http.MethodGet, "/v1/actors/"+a.String(), nil, &out)
}

// Code returns an actor's canonical Python source.
func (s *ActorsService) Code(ctx context.Context, a types.Address) ([]byte, error) {
	return s.c.raw(ctx, "/v1/actors/"+a.String()+"/code")
}

// CodeByHash returns a code blob by hash.
func (s *ActorsService) CodeByHash(ctx context.Context, h types.Hash) ([]byte, error) {
	return s.c.raw(ctx, "/v1/code/"+h.String())
}

// State lists an actor's storage; keyText filters by key prefix.
func (s *ActorsService) State(ctx context.Context, a types.Address, keyText, cursor string, limit int) (*apitypes.ActorState, error) {
	v := url.Values{}
	if keyText != "" {
		v.Set("key_text", keyText)
	}
	if cursor != "" {
		v.Set("cursor", cursor)
	}
	if limit > 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	var out apitypes.ActorState
	return &out, s.c.do(ctx, http.MethodGet, "/v1/actors/"+a.String()+"/state?"+v.Encode(), nil, &out)
}

// Query runs a read-only handler: no transaction, no fee.
func (s *ActorsService) Query(ctx context.Context, a types.Address, handler string, args []byte) (*apitypes.QueryResult, error) {
	var out apitypes.QueryResult
	return &out, s.c.do(ctx, http.MethodPost, "/v1/actors/"+a.String()+"/query", apitypes.Query{Handler: handler, Args: args}, &out)
}

// Libraries lists the libraries a publisher has published.
func (s *ActorsService) Libraries(ctx context.Context, publisher types.Address) ([]apitypes.Library, error) {
	var out []apitypes.Library
	return out, s.c.do(ctx, http.MethodGet, "/v1/libraries/"+publisher.String(), nil, &out)
}

// Send builds, signs and submits an actor or library
// instruction. to is the actor for a Call and nil otherwise.
func (s *AccountActors) Send(ctx context.Context, to *types.Address, in types.Instruction, value *big.Int, o TxOptions) (*types.Tx, error) {
	if o.CyclesLimit == 0 {
		o.CyclesLimit = DefaultActorCycles
	}
	if o.CellsLimit == 0 {
		payload, err := types.EncodeInstruction(in)
		if err != nil {
			return nil, err
		}
		o.CellsLimit = DefaultActorCells + 100 + uint64(len(payload))
	}
	return s.a.send(ctx, TxRequest{To: to, Value: value, Instruction: in, Options: o})
}

// CallbackStats returns an actor's job-callback counters (GET
// /v1/offchain/actors/{addr}); runners may refuse actors whose callbacks
// keep failing.
func (s *ActorsService) CallbackStats(ctx context.Context, actor types.Address) (*apitypes.CallbackStats, error) {
	var r apitypes.CallbackStats
	return &r, s.c.do(ctx, http.MethodGet, "/v1/offchain/actors/"+actor.String(), nil, &r)
}
