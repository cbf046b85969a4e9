package sdk_test

import (
	"errors"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/blob"
	"github.com/cowboy-foundation/cowboy/sdk"
)

func TestVerifyBlob(t *testing.T) {
	data := []byte("hello world")
	m, _ := blob.Sum(blob.SHA2_256, data)
	ref := blob.Ref{Multihash: m, Size: uint64(len(data))}
	if err := sdk.VerifyBlob(ref, data); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string][]byte{"tampered": []byte("hello World"), "truncated": data[:10]} {
		if err := sdk.VerifyBlob(ref, c); !errors.Is(err, blob.ErrMismatch) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
