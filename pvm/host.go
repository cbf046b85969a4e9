package pvm

import (
	"errors"
	"math/big"
)

// BlockInfo describes the block the call executes in.
type BlockInfo struct {
	Height    uint64
	Timestamp uint64
	ChainID   string
	Proposer  [20]byte
}

// Host is the chain side of a call. Its methods are invoked synchronously,
// on the goroutine running Execute, while the actor waits. Go charges the
// host-call costs itself; a Host only performs the operation. An error
// returned by a Host method is shown to the actor as a catchable HostError
// with err.Error() as message (so it must be deterministic), unless it wraps
// ErrHostFailure, which aborts the call with an infrastructure error.
type Host interface {
	StorageGet(key []byte) ([]byte, bool, error)
	StorageSet(key, value []byte) error
	StorageDelete(key []byte) error
	EmitEvent(topic string, data []byte) error
	// Send enqueues a message (async messaging) and returns its id.
	Send(to [20]byte, handler string, payload []byte, value *big.Int) ([32]byte, error)
	Transfer(to [20]byte, value *big.Int) error
	Balance(addr [20]byte) (*big.Int, error)
	BlockInfo() BlockInfo
	Randomness(label []byte) ([32]byte, error)
}

// HostRequest is a host call as received from the worker. Ops that the Host
// interface does not cover (timers, jobs, signature checks, ...) are passed
// to a Host that also implements ExtendedHost.
type HostRequest struct {
	Op      string   `cbor:"op"`
	Key     []byte   `cbor:"key,omitempty"`
	Val     []byte   `cbor:"val,omitempty"`
	Topic   string   `cbor:"topic,omitempty"`
	Data    []byte   `cbor:"data,omitempty"`
	To      []byte   `cbor:"to,omitempty"`
	Handler string   `cbor:"handler,omitempty"`
	Payload []byte   `cbor:"payload,omitempty"`
	Amount  *big.Int `cbor:"amount,omitempty"`
	Label   []byte   `cbor:"label,omitempty"`
	// Args carries the arguments of extension ops (pvm_host.host_call).
	Args any `cbor:"args,omitempty"`
	// ReadOnly is set by the engine for read-only calls; an ExtendedHost
	// must refuse mutating ops when it is true.
	ReadOnly bool `cbor:"-"`
}

// HostResponse is the result of an extended host call.
type HostResponse struct {
	Value  any    // CBOR-encodable value returned to the actor
	Cycles uint64 // cycles to charge
	Cells  uint64 // cells to charge
}

// ExtendedHost serves host calls beyond the Host interface.
type ExtendedHost interface {
	HostCall(req *HostRequest) (*HostResponse, error)
}

// hostReply is the Go -> child answer to a host request.
type hostReply struct {
	T    string `cbor:"t"`
	Cy   uint64 `cbor:"cy"`
	V    any    `cbor:"v"`
	Kind string `cbor:"kind,omitempty"`
	Msg  string `cbor:"msg,omitempty"`
}

// meter is the Go side of one call's accounting.
type meter struct {
	costs      CostTable
	cellsLimit uint64
	cells      uint64
	readOnly   bool
}

func ceilDiv(a, b uint64) uint64 {
	if b == 0 {
		return 0
	}
	return (a + b - 1) / b
}

// dispatch serves one host request. The returned error is an
// infrastructure failure; actor-visible failures are in the reply.
func (m *meter) dispatch(h Host, r *HostRequest) (hostReply, error) {
	c := m.costs
	var cycles, cells uint64
	mutating := false
	switch r.Op {
	case "storage_get":
		cycles = c.StorageRead
	case "storage_set":
		cycles, cells, mutating = c.StorageWrite, c.StateWriteCellsPerByte*uint64(len(r.Key)+len(r.Val)), true
	case "storage_delete":
		cycles, mutating = c.StorageDelete, true
	case "emit_event":
		n := uint64(len(r.Topic) + len(r.Data))
		cycles, cells, mutating = c.EmitEvent+c.EmitEventByte*n, ceilDiv(n, c.EventBytesPerCell), true
	case "send":
		cycles, cells, mutating = c.SendMessage, c.SendCellsPerByte*uint64(len(r.Payload)), true
	case "transfer":
		cycles, cells, mutating = c.TokenTransfer, c.TransferCells, true
	case "balance":
		cycles = c.TokenBalanceOf
	case "block_info":
		cycles = c.BlockInfo
	case "randomness":
		cycles = c.Randomness
	}
	fail := func(kind ErrorKind, msg string) (hostReply, error) {
		return hostReply{T: "err", Cy: cycles, Kind: string(kind), Msg: msg}, nil
	}
	if mutating && m.readOnly {
		return fail(ReadOnlyViolation, r.Op+" in a read-only call")
	}
	if cells > 0 {
		m.cells += cells
		if m.cells > m.cellsLimit {
			return fail(OutOfCells, "out of cells")
		}
	}
	hostErr := func(err error) (hostReply, error) {
		if errors.Is(err, ErrHostFailure) {
			return hostReply{}, err
		}
		return fail(HostError, err.Error())
	}
	var addr [20]byte
	if r.To != nil {
		if len(r.To) != 20 {
			return fail(HostError, "address must be 20 bytes")
		}
		copy(addr[:], r.To)
	}
	amount := r.Amount
	if amount == nil {
		amount = new(big.Int)
	}
	ok := func(v any) (hostReply, error) { return hostReply{T: "ok", Cy: cycles, V: v}, nil }
	switch r.Op {
	case "storage_get":
		v, found, err := h.StorageGet(r.Key)
		if err != nil {
			return hostErr(err)
		}
		if !found {
			return ok(nil)
		}
		if rc := ceilDiv(uint64(len(v)), c.StateReadBytesPerCell); rc > 0 {
			m.cells += rc
			if m.cells > m.cellsLimit {
				return fail(OutOfCells, "out of cells")
			}
		}
		if v == nil {
			v = []byte{}
		}
		return ok(v)
	case "storage_set":
		if err := h.StorageSet(r.Key, r.Val); err != nil {
			return hostErr(err)
		}
		return ok(nil)
	case "storage_delete":
		if err := h.StorageDelete(r.Key); err != nil {
			return hostErr(err)
		}
		return ok(nil)
	case "emit_event":
		if err := h.EmitEvent(r.Topic, r.Data); err != nil {
			return hostErr(err)
		}
		return ok(nil)
	case "send":
		id, err := h.Send(addr, r.Handler, r.Payload, amount)
		if err != nil {
			return hostErr(err)
		}
		return ok(id[:])
	case "transfer":
		if err := h.Transfer(addr, amount); err != nil {
			return hostErr(err)
		}
		return ok(nil)
	case "balance":
		b, err := h.Balance(addr)
		if err != nil {
			return hostErr(err)
		}
		return ok(b)
	case "block_info":
		bi := h.BlockInfo()
		return ok(map[string]any{
			"height": bi.Height, "timestamp": bi.Timestamp, "chain_id": bi.ChainID, "proposer": bi.Proposer[:],
		})
	case "randomness":
		v, err := h.Randomness(r.Label)
		if err != nil {
			return hostErr(err)
		}
		return ok(v[:])
	}
	if x, isExt := h.(ExtendedHost); isExt {
		r.ReadOnly = m.readOnly
		resp, err := x.HostCall(r)
		if err != nil {
			return hostErr(err)
		}
		cycles = resp.Cycles
		if resp.Cells > 0 {
			m.cells += resp.Cells
			if m.cells > m.cellsLimit {
				return fail(OutOfCells, "out of cells")
			}
		}
		return ok(resp.Value)
	}
	return fail(HostError, "unsupported host call: "+r.Op)
}
