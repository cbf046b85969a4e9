package sdk_test

import (
	"errors"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/consensus/bls"
	"github.com/cowboy-foundation/cowboy/chain/state/smt"
	"github.com/cowboy-foundation/cowboy/chain/system/validators"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/sdk"
)

const handoffEpochLen = 8

// stateWith is a tree holding kvs; it returns the root and a proof of key.
func stateWith(t *testing.T, key []byte, kvs map[string][]byte) (types.Hash, *smt.Proof) {
	t.Helper()
	tree := smt.New(smt.NewMemStore(), smt.EmptyRoot)
	for k, v := range kvs {
		if err := tree.Update([]byte(k), v); err != nil {
			t.Fatal(err)
		}
	}
	root, err := tree.Commit()
	if err != nil {
		t.Fatal(err)
	}
	p, err := tree.Prove(key)
	if err != nil {
		t.Fatal(err)
	}
	return root, p
}

// handoff builds the hand-off from epoch 0 to 1: the epoch record rec in
// the state after height at, committed by a filler at at+2 signed by
// signers (as validators 0..2) in domain.
func (f *lightFixture) handoff(t *testing.T, at uint64, rec *validators.Epoch, domain uint64, signers []*bls.SecretKey) *apitypes.LightHandoff {
	t.Helper()
	key := validators.EpochKey()
	val := codec.MustMarshal(rec)
	root, proof := stateWith(t, key, map[string][]byte{string(key): val, "other": []byte("x")})
	hdr := types.Header{ChainID: lightChain, Height: at, StateRoot: root}
	b := f.anchorBlock(at+2, consensus.ExecCommit{Height: at, Header: hdr.Hash()})
	qc := f.qc(t, domain, &b, []int{0, 1, 2}, signers)
	return &apitypes.LightHandoff{Epoch: 0, Header: codec.MustMarshal(&hdr), Anchor: codec.MustMarshal(&consensus.Anchor{Block: b, QC: qc}),
		Key: key, Value: val, Proof: proof}
}

// TestLightClientHandoff: the client follows a verified hand-off to epoch
// 1's (entirely new) validator set, then accepts a proof certified by the
// new set and refuses one certified by the old set in epoch 1.
func TestLightClientHandoff(t *testing.T) {
	f := newLightFixture(t)
	newKeys := []*bls.SecretKey{blsKey(t, 11), blsKey(t, 12), blsKey(t, 13), blsKey(t, 14)}
	rec := &validators.Epoch{Number: 1, StartHeight: handoffEpochLen + 1}
	for i, k := range newKeys {
		rec.Members = append(rec.Members, validators.SetMember{Address: types.Address{0xe0, byte(i)}, BLSKey: k.PublicKey().Bytes(), Weight: 10})
	}
	lc := f.client(t, handoffEpochLen)
	if err := lc.AddHandoff(f.handoff(t, handoffEpochLen, rec, lightChain, f.keys[:3])); err != nil {
		t.Fatal(err)
	}
	if lc.Epochs() != 1 {
		t.Fatalf("epochs %d after one hand-off", lc.Epochs())
	}

	// A value at height 11 committed by block 12 (epoch 1).
	hdr := f.header
	hdr.Height = 11
	b := f.anchorBlock(12, consensus.ExecCommit{Height: 11, Header: hdr.Hash()})
	d1 := consensus.EpochDomain(lightChain, 1)
	got, err := lc.Verify(f.key, f.proofFor(b, f.qc(t, d1, &b, []int{0, 1, 2}, newKeys[:3]), hdr))
	if err != nil {
		t.Fatal(err)
	}
	if got.Epoch != 1 || got.Signers != 3 || got.Validators != 4 {
		t.Fatalf("verified %+v", got)
	}
	if _, err := lc.Verify(f.key, f.proofFor(b, f.qc(t, d1, &b, []int{0, 1, 2}, f.keys[:3]), hdr)); !errors.Is(err, consensus.ErrInvalidSignature) {
		t.Fatalf("epoch 1 proof signed by the epoch 0 set: %v", err)
	}
}

// TestLightClientRefusesBogusHandoff: a hand-off that does not prove the
// next set is refused with ErrBadHandoff and the client keeps its set.
func TestLightClientRefusesBogusHandoff(t *testing.T) {
	f := newLightFixture(t)
	impostors := []*bls.SecretKey{blsKey(t, 21), blsKey(t, 22), blsKey(t, 23)}
	rec := func(n, start uint64) *validators.Epoch {
		e := &validators.Epoch{Number: n, StartHeight: start}
		for i, k := range impostors {
			e.Members = append(e.Members, validators.SetMember{Address: types.Address{0xee, byte(i)}, BLSKey: k.PublicKey().Bytes(), Weight: 10})
		}
		return e
	}
	cases := []struct {
		name string
		h    func() *apitypes.LightHandoff
		also error
	}{
		{"signed by the next set, not the current one", func() *apitypes.LightHandoff {
			return f.handoff(t, handoffEpochLen, rec(1, handoffEpochLen+1), lightChain, impostors)
		}, consensus.ErrInvalidSignature},
		{"signed in the next epoch's domain", func() *apitypes.LightHandoff {
			return f.handoff(t, handoffEpochLen, rec(1, handoffEpochLen+1), consensus.EpochDomain(lightChain, 1), f.keys[:3])
		}, consensus.ErrInvalidSignature},
		{"header not the epoch's last block", func() *apitypes.LightHandoff {
			return f.handoff(t, handoffEpochLen-1, rec(1, handoffEpochLen), lightChain, f.keys[:3])
		}, nil},
		{"record of another epoch", func() *apitypes.LightHandoff {
			return f.handoff(t, handoffEpochLen, rec(2, handoffEpochLen+1), lightChain, f.keys[:3])
		}, nil},
		{"record swapped after signing", func() *apitypes.LightHandoff {
			h := f.handoff(t, handoffEpochLen, rec(1, handoffEpochLen+1), lightChain, f.keys[:3])
			e := rec(1, handoffEpochLen+1)
			e.Members[0].Weight = 1000
			h.Value = codec.MustMarshal(e)
			return h
		}, smt.ErrInvalidProof},
		{"hand-off from an epoch the client does not hold", func() *apitypes.LightHandoff {
			h := f.handoff(t, handoffEpochLen, rec(1, handoffEpochLen+1), lightChain, f.keys[:3])
			h.Epoch = 1
			return h
		}, nil},
		{"not the epoch record", func() *apitypes.LightHandoff {
			h := f.handoff(t, handoffEpochLen, rec(1, handoffEpochLen+1), lightChain, f.keys[:3])
			h.Key = []byte("other")
			return h
		}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lc := f.client(t, handoffEpochLen)
			err := lc.AddHandoff(c.h())
			if !errors.Is(err, sdk.ErrBadHandoff) || (c.also != nil && !errors.Is(err, c.also)) {
				t.Fatalf("got %v, want %v and %v", err, sdk.ErrBadHandoff, c.also)
			}
			if lc.Epochs() != 0 {
				t.Fatal("a refused hand-off was adopted")
			}
		})
	}
}
