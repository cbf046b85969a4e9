package pvm

import (
	"math"
	"strconv"
	"testing"
)

const floatOpsActor = `
import math
class Actor:
    def ops(self, xs):
        out = []
        for a in xs:
            for b in xs:
                out.append([(a + b).hex(), (a - b).hex(), (a * b).hex(),
                            (a / b).hex() if b != 0.0 else "", math.sqrt(abs(a)).hex()])
        return out
`

// Float policy (docs/PVM_FLOAT.md): IEEE-754 basic operations are correctly
// rounded, so CPython as built must give the same bits as Go's own float64
// arithmetic, an independent implementation, on awkward inputs.
func TestFloatBasicOpsMatchIEEE(t *testing.T) {
	xs := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 0.2, 1.0 / 3, 1e308, -1e308, 5e-324, 2.2250738585072014e-308,
		math.MaxFloat64, math.SmallestNonzeroFloat64 * 3, 123456789.123456789, -9.87654321e-300, math.Pi, 1 << 53, (1 << 53) + 2}
	args := make([]any, len(xs))
	for i, x := range xs {
		args[i] = x
	}
	got := decodeRet(t, call(t, engine(t), newMemHost(), floatOpsActor, "ops", []any{args}, false)).([]any)
	k := 0
	for _, a := range xs {
		for _, b := range xs {
			want := []float64{a + b, a - b, a * b, a / b, math.Sqrt(math.Abs(a))}
			row := got[k].([]any)
			k++
			for i, w := range want {
				if i == 3 && b == 0 {
					continue
				}
				p, err := strconv.ParseFloat(row[i].(string), 64)
				if err != nil && !math.IsInf(w, 0) {
					t.Fatalf("parse %q: %v", row[i], err)
				}
				if math.Float64bits(p) != math.Float64bits(w) {
					t.Fatalf("op %d on (%v, %v): python %s, go %v", i, a, b, row[i], w)
				}
			}
		}
	}
}
