package actors

import (
	"fmt"

	"github.com/cowboy-foundation/cowboy/pvm"
)

// OpReentrancyEnter is the host op behind cowboy_sdk's @nonreentrant
// (spec 002 §10, §12.3: "stdlib provides reentrancy guards").
//
// Messages are asynchronous: a handler's sends are delivered after it
// returns, breadth-first, within the same transaction. A call chain is a
// message and its ancestors (the top-level invocation, then each message
// whose handler sent the next). reentrancy_enter(key) takes the guard key
// for the calling actor in the current invocation; it fails if an
// ancestor invocation of the same actor in the chain already took it, so
// A.h → B.x → A.h is refused while two unrelated deliveries of A.h (in
// sibling chains or other transactions) are not. The guards live in the
// transaction's memory only: deterministic (a function of the message
// tree) and never in state.
const OpReentrancyEnter = "reentrancy_enter"

// ReentrancyCycles is reentrancy_enter's cost: a dictionary lookup per
// ancestor is bounded by the depth cap (32), priced as one host read.
const ReentrancyCycles = 100

// guard is a key held by actor's invocation at record rec (-1: the
// top-level invocation).
type guard struct {
	rec   int
	actor [20]byte
	key   string
}

func reentrancyEnterOp(h *Host, req *pvm.HostRequest) (*pvm.HostResponse, error) {
	m, err := hostArgs(req.Args)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", req.Op, err)
	}
	key, ok := m["key"].(string)
	if !ok || key == "" || len(key) > 256 {
		return nil, fmt.Errorf("%s: bad arguments: key must be a non-empty string of at most 256 bytes", req.Op)
	}
	x := h.x
	for rec := h.parent; ; rec = int(x.records[rec].Parent) {
		if _, held := x.guards[guard{rec: rec, actor: h.actor, key: key}]; held {
			return nil, fmt.Errorf("ReentrancyError: %s re-entered guard %q within one call chain (held by %s)", h.actor, key, chainLink(x, rec))
		}
		if rec < 0 {
			break
		}
	}
	if x.guards == nil {
		x.guards = map[guard]struct{}{}
	}
	x.guards[guard{rec: h.parent, actor: h.actor, key: key}] = struct{}{}
	return &pvm.HostResponse{Value: true, Cycles: ReentrancyCycles}, nil
}

// chainLink names the invocation at record rec for an error text.
func chainLink(x *Exec, rec int) string {
	if rec < 0 {
		return "the transaction's call"
	}
	r := x.records[rec]
	return fmt.Sprintf("message %d (%s from %s)", rec, r.Handler, r.From)
}
