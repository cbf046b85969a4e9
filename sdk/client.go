// Package sdk is the Go client of a Cowboy node: a typed client for every
// HTTP API route, transaction building and signing, fee estimation,
// waiting for receipts, a resumable block/event subscription, and
// verification of state proofs against a state root. Runner and relay
// daemons and the cowboy CLI talk to nodes only through this package.
package sdk

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// DefaultNodeURL is where a devnet node listens by default.
const DefaultNodeURL = "http://127.0.0.1:8545"

// Stable errors callers match with errors.Is.
var (
	ErrNotFound = errors.New("not found")
	ErrTimeout  = errors.New("timed out waiting")
)

// APIError is an error response from the node. Code is stable (docs/API.md).
type APIError struct {
	Status  int
	Code    string
	Message string
}

func (e *APIError) Error() string { return fmt.Sprintf("%s: %s", e.Code, e.Message) }

// Is makes errors.Is(err, ErrNotFound) true for 404 responses.
func (e *APIError) Is(target error) bool {
	return target == ErrNotFound && e.Status == http.StatusNotFound
}

// Client talks to one node. The zero value is not usable; use New.
type Client struct {
	base string
	http *http.Client
}

// New returns a client for the node at baseURL (DefaultNodeURL if empty).
func New(baseURL string) *Client {
	if baseURL == "" {
		baseURL = DefaultNodeURL
	}
	return &Client{base: strings.TrimRight(baseURL, "/"), http: &http.Client{Timeout: 30 * time.Second}}
}

// WithHTTPClient makes c send its requests through hc (a proxy, custom
// TLS, or a dialer into a network namespace) and returns c.
func (c *Client) WithHTTPClient(hc *http.Client) *Client {
	c.http = hc
	return c
}

// URL is the node's base URL.
func (c *Client) URL() string { return c.base }

func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("encode request: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return fmt.Errorf("build request %s %s: %w", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("%s %s: read response: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		var e apitypes.Error
		if json.Unmarshal(data, &e) == nil && e.Error.Code != "" {
			return &APIError{Status: resp.StatusCode, Code: e.Error.Code, Message: e.Error.Message}
		}
		return &APIError{Status: resp.StatusCode, Code: "http_" + strconv.Itoa(resp.StatusCode), Message: strings.TrimSpace(string(data))}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: decode response: %w", method, path, err)
	}
	return nil
}

// Status returns the node's chain status.
func (c *Client) Status(ctx context.Context) (*apitypes.Status, error) {
	var s apitypes.Status
	return &s, c.do(ctx, http.MethodGet, "/v1/status", nil, &s)
}

// Fees returns the current basefees and per-transaction maxima.
func (c *Client) Fees(ctx context.Context) (*apitypes.Fees, error) {
	var f apitypes.Fees
	return &f, c.do(ctx, http.MethodGet, "/v1/fees", nil, &f)
}

// Account returns an account's balance and nonces.
func (c *Client) Account(ctx context.Context, a types.Address) (*apitypes.Account, error) {
	var acc apitypes.Account
	return &acc, c.do(ctx, http.MethodGet, "/v1/accounts/"+a.String(), nil, &acc)
}

// Balance returns an account's balance in base units.
func (c *Client) Balance(ctx context.Context, a types.Address) (*big.Int, error) {
	acc, err := c.Account(ctx, a)
	if err != nil {
		return nil, err
	}
	return ParseAmount(acc.Balance)
}

// SubmitRaw submits an encoded transaction.
func (c *Client) SubmitRaw(ctx context.Context, raw []byte) (types.Hash, error) {
	var r apitypes.SubmitTxResult
	err := c.do(ctx, http.MethodPost, "/v1/txs", apitypes.SubmitTx{Tx: hex.EncodeToString(raw)}, &r)
	return r.Hash, err
}

// Submit submits a signed transaction.
func (c *Client) Submit(ctx context.Context, tx *types.Tx) (types.Hash, error) {
	return c.SubmitRaw(ctx, tx.Encode())
}

// Tx returns a transaction and, once included, its receipt.
func (c *Client) Tx(ctx context.Context, h types.Hash) (*apitypes.TxResult, error) {
	var r apitypes.TxResult
	return &r, c.do(ctx, http.MethodGet, "/v1/txs/"+h.String(), nil, &r)
}

// Block returns a block by id: a height, a 0x hash or "latest".
func (c *Client) Block(ctx context.Context, id string, withReceipts bool) (*apitypes.Block, error) {
	var b apitypes.Block
	path := "/v1/blocks/" + url.PathEscape(id)
	if withReceipts {
		path += "?receipts=true"
	}
	return &b, c.do(ctx, http.MethodGet, path, nil, &b)
}

// EventQuery selects events; see docs/API.md.
type EventQuery struct {
	Emitter  *types.Address
	Topic    string
	From, To uint64
	Limit    int
	Cursor   string
}

// Events returns one page of events.
func (c *Client) Events(ctx context.Context, q EventQuery) (*apitypes.Events, error) {
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
	return &out, c.do(ctx, http.MethodGet, "/v1/events?"+v.Encode(), nil, &out)
}

// Proof returns a state key's value and Merkle proof at height (nil: head).
func (c *Client) Proof(ctx context.Context, key []byte, height *uint64) (*apitypes.Proof, error) {
	path := "/v1/proofs/0x" + hex.EncodeToString(key)
	if height != nil {
		path += "?height=" + strconv.FormatUint(*height, 10)
	}
	var p apitypes.Proof
	return &p, c.do(ctx, http.MethodGet, path, nil, &p)
}

// Faucet asks a devnet node to send value base units to a.
func (c *Client) Faucet(ctx context.Context, a types.Address, value *big.Int) (types.Hash, error) {
	var r apitypes.SubmitTxResult
	err := c.do(ctx, http.MethodPost, "/v1/faucet", apitypes.Faucet{Address: a, Value: value.String()}, &r)
	return r.Hash, err
}

// WaitForReceipt polls until h is included and returns the result. It
// returns ErrTimeout wrapped if ctx ends first.
func (c *Client) WaitForReceipt(ctx context.Context, h types.Hash) (*apitypes.TxResult, error) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		r, err := c.Tx(ctx, h)
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
func (c *Client) GetJSON(ctx context.Context, path string, out any) error {
	return c.do(ctx, http.MethodGet, path, nil, out)
}
