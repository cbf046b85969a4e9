// Package cbfs is the client library of the Cowboy encrypted distributed
// filesystem: the public face used by the CLI, the FUSE mount and runners.
//
// A volume belongs to an account (secp256k1 key); its id is the owner's
// address followed by a 12-byte salt, so relays can check the owner's token
// signature offline. Files are cut into segments (4 MiB by default); each
// segment is sealed with AES-256-GCM under a per-file key derived from the
// volume key, then Reed-Solomon coded into K data + M parity shards
// (default 4+2) that are stored on K+M distinct healthy relays found through
// a Directory. Relays see only opaque shard ids, sizes and hashes.
//
// The volume manifest (paths -> segments -> shard hashes and placement) is a
// Merkle tree; its 32-byte Root is what an Anchor commits (on chain later,
// a local file now). The manifest itself is encrypted and replicated to the
// relays, so the owner key and the volume id alone recover the volume.
// A shard's hash is its BLAKE3 hash (chain/storage/merkle: BLAKE3 is a
// tree over 1 KiB chunks, which the storage challenges prove). Reads need
// any K shards: the segment's AES-GCM tag authenticates the data shards, and
// only a segment that fails it is re-read with every shard checked against
// its hash, so a bad shard is found, reported and replaced.
// Uploads are atomic: a file becomes visible when the new manifest version is
// committed to the Anchor.
//
// A commit costs what it changes: Apply (and Put, Remove, MergePending)
// takes path operations, validates only the changed entries and writes
// exactly them as the version's change set; a reader applies a change set
// by checking its entries and copying the unchanged runs of the entry list
// in bulk. Update, for arbitrary edits, copies and diffs the entry list.
//
// Keys: the owner's volume key is derived from the owner private key
// (HKDF-SHA256, salted with the volume id). Grants carry the volume key
// wrapped (ECIES) to the grantee's public key inside the capability token.
// A prefix-restricted grantee therefore holds the whole volume key: prefix
// limits are enforced by this library and, for manifest objects, by relays,
// not cryptographically. A prefix-restricted writer cannot replace the
// manifest; its Commit stores a pending entry bound to its prefix
// (FileInfo.Pending) which a whole-volume writer merges with MergePending.
//
// Typical use (see Example): New, CreateVolume or OpenVolume (owner) or
// OpenShared (grantee), then Put/Upload, Get/GetRange, List, Stat, Remove,
// Grant, Info; Repair or a Repairer keeps redundancy.
//
// Errors: callers should test with errors.Is against the exported errors
// below; they are wrapped with details of what failed.
package cbfs
