package runner

import (
	"encoding/json"
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/blob"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// BlobResult is the on-chain result of a job whose output exceeds its
// max_return_bytes (at most 64 KiB, spec 002 §7.1) and which names an
// output volume: the output is stored there as <path>/result (by the
// aggregator, as for any volume job) and the result committed, revealed
// and delivered to the actor is this JSON reference to it:
//
//	{"blob":{"multihash":"1220…","size":N,"volume":"0x…","path":"/…/result"}}
//
// The multihash is sha2-256 of the output, so every member running the
// job to the same output commits the same reference; the actor records it
// on chain with cowboy_sdk.blobs.commit, and readers verify the content
// against it (`cowboy blob get`).
func BlobResult(volume types.Hash, path string, output []byte) ([]byte, error) {
	m, err := blob.Sum(blob.SHA2_256, output)
	if err != nil {
		return nil, err
	}
	ref := blob.Ref{Multihash: m, Size: uint64(len(output)), Volume: volume, Path: path}
	b, err := json.Marshal(struct {
		Blob blob.Ref `json:"blob"`
	}{ref})
	if err != nil {
		return nil, fmt.Errorf("blob result: %w", err)
	}
	return b, nil
}

// ParseBlobResult reads a result written by BlobResult (ok false for any
// other result).
func ParseBlobResult(result []byte) (ref blob.Ref, ok bool) {
	var doc struct {
		Blob *blob.Ref `json:"blob"`
	}
	if json.Unmarshal(result, &doc) != nil || doc.Blob == nil || doc.Blob.Check() != nil {
		return blob.Ref{}, false
	}
	return *doc.Blob, true
}
