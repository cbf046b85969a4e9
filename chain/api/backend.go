package api

import (
	"context"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/actors"
	"github.com/cowboy-foundation/cowboy/chain/execution"
	"github.com/cowboy-foundation/cowboy/chain/fees"
	"github.com/cowboy-foundation/cowboy/chain/node"
	"github.com/cowboy-foundation/cowboy/chain/offchain/entitlement"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/system/jobs/joblane"
	"github.com/cowboy-foundation/cowboy/chain/system/params"
	"github.com/cowboy-foundation/cowboy/chain/system/storage"
	"github.com/cowboy-foundation/cowboy/chain/system/tee"
	"github.com/cowboy-foundation/cowboy/chain/timers"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Backend is everything the HTTP handlers need of a node, in the manner of
// go-ethereum's internal/ethapi.Backend: reads of committed state through a
// store view (the system modules' read functions take it as their
// state.Reader), the mempool, submission, read-only queries, the faucet
// and the executor's parameters. NodeBackend adapts a *node.Node; the
// handlers see nothing else of the node.
type Backend interface {
	// View runs fn over a consistent view of the committed chain.
	View(fn func(v *store.View) error) error
	Head() (*types.Header, error)
	// NewHead is closed at the next committed block.
	NewHead() <-chan struct{}
	Consensus() (node.ConsensusStatus, bool)

	Fees() fees.Schedule
	OffchainParams() execution.OffchainParams
	StorageParams() storage.Params
	TEEParams() tee.Params
	Timers() *timers.Queue
	TimerLaneBudget() uint64
	// Params is the governed parameter store (its declarations and genesis values).
	Params() *params.Store
	// Council is the Security Council's members (genesis).
	Council() []types.Address

	PendingTxs() int
	PendingNonce(a types.Address, stateNonce uint64) uint64
	PendingTx(h types.Hash) (*types.Tx, bool)
	SubmitTx(raw []byte) (types.Hash, error)
	Query(ctx context.Context, actor, caller types.Address, handler string, args []byte) (ret []byte, cycles uint64, height uint64, err error)
	HasFaucet() bool
	Faucet(to types.Address, value *big.Int) (types.Hash, error)

	ExecutionReader
}

// ExecutionReader reads, from a view given by Backend.View, the state the
// block executor owns itself: the basefees, the actor host's records and
// the job-callback lane. The system modules' state is read with their
// packages' read functions.
type ExecutionReader interface {
	Basefees(r state.Reader) (fees.Basefees, error)
	ActorOwner(r state.Reader, a types.Address) (*types.Address, error)
	ActorMeta(r state.Reader, a types.Address) (*actors.ActorMeta, error)
	ActorRequires(r state.Reader, a types.Address) (entitlement.Manifest, error)
	ActorPins(r state.Reader, a types.Address) (map[string]types.Hash, error)
	Libraries(r state.Reader, publisher types.Address) ([]actors.Library, error)
	CallbackStats(r state.Reader, actor types.Address) (joblane.CallbackStats, error)
	CallbackDeliveries(r state.Reader, job types.Hash) ([]joblane.CallbackDelivery, error)
}

// NodeBackend is the Backend of a running node.
type NodeBackend struct{ N *node.Node }

var _ Backend = NodeBackend{}

func (b NodeBackend) View(fn func(v *store.View) error) error { return b.N.Store().View(fn) }
func (b NodeBackend) Head() (*types.Header, error)            { return b.N.Store().Head() }
func (b NodeBackend) NewHead() <-chan struct{}                { return b.N.NewHead() }
func (b NodeBackend) Consensus() (node.ConsensusStatus, bool) { return b.N.Consensus() }

func (b NodeBackend) Fees() fees.Schedule { return b.N.Genesis().Fees }
func (b NodeBackend) OffchainParams() execution.OffchainParams {
	return b.N.Executor().OffchainParams()
}
func (b NodeBackend) StorageParams() storage.Params { return b.N.Executor().StorageParams() }
func (b NodeBackend) TEEParams() tee.Params         { return b.N.Executor().TEEParams() }
func (b NodeBackend) Timers() *timers.Queue         { return b.N.Executor().Timers() }
func (b NodeBackend) TimerLaneBudget() uint64       { return b.N.Executor().TimerLaneBudget() }
func (b NodeBackend) Params() *params.Store         { return b.N.Executor().Params() }
func (b NodeBackend) Council() []types.Address      { return b.N.Genesis().Council }

func (b NodeBackend) PendingTxs() int { return b.N.Pool().Len() }
func (b NodeBackend) PendingNonce(a types.Address, stateNonce uint64) uint64 {
	return b.N.Pool().PendingNonce(a, stateNonce)
}
func (b NodeBackend) PendingTx(h types.Hash) (*types.Tx, bool) { return b.N.Pool().Get(h) }
func (b NodeBackend) SubmitTx(raw []byte) (types.Hash, error)  { return b.N.SubmitTx(raw) }
func (b NodeBackend) Query(ctx context.Context, actor, caller types.Address, handler string, args []byte) ([]byte, uint64, uint64, error) {
	return b.N.Query(ctx, actor, caller, handler, args)
}
func (b NodeBackend) HasFaucet() bool { return b.N.HasFaucet() }
func (b NodeBackend) Faucet(to types.Address, value *big.Int) (types.Hash, error) {
	return b.N.Faucet(to, value)
}

func (NodeBackend) Basefees(r state.Reader) (fees.Basefees, error) { return execution.Basefees(r) }
func (NodeBackend) ActorOwner(r state.Reader, a types.Address) (*types.Address, error) {
	return actors.ReadActorOwner(r, a)
}
func (NodeBackend) ActorMeta(r state.Reader, a types.Address) (*actors.ActorMeta, error) {
	return actors.ReadActorMeta(r, a)
}
func (NodeBackend) ActorRequires(r state.Reader, a types.Address) (entitlement.Manifest, error) {
	return actors.ReadActorRequires(r, a)
}
func (NodeBackend) ActorPins(r state.Reader, a types.Address) (map[string]types.Hash, error) {
	return actors.ReadPins(r, a)
}
func (NodeBackend) Libraries(r state.Reader, publisher types.Address) ([]actors.Library, error) {
	return actors.ReadLibraries(r, publisher)
}
func (NodeBackend) CallbackStats(r state.Reader, actor types.Address) (joblane.CallbackStats, error) {
	return joblane.ReadCallbackStats(r, actor)
}
func (NodeBackend) CallbackDeliveries(r state.Reader, job types.Hash) ([]joblane.CallbackDelivery, error) {
	return joblane.ReadCallbackDeliveries(r, job)
}
