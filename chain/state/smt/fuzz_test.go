package smt

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

// FuzzProofDecode: arbitrary bytes must never panic the decoder; anything
// that decodes must re-encode to the identical bytes (canonical form) and be
// safe to verify.
func FuzzProofDecode(f *testing.F) {
	// Seeds from real proofs (more are in testdata/fuzz/FuzzProofDecode).
	tr := New(NewMemStore(), EmptyRoot)
	for i := range 64 {
		if err := tr.Update([]byte{byte(i)}, []byte{byte(i), 1}); err != nil {
			f.Fatal(err)
		}
	}
	for _, k := range [][]byte{{1}, {200}, []byte("absent")} {
		p, err := tr.Prove(k)
		if err != nil {
			f.Fatal(err)
		}
		enc, err := p.MarshalCBOR()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(enc)
	}
	f.Add([]byte{0x84, 0x00, 0x40, 0x80, 0xf6})
	f.Add([]byte{})
	root := tr.Root()

	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := DecodeProof(data)
		if err != nil {
			if !errors.Is(err, ErrMalformedProof) {
				t.Fatalf("decode error does not wrap ErrMalformedProof: %v", err)
			}
			return
		}
		again, err := p.MarshalCBOR()
		if err != nil {
			t.Fatalf("decoded proof does not re-encode: %v", err)
		}
		if !bytes.Equal(again, data) {
			t.Fatalf("re-encoding differs:\n in %x\nout %x", data, again)
		}
		// Verification of any decodable proof must not panic.
		_ = VerifyProof(root, []byte{1}, []byte{1, 1}, p)
		_ = VerifyProof(root, []byte("absent"), nil, p)
	})
}

// FuzzTreeOps runs random operation sequences against a reference map and
// checks values, proofs, historical roots and the root against the
// independent reference implementation.
//
// Each pair of input bytes (op, arg) is one operation on key arg&63.
func FuzzTreeOps(f *testing.F) {
	f.Add([]byte{0, 1, 0, 2, 3, 1, 4, 0, 5, 0, 6, 2, 7, 2, 7, 1})
	f.Add([]byte{0, 0, 1, 1, 2, 2, 0, 3, 4, 0, 3, 0, 3, 1, 3, 2, 3, 3, 5, 0, 7, 0})
	f.Add(bytes.Repeat([]byte{0, 7, 1, 9, 4, 0, 3, 7, 7, 9}, 20))

	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 1024 {
			ops = ops[:1024]
		}
		store := NewMemStore()
		tr := New(store, EmptyRoot)
		ref := map[string][]byte{}
		type snapshot struct {
			root  [32]byte
			pairs map[string][]byte
		}
		var snaps []snapshot
		for i := 0; i+1 < len(ops); i += 2 {
			op, arg := ops[i], ops[i+1]
			key := []byte(fmt.Sprintf("key-%d", arg&63))
			switch op % 8 {
			case 0, 1, 2:
				v := bytes.Repeat([]byte{op, arg}, 1+int(op>>3))
				if err := tr.Update(key, v); err != nil {
					t.Fatal(err)
				}
				ref[string(key)] = v
			case 3:
				if err := tr.Delete(key); err != nil {
					t.Fatal(err)
				}
				delete(ref, string(key))
			case 4:
				root, err := tr.Commit()
				if err != nil {
					t.Fatal(err)
				}
				snaps = append(snaps, snapshot{root, maps(ref)})
			case 5:
				root, err := tr.Commit()
				if err != nil {
					t.Fatal(err)
				}
				tr = New(store, root)
			case 6:
				got, found, err := tr.Get(key)
				want, ok := ref[string(key)]
				if err != nil || found != ok || !bytes.Equal(got, want) {
					t.Fatalf("Get(%s) = %x, %v, %v; want %x, %v", key, got, found, err, want, ok)
				}
			case 7:
				p, err := tr.Prove(key)
				if err != nil {
					t.Fatal(err)
				}
				root := tr.Root()
				want := ref[string(key)]
				if err := VerifyProof(root, key, want, p); err != nil {
					t.Fatalf("proof for %s: %v", key, err)
				}
				if err := VerifyProof(root, key, append(bytes.Clone(want), 0), p); err == nil {
					t.Fatalf("proof for %s verified a wrong value", key)
				}
				enc, err := p.MarshalCBOR()
				if err != nil {
					t.Fatal(err)
				}
				if _, err := DecodeProof(enc); err != nil {
					t.Fatalf("proof round trip: %v", err)
				}
			}
		}
		if got, want := tr.Root(), refRoot(ref); got != want {
			t.Fatalf("root %x, reference %x", got, want)
		}
		if len(snaps) > 8 {
			snaps = snaps[len(snaps)-8:]
		}
		for _, s := range snaps {
			old := New(store, s.root)
			for j := range 64 {
				key := []byte(fmt.Sprintf("key-%d", j))
				got, found, err := old.Get(key)
				want, ok := s.pairs[string(key)]
				if err != nil || found != ok || !bytes.Equal(got, want) {
					t.Fatalf("historical Get(%s) = %x, %v, %v; want %x, %v", key, got, found, err, want, ok)
				}
			}
		}
	})
}
