package execution

import (
	"errors"
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

// hostArgs is a host call's keyword arguments: a CBOR map with text keys.
func hostArgs(raw any) (map[string]any, error) {
	switch v := raw.(type) {
	case map[string]any:
		return v, nil
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			ks, ok := k.(string)
			if !ok {
				return nil, errors.New("bad arguments: non-string key")
			}
			m[ks] = x
		}
		return m, nil
	}
	return nil, errors.New("bad arguments: not a map")
}
