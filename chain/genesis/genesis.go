// Package genesis defines the genesis document of a Cowboy chain (chain id,
// allocations, fee parameters, validators) and turns it into the initial
// state and the block at height 0.
package genesis

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"sort"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/execution"
	"github.com/cowboy-foundation/cowboy/chain/fees"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// BaseUnitsPerCBY is 10^18: balances are kept in base units of 10^-18 CBY.
var BaseUnitsPerCBY = new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)

// SupplyCBY is the genesis supply (spec 002 §8.1).
const SupplyCBY = 1_000_000_000

// Supply returns the genesis supply in base units.
func Supply() *big.Int { return new(big.Int).Mul(big.NewInt(SupplyCBY), BaseUnitsPerCBY) }

// CBY converts whole CBY to base units.
func CBY(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), BaseUnitsPerCBY) }

// Allocation funds one address at genesis.
type Allocation struct {
	Address types.Address `json:"address"`
	Balance *big.Int      `json:"balance"` // base units
	Label   string        `json:"label,omitempty"`
}

// Validator is a member of the genesis validator set.
type Validator struct {
	Address types.Address `json:"address"`
}

// Genesis is the genesis document.
type Genesis struct {
	ChainID     uint64         `json:"chain_id"`
	TimestampMs uint64         `json:"timestamp_ms"`
	Fees        fees.Schedule  `json:"fees"`
	Allocations []Allocation   `json:"allocations"`
	Validators  []Validator    `json:"validators"`
	Faucet      *types.Address `json:"faucet,omitempty"` // devnet faucet account, if any
}

// Load reads and validates a genesis file.
func Load(path string) (*Genesis, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("genesis: %w", err)
	}
	var g Genesis
	if err := json.Unmarshal(b, &g); err != nil {
		return nil, fmt.Errorf("genesis: parse %s: %w", path, err)
	}
	if err := g.Validate(); err != nil {
		return nil, fmt.Errorf("genesis: %s: %w", path, err)
	}
	return &g, nil
}

// Save writes the genesis file atomically.
func (g *Genesis) Save(path string) error {
	b, err := json.MarshalIndent(g, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("genesis: write: %w", err)
	}
	return os.Rename(tmp, path)
}

// Validate checks the document: a chain id, a valid fee schedule, at least
// one validator, no duplicate or reserved allocation addresses (the treasury
// system actor excepted), and allocations summing exactly to the supply.
func (g *Genesis) Validate() error {
	if g.ChainID == 0 {
		return errors.New("chain_id must be non-zero")
	}
	if err := g.Fees.Validate(); err != nil {
		return err
	}
	if len(g.Validators) == 0 {
		return errors.New("at least one validator is required")
	}
	seen := map[types.Address]bool{}
	total := new(big.Int)
	for _, a := range g.Allocations {
		if a.Balance == nil || a.Balance.Sign() <= 0 {
			return fmt.Errorf("allocation to %s must be positive", a.Address)
		}
		if seen[a.Address] {
			return fmt.Errorf("address %s allocated twice", a.Address)
		}
		if a.Address.IsReserved() && a.Address != types.TreasuryAddress {
			return fmt.Errorf("allocation to reserved address %s", a.Address)
		}
		seen[a.Address] = true
		total.Add(total, a.Balance)
	}
	if total.Cmp(Supply()) != 0 {
		return fmt.Errorf("allocations sum to %s base units, genesis supply is %s", total, Supply())
	}
	return nil
}

// Proposer is the address that proposes blocks on a single-validator chain.
func (g *Genesis) Proposer() types.Address { return g.Validators[0].Address }

// State returns the genesis state writes, sorted by key.
func (g *Genesis) State() []state.Write {
	o := state.NewOverlay(state.MapReader{})
	allocs := append([]Allocation(nil), g.Allocations...)
	sort.Slice(allocs, func(i, j int) bool { return string(allocs[i].Address[:]) < string(allocs[j].Address[:]) })
	for _, a := range allocs {
		o.SetAccount(a.Address, &state.Account{Balance: new(big.Int).Set(a.Balance)})
	}
	o.Set(state.ChainKey(state.RecordGenesisSupply), codec.MustMarshal(Supply()))
	o.Set(state.ChainKey(state.RecordBurned), codec.MustMarshal(new(big.Int)))
	o.Set(state.ChainKey(state.RecordMinted), codec.MustMarshal(new(big.Int)))
	execution.SetBasefees(o, fees.Basefees{Cycle: g.Fees.InitialBasefeeCycle, Cell: g.Fees.InitialBasefeeCell})
	return o.Writes()
}

// Block returns the genesis block for the given state root.
func (g *Genesis) Block(root types.Hash) *types.Block {
	return &types.Block{Header: types.Header{
		ChainID:      g.ChainID,
		Height:       0,
		Timestamp:    g.TimestampMs,
		Proposer:     g.Proposer(),
		StateRoot:    root,
		TxRoot:       types.TxRoot(nil),
		ReceiptsRoot: types.ReceiptsRoot(nil),
		BasefeeCycle: g.Fees.InitialBasefeeCycle,
		BasefeeCell:  g.Fees.InitialBasefeeCell,
	}, Txs: []types.Bytes{}}
}

// Dev returns a devnet genesis: chain id 7357, the faucet holding 80% of the
// supply, the treasury 0x…08 holding its 13.34% share, and the validator the
// rest.
func Dev(timestampMs uint64, validator, faucet types.Address) *Genesis {
	supply := Supply()
	treasury := CBY(133_400_000)
	faucetBal := new(big.Int).Div(new(big.Int).Mul(supply, big.NewInt(80)), big.NewInt(100))
	valBal := new(big.Int).Sub(new(big.Int).Sub(supply, treasury), faucetBal)
	f := faucet
	return &Genesis{
		ChainID:     7357,
		TimestampMs: timestampMs,
		Fees:        fees.Default(),
		Allocations: []Allocation{
			{Address: faucet, Balance: faucetBal, Label: "faucet"},
			{Address: types.TreasuryAddress, Balance: treasury, Label: "treasury"},
			{Address: validator, Balance: valBal, Label: "validator"},
		},
		Validators: []Validator{{Address: validator}},
		Faucet:     &f,
	}
}
