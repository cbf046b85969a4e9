// Package smt implements the authenticated key/value commitment behind the
// Cowboy state root: a path-compressed binary sparse Merkle tree over 256-bit
// paths, its content-addressed node storage, and inclusion/exclusion proofs
// that can be checked against nothing but the root.
//
// The package owns the exact hashing scheme, the node storage encoding and the
// proof wire formats described below. Every byte of the hashing scheme is
// consensus-critical: two nodes holding the same set of (key, value) pairs must
// compute byte-identical roots. The root depends only on that set, never on the
// order of updates, on when Root or Commit is called, or on what is cached.
//
// # Tree shape
//
// A key is mapped to its path
//
//	path = keccak256(key)                                  (32 bytes, 256 bits)
//
// Bit i of a path (0 <= i < 256) is (path[i/8] >> (7 - i%8)) & 1, i.e. bits are
// read most-significant first. At depth i a 0 bit descends left, a 1 bit right.
//
// Conceptually the tree is the complete binary tree of depth 256 with one leaf
// slot per path. It is stored and hashed in compressed form, which is canonical
// (uniquely determined by the set of pairs):
//
//   - an empty subtree is represented by nothing and hashes to 32 zero bytes
//     (EmptyRoot);
//   - a subtree holding exactly one leaf is represented by that leaf, placed at
//     the subtree's root position (so a leaf sits at the shallowest depth at
//     which its path is unique in the tree);
//   - every other subtree (two or more leaves) is an inner node whose two
//     children are the left and right subtrees. An inner node may therefore have
//     one empty child, but then its other child is itself an inner node: leaves
//     sharing a long common path prefix are joined by a chain of inner nodes,
//     one per shared bit. Because paths are Keccak-256 outputs, chains are
//     short (expected depth ~log2(n)); making them k bits deeper than that
//     costs an attacker ~2^k Keccak evaluations.
//
// The maximum depth of a leaf is 256, so every proof fits in 256 levels.
//
// # Hashing (consensus)
//
// All hashes are Keccak-256 (the original Keccak padding, as used by Ethereum,
// github.com/ethereum/go-ethereum/crypto). With || denoting concatenation:
//
//	emptyHash = 0x00 * 32
//	leafHash  = keccak256(0x00 || path || keccak256(value))   // 1+32+32 = 65 bytes hashed
//	innerHash = keccak256(0x01 || leftHash || rightHash)       // 1+32+32 = 65 bytes hashed
//
// where leftHash/rightHash are the hashes of the children (emptyHash for an
// empty child). The root of the empty tree is EmptyRoot (32 zero bytes); the
// root of a one-pair tree is that pair's leafHash. Values must be non-empty:
// a key is either absent or maps to at least one byte, so "absent" and "empty"
// can never be confused. The 0x00/0x01 prefixes domain-separate leaves from
// inner nodes; no Keccak output is known to be all-zero, so an empty subtree
// cannot be confused with either.
//
// # Node storage
//
// Nodes are stored content-addressed through NodeStore: key = node hash (as
// above), value = node encoding:
//
//	inner: 0x01 || leftHash || rightHash     (exactly 65 bytes; keccak256 of it is the key)
//	leaf:  0x00 || path || value             (34+ bytes; the value is stored inline)
//
// Leaves keep the path, not the original key, so the tree cannot enumerate
// keys; a caller that needs iteration must keep its own key index. Commit
// writes the new nodes in ascending hash order.
//
// Stored nodes are immutable, and a Tree never deletes one, so every root
// that was ever committed to a store stays readable (historical reads and
// proofs) until pruned. Pruning (VersionedStore only) works from orphan
// records: Commit reports each stored node its changes dropped, with the
// version being written (OrphanRecorder), so the node belongs only to the
// versions from its own up to the one before; PruneOrphans deletes the
// nodes dropped at or below a watermark, a bounded batch per transaction,
// leaving every version at or above the watermark whole. The storage encoding is local to
// a node (not consensus), but changing it requires a database migration. The
// store is trusted: node bytes are checked for well-formedness when loaded,
// not re-hashed (a corrupted store shows up as a root mismatch at the next
// block).
//
// # Proofs
//
// A Proof describes the path from the root to the node at which a lookup of
// path(key) terminates, at depth Depth (0..256):
//
//   - inclusion: the leaf for the key itself;
//   - exclusion, empty: an empty subtree (Leaf == nil);
//   - exclusion, other leaf: a leaf with a different path that shares the
//     key's first Depth bits (Leaf = {Path, ValueHash}), proving that no other
//     key lives in that subtree.
//
// Siblings are compressed: Bitmap has ceil(Depth/8) bytes, bit i (same MSB-first
// order as paths) set iff the sibling at level i (the child of the depth-i
// ancestor that is not on the key's path) is non-empty; unused trailing bits
// are zero. Siblings lists the non-empty sibling hashes ordered from the root
// downwards (level 0 first); none of them may be all-zero. The verifier starts
// from the terminal hash (leafHash(path(key), keccak256(value)) for inclusion,
// emptyHash or leafHash(Leaf.Path, Leaf.ValueHash) for exclusion) and folds the
// siblings upwards with innerHash, taking the key's path bit at each level to
// decide left/right; the result must equal the root.
//
// Canonical CBOR encoding of a Proof (RFC 8949 core deterministic encoding,
// fxamacker/cbor/v2 CoreDetEncOptions), a 4-element array:
//
//	[ depth: uint, bitmap: bstr, siblings: [* bstr .size 32], leaf: null / [path: bstr .size 32, valueHash: bstr .size 32] ]
//
// Decoding rejects any input that is not exactly the canonical encoding of a
// well-formed proof (non-minimal integers/lengths, indefinite lengths, tags,
// trailing bytes, wrong sizes, non-zero padding bits, bitmap/sibling count
// mismatch, zero siblings).
//
// JSON form (hex strings are 0x-prefixed, lower-case on output):
//
//	{"depth":3,"bitmap":"0xa0","siblings":["0x…","0x…"],"leaf":{"path":"0x…","valueHash":"0x…"}}
//
// with "leaf" omitted (or null) when absent.
//
// # Concurrency and cost
//
// A Tree is not safe for concurrent use (reads cache loaded nodes). Updates
// never modify stored nodes (they are copied on write) and only mark nodes
// dirty; hashing is deferred to Root or Commit, so a block touching k keys
// hashes each changed node exactly once (at most k·depth inner hashes, about
// k·(log2(n) − log2(k)) in practice because the top levels are shared, plus
// two hashes per changed leaf). A failed operation (store error) leaves the
// Tree unchanged. Loaded nodes stay cached for the life of the Tree; create a
// fresh Tree per block with New.
package smt
