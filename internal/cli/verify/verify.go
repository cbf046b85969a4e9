// Package verify holds the --verify flags of the read commands that check
// what they read as a light client (docs/CONSENSUS.md §8.8).
package verify

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/spf13/cobra"
)

// ErrNoGenesis: --verify needs the trusted genesis file.
var ErrNoGenesis = errors.New("--verify needs --genesis FILE: the network's genesis, whose validator set the light client trusts")

// Opts are the flags of a read command that can check what it reads
// as a light client (docs/CONSENSUS.md §8.8).
type Opts struct {
	On      bool
	genesis string
}

// AddFlags adds --verify and --genesis to cmd.
func AddFlags(cmd *cobra.Command, o *Opts) {
	cmd.Flags().BoolVar(&o.On, "verify", false, "verify the value as a light client: QC signatures of the genesis validator set, the certified header, the state proof")
	cmd.Flags().StringVar(&o.genesis, "genesis", "", "trusted genesis file for --verify")
}

// LightClient builds the light client from the trusted genesis.
func (o *Opts) LightClient() (*sdk.LightClient, error) {
	if o.genesis == "" {
		return nil, ErrNoGenesis
	}
	data, err := os.ReadFile(o.genesis)
	if err != nil {
		return nil, fmt.Errorf("--verify: %w", err)
	}
	cfg, err := sdk.LightConfigFromGenesis(data)
	if err != nil {
		return nil, fmt.Errorf("--verify: %s: %w", o.genesis, err)
	}
	return sdk.NewLightClient(cfg)
}

// JSON is what --verify --json adds.
type JSON struct {
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

// Info is the JSON form of what v was checked against.
func Info(v *sdk.Verified) JSON {
	return JSON{Height: v.Header.Height, StateRoot: v.Header.StateRoot, HeaderHash: v.Header.Hash(), Epoch: v.Epoch,
		BlockHeight: v.Anchor.Block.Height, BlockHash: v.Anchor.QC.BlockHash, QCRound: v.Anchor.QC.Round,
		Signers: v.Signers, Validators: v.Validators, Stake: v.Stake, TotalStake: v.TotalStake}
}

// Print says what a value was checked against.
func Print(w io.Writer, v *sdk.Verified) {
	i := Info(v)
	fmt.Fprintf(w, "Verified  finalized height %d, state root %s\n", i.Height, i.StateRoot)
	fmt.Fprintf(w, "          committed by block %d (%s), QC round %d, signed by %d of %d validators, voting power %d of %d (epoch %d)\n",
		i.BlockHeight, i.BlockHash, i.QCRound, i.Signers, i.Validators, i.Stake, i.TotalStake, i.Epoch)
}

// Failed is the error of a refused verification: nothing read is
// printed as verified.
func Failed(what string, err error) error {
	return fmt.Errorf("verification FAILED for %s (value not shown): %w", what, err)
}
