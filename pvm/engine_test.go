package pvm

import (
	"context"
	"math/big"
	"os"
	"sync"
	"testing"

	"github.com/fxamacker/cbor/v2"
)

// sharedEngine is started once per test binary.
var (
	sharedOnce sync.Once
	sharedEng  *Engine
	sharedErr  error
)

func engine(t testing.TB) *Engine {
	t.Helper()
	sharedOnce.Do(func() {
		sharedEng, sharedErr = New(context.Background(), Config{})
	})
	if sharedErr != nil {
		t.Fatalf("New: %v", sharedErr)
	}
	return sharedEng
}

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedEng != nil {
		_ = sharedEng.Close()
	}
	os.Exit(code)
}

func cborOf(t testing.TB, v any) []byte {
	t.Helper()
	b, err := cbor.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func addr(b byte) [20]byte {
	var a [20]byte
	for i := range a {
		a[i] = b
	}
	return a
}

func call(t testing.TB, e *Engine, h Host, code, handler string, payload any, init bool) *Outcome {
	t.Helper()
	inv := &Invocation{
		Actor: addr(1), Caller: addr(2), Origin: addr(3), Value: big.NewInt(0),
		Handler: handler, Code: []byte(code), CyclesLimit: 1_000_000, CellsLimit: 100_000, Init: init,
	}
	if payload != nil {
		inv.Payload = cborOf(t, payload)
	}
	out, err := e.Execute(context.Background(), inv, h)
	if err != nil {
		t.Fatalf("Execute %s: %v", handler, err)
	}
	return out
}

func decodeRet(t testing.TB, out *Outcome) any {
	t.Helper()
	if out.Err != nil {
		t.Fatalf("call failed: %v", out.Err)
	}
	var v any
	if err := cbor.Unmarshal(out.Return, &v); err != nil {
		t.Fatalf("decode return: %v", err)
	}
	return v
}

const plainCounter = `
class Actor:
    """A Cowboy actor deployed on-chain."""

    def __init__(self):
        self.counter = 0

    def increment(self):
        self.counter += 1
        return self.counter

    def get_count(self):
        return self.counter
`

const sdkCounter = `
from cowboy_sdk import actor, public, runtime

@actor
class Counter:
    def __init__(self):
        self.storage["count"] = 0

    @public
    def increment(self, by=1):
        self.storage["count"] += by
        runtime.emit_event("inc", {"by": by})
        return self.storage["count"]

    @public
    def info(self):
        b = runtime.block_info()
        return [b["height"], b["chain_id"], runtime.caller()]

    def hidden(self):
        return 1
`

func TestPlainActorCounter(t *testing.T) {
	e := engine(t)
	h := newMemHost()
	if out := call(t, e, h, plainCounter, "", nil, true); out.Err != nil {
		t.Fatalf("init: %v", out.Err)
	}
	for i := 1; i <= 3; i++ {
		out := call(t, e, h, plainCounter, "increment", nil, false)
		if got := decodeRet(t, out); got != uint64(i) {
			t.Fatalf("increment %d returned %v", i, got)
		}
		if out.CyclesUsed == 0 || out.CellsUsed == 0 {
			t.Fatalf("no usage reported: %+v", out)
		}
	}
	if got := decodeRet(t, call(t, e, h, plainCounter, "get_count", nil, false)); got != uint64(3) {
		t.Fatalf("get_count = %v", got)
	}
}

func TestSDKActorCounter(t *testing.T) {
	e := engine(t)
	h := newMemHost()
	if out := call(t, e, h, sdkCounter, "", nil, true); out.Err != nil {
		t.Fatalf("init: %v", out.Err)
	}
	call(t, e, h, sdkCounter, "increment", nil, false)
	out := call(t, e, h, sdkCounter, "increment", []any{5}, false)
	if got := decodeRet(t, out); got != uint64(6) {
		t.Fatalf("increment returned %v", got)
	}
	if len(h.events) != 2 {
		t.Fatalf("events = %v", h.events)
	}
	info := decodeRet(t, call(t, e, h, sdkCounter, "info", nil, false)).([]any)
	if info[0] != uint64(42) || info[1] != "cowboy-test" {
		t.Fatalf("info = %v", info)
	}
	out = call(t, e, h, sdkCounter, "hidden", nil, false)
	if out.Err == nil || out.Err.Kind != HandlerNotFound {
		t.Fatalf("hidden handler: %+v", out.Err)
	}
}

func TestInvalidPayload(t *testing.T) {
	e := engine(t)
	inv := &Invocation{Handler: "get_count", Code: []byte(plainCounter), Payload: []byte{0x9f, 0x01},
		CyclesLimit: 1_000_000, CellsLimit: 1000}
	out, err := e.Execute(context.Background(), inv, newMemHost())
	if err != nil {
		t.Fatal(err)
	}
	if out.Err == nil || out.Err.Kind != InvalidPayload {
		t.Fatalf("want InvalidPayload, got %+v", out.Err)
	}
}
