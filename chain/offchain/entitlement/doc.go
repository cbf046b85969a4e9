// Package entitlement implements the Entitlement Registry of CIP-2 §7
// (system actor 0x07): the Scope / Action / Constraints / Entitlement / Role
// types with their canonical encodings and ids, grants, revocation,
// delegation (depth ≤ 5, strictly narrower constraints), roles, checks at a
// block height with lazy expiry, the per-address limits, the gas table of
// §7.4 and the requires ⊆ provides matcher; and the actor entitlements of
// spec 002 §15 — deployment manifests (what an actor requires), the checks
// behind the VM's syscall gate and the inheritance rule. State lives behind
// the tiny KV interface so the chain backs it with actor storage.
package entitlement
