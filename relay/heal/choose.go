package heal

import (
	"bytes"

	"github.com/ethereum/go-ethereum/crypto"
)

// rank orders relays for one stripe or shard: keccak256(relay id ‖ key).
// Every relay computes the same order from public data, so exactly one
// relay acts for a stripe, and the load of one dead relay spreads over all
// the others instead of landing on one.
func rank(id [20]byte, key [32]byte) [32]byte {
	return crypto.Keccak256Hash(id[:], key[:])
}

// Repairer picks the relay that rebuilds a stripe: the holder of one of its
// healthy shards with the lowest rank for the stripe key (the id of the
// stripe's first shard). It returns false when there is no holder.
func Repairer(holders [][20]byte, stripe [32]byte) ([20]byte, bool) {
	var best [20]byte
	var bestRank [32]byte
	found := false
	for _, h := range holders {
		r := rank(h, stripe)
		if !found || bytes.Compare(r[:], bestRank[:]) < 0 {
			best, bestRank, found = h, r, true
		}
	}
	return best, found
}

// Targets orders the candidate relays for a rebuilt shard: every healthy
// relay that holds no shard of the stripe, lowest rank for the shard id
// first. The repairer tries them in order (a full relay answers "relay
// full" and the next is tried).
func Targets(healthy [][20]byte, stripeHolders map[[20]byte]bool, shard [32]byte) [][20]byte {
	type ranked struct {
		id [20]byte
		r  [32]byte
	}
	var rs []ranked
	for _, id := range healthy {
		if !stripeHolders[id] {
			rs = append(rs, ranked{id, rank(id, shard)})
		}
	}
	// insertion sort: a handful of relays
	for i := 1; i < len(rs); i++ {
		for j := i; j > 0 && bytes.Compare(rs[j].r[:], rs[j-1].r[:]) < 0; j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
	out := make([][20]byte, len(rs))
	for i, r := range rs {
		out[i] = r.id
	}
	return out
}
