// Package offchain is the root of the pure, deterministic logic of CIP-2
// (verifiable off-chain compute): job specifications and their lifecycle
// (job), runner candidate filtering and stake-weighted Fisher-Yates selection
// (selection), commit-reveal checking and the verification modes (verify),
// settlement arithmetic (payment) and the Entitlement Registry (entitlement).
//
// Nothing under this directory performs IO, reads clocks or keeps global
// mutable state. The chain's system actors (Runner Registry 0x01, Job
// Dispatcher 0x02, Result Verifier 0x03, Entitlement Registry 0x07) and the
// runner daemon call the same functions, so both sides agree bit for bit.
// docs/OFFCHAIN.md records every encoding, hash preimage and arithmetic rule.
package offchain
