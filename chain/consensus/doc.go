// Package consensus is Cowboy's Simplex-style BFT proof-of-stake consensus
// core: a pure, deterministic state machine in the style of etcd raft's
// RawNode.
//
// The core does no IO, reads no clock and starts no goroutines. Inputs are
// Step (a message from a peer), Tick (one unit of abstract time) and Propose
// (a payload the application built on request). Outputs accumulate in a
// Ready batch that the caller drains with Ready and then handles in this
// order:
//
//  1. write Ready.Persist to the write-ahead log and sync it,
//  2. send Ready.Messages,
//  3. apply Ready.Finalized (in order) to the chain store,
//  4. start building a payload if Ready.Build is set, and hand it back with
//     Propose,
//  5. keep Ready.Evidence for slashing.
//
// Persisting before sending is what makes a restarted validator safe: the
// WAL holds every vote, timeout and proposal the validator has signed, and
// New replays it, so the validator never signs a conflicting message for a
// round it already acted in.
//
// # Protocol
//
// Rounds are numbered from 1; each round has one proposer drawn by stake
// from the epoch seed (Leader). The proposer of round r broadcasts PROPOSE
// with a block extending the highest quorum certificate (QC) it knows.
// Validators vote (VOTE, broadcast to all) for the first valid proposal of
// the round; 2f+1 votes by stake are aggregated into a QC, and seeing a QC
// for round r moves a validator to round r+1. A validator that makes no
// progress for Config.TimeoutTicks broadcasts NEW_VIEW carrying its highest
// QC and stops voting in that round; 2f+1 NEW_VIEWs form a timeout
// certificate (TC) that moves everyone to the next round, whose proposer
// must extend a QC at least as high as every QC reported in the TC.
//
// A block B is finalized when its direct child B' has a QC and
// B'.Round == B.Round+1 (the two-chain rule of §6.1 restricted to
// consecutive rounds; docs/CONSENSUS.md shows why the restriction is needed
// and why the rule is then safe under any message timing). "Committed"
// (Status.CommittedHeight) is the height of the highest certified block.
package consensus
