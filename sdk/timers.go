package sdk

import (
	"context"
	"net/http"
	"net/url"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Timers lists the pending timers of an actor (GET /v1/timers?owner=).
func (c *Client) Timers(ctx context.Context, owner types.Address) (*apitypes.TimerList, error) {
	var r apitypes.TimerList
	return &r, c.do(ctx, http.MethodGet, "/v1/timers?owner="+url.QueryEscape(owner.String()), nil, &r)
}

// Timer returns one pending timer (GET /v1/timers/{id}); a timer that has
// fired (one-shot) or was cancelled is not found.
func (c *Client) Timer(ctx context.Context, id types.Hash) (*apitypes.Timer, error) {
	var r apitypes.Timer
	return &r, c.do(ctx, http.MethodGet, "/v1/timers/"+id.String(), nil, &r)
}

// TimerStats returns the timer queue's counters and economics
// (GET /v1/timers/stats).
func (c *Client) TimerStats(ctx context.Context) (*apitypes.TimerStats, error) {
	var r apitypes.TimerStats
	return &r, c.do(ctx, http.MethodGet, "/v1/timers/stats", nil, &r)
}
