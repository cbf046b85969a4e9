package blob_test

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/blob"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Published vectors: go-multihash / rust-multihash's sha2-256 of "hello
// world", js-multihash's fixture for "foo", and BLAKE3's official empty
// input vector (BLAKE3-team/BLAKE3 test_vectors.json) under code 0x1e.
func TestMultihashVectors(t *testing.T) {
	for _, tc := range []struct {
		code uint64
		in   string
		want string
	}{
		{blob.SHA2_256, "hello world", "1220b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9"},
		{blob.SHA2_256, "foo", "12202c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"},
		{blob.BLAKE3, "", "1e20af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"},
	} {
		m, err := blob.Sum(tc.code, []byte(tc.in))
		if err != nil {
			t.Fatal(err)
		}
		if m.Hex() != tc.want {
			t.Fatalf("%x(%q) = %s, want %s", tc.code, tc.in, m.Hex(), tc.want)
		}
		p, err := blob.ParseHex("f" + tc.want) // multibase base16
		if err != nil || p.Code() != tc.code {
			t.Fatalf("parse %s: %v %x", tc.want, err, p.Code())
		}
		if err := p.Verify([]byte(tc.in)); err != nil {
			t.Fatal(err)
		}
		if err := p.Verify([]byte(tc.in + "!")); !errors.Is(err, blob.ErrMismatch) {
			t.Fatalf("tampered content: %v", err)
		}
	}
	// A multi-byte varint code: blake2b-512 is 0xb240, varint c0 e4 02
	// (js-multihash fixture); its header decodes, the function is refused.
	m := blob.New(0xb240, make([]byte, 64))
	if hex.EncodeToString(m[:4]) != "c0e40240" {
		t.Fatalf("varint header %x", m[:4])
	}
	if code, d, err := blob.Decode(m); err != nil || code != 0xb240 || len(d) != 64 {
		t.Fatalf("decode: %x %d %v", code, len(d), err)
	}
	if _, err := blob.Parse(m); !errors.Is(err, blob.ErrUnsupported) {
		t.Fatalf("blake2b: %v", err)
	}
}

func TestMultihashMalformed(t *testing.T) {
	good, _ := blob.Sum(blob.SHA2_256, []byte("x"))
	for name, b := range map[string][]byte{
		"empty":        nil,
		"short digest": good[:20],
		"long digest":  append(append([]byte(nil), good...), 0),
		"truncated":    good[:2],
		"non-minimal":  append([]byte{0x92, 0x00}, good[1:]...),
		"short sha":    blob.New(blob.SHA2_256, make([]byte, 20)),
	} {
		if _, err := blob.Parse(b); !errors.Is(err, blob.ErrMalformed) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := blob.ParseHex("zz"); !errors.Is(err, blob.ErrMalformed) {
		t.Fatal(err)
	}
}

func TestCommitCycles(t *testing.T) {
	for size, want := range map[uint64]uint64{1: 40, 1024: 40, 1025: 80, 64 << 10: 2560, 1 << 20: 40960, 100_000: 40 * 98} {
		if got := blob.CommitCycles(size); got != want {
			t.Errorf("CommitCycles(%d) = %d, want %d", size, got, want)
		}
	}
}

func TestRecordRoundTrip(t *testing.T) {
	m, _ := blob.Sum(blob.SHA2_256, []byte("x"))
	r := &blob.Record{Ref: blob.Ref{Multihash: m, Size: 70_000, Volume: types.Hash{1}, Path: "/.blobs/x"}, Actor: types.Address{2}, Height: 9}
	var back blob.Record
	if err := back.Decode(r.Encode()); err != nil {
		t.Fatal(err)
	}
	if back.Multihash.Hex() != m.Hex() || back.Size != r.Size || back.Path != r.Path || back.Actor != r.Actor || back.Height != 9 {
		t.Fatalf("round trip: %+v", back)
	}
}

func TestMultihashJSON(t *testing.T) {
	m, _ := blob.Sum(blob.SHA2_256, []byte("hello world"))
	b, err := json.Marshal(blob.Ref{Multihash: m, Size: 11})
	if err != nil || !strings.Contains(string(b), `"multihash":"1220b94d27b9`) {
		t.Fatalf("%s %v", b, err)
	}
	var back blob.Ref
	if err := json.Unmarshal(b, &back); err != nil || back.Multihash.Hex() != m.Hex() {
		t.Fatalf("%v %v", back, err)
	}
}
