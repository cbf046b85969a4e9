// Package actors is the actor host: it runs actor code in the PVM over a
// block's state overlay (spec 002 §3, seed 000). It deploys actors,
// publishes libraries, delivers the messages a transaction's handlers send
// (breadth-first, each reverting only itself), meters cycles and cells, and
// serves the actors' host calls. Extension ops (timers, submit_job) are not
// known here: their owners register them on the Runtime by name.
//
// An Exec is one transaction's execution (or a timer's, a job callback's, a
// module's end-of-block step): the overlay, the block environment, the
// meters, the events and the message records. It is also the system
// modules' transaction context (system.Tx).
package actors

import (
	"context"
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/pvm"
)

// VM is the narrow interface through which the host runs actor code.
// *pvm.Engine implements it.
type VM interface {
	Validate(ctx context.Context, source []byte) ([]string, error)
	Execute(ctx context.Context, inv *pvm.Invocation, host pvm.Host) (*pvm.Outcome, error)
}

// Limits are the execution limits of spec 002 §3, §12.1, §13 and seed 000
// §3.6. Zero fields take the defaults (Fill).
type Limits struct {
	MaxLibsPerActor     int    // 8
	FanoutPerTx         int    // messages one transaction may enqueue, nested sends included: 1,024
	MaxMessageDepth     int    // 32
	MailboxBytes        int    // payload bytes one actor may receive per transaction: 1,000,000
	StorageQuota        uint64 // bytes of key+value per actor: 1 MiB
	DedupWindow         uint64 // blocks a delivered message id is remembered: 10,000
	PerActorBlockCycles uint64 // cycles one actor may burn per block: 1,000,000
	QueryCycles         uint64 // budget of a read-only query: 10,000,000
}

// Fill replaces zero fields with the defaults.
func (l *Limits) Fill() {
	if l.MaxLibsPerActor <= 0 {
		l.MaxLibsPerActor = 8
	}
	if l.FanoutPerTx <= 0 {
		l.FanoutPerTx = 1024
	}
	if l.MaxMessageDepth <= 0 {
		l.MaxMessageDepth = 32
	}
	if l.MailboxBytes <= 0 {
		l.MailboxBytes = 1_000_000
	}
	if l.StorageQuota == 0 {
		l.StorageQuota = 1 << 20
	}
	if l.DedupWindow == 0 {
		l.DedupWindow = 10_000
	}
	if l.PerActorBlockCycles == 0 {
		l.PerActorBlockCycles = 1_000_000
	}
	if l.QueryCycles == 0 {
		l.QueryCycles = 10_000_000
	}
}

// HostOp serves one extension op an actor calls through pvm_host.host_call
// (pvm.ExtendedHost). Its error is shown to the actor as a catchable
// HostError and must leave no state change behind; wrap pvm.ErrHostFailure
// for a failure of the node.
type HostOp func(h *Host, req *pvm.HostRequest) (*pvm.HostResponse, error)

// Runtime runs actors: the VM, the limits, the chain id actors see, and the
// registered extension ops. Register every op before the first block; the
// Runtime is read-only afterwards.
type Runtime struct {
	vm         VM
	limits     Limits
	chainID    uint64
	maxTxCells uint64
	ops        map[string]HostOp
	// storageHook is the rent module's view of actor storage (nil: the
	// Limits' quota for every actor, no dormant actors).
	storageHook StorageHook
}

// StorageHook lets a module (chain/system/rent) set each actor's storage
// quota, follow its storage use, and keep a dormant actor's handlers from
// running.
type StorageHook interface {
	// Quota is actor a's storage quota in bytes.
	Quota(r state.Reader, a types.Address) (uint64, error)
	// Used is told that a's storage use changes from old to new bytes
	// (after the quota check).
	Used(x system.Tx, a types.Address, old, new uint64) error
	// Enter runs before any handler of a; its error (a system.Failure)
	// fails the invocation. write is false for read-only queries, which
	// must not write.
	Enter(x system.Tx, a types.Address, write bool) error
}

// SetStorageHook installs h; call it before the first block.
func (rt *Runtime) SetStorageHook(h StorageHook) { rt.storageHook = h }

// NewRuntime returns a Runtime over vm (nil: a transfer-only node that runs
// no actor code). maxTxCells bounds the cells of a read-only query.
func NewRuntime(vm VM, limits Limits, chainID, maxTxCells uint64) *Runtime {
	limits.Fill()
	return &Runtime{vm: vm, limits: limits, chainID: chainID, maxTxCells: maxTxCells, ops: map[string]HostOp{OpReentrancyEnter: reentrancyEnterOp}}
}

// Register makes op available to actors under name. It fails if name is
// taken.
func (rt *Runtime) Register(name string, op HostOp) error {
	if _, dup := rt.ops[name]; dup {
		return fmt.Errorf("actors: host op %q registered twice", name)
	}
	rt.ops[name] = op
	return nil
}

// HasVM reports whether the runtime runs actor code.
func (rt *Runtime) HasVM() bool { return rt.vm != nil }

// VM returns the runtime's VM (nil without one).
func (rt *Runtime) VM() VM { return rt.vm }

// Limits returns the execution limits, defaults filled in.
func (rt *Runtime) Limits() Limits { return rt.limits }
