package sdk

import (
	"context"
	"crypto/ecdsa"
	"math/big"
	"net/http"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Relays lists the active relays of the Relay Registry with their health.
func (c *Client) Relays(ctx context.Context) ([]apitypes.Relay, error) {
	var out []apitypes.Relay
	return out, c.do(ctx, http.MethodGet, "/v1/relays", nil, &out)
}

// Relay returns one relay record.
func (c *Client) Relay(ctx context.Context, id types.Address) (*apitypes.Relay, error) {
	var out apitypes.Relay
	return &out, c.do(ctx, http.MethodGet, "/v1/relays/"+id.String(), nil, &out)
}

// RelayChallenges lists a relay's availability challenges on record, with
// the current height and storage epoch.
func (c *Client) RelayChallenges(ctx context.Context, id types.Address) (*apitypes.RelayChallenges, error) {
	var out apitypes.RelayChallenges
	return &out, c.do(ctx, http.MethodGet, "/v1/relays/"+id.String()+"/challenges", nil, &out)
}

// Volume returns a volume's latest StorageCommitment with its rent escrow,
// placement and latest challenge per relay.
func (c *Client) Volume(ctx context.Context, id types.Hash) (*apitypes.Volume, error) {
	var out apitypes.Volume
	return &out, c.do(ctx, http.MethodGet, "/v1/volumes/"+id.String(), nil, &out)
}

// MovedShards lists the shards of a volume that relays moved by repair.
func (c *Client) MovedShards(ctx context.Context, vol types.Hash) (*apitypes.MovedShards, error) {
	var out apitypes.MovedShards
	return &out, c.do(ctx, http.MethodGet, "/v1/volumes/"+vol.String()+"/moved", nil, &out)
}

// Revoked reports whether a capability token of a volume is revoked.
func (c *Client) Revoked(ctx context.Context, vol, token types.Hash) (*apitypes.Revocation, error) {
	var out apitypes.Revocation
	return &out, c.do(ctx, http.MethodGet, "/v1/volumes/"+vol.String()+"/revoked/"+token.String(), nil, &out)
}

// SendSystem builds, signs and submits a system-actor instruction (relay
// registry, storage manager) to the system address `to`.
func (c *Client) SendSystem(ctx context.Context, key *ecdsa.PrivateKey, to types.Address, in types.Instruction, value *big.Int) (*types.Tx, error) {
	tx, err := c.BuildTx(ctx, key, TxRequest{To: &to, Value: value, Instruction: in, ExpectCycles: 0})
	if err != nil {
		return nil, err
	}
	if _, err := c.Submit(ctx, tx); err != nil {
		return nil, err
	}
	return tx, nil
}
