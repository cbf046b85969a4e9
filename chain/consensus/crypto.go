package consensus

import (
	"github.com/cowboy-foundation/cowboy/chain/consensus/bls"
	"github.com/cowboy-foundation/cowboy/chain/consensus/vrf"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// PublicKey is a parsed, validated public key of a Verifier.
type PublicKey any

// Signer signs with a validator's secret key. It holds the key; the core
// never sees it. Signatures must be deterministic (the VRF relies on it).
type Signer interface {
	Sign(msg []byte) []byte
}

// Verifier checks signatures; it holds no keys. BLS is the production
// implementation; simulations may plug in a cheap stand-in.
type Verifier interface {
	// ParsePublicKey decodes and validates a key once, when the validator
	// set is built.
	ParsePublicKey(b []byte) (PublicKey, error)
	Verify(pk PublicKey, msg, sig []byte) bool
	// Aggregate adds signatures (which need not have been verified).
	Aggregate(sigs [][]byte) ([]byte, error)
	// VerifyAggregate checks an aggregate where pks[i] signed msgs[i]; if
	// len(msgs) == 1 every key signed msgs[0].
	VerifyAggregate(pks []PublicKey, msgs [][]byte, agg []byte) bool
}

// BLS is the production Verifier (BLS12-381 via chain/consensus/bls).
// Validator keys must have passed bls.PublicKey.VerifyPossession when they
// were registered.
type BLS struct{}

// ParsePublicKey decodes a compressed key.
func (BLS) ParsePublicKey(b []byte) (PublicKey, error) { return bls.PublicKeyFromBytes(b) }

// Verify checks one signature.
func (BLS) Verify(pk PublicKey, msg, sig []byte) bool {
	k, ok := pk.(*bls.PublicKey)
	if !ok {
		return false
	}
	s, err := bls.SignatureFromBytes(sig)
	return err == nil && k.Verify(msg, s)
}

// Aggregate adds signatures.
func (BLS) Aggregate(sigs [][]byte) ([]byte, error) {
	ss := make([]*bls.Signature, len(sigs))
	for i, b := range sigs {
		s, err := bls.SignatureFromBytes(b)
		if err != nil {
			return nil, err
		}
		ss[i] = s
	}
	agg, err := bls.AggregateSignatures(ss)
	if err != nil {
		return nil, err
	}
	return agg.Bytes(), nil
}

// VerifyAggregate groups keys by message, adds the keys of each group and
// runs one multi-pairing over the distinct messages.
func (BLS) VerifyAggregate(pks []PublicKey, msgs [][]byte, agg []byte) bool {
	s, err := bls.SignatureFromBytes(agg)
	if err != nil || len(pks) == 0 {
		return false
	}
	keys := make([]*bls.PublicKey, len(pks))
	for i, pk := range pks {
		k, ok := pk.(*bls.PublicKey)
		if !ok {
			return false
		}
		keys[i] = k
	}
	if len(msgs) == 1 {
		return bls.FastAggregateVerify(keys, msgs[0], s)
	}
	if len(msgs) != len(keys) {
		return false
	}
	groups := map[string][]*bls.PublicKey{}
	var order []string
	for i, m := range msgs {
		if _, ok := groups[string(m)]; !ok {
			order = append(order, string(m))
		}
		groups[string(m)] = append(groups[string(m)], keys[i])
	}
	gk := make([]*bls.PublicKey, len(order))
	gm := make([][]byte, len(order))
	for i, m := range order {
		k, err := bls.AggregatePublicKeys(groups[m])
		if err != nil {
			return false
		}
		gk[i], gm[i] = k, []byte(m)
	}
	return bls.AggregateVerify(gk, gm, s)
}

// BLSSigner signs with a BLS secret key.
type BLSSigner struct{ Key *bls.SecretKey }

// Sign signs msg.
func (s BLSSigner) Sign(msg []byte) []byte { return s.Key.Sign(msg).Bytes() }

// vrfProve evaluates the proposer VRF through a Signer; the bytes are those
// of vrf.Prove.
func vrfProve(s Signer, seed types.Hash, height uint64) (types.Hash, []byte) {
	proof := s.Sign(vrf.Message(seed, height))
	return vrf.Output(proof), proof
}

func vrfVerify(v Verifier, pk PublicKey, seed types.Hash, height uint64, out types.Hash, proof []byte) bool {
	return vrf.Output(proof) == out && v.Verify(pk, vrf.Message(seed, height), proof)
}
