// Package blobops serves the blob host calls of spec 002 §3.5 and §7 to
// actors (cowboy_sdk.blobs):
//
//   - blob_commit(multihash, size, volume, path): records that the calling
//     actor commits to a content-addressed blob stored off chain (in CBFS),
//     at 40 cycles per KiB of the blob plus the record's bytes as cells,
//     and emits BlobCommitted. The chain never sees the content: whoever
//     produced it (a runner, a client) uploads it and hands the actor the
//     reference. Committing the same multihash again replaces the locator.
//   - blob_get(multihash, actor): an actor's record of a multihash (the
//     caller's by default), or None.
//
// Malformed input is a catchable HostError whose text starts with the
// failure's code name; it leaves no state change.
package blobops

import (
	"errors"
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/actors"
	"github.com/cowboy-foundation/cowboy/chain/blob"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/pvm"
)

// The ops.
const (
	OpCommit = "blob_commit"
	OpGet    = "blob_get"
)

// Register registers blob_commit and blob_get on rt.
func Register(rt *actors.Runtime) error {
	if err := rt.Register(OpCommit, commitOp); err != nil {
		return err
	}
	return rt.Register(OpGet, getOp)
}

func multihashArg(m map[string]any) (blob.Multihash, error) {
	b, ok := m["multihash"].([]byte)
	if !ok {
		return nil, system.Failf(system.CodeBlobMalformed, "BlobMalformed: multihash must be bytes")
	}
	mh, err := blob.Parse(b)
	if err != nil {
		return nil, system.Failf(system.CodeBlobMalformed, "BlobMalformed: %v", err)
	}
	return mh, nil
}

// refArgs reads blob_commit's arguments.
func refArgs(m map[string]any) (*blob.Ref, error) {
	mh, err := multihashArg(m)
	if err != nil {
		return nil, err
	}
	r := &blob.Ref{Multihash: mh}
	size, ok := m["size"].(uint64)
	if !ok {
		return nil, system.Failf(system.CodeBlobBadRef, "BlobBadRef: size must be a positive int")
	}
	r.Size = size
	switch v := m["volume"].(type) {
	case nil:
	case []byte:
		if len(v) != types.HashLength {
			return nil, system.Failf(system.CodeBlobBadRef, "BlobBadRef: volume must be a 32-byte id")
		}
		r.Volume = types.Hash(v)
	default:
		return nil, system.Failf(system.CodeBlobBadRef, "BlobBadRef: volume must be a 32-byte id")
	}
	switch v := m["path"].(type) {
	case nil:
	case string:
		r.Path = v
	default:
		return nil, system.Failf(system.CodeBlobBadRef, "BlobBadRef: path must be a string")
	}
	if err := r.Check(); err != nil {
		code := system.CodeBlobBadRef
		if errors.Is(err, blob.ErrUnsupported) {
			code = system.CodeBlobMalformed
		}
		return nil, system.Failf(code, "%s: %v", code, err)
	}
	return r, nil
}

func commitOp(h *actors.Host, req *pvm.HostRequest) (*pvm.HostResponse, error) {
	m, err := actors.HostArgs(req.Args)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", req.Op, err)
	}
	x := h.Exec()
	if req.ReadOnly || x.ReadOnly() {
		return nil, fmt.Errorf("%s in a read-only call", req.Op)
	}
	ref, err := refArgs(m)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", req.Op, err)
	}
	rec := &blob.Record{Ref: *ref, Actor: h.Actor(), Height: x.Env().Height}
	enc := rec.Encode()
	x.State().Set(blob.Key(rec.Actor, ref.Multihash), enc)
	x.Emit(rec.Actor, &blob.CommittedEvent{Ref: *ref})
	return &pvm.HostResponse{Value: true, Cycles: blob.CommitCycles(ref.Size), Cells: uint64(len(enc))}, nil
}

func getOp(h *actors.Host, req *pvm.HostRequest) (*pvm.HostResponse, error) {
	m, err := actors.HostArgs(req.Args)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", req.Op, err)
	}
	mh, err := multihashArg(m)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", req.Op, err)
	}
	who := h.Actor()
	switch v := m["actor"].(type) {
	case nil:
	case []byte:
		if len(v) != types.AddressLength {
			return nil, fmt.Errorf("%s: bad arguments: actor must be 20 bytes", req.Op)
		}
		who = types.Address(v)
	default:
		return nil, fmt.Errorf("%s: bad arguments: actor must be 20 bytes", req.Op)
	}
	rec, err := blob.Read(h.Exec().State(), who, mh)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", pvm.ErrHostFailure, err)
	}
	resp := &pvm.HostResponse{Cycles: blob.GetCycles}
	if rec != nil {
		resp.Value = map[string]any{
			"multihash": []byte(rec.Multihash), "size": rec.Size, "volume": rec.Volume[:],
			"path": rec.Path, "actor": rec.Actor[:], "height": rec.Height,
		}
	}
	return resp, nil
}
