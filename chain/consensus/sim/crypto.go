package sim

import (
	"errors"

	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// InsecureVerifier is a cheap stand-in for BLS so that thousands of
// simulated runs fit in a test budget. A "signature" is
// keccak(tag || public key || message) and an aggregate is the XOR of
// signatures. Anyone can forge it: use it only where every participant's
// code is the simulator's own (byzantine behaviour is scripted and never
// forges). Runs with consensus.BLS exercise the real scheme.
type InsecureVerifier struct{}

// InsecureSigner signs for InsecureVerifier.
type InsecureSigner struct{ PubKey []byte }

const fakeTag = "insecure-sim-signature"

func fakeSign(pk, msg []byte) []byte {
	h := types.Keccak256([]byte(fakeTag), pk, msg)
	return h[:]
}

// Sign signs msg.
func (s InsecureSigner) Sign(msg []byte) []byte { return fakeSign(s.PubKey, msg) }

// ParsePublicKey accepts any 32-byte key.
func (InsecureVerifier) ParsePublicKey(b []byte) (consensus.PublicKey, error) {
	if len(b) != 32 {
		return nil, errors.New("sim: key must be 32 bytes")
	}
	return string(b), nil
}

// Verify checks one signature.
func (InsecureVerifier) Verify(pk consensus.PublicKey, msg, sig []byte) bool {
	k, ok := pk.(string)
	return ok && string(fakeSign([]byte(k), msg)) == string(sig)
}

// Aggregate XORs signatures.
func (InsecureVerifier) Aggregate(sigs [][]byte) ([]byte, error) {
	if len(sigs) == 0 {
		return nil, errors.New("sim: nothing to aggregate")
	}
	agg := make([]byte, 32)
	for _, s := range sigs {
		if len(s) != 32 {
			return nil, errors.New("sim: bad signature length")
		}
		for i := range agg {
			agg[i] ^= s[i]
		}
	}
	return agg, nil
}

// VerifyAggregate recomputes the XOR.
func (v InsecureVerifier) VerifyAggregate(pks []consensus.PublicKey, msgs [][]byte, agg []byte) bool {
	if len(pks) == 0 || (len(msgs) != 1 && len(msgs) != len(pks)) {
		return false
	}
	sigs := make([][]byte, len(pks))
	for i, pk := range pks {
		m := msgs[0]
		if len(msgs) > 1 {
			m = msgs[i]
		}
		k, ok := pk.(string)
		if !ok {
			return false
		}
		sigs[i] = fakeSign([]byte(k), m)
	}
	want, err := v.Aggregate(sigs)
	return err == nil && string(want) == string(agg)
}
