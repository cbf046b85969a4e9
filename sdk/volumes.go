package sdk

import (
	"context"
	"net/http"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// VolumesService is the client's service for Storage Manager volumes: volume
// records, shards moved by repair and capability-token revocations
// (/v1/volumes). Volume instructions are sent with Account.SendSystem.
type VolumesService struct{ c *Client }

// Volumes returns the service for Storage Manager volumes.
func (c *Client) Volumes() *VolumesService { return &VolumesService{c: c} }

// Get returns a volume's latest StorageCommitment with its rent escrow,
// placement and latest challenge per relay.
func (s *VolumesService) Get(ctx context.Context, id types.Hash) (*apitypes.Volume, error) {
	var out apitypes.Volume
	return &out, s.c.do(ctx, http.MethodGet, "/v1/volumes/"+id.String(), nil, &out)
}

// MovedShards lists the shards of a volume that relays moved by repair.
func (s *VolumesService) MovedShards(ctx context.Context, vol types.Hash) (*apitypes.MovedShards, error) {
	var out apitypes.MovedShards
	return &out, s.c.do(ctx, http.MethodGet, "/v1/volumes/"+vol.String()+"/moved", nil, &out)
}

// Revoked reports whether a capability token of a volume is revoked.
func (s *VolumesService) Revoked(ctx context.Context, vol, token types.Hash) (*apitypes.Revocation, error) {
	var out apitypes.Revocation
	return &out, s.c.do(ctx, http.MethodGet, "/v1/volumes/"+vol.String()+"/revoked/"+token.String(), nil, &out)
}
