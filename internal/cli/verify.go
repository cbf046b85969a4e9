package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/spf13/cobra"
)

// errNoGenesis: --verify needs the trusted genesis file.
var errNoGenesis = errors.New("--verify needs --genesis FILE: the network's genesis, whose validator set the light client trusts")

// verifyOpts are the flags of a read command that can check what it reads
// as a light client (docs/CONSENSUS.md §8.8).
type verifyOpts struct {
	on      bool
	genesis string
}

func addVerifyFlags(cmd *cobra.Command, o *verifyOpts) {
	cmd.Flags().BoolVar(&o.on, "verify", false, "verify the value as a light client: QC signatures of the genesis validator set, the certified header, the state proof")
	cmd.Flags().StringVar(&o.genesis, "genesis", "", "trusted genesis file for --verify")
}

// lightClient builds the light client from the trusted genesis.
func (o *verifyOpts) lightClient() (*sdk.LightClient, error) {
	if o.genesis == "" {
		return nil, errNoGenesis
	}
	g, err := genesis.Load(o.genesis)
	if err != nil {
		return nil, err
	}
	if !g.Multi() {
		return nil, fmt.Errorf("--verify: genesis %s lists no BLS validators (a devnet has no QCs to verify)", o.genesis)
	}
	vals := make([]consensus.Validator, len(g.Validators))
	for i, v := range g.Validators {
		vals[i] = consensus.Validator{Address: v.Address, PubKey: v.BLSKey, Stake: v.Stake}
	}
	return sdk.NewLightClient(sdk.LightConfig{ChainID: g.ChainID, EpochLength: g.Consensus.EpochLength, Validators: vals})
}

// verifiedJSON is what --verify --json adds.
type verifiedJSON struct {
	Height      uint64     `json:"height"`
	StateRoot   types.Hash `json:"state_root"`
	HeaderHash  types.Hash `json:"header_hash"`
	Epoch       uint64     `json:"epoch"`
	BlockHeight uint64     `json:"certified_block_height"`
	BlockHash   types.Hash `json:"certified_block_hash"`
	QCRound     uint64     `json:"qc_round"`
	Signers     int        `json:"qc_signers"`
	Validators  int        `json:"validators"`
	Stake       uint64     `json:"qc_stake"`
	TotalStake  uint64     `json:"total_stake"`
}

func verifiedInfo(v *sdk.Verified) verifiedJSON {
	return verifiedJSON{Height: v.Header.Height, StateRoot: v.Header.StateRoot, HeaderHash: v.Header.Hash(), Epoch: v.Epoch,
		BlockHeight: v.Anchor.Block.Height, BlockHash: v.Anchor.QC.BlockHash, QCRound: v.Anchor.QC.Round,
		Signers: v.Signers, Validators: v.Validators, Stake: v.Stake, TotalStake: v.TotalStake}
}

// printVerified says what a value was checked against.
func printVerified(w io.Writer, v *sdk.Verified) {
	i := verifiedInfo(v)
	fmt.Fprintf(w, "Verified  finalized height %d, state root %s\n", i.Height, i.StateRoot)
	fmt.Fprintf(w, "          committed by block %d (%s), QC round %d, signed by %d of %d validators, voting power %d of %d (epoch %d)\n",
		i.BlockHeight, i.BlockHash, i.QCRound, i.Signers, i.Validators, i.Stake, i.TotalStake, i.Epoch)
}

// verifyFailed is the error of a refused verification: nothing read is
// printed as verified.
func verifyFailed(what string, err error) error {
	return fmt.Errorf("verification FAILED for %s (value not shown): %w", what, err)
}
