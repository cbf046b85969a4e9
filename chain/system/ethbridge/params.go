// Package ethbridge is the Ethereum bridge hooks module (0x…11; spec 002
// §16.2–§16.4; docs/ETHEREUM.md). The protocol runs no bridge of its
// own: this module is the interface a governance-approved bridge (an
// oracle set) uses.
//
//   - An actor declares in its deployment manifest the Ethereum contracts
//     and event signatures it may subscribe to (the "eth" entitlement,
//     chain/offchain/entitlement), and pays for a subscription in CBY
//     (bridge_subscribe): the value is the subscription's prepaid
//     balance, and each delivered event costs EventFee (the governed
//     parameter bridge.event_fee), paid to the bridge members who
//     attested it — the spec's "covering the gas fees incurred by the
//     oracle validators".
//   - The bridge set (genesis "bridge": members and a threshold) submits
//     confirmed events (bridge_event). When Threshold distinct members
//     have attested the same log, it is delivered once to the actor's
//     handler as a message carrying chain id, contract, block number, tx
//     hash, log index, topics and data. Deliveries are deduplicated by
//     (actor, chain, tx hash, log index).
//   - Wrapped assets are CIP-20 tokens (chain/system/tokens) whose admin
//     is this module, so only the bridge mints (bridge_mint, attested
//     like events) and burns (bridge_burn, by a holder who wants the
//     asset unlocked on Ethereum).
//
// With no "bridge" in genesis every instruction fails with BridgeOff and
// the module writes nothing.
package ethbridge

import (
	"bytes"
	"fmt"
	"math/big"
	"slices"

	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system/params"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// KeyEventFee is the governed parameter: the CBY base units one delivered
// event costs its subscription.
const KeyEventFee = "bridge.event_fee"

// DefaultEventFee is 0.001 CBY per delivered event.
const DefaultEventFee = 1_000_000_000_000_000

// Limits of an event.
const (
	MaxTopics       = 4      // an EVM log has at most 4 topics
	MaxDataBytes    = 16_384 // log data delivered on chain
	MaxHandlerBytes = 64     // handler name
	DefaultHandler  = "on_eth_event"
)

// Params configure the module (genesis "bridge" object): the authorised
// bridge set and how many distinct members must attest an event or a
// deposit. A nil *Params is the bridge off.
type Params struct {
	Members   []types.Address `json:"members"`
	Threshold uint64          `json:"threshold"`
	// EventFee is the genesis value of bridge.event_fee (0: the default).
	EventFee uint64 `json:"event_fee,omitempty"`
}

// Validate checks the bridge set.
func (p *Params) Validate() error {
	if len(p.Members) == 0 {
		return fmt.Errorf("ethbridge: the bridge set is empty")
	}
	s := slices.Clone(p.Members)
	slices.SortFunc(s, func(a, b types.Address) int { return bytes.Compare(a[:], b[:]) })
	if len(slices.Compact(s)) != len(p.Members) {
		return fmt.Errorf("ethbridge: a bridge member is listed twice")
	}
	if p.Threshold == 0 || p.Threshold > uint64(len(p.Members)) {
		return fmt.Errorf("ethbridge: threshold %d must be in 1..%d", p.Threshold, len(p.Members))
	}
	return nil
}

// ParamDefs declares bridge.event_fee for the parameter store.
func ParamDefs(p *Params) []params.Def {
	def := uint64(DefaultEventFee)
	if p != nil && p.EventFee != 0 {
		def = p.EventFee
	}
	return []params.Def{{Key: KeyEventFee, Tier: 0, Min: 0, Max: 1 << 62, Default: def,
		Doc: "CBY base units a delivered Ethereum event costs its subscription (chain/system/ethbridge)"}}
}

// eventFee reads bridge.event_fee.
func (m *Module) eventFee(r state.Reader) (*big.Int, error) {
	if m.src == nil {
		return new(big.Int).SetUint64(m.fee), nil
	}
	v, err := m.src.Get(r, KeyEventFee)
	if err != nil {
		return nil, fmt.Errorf("ethbridge: read %s: %w", KeyEventFee, err)
	}
	return new(big.Int).SetUint64(v), nil
}
