// Package timers is Cowboy's native timer scheduler (spec 002 "Native Timers
// and the Actor Scheduler", §3.3; seed 003 §1) kept entirely in consensus
// state.
//
// A Queue is a pure state machine: it holds only its Params and reads and
// writes chain state through the narrow KV interface (satisfied by
// *state.Overlay). It does no IO, keeps no goroutines and no clocks: heights
// are passed in. Every timer lives under the single state prefix
// PrefixTimers (0x0A); docs/TIMERS.md lists every key.
//
// The queue is the tiered calendar queue of the spec:
//
//   - tier 1, a block ring buffer of RingSlots (256) slots, one slot per
//     height, holding the timers due in the next RingSlots heights (O(1)
//     enqueue and dequeue);
//   - tier 2, buckets keyed by scheduler epoch and height for the
//     EpochBuckets×EpochLength heights after the ring; each block moves
//     the one height entering the ring's window (O(1) per timer, no
//     epoch-boundary burst; each timer moves at most twice);
//   - tier 3, an ordered set keyed by (epoch, height, id) for distant
//     timers; ordered keys make "the timers of height h" one prefix scan,
//     O(log n) in the store's ordered index, and the state root (a sparse
//     Merkle tree over every key) commits to the whole set.
//
// Due timers that are not executed stay in a due set and roll over to the
// next block. Which of them run is decided by Select from the bids of their
// Gas Bidding Agents, within the timer lane budget, with an anti-starvation
// boost for repeatedly deferred timers. The anti-DoS economics (progressive
// deposit, same-height surcharge, per-actor cap, timer basefee, lane budget)
// are pure functions on Params; amounts are returned for the caller to move.
//
// All arithmetic is integer. Nothing in the package is mutable at package
// level.
package timers
