package pvm

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/big"
	"sort"
	"strings"
	"testing"
)

// memHost is an in-memory Host: the test boundary (CPython itself is real).
type memHost struct {
	store    map[string][]byte
	events   []string
	sends    []string
	balances map[[20]byte]*big.Int
	block    BlockInfo
	writes   []string // ordered log of storage writes
}

func newMemHost() *memHost {
	return &memHost{store: map[string][]byte{}, balances: map[[20]byte]*big.Int{},
		block: BlockInfo{Height: 42, Timestamp: 1700000000, ChainID: "cowboy-test"}}
}

func (h *memHost) StorageGet(key []byte) ([]byte, bool, error) {
	v, ok := h.store[string(key)]
	return v, ok, nil
}

func (h *memHost) StorageSet(key, value []byte) error {
	h.store[string(key)] = append([]byte(nil), value...)
	h.writes = append(h.writes, fmt.Sprintf("set %x=%x", key, value))
	return nil
}

func (h *memHost) StorageDelete(key []byte) error {
	delete(h.store, string(key))
	h.writes = append(h.writes, fmt.Sprintf("del %x", key))
	return nil
}

func (h *memHost) EmitEvent(topic string, data []byte) error {
	h.events = append(h.events, fmt.Sprintf("%s:%x", topic, data))
	return nil
}

func (h *memHost) Send(to [20]byte, handler string, payload []byte, value *big.Int) ([32]byte, error) {
	s := fmt.Sprintf("%x.%s(%x) value=%s", to, handler, payload, value)
	h.sends = append(h.sends, s)
	return sha256.Sum256([]byte(s)), nil
}

func (h *memHost) Transfer(to [20]byte, value *big.Int) error {
	if value.Sign() > 0 && value.Cmp(big.NewInt(1000)) > 0 {
		return errors.New("insufficient balance")
	}
	b := h.balances[to]
	if b == nil {
		b = new(big.Int)
	}
	h.balances[to] = new(big.Int).Add(b, value)
	return nil
}

func (h *memHost) Balance(addr [20]byte) (*big.Int, error) {
	if b := h.balances[addr]; b != nil {
		return b, nil
	}
	return big.NewInt(0), nil
}

func (h *memHost) BlockInfo() BlockInfo { return h.block }

func (h *memHost) Randomness(label []byte) ([32]byte, error) {
	return sha256.Sum256(append([]byte("beacon:"), label...)), nil
}

// snapshot is a canonical dump of the host state, for determinism checks.
func (h *memHost) snapshot() string {
	keys := make([]string, 0, len(h.store))
	for k := range h.store {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b bytes.Buffer
	for _, k := range keys {
		fmt.Fprintf(&b, "%x=%x\n", k, h.store[k])
	}
	for _, w := range h.writes {
		b.WriteString(w + "\n")
	}
	for _, e := range h.events {
		b.WriteString("event " + e + "\n")
	}
	for _, s := range h.sends {
		b.WriteString("send " + s + "\n")
	}
	return b.String()
}

var _ Host = (*memHost)(nil)

func TestMemHostCompiles(t *testing.T) {}

// extHost adds one extension op, as timers or signature checks would.
type extHost struct {
	*memHost
	seen []string
}

func (x *extHost) HostCall(r *HostRequest) (*HostResponse, error) {
	if r.Op != "set_timer" {
		return nil, errors.New("unknown op " + r.Op)
	}
	if r.ReadOnly {
		return nil, errors.New("read-only")
	}
	x.seen = append(x.seen, fmt.Sprint(r.Args))
	return &HostResponse{Value: uint64(7), Cycles: 1000, Cells: 10}, nil
}

func TestExtendedHost(t *testing.T) {
	e := engine(t)
	h := &extHost{memHost: newMemHost()}
	src := `
import pvm_host
class Actor:
    def go(self):
        return pvm_host.host_call("set_timer", height=100, handler="tick")
    def bad(self):
        return pvm_host.host_call("nope")
`
	out := call(t, e, h, src, "go", nil, false)
	if got := decodeRet(t, out); got != uint64(7) || len(h.seen) != 1 {
		t.Fatalf("set_timer = %v seen %v", got, h.seen)
	}
	if out.CyclesUsed < 1000 || out.CellsUsed < 10 {
		t.Fatalf("extension costs not charged: %+v", out)
	}
	out = call(t, e, h, src, "bad", nil, false)
	if out.Err == nil || out.Err.Kind != HostError || !strings.Contains(out.Err.Message, "unknown op nope") {
		t.Fatalf("bad op: %+v", out.Err)
	}
}
