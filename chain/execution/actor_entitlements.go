package execution

import (
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/offchain/entitlement"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/pvm"
)

// Actor entitlements (spec 002 §15). The deployment manifest of a Deploy
// instruction is validated and stored, write-once, in the actor's metadata
// row under the actor prefix (0x08 || address || "requires"); the syscall
// gate reads it on every privileged host call. An actor without a manifest
// gets none of them: set_timer / set_interval need "timers", submit_job
// needs "jobs" listing the job type and "http" covering every required
// domain. cancel_timer is not gated: it only releases the actor's own timers.

var requiresSuffix = []byte("requires")

// RequiresKey is the state key of an actor's stored manifest.
func RequiresKey(a types.Address) []byte {
	return state.Key(state.PrefixActor, a[:], requiresSuffix)
}

// ReadActorRequires returns an actor's deployment manifest (nil: none).
func ReadActorRequires(r state.Reader, a types.Address) (entitlement.Manifest, error) {
	b, ok, err := r.Get(RequiresKey(a))
	if err != nil || !ok {
		return nil, err
	}
	m, err := entitlement.DecodeManifest(b)
	if err != nil {
		return nil, fmt.Errorf("actor %s: stored %w", a, err)
	}
	return m, nil
}

// storeRequires validates a Deploy's manifest and writes it for addr,
// charging one cell per stored byte. Invalid manifests fail the deploy.
func (x *txExec) storeRequires(addr types.Address, raw []byte) error {
	if len(raw) == 0 {
		return nil
	}
	if _, err := entitlement.DecodeManifest(raw); err != nil {
		return failf(system.CodeInvalidManifest, "InvalidManifest: %v", err)
	}
	if err := x.charge(0, uint64(len(raw))); err != nil {
		return err
	}
	x.o.Set(RequiresKey(addr), append([]byte(nil), raw...))
	return nil
}

func (h *actorHost) requires() (entitlement.Manifest, error) {
	m, err := ReadActorRequires(h.x.o, h.actor)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", pvm.ErrHostFailure, err)
	}
	return m, nil
}

// gateTimers is the syscall gate of set_timer / set_interval.
func (h *actorHost) gateTimers(op string) error {
	if op != OpSetTimer && op != OpSetInterval {
		return nil
	}
	m, err := h.requires()
	if err != nil {
		return err
	}
	return m.CheckTimers(op)
}

// gateJob is the syscall gate of submit_job.
func (h *actorHost) gateJob(spec *job.JobSpec) error {
	m, err := h.requires()
	if err != nil {
		return err
	}
	return m.CheckJob(OpSubmitJob, spec.JobType, spec.RequiredDomains)
}
