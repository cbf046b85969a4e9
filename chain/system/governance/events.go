package governance

import "github.com/cowboy-foundation/cowboy/chain/types"

// Event topics of the Governance actor.
const (
	TopicProposed = "gov.proposed"
	TopicVoted    = "gov.voted"
	TopicTallied  = "gov.tallied"
	TopicExecuted = "gov.executed"
)

// ProposedEvent records a new proposal.
type ProposedEvent struct {
	Proposal  uint64        `cbor:"proposal" json:"proposal"`
	Proposer  types.Address `cbor:"proposer" json:"proposer"`
	Tier      uint8         `cbor:"tier" json:"tier"`
	VotingEnd uint64        `cbor:"voting_end" json:"voting_end"`
}

// VotedEvent records a vote (a later vote of the same voter replaces it).
type VotedEvent struct {
	Proposal uint64        `cbor:"proposal" json:"proposal"`
	Voter    types.Address `cbor:"voter" json:"voter"`
	Choice   uint8         `cbor:"choice" json:"choice"`
}

// TalliedEvent records the close of voting: "queued" (ETA set) or "rejected".
type TalliedEvent struct {
	Proposal uint64 `cbor:"proposal" json:"proposal"`
	Status   string `cbor:"status" json:"status"`
	ETA      uint64 `cbor:"eta" json:"eta"`
}

// ExecutedEvent records an execution: "executed", or "failed" with the code.
type ExecutedEvent struct {
	Proposal uint64 `cbor:"proposal" json:"proposal"`
	Status   string `cbor:"status" json:"status"`
	Code     uint32 `cbor:"code" json:"code"`
}

// Topic implements system.EventData.
func (ProposedEvent) Topic() string { return TopicProposed }

// Topic implements system.EventData.
func (VotedEvent) Topic() string { return TopicVoted }

// Topic implements system.EventData.
func (TalliedEvent) Topic() string { return TopicTallied }

// Topic implements system.EventData.
func (ExecutedEvent) Topic() string { return TopicExecuted }
