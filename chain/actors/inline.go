package actors

import (
	"github.com/cowboy-foundation/cowboy/chain/blob"
	"github.com/cowboy-foundation/cowboy/chain/system"
)

// checkInline enforces the inline cap on a transaction's return value
// (spec 002 §7.1: at most 64 KiB per output, the receipt's return data).
// A larger output must travel as a blob: stored off chain, its multihash
// committed with cowboy_sdk.blobs.commit. Read-only queries are not
// outputs on chain and keep the PVM's own bound.
func checkInline(ret []byte) error {
	if len(ret) > blob.InlineMax {
		return failf(system.CodeBlobTooLarge, "BlobTooLarge: the return value is %d bytes, the inline cap is %d: store the output as a blob (cowboy_sdk.blobs) and return its multihash", len(ret), blob.InlineMax)
	}
	return nil
}
