package pvm

import (
	"context"
	"github.com/fxamacker/cbor/v2"
	"testing"
)

// The metered constructors (str, int, list, ...) stand in for the builtin
// types; isinstance and issubclass must still treat them as those types.
func TestIsinstanceWithBuiltinTypes(t *testing.T) {
	src := []byte(`class Actor:
    def f(self):
        return [isinstance("a", str), isinstance(b"a", bytes), isinstance([], list), isinstance({}, dict),
                isinstance(3, int), isinstance((1,), tuple), isinstance(3, (str, int)), isinstance("a", (bytes, list)),
                issubclass(bool, int), isinstance(str("x"), str), isinstance(int("7"), int)]
`)
	out, err := engine(t).Execute(context.Background(), &Invocation{Handler: "f", Code: src, CyclesLimit: 1_000_000, CellsLimit: 100_000}, newMemHost())
	if err != nil {
		t.Fatal(err)
	}
	if out.Err != nil {
		t.Fatalf("actor failed: %v", out.Err)
	}
	var got []bool
	if err := cbor.Unmarshal(out.Return, &got); err != nil {
		t.Fatal(err)
	}
	want := []bool{true, true, true, true, true, true, true, false, true, true, true}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("check %d: got %v, want %v (all: %v)", i, got[i], want[i], got)
		}
	}
}
