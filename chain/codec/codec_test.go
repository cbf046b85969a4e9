package codec_test

import (
	"errors"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/codec"
)

// UnmarshalStored skips only the canonical check: it decodes what Marshal
// wrote, refuses trailing bytes, and leaves refusing non-canonical input
// from outside to Unmarshal.
func TestUnmarshalStored(t *testing.T) {
	type rec struct {
		_ struct{} `cbor:",toarray"`
		A uint64
		B []byte
	}
	enc := codec.MustMarshal(&rec{A: 7, B: []byte("x")})
	var got rec
	if err := codec.UnmarshalStored(enc, &got); err != nil || got.A != 7 || string(got.B) != "x" {
		t.Fatalf("UnmarshalStored = %+v, %v", got, err)
	}
	if err := codec.UnmarshalStored(append(enc, 0), &got); err == nil {
		t.Fatal("trailing byte accepted")
	}
	// 7 as a two-byte integer (0x18 0x07) is not canonical.
	nonCanon := []byte{0x82, 0x18, 0x07, 0x41, 'x'}
	if err := codec.Unmarshal(nonCanon, &got); !errors.Is(err, codec.ErrNonCanonical) {
		t.Fatalf("Unmarshal of non-canonical input: %v, want ErrNonCanonical", err)
	}
	if err := codec.UnmarshalStored(nonCanon, &got); err != nil || got.A != 7 {
		t.Fatalf("UnmarshalStored of non-canonical input = %+v, %v", got, err)
	}
}
