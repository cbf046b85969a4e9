package vrf

import (
	"bytes"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/consensus/bls"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

func TestProveVerify(t *testing.T) {
	sk, _ := bls.KeyFromSeed(bytes.Repeat([]byte{7}, 32))
	other, _ := bls.KeyFromSeed(bytes.Repeat([]byte{8}, 32))
	seed := types.Keccak256([]byte("epoch"))
	out, proof := Prove(sk, seed, 10)
	got, err := Verify(sk.PublicKey(), seed, 10, proof)
	if err != nil || got != out {
		t.Fatalf("verify: %v", err)
	}
	out2, _ := Prove(sk, seed, 10)
	if out2 != out {
		t.Fatal("VRF not deterministic")
	}
	if out3, _ := Prove(sk, seed, 11); out3 == out {
		t.Fatal("same output at two heights")
	}
	if _, err := Verify(sk.PublicKey(), seed, 11, proof); err == nil {
		t.Fatal("proof accepted for another height")
	}
	if _, err := Verify(other.PublicKey(), seed, 10, proof); err == nil {
		t.Fatal("proof accepted under another key")
	}
	if _, err := Verify(sk.PublicKey(), types.Hash{1}, 10, proof); err == nil {
		t.Fatal("proof accepted under another seed")
	}
	if _, err := Verify(sk.PublicKey(), seed, 10, proof[:5]); err == nil {
		t.Fatal("truncated proof accepted")
	}
}

func TestRandomness(t *testing.T) {
	r := types.Keccak256([]byte("beacon"))
	a, b := Randomness(r, []byte("lottery")), Randomness(r, []byte("committee"))
	if a == b || a == r {
		t.Fatal("labels not separated")
	}
	if Randomness(r, []byte("lottery")) != a {
		t.Fatal("not deterministic")
	}
	if Randomness(types.Hash{}, []byte("lottery")) == a {
		t.Fatal("beacon ignored")
	}
}
