package sdk

import (
	"context"
	"net/http"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// RelaysService is the client's service for the Relay Registry: relay
// records and their storage challenges (/v1/relays). Relay instructions are
// sent with Account.SendSystem.
type RelaysService struct{ c *Client }

// Relays returns the service for the Relay Registry.
func (c *Client) Relays() *RelaysService { return &RelaysService{c: c} }

// List lists the active relays of the Relay Registry with their health.
func (s *RelaysService) List(ctx context.Context) ([]apitypes.Relay, error) {
	var out []apitypes.Relay
	return out, s.c.do(ctx, http.MethodGet, "/v1/relays", nil, &out)
}

// Get returns one relay record.
func (s *RelaysService) Get(ctx context.Context, id types.Address) (*apitypes.Relay, error) {
	var out apitypes.Relay
	return &out, s.c.do(ctx, http.MethodGet, "/v1/relays/"+id.String(), nil, &out)
}

// Challenges lists a relay's availability challenges on record, with
// the current height and storage epoch.
func (s *RelaysService) Challenges(ctx context.Context, id types.Address) (*apitypes.RelayChallenges, error) {
	var out apitypes.RelayChallenges
	return &out, s.c.do(ctx, http.MethodGet, "/v1/relays/"+id.String()+"/challenges", nil, &out)
}
