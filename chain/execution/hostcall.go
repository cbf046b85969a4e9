package execution

import (
	"fmt"

	"github.com/cowboy-foundation/cowboy/pvm"
)

// HostCall routes an actor's extension ops (pvm.ExtendedHost) to their
// owners: the timer ops (timers.go) and submit_job (offchain_host.go).
// Errors are shown to the actor as a catchable HostError; they leave no
// state change behind.
func (h *actorHost) HostCall(req *pvm.HostRequest) (*pvm.HostResponse, error) {
	switch req.Op {
	case OpSetTimer, OpSetInterval, OpCancelTimer:
		return h.timerOp(req)
	case OpSubmitJob:
		return h.submitJobOp(req)
	}
	return nil, fmt.Errorf("unsupported host call: %s", req.Op)
}
