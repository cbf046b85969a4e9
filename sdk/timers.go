package sdk

import (
	"context"
	"net/http"
	"net/url"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// TimersService is the client's service for the timer queue: an actor's
// pending timers, one timer, and the queue's counters (/v1/timers).
type TimersService struct{ c *Client }

// Timers returns the service for the timer queue.
func (c *Client) Timers() *TimersService { return &TimersService{c: c} }

// List lists the pending timers of an actor (GET /v1/timers?owner=).
func (s *TimersService) List(ctx context.Context, owner types.Address) (*apitypes.TimerList, error) {
	var r apitypes.TimerList
	return &r, s.c.do(ctx, http.MethodGet, "/v1/timers?owner="+url.QueryEscape(owner.String()), nil, &r)
}

// Get returns one pending timer (GET /v1/timers/{id}); a timer that has
// fired (one-shot) or was cancelled is not found.
func (s *TimersService) Get(ctx context.Context, id types.Hash) (*apitypes.Timer, error) {
	var r apitypes.Timer
	return &r, s.c.do(ctx, http.MethodGet, "/v1/timers/"+id.String(), nil, &r)
}

// Stats returns the timer queue's counters and economics
// (GET /v1/timers/stats).
func (s *TimersService) Stats(ctx context.Context) (*apitypes.TimerStats, error) {
	var r apitypes.TimerStats
	return &r, s.c.do(ctx, http.MethodGet, "/v1/timers/stats", nil, &r)
}
