package sdk

import (
	"context"
	"math/big"
	"net/http"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// ModelsService is the client's service for the Model Registry: published
// models; signed publish, retire and withdraw (/v1/models).
type ModelsService struct{ c *Client }

// Models returns the service for the Model Registry.
func (c *Client) Models() *ModelsService { return &ModelsService{c: c} }

// AccountModels is the Models service bound to an account: its transaction
// methods sign with the account's key and submit as Account describes
// (nonces, fees, waiting); its reads are those of ModelsService.
type AccountModels struct {
	*ModelsService
	a *Account
}

// Models returns the Models service bound to a.
func (a *Account) Models() *AccountModels { return &AccountModels{ModelsService: a.c.Models(), a: a} }

// ModelDeposit is the Model Registry's publish deposit on a chain with
// default parameters: 1,000 CBY (spec 002 §5.1).
var ModelDeposit = MustCBY("1000")

// List lists the Model Registry in id order (GET /v1/models).
func (s *ModelsService) List(ctx context.Context) ([]apitypes.Model, error) {
	var out []apitypes.Model
	return out, s.c.do(ctx, http.MethodGet, "/v1/models", nil, &out)
}

// Get returns one registered model (GET /v1/models/{id}).
func (s *ModelsService) Get(ctx context.Context, id types.Hash) (*apitypes.Model, error) {
	var out apitypes.Model
	return &out, s.c.do(ctx, http.MethodGet, "/v1/models/"+id.String(), nil, &out)
}

// Publish publishes a model revision with deposit (ModelDeposit on a
// default chain); its id is keccak256(weights ‖ arch ‖ tokenizer ‖ license)
// of in's component hashes (models.ID), also the receipt's return value.
func (s *AccountModels) Publish(ctx context.Context, in *types.ModelPublish, deposit *big.Int, o TxOptions) (*types.Tx, error) {
	return s.a.sendSystem(ctx, types.ModelRegistryAddress, deposit, in, o)
}

// Retire retires the sender's model; its deposit can be withdrawn
// after the retire delay (WithdrawModel).
func (s *AccountModels) Retire(ctx context.Context, id types.Hash, o TxOptions) (*types.Tx, error) {
	return s.a.sendSystem(ctx, types.ModelRegistryAddress, nil, &types.ModelRetire{ID: id}, o)
}

// Withdraw takes back the deposit of the sender's retired model.
func (s *AccountModels) Withdraw(ctx context.Context, id types.Hash, o TxOptions) (*types.Tx, error) {
	return s.a.sendSystem(ctx, types.ModelRegistryAddress, nil, &types.ModelWithdraw{ID: id}, o)
}
