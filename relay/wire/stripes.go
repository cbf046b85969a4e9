package wire

import (
	"encoding/binary"

	"github.com/ethereum/go-ethereum/crypto"
)

// KindStripes objects hold a volume's stripe map for one commitment version
// (canonical CBOR StripeMap): which ciphertext shards form each
// erasure-coded stripe and where the writer put them. Relays need it to
// rebuild the shards of a dead relay without the owner (relay/heal); it
// names no paths and no keys. Writing one requires a token without a path
// prefix. The id is StripesID(volume, version).
const KindStripes Kind = KindPlacement + 1

// StripesID is the object id of a volume's stripe map at version.
func StripesID(vol [32]byte, version uint64) [32]byte {
	return crypto.Keccak256Hash([]byte("cbfs-stripes-v1"), vol[:], binary.BigEndian.AppendUint64(nil, version))
}

// StripeShard is one shard of a stripe, in erasure-code index order.
type StripeShard struct {
	ID    [32]byte `cbor:"1,keyasint"`
	Hash  [32]byte `cbor:"2,keyasint"` // chunk-tree root of the shard bytes
	Relay [20]byte `cbor:"3,keyasint"` // where the writer placed it
}

// Stripe is one erasure-coded segment: K data and M parity shards of
// ShardSize bytes each.
type Stripe struct {
	ShardSize uint32        `cbor:"1,keyasint"`
	Shards    []StripeShard `cbor:"2,keyasint"`
}

// StripeMap is a volume's stripes at a commitment version.
type StripeMap struct {
	Volume  [32]byte `cbor:"1,keyasint"`
	Version uint64   `cbor:"2,keyasint"`
	K       uint8    `cbor:"3,keyasint"`
	M       uint8    `cbor:"4,keyasint"`
	Stripes []Stripe `cbor:"5,keyasint"`
}

// PeerToken marks a relay-signed peer request (Request.Token): a relay
// repairing a volume fetches and stores shards with its node key instead
// of an owner's capability token. The receiving relay recovers the signer
// from Sig over SigningHash and accepts only an active registered relay,
// and only shard GET, HAS and PUT.
var PeerToken = []byte("cbfs-peer-v1")
