package sdk

import (
	"context"
	"crypto/ecdsa"
	"math/big"
	"net/http"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// ModelDeposit is the Model Registry's publish deposit on a chain with
// default parameters: 1,000 CBY (spec 002 §5.1).
var ModelDeposit = MustCBY("1000")

// Models lists the Model Registry in id order (GET /v1/models).
func (c *Client) Models(ctx context.Context) ([]apitypes.Model, error) {
	var out []apitypes.Model
	return out, c.do(ctx, http.MethodGet, "/v1/models", nil, &out)
}

// Model returns one registered model (GET /v1/models/{id}).
func (c *Client) Model(ctx context.Context, id types.Hash) (*apitypes.Model, error) {
	var out apitypes.Model
	return &out, c.do(ctx, http.MethodGet, "/v1/models/"+id.String(), nil, &out)
}

// PublishModel publishes a model revision with deposit (ModelDeposit on a
// default chain); its id is keccak256(weights ‖ arch ‖ tokenizer ‖ license)
// of in's component hashes (models.ID), also the receipt's return value.
func (c *Client) PublishModel(ctx context.Context, key *ecdsa.PrivateKey, in *types.ModelPublish, deposit *big.Int, o TxOptions) (*types.Tx, error) {
	return c.sendSystem(ctx, key, types.ModelRegistryAddress, deposit, in, o)
}

// RetireModel retires the sender's model; its deposit can be withdrawn
// after the retire delay (WithdrawModel).
func (c *Client) RetireModel(ctx context.Context, key *ecdsa.PrivateKey, id types.Hash, o TxOptions) (*types.Tx, error) {
	return c.sendSystem(ctx, key, types.ModelRegistryAddress, nil, &types.ModelRetire{ID: id}, o)
}

// WithdrawModel takes back the deposit of the sender's retired model.
func (c *Client) WithdrawModel(ctx context.Context, key *ecdsa.PrivateKey, id types.Hash, o TxOptions) (*types.Tx, error) {
	return c.sendSystem(ctx, key, types.ModelRegistryAddress, nil, &types.ModelWithdraw{ID: id}, o)
}
