// Package sdk is the Go client of a Cowboy node: a typed client for every
// HTTP API route, transaction building and signing, fee estimation,
// waiting for receipts, a resumable block/event subscription, and
// verification of state proofs against a state root. Runner and relay
// daemons and the cowboy CLI talk to nodes only through this package.
//
// The client is grouped by service, one file each: Chain() (status, fees,
// accounts, transactions, receipts, blocks, events, proofs, subscribe),
// Actors(), Runners(), Jobs(), Relays(), Volumes(), Timers(), Gov(),
// Tokens(), Models(), TEE(), Secrets() and Entitlements(). Reads hang off
// the Client; transactions hang off an Account, a Client bound once to a
// signing key (client.Account(key).Jobs().Submit(ctx, spec, opts)), which
// sequences the key's nonces and can wait for receipts. Wire types stay in
// chain/apitypes.
package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
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

	mu    sync.Mutex
	locks map[types.Address]*sync.Mutex // per sender: see Account
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

// sendLock is the lock that orders the submissions of a sender's
// Account handles.
func (c *Client) sendLock(a types.Address) *sync.Mutex {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.locks == nil {
		c.locks = make(map[types.Address]*sync.Mutex)
	}
	l := c.locks[a]
	if l == nil {
		l = new(sync.Mutex)
		c.locks[a] = l
	}
	return l
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

// EventQuery selects events; see docs/API.md.
type EventQuery struct {
	Emitter  *types.Address
	Topic    string
	From, To uint64
	Limit    int
	Cursor   string
}
