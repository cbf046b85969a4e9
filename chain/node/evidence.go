package node

import (
	"errors"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/execution"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Equivocation evidence found by the consensus core goes to the Validator
// Registry in a transaction of this validator.

// submitEvidence sends equivocation evidence to the Validator Registry in
// a transaction signed by this validator's account key (Network.AccountKey),
// which pays its fee; the registry slashes and jails the offender.
func (n *Node) submitEvidence(ev consensus.Evidence, epoch uint64) (types.Hash, error) {
	key := n.cfg.Network.AccountKey
	if key == nil {
		return types.Hash{}, errors.New("no account key to pay for it (validator.key)")
	}
	from := types.PubkeyToAddress(key.PublicKey)
	payload, err := types.EncodeInstruction(&types.ValidatorEvidence{Evidence: ev.Encode(), Epoch: epoch})
	if err != nil {
		return types.Hash{}, err
	}
	to := types.ValidatorRegistryAddress
	var d types.TxData
	if err := n.store.View(func(sv *store.View) error {
		acc, err := state.ReadAccount(sv, from)
		if err != nil {
			return err
		}
		bf, err := execution.Basefees(sv)
		if err != nil {
			return err
		}
		const cycles, cells = 2_000_000, 20_000
		est := n.gen.Fees.Suggest(bf, cycles, cells, 0, 0)
		d = types.TxData{ChainID: n.gen.ChainID, Nonce: n.pool.PendingNonce(from, acc.Nonce), To: &to, Value: new(big.Int),
			CyclesLimit: cycles, CellsLimit: cells, MaxFeePerCycle: est.MaxFeePerCycle, MaxFeePerCell: est.MaxFeePerCell,
			TipPerCycle: est.TipPerCycle, TipPerCell: est.TipPerCell, Payload: payload}
		return nil
	}); err != nil {
		return types.Hash{}, err
	}
	tx, err := types.NewTx(d)
	if err != nil {
		return types.Hash{}, err
	}
	signed, err := types.SignTx(tx, key)
	if err != nil {
		return types.Hash{}, err
	}
	return n.submit(signed, true)
}
