package types

import (
	"bytes"
	"encoding/hex"
	"testing"
)

// FuzzDecodeTx: arbitrary bytes never panic the decoder, and anything it
// accepts re-encodes to exactly the same bytes.
func FuzzDecodeTx(f *testing.F) {
	v1, _ := hex.DecodeString(vector1Hex)
	f.Add(v1)
	f.Add([]byte{0x8d})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		tx, err := DecodeTx(data)
		if err != nil {
			return
		}
		if !bytes.Equal(tx.Encode(), data) {
			t.Fatalf("accepted non-identical round trip: %x -> %x", data, tx.Encode())
		}
		again, err := NewTx(tx.Data())
		if err != nil {
			t.Fatalf("rebuild: %v", err)
		}
		if !bytes.Equal(again.Encode(), data) {
			t.Fatalf("rebuild changed bytes")
		}
		_, _ = tx.Sender()
		_, _ = DecodeInstruction(tx.Payload())
	})
}
