package sdk_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/consensus/bls"
	"github.com/cowboy-foundation/cowboy/chain/state/smt"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/sdk"
)

const lightChain = 77

// lightFixture is a four-validator set (stake 10 each), a state with one
// key, the header committing to it, and an anchor block at height 6 whose
// payload commits to that header, certified by validators 0, 1 and 2.
type lightFixture struct {
	keys     []*bls.SecretKey
	outsider *bls.SecretKey
	vals     []consensus.Validator
	key      []byte
	value    []byte
	proof    *smt.Proof
	header   types.Header
	block    consensus.Block
}

func blsKey(t *testing.T, seed byte) *bls.SecretKey {
	t.Helper()
	k, err := bls.GenerateKey(bytes.NewReader(bytes.Repeat([]byte{seed}, 64)))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func newLightFixture(t *testing.T) *lightFixture {
	t.Helper()
	f := &lightFixture{key: []byte("acct/alice"), value: []byte("balance 42"), outsider: blsKey(t, 99)}
	for i := range 4 {
		k := blsKey(t, byte(i+1))
		f.keys = append(f.keys, k)
		f.vals = append(f.vals, consensus.Validator{Address: types.Address{byte(i + 1)}, PubKey: k.PublicKey().Bytes(), Stake: 10})
	}
	tree := smt.New(smt.NewMemStore(), smt.EmptyRoot)
	for _, kv := range [][2]string{{"acct/alice", "balance 42"}, {"acct/bob", "balance 7"}, {"acct/carol", "balance 1"}} {
		if err := tree.Update([]byte(kv[0]), []byte(kv[1])); err != nil {
			t.Fatal(err)
		}
	}
	root, err := tree.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if f.proof, err = tree.Prove(f.key); err != nil {
		t.Fatal(err)
	}
	f.header = types.Header{ChainID: lightChain, Height: 5, StateRoot: root, Round: 5}
	f.block = f.anchorBlock(6, consensus.ExecCommit{Height: 5, Header: f.header.Hash()})
	return f
}

func (f *lightFixture) anchorBlock(height uint64, c consensus.ExecCommit) consensus.Block {
	p := consensus.Payload{Timestamp: 1000 + height, Txs: []types.Bytes{}, Exec: c}
	return consensus.Block{Height: height, Round: height, Proposer: f.vals[0].Address, Payload: codec.MustMarshal(&p)}
}

// qc has the keys at idx sign the vote message of b in domain; signer[i]
// signs as validator idx[i].
func (f *lightFixture) qc(t *testing.T, domain uint64, b *consensus.Block, idx []int, signers []*bls.SecretKey) consensus.QC {
	t.Helper()
	h := b.Hash()
	msg := consensus.VoteMessage(domain, h, b.Height, b.Round)
	bm := consensus.NewBitmap(len(f.vals))
	var sigs [][]byte
	for i, j := range idx {
		bm[j/8] |= 1 << (j % 8)
		sigs = append(sigs, signers[i].Sign(msg).Bytes())
	}
	agg, err := consensus.BLS{}.Aggregate(sigs)
	if err != nil {
		t.Fatal(err)
	}
	return consensus.QC{BlockHash: h, Height: b.Height, Round: b.Round, Signers: bm, Signature: agg}
}

func (f *lightFixture) proofFor(b consensus.Block, qc consensus.QC, hdr types.Header) *apitypes.LightProof {
	v := types.Bytes(f.value)
	return &apitypes.LightProof{Key: f.key, Height: hdr.Height, Value: &v, Proof: f.proof,
		Header: codec.MustMarshal(&hdr), Anchor: codec.MustMarshal(&consensus.Anchor{Block: b, QC: qc})}
}

func (f *lightFixture) client(t *testing.T, epochLen uint64) *sdk.LightClient {
	t.Helper()
	lc, err := sdk.NewLightClient(sdk.LightConfig{ChainID: lightChain, EpochLength: epochLen, Validators: f.vals})
	if err != nil {
		t.Fatal(err)
	}
	return lc
}

// TestLightClientVerifies: a value proven against a header that a block
// certified by 3 of 4 validators commits to is accepted, with what it was
// checked against.
func TestLightClientVerifies(t *testing.T) {
	f := newLightFixture(t)
	qc := f.qc(t, lightChain, &f.block, []int{0, 1, 2}, f.keys[:3])
	got, err := f.client(t, 0).Verify(f.key, f.proofFor(f.block, qc, f.header))
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Value) != "balance 42" || got.Header.Height != 5 || got.Anchor.QC.Round != 6 ||
		got.Signers != 3 || got.Validators != 4 || got.Stake != 30 || got.TotalStake != 40 || got.Epoch != 0 {
		t.Fatalf("verified %+v", got)
	}
}

// TestLightClientRefuses: every forged or inconsistent part is refused
// with its sentinel error, never accepted.
func TestLightClientRefuses(t *testing.T) {
	f := newLightFixture(t)
	good := f.qc(t, lightChain, &f.block, []int{0, 1, 2}, f.keys[:3])
	other := f.anchorBlock(6, consensus.ExecCommit{Height: 5, Header: types.Hash{1}})
	wrongRoot := f.header
	wrongRoot.StateRoot[0] ^= 1
	later := f.anchorBlock(3601, consensus.ExecCommit{Height: 5, Header: f.header.Hash()})

	cases := []struct {
		name string
		p    func() *apitypes.LightProof
		want error
	}{
		{"forged QC signature", func() *apitypes.LightProof {
			qc := good
			qc.Signature = f.qc(t, lightChain, &other, []int{0, 1, 2}, f.keys[:3]).Signature
			return f.proofFor(f.block, qc, f.header)
		}, consensus.ErrInvalidSignature},
		{"signer outside the set", func() *apitypes.LightProof {
			qc := f.qc(t, lightChain, &f.block, []int{0, 1, 2}, []*bls.SecretKey{f.keys[0], f.keys[1], f.outsider})
			return f.proofFor(f.block, qc, f.header)
		}, consensus.ErrInvalidSignature},
		{"header signed only by non-validators", func() *apitypes.LightProof {
			qc := f.qc(t, lightChain, &f.block, []int{0, 1, 2}, []*bls.SecretKey{blsKey(t, 50), blsKey(t, 51), blsKey(t, 52)})
			return f.proofFor(f.block, qc, f.header)
		}, consensus.ErrInvalidSignature},
		{"below quorum", func() *apitypes.LightProof {
			return f.proofFor(f.block, f.qc(t, lightChain, &f.block, []int{0, 1}, f.keys[:2]), f.header)
		}, consensus.ErrInvalidQC},
		{"QC of another block", func() *apitypes.LightProof {
			return f.proofFor(f.block, f.qc(t, lightChain, &other, []int{0, 1, 2}, f.keys[:3]), f.header)
		}, consensus.ErrInvalidQC},
		{"signed in another epoch's domain", func() *apitypes.LightProof {
			return f.proofFor(f.block, f.qc(t, consensus.EpochDomain(lightChain, 1), &f.block, []int{0, 1, 2}, f.keys[:3]), f.header)
		}, consensus.ErrInvalidSignature},
		{"wrong root", func() *apitypes.LightProof {
			return f.proofFor(f.block, good, wrongRoot)
		}, consensus.ErrUncommitted},
		{"tampered value", func() *apitypes.LightProof {
			p := f.proofFor(f.block, good, f.header)
			v := types.Bytes("balance 4200")
			p.Value = &v
			return p
		}, sdk.ErrBadProof},
		{"tampered proof", func() *apitypes.LightProof {
			p := f.proofFor(f.block, good, f.header)
			cp := *f.proof
			cp.Siblings = append([][32]byte(nil), f.proof.Siblings...)
			cp.Siblings[0][0] ^= 1
			p.Proof = &cp
			return p
		}, sdk.ErrBadProof},
		{"proof for another key", func() *apitypes.LightProof {
			p := f.proofFor(f.block, good, f.header)
			p.Key = []byte("acct/bob")
			return p
		}, sdk.ErrBadProof},
		{"anchor in an epoch without a known hand-off", func() *apitypes.LightProof {
			return f.proofFor(later, f.qc(t, consensus.EpochDomain(lightChain, 1), &later, []int{0, 1, 2}, f.keys[:3]), f.header)
		}, sdk.ErrUnknownEpoch},
	}
	lc := f.client(t, 0)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := lc.Verify(f.key, c.p())
			if !errors.Is(err, c.want) {
				t.Fatalf("got %+v, %v; want %v", got, err, c.want)
			}
			if got != nil {
				t.Fatal("a refused proof returned a value")
			}
		})
	}
}
