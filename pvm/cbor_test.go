package pvm

import (
	"bytes"
	"testing"

	"github.com/fxamacker/cbor/v2"
)

// Return values are canonical CBOR: decoding and re-encoding them with the
// core deterministic encoding gives the same bytes.
func TestReturnIsCanonicalCBOR(t *testing.T) {
	src := `
class Actor:
    def vals(self):
        return {"b": [1, -1, 255, 256, 65536, -65537, 2**64 - 1, 2**64, -2**64 - 5, 2**100],
                "a": {"zz": 1.5, "a": 0.1, "m": float("inf"), "k": -0.0, "big": 1e300, "h": 65504.0},
                10: b"\x00\xff", -1: None, "t": (True, False), "s": {3, 1, 2}, "u": "\u00e9\u4e2d"}
`
	out := call(t, engine(t), newMemHost(), src, "vals", nil, false)
	if out.Err != nil {
		t.Fatal(out.Err)
	}
	var v any
	dm, _ := cbor.DecOptions{BigIntDec: cbor.BigIntDecodePointer}.DecMode()
	if err := dm.Unmarshal(out.Return, &v); err != nil {
		t.Fatal(err)
	}
	eo := cbor.CoreDetEncOptions()
	eo.BigIntConvert = cbor.BigIntConvertShortest
	em, _ := eo.EncMode()
	again, err := em.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, out.Return) {
		t.Fatalf("not canonical:\n python %x\n go     %x", out.Return, again)
	}
}
