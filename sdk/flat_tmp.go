package sdk

import (
	"context"
	"crypto/ecdsa"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/fees"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Temporary forwarders while callers move to the services; removed at the end of the move.

func (c *Client) Status(ctx context.Context) (*apitypes.Status, error) { return c.Chain().Status(ctx) }
func (c *Client) Fees(ctx context.Context) (*apitypes.Fees, error)     { return c.Chain().Fees(ctx) }
func (c *Client) Balance(ctx context.Context, a types.Address) (*big.Int, error) {
	return c.Chain().Balance(ctx, a)
}
func (c *Client) SubmitRaw(ctx context.Context, raw []byte) (types.Hash, error) {
	return c.Chain().SubmitRaw(ctx, raw)
}
func (c *Client) Submit(ctx context.Context, tx *types.Tx) (types.Hash, error) {
	return c.Chain().Submit(ctx, tx)
}
func (c *Client) Tx(ctx context.Context, h types.Hash) (*apitypes.TxResult, error) {
	return c.Chain().Tx(ctx, h)
}
func (c *Client) Block(ctx context.Context, id string, withReceipts bool) (*apitypes.Block, error) {
	return c.Chain().Block(ctx, id, withReceipts)
}
func (c *Client) Events(ctx context.Context, q EventQuery) (*apitypes.Events, error) {
	return c.Chain().Events(ctx, q)
}
func (c *Client) Proof(ctx context.Context, key []byte, height *uint64) (*apitypes.Proof, error) {
	return c.Chain().Proof(ctx, key, height)
}
func (c *Client) Faucet(ctx context.Context, a types.Address, value *big.Int) (types.Hash, error) {
	return c.Chain().Faucet(ctx, a, value)
}
func (c *Client) WaitForReceipt(ctx context.Context, h types.Hash) (*apitypes.TxResult, error) {
	return c.Chain().WaitForReceipt(ctx, h)
}
func (c *Client) GetJSON(ctx context.Context, path string, out any) error {
	return c.Chain().GetJSON(ctx, path, out)
}
func (c *Client) LightProof(ctx context.Context, key []byte) (*apitypes.LightProof, error) {
	return c.Chain().LightProof(ctx, key)
}
func (c *Client) SendSystem(ctx context.Context, key *ecdsa.PrivateKey, to types.Address, in types.Instruction, value *big.Int) (*types.Tx, error) {
	return c.Account(key).SendSystem(ctx, to, in, value)
}
func (c *Client) Subscribe(ctx context.Context, from uint64, fn func(apitypes.Block) error) error {
	return c.Chain().Subscribe(ctx, from, fn)
}
func (c *Client) EstimateFees(ctx context.Context, req TxRequest, payload []byte) (fees.Estimate, error) {
	return c.Chain().EstimateFees(ctx, req, payload)
}
func (c *Client) BuildTx(ctx context.Context, key *ecdsa.PrivateKey, req TxRequest) (*types.Tx, error) {
	return c.Account(key).BuildTx(ctx, req)
}
func (c *Client) Transfer(ctx context.Context, key *ecdsa.PrivateKey, to types.Address, value *big.Int, o TxOptions) (*types.Tx, error) {
	return c.Account(key).Transfer(ctx, to, value, o)
}
