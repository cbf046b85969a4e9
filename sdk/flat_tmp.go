package sdk

import (
	"context"
	"crypto/ecdsa"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Temporary forwarders while callers move to the services; removed at the end of the move.

func (c *Client) Status(ctx context.Context) (*apitypes.Status, error) { return c.Chain().Status(ctx) }
func (c *Client) Fees(ctx context.Context) (*apitypes.Fees, error)     { return c.Chain().Fees(ctx) }
func (c *Client) SendSystem(ctx context.Context, key *ecdsa.PrivateKey, to types.Address, in types.Instruction, value *big.Int) (*types.Tx, error) {
	return c.Account(key).SendSystem(ctx, to, in, value)
}
func (c *Client) BuildTx(ctx context.Context, key *ecdsa.PrivateKey, req TxRequest) (*types.Tx, error) {
	return c.Account(key).BuildTx(ctx, req)
}
func (c *Client) Transfer(ctx context.Context, key *ecdsa.PrivateKey, to types.Address, value *big.Int, o TxOptions) (*types.Tx, error) {
	return c.Account(key).Transfer(ctx, to, value, o)
}
