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
	"github.com/cowboy-foundation/cowboy/chain/consensus/bls"
	"github.com/cowboy-foundation/cowboy/chain/execution"
	"github.com/cowboy-foundation/cowboy/chain/fees"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system/ethbridge"
	"github.com/cowboy-foundation/cowboy/chain/system/governance"
	"github.com/cowboy-foundation/cowboy/chain/system/rent"
	"github.com/cowboy-foundation/cowboy/chain/system/runners"
	"github.com/cowboy-foundation/cowboy/chain/system/validators"
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

// Validator is a member of the genesis validator set. A devnet validator
// (cowboyd --dev) has only an address; a validator of a consensus network
// has a stake (its voting weight, whole CBY), a BLS12-381 public key and
// the key's proof of possession (docs/CONSENSUS.md §7). The BLS key also
// proves the proposer's VRF output (the VRF is the BLS-signature VRF).
type Validator struct {
	Address types.Address `json:"address"`
	Stake   uint64        `json:"stake,omitempty"`
	BLSKey  types.Bytes   `json:"bls_key,omitempty"`
	BLSPoP  types.Bytes   `json:"bls_pop,omitempty"`
}

// Consensus holds the network's consensus timing. Zero values take the
// defaults (1 s blocks, 2 s view timeout, 100 ms ticks); tests shorten them.
type Consensus struct {
	BlockIntervalMs uint64 `json:"block_interval_ms,omitempty"`
	ViewTimeoutMs   uint64 `json:"view_timeout_ms,omitempty"`
	TickMs          uint64 `json:"tick_ms,omitempty"`
	// Validator Registry parameters (spec 002 §13 defaults: 3,600-block
	// epochs, 7-day unbonding, 24 h jail, 1,000-block downtime window,
	// 10,000 CBY minimum stake).
	EpochLength    uint64 `json:"epoch_length,omitempty"`
	UnbondingMs    uint64 `json:"unbonding_ms,omitempty"`
	JailMs         uint64 `json:"jail_ms,omitempty"`
	DowntimeWindow uint64 `json:"downtime_window,omitempty"`
	MinStakeCBY    uint64 `json:"min_stake_cby,omitempty"`
}

// ValidatorParams are the execution parameters of the Validator Registry.
func (g *Genesis) ValidatorParams() execution.ValidatorParams {
	p := execution.ValidatorParams{
		EpochLength: g.Consensus.EpochLength, UnbondingMs: g.Consensus.UnbondingMs,
		JailMs: g.Consensus.JailMs, DowntimeWindow: g.Consensus.DowntimeWindow,
	}
	if g.Consensus.MinStakeCBY > 0 {
		p.MinStake = CBY(int64(g.Consensus.MinStakeCBY))
	}
	return p
}

// TotalStake is the sum of the genesis validators' stakes in base units:
// what the Validator Registry's genesis allocation must hold.
func (g *Genesis) TotalStake() *big.Int {
	t := new(big.Int)
	for _, v := range g.Validators {
		t.Add(t, new(big.Int).Mul(new(big.Int).SetUint64(v.Stake), BaseUnitsPerCBY))
	}
	return t
}

// Multi reports whether the genesis describes a consensus network (every
// validator has a BLS key) rather than a single-validator devnet.
func (g *Genesis) Multi() bool { return len(g.Validators) > 0 && len(g.Validators[0].BLSKey) > 0 }

// Seed is the epoch seed of the first epoch: it drives the proposer
// schedule and is the VRF input, derived from the genesis block hash so
// that nobody picks it.
func (g *Genesis) Seed(genesisHash types.Hash) types.Hash {
	return types.Keccak256([]byte("cowboy/genesis-seed/v1"), genesisHash[:])
}

// Genesis is the genesis document.
type Genesis struct {
	ChainID     uint64         `json:"chain_id"`
	TimestampMs uint64         `json:"timestamp_ms"`
	Fees        fees.Schedule  `json:"fees"`
	Allocations []Allocation   `json:"allocations"`
	Validators  []Validator    `json:"validators"`
	Consensus   Consensus      `json:"consensus,omitempty"`
	Faucet      *types.Address `json:"faucet,omitempty"` // devnet faucet account, if any
	// Offchain overrides off-chain compute parameters; absent = defaults.
	Offchain *Offchain `json:"offchain,omitempty"`
	// Storage overrides Relay Registry and Storage Manager parameters
	// (storage epoch, rent rate, challenge window, …); zero fields and an
	// absent object keep the defaults (docs/RELAY.md).
	Storage *execution.StorageParams `json:"storage,omitempty"`
	// Governance are genesis values of governed parameters
	// (docs/GOVERNANCE.md); absent keys keep the declared defaults. They
	// are not written into the state: the parameter store falls back to
	// them until a proposal changes a value.
	Governance map[string]uint64 `json:"governance,omitempty"`
	// Rent turns on state rent and storage bonds (chain/system/rent,
	// docs/RENT.md); zero fields keep the defaults, absent = rent off.
	Rent *rent.Params `json:"rent,omitempty"`
	// Bridge is the authorised Ethereum bridge set and its threshold
	// (chain/system/ethbridge, docs/ETHEREUM.md); absent: no bridge.
	Bridge *ethbridge.Params `json:"bridge,omitempty"`
	// Council are the Security Council's 9 members (spec 002 §11.2);
	// absent: no Council.
	Council []types.Address `json:"council,omitempty"`
}

// GovernanceParams returns the Governance actor's configuration: the
// genesis parameter values, and the genesis validators as the voters of a
// chain without a Validator Registry.
func (g *Genesis) GovernanceParams() governance.Params {
	p := governance.Params{Genesis: g.Governance, Council: g.Council}
	for _, v := range g.Validators {
		p.Voters = append(p.Voters, v.Address)
	}
	return p
}

// StorageParams returns the Relay Registry and Storage Manager parameters
// with the genesis overrides (the executor fills in the defaults).
func (g *Genesis) StorageParams() execution.StorageParams {
	if g.Storage == nil {
		return execution.StorageParams{}
	}
	return *g.Storage
}

// Offchain overrides parameters of the off-chain compute system actors
// (docs/OFFCHAIN.md §9); zero fields keep the protocol defaults. Devnets use
// it for a small minimum stake and short windows so jobs settle in seconds.
type Offchain struct {
	MinRunnerStake          *big.Int `json:"min_runner_stake,omitempty"` // base units
	HeartbeatTimeoutBlocks  uint64   `json:"heartbeat_timeout_blocks,omitempty"`
	AggregatorTimeoutBlocks uint64   `json:"aggregator_timeout_blocks,omitempty"`
	RevealTimeoutBlocks     uint64   `json:"reveal_timeout_blocks,omitempty"`
	ChallengeWindowBlocks   uint64   `json:"challenge_window_blocks,omitempty"`
}

// OffchainParams returns the execution parameters of the off-chain compute
// system actors: the defaults with the genesis overrides applied.
func (g *Genesis) OffchainParams() execution.OffchainParams {
	p := execution.OffchainParams{Job: job.DefaultParams()}
	o := g.Offchain
	if o == nil {
		return p
	}
	if o.MinRunnerStake != nil && o.MinRunnerStake.Sign() > 0 {
		p.MinRunnerStake = new(big.Int).Set(o.MinRunnerStake)
	}
	p.HeartbeatTimeout = o.HeartbeatTimeoutBlocks
	if o.AggregatorTimeoutBlocks > 0 {
		p.Job.AggregatorTimeoutBlocks = o.AggregatorTimeoutBlocks
	}
	if o.RevealTimeoutBlocks > 0 {
		p.Job.RevealTimeoutBlocks = o.RevealTimeoutBlocks
	}
	if o.ChallengeWindowBlocks > 0 {
		p.Job.ChallengeWindowBlocks = o.ChallengeWindowBlocks
	}
	return p
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
	if err := g.validateValidators(); err != nil {
		return err
	}
	if g.Bridge != nil {
		if err := g.Bridge.Validate(); err != nil {
			return fmt.Errorf("genesis: %w", err)
		}
	}
	if g.Rent != nil {
		if err := g.Rent.Validate(); err != nil {
			return err
		}
	}
	if _, err := governance.New(g.GovernanceParams(), append(append(append(runners.ParamDefs(g.OffchainParams()), validators.ParamDefs(g.ValidatorParams())...), rent.ParamDefs(g.Rent)...), ethbridge.ParamDefs(g.Bridge)...)...); err != nil {
		return err
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
		if a.Address == types.ValidatorRegistryAddress && g.Multi() {
			if a.Balance.Cmp(g.TotalStake()) != 0 {
				return fmt.Errorf("the Validator Registry allocation %s must equal the validators' total stake %s", a.Balance, g.TotalStake())
			}
		} else if a.Address.IsReserved() && a.Address != types.TreasuryAddress {
			return fmt.Errorf("allocation to reserved address %s", a.Address)
		}
		seen[a.Address] = true
		total.Add(total, a.Balance)
	}
	if total.Cmp(Supply()) != 0 {
		return fmt.Errorf("allocations sum to %s base units, genesis supply is %s", total, Supply())
	}
	if g.Multi() && !seen[types.ValidatorRegistryAddress] {
		return fmt.Errorf("the validators' stake (%s base units) must be allocated to the Validator Registry %s", g.TotalStake(), types.ValidatorRegistryAddress)
	}
	return nil
}

// validateValidators checks a consensus network's set: distinct addresses,
// positive stakes and BLS keys with a valid proof of possession (which
// stops rogue-key attacks on aggregated signatures).
func (g *Genesis) validateValidators() error {
	multi := g.Multi()
	if !multi && len(g.Validators) > 1 {
		return errors.New("validators of a multi-validator genesis need bls_key and bls_pop")
	}
	seen := map[types.Address]bool{}
	keys := map[string]bool{}
	var total uint64
	for _, v := range g.Validators {
		if seen[v.Address] {
			return fmt.Errorf("validator %s listed twice", v.Address)
		}
		seen[v.Address] = true
		if !multi {
			continue
		}
		if v.Stake == 0 {
			return fmt.Errorf("validator %s: stake must be positive", v.Address)
		}
		if total+v.Stake < total {
			return errors.New("total validator stake overflows")
		}
		total += v.Stake
		pk, err := bls.PublicKeyFromBytes(v.BLSKey)
		if err != nil {
			return fmt.Errorf("validator %s: bls_key: %w", v.Address, err)
		}
		if keys[string(v.BLSKey)] {
			return fmt.Errorf("validator %s: bls_key used twice", v.Address)
		}
		keys[string(v.BLSKey)] = true
		pop, err := bls.SignatureFromBytes(v.BLSPoP)
		if err != nil || !pk.VerifyPossession(pop) {
			return fmt.Errorf("validator %s: bls_pop is not a proof of possession of bls_key", v.Address)
		}
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
	if g.Multi() {
		vals := make([]execution.GenesisValidator, len(g.Validators))
		for i, v := range g.Validators {
			vals[i] = execution.GenesisValidator{Address: v.Address, BLSKey: v.BLSKey, Stake: new(big.Int).Mul(new(big.Int).SetUint64(v.Stake), BaseUnitsPerCBY)}
		}
		execution.SetGenesisValidators(o, vals, g.TimestampMs)
	}
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
		// A devnet runner stakes 10 CBY, and a job settles a few blocks
		// after verification instead of 15 minutes.
		Offchain: &Offchain{MinRunnerStake: CBY(10), AggregatorTimeoutBlocks: 10, RevealTimeoutBlocks: 10, ChallengeWindowBlocks: 5},
		// Devnet storage epochs of 20 blocks (5 s at 250 ms blocks) so
		// challenges and rent settle within a demo; unfunded volumes stay
		// in arrears for 1000 epochs before eviction.
		Storage: &execution.StorageParams{EpochBlocks: 20, ResponseWindow: 10, UnbondingBlocks: 20, GraceEpochs: 1000},
		// Short voting periods and timelocks (docs/GOVERNANCE.md).
		Governance: governance.DevGenesis(),
	}
}

// Testnet returns the genesis of a local multi-validator network: chain id
// 7358, the faucet holding 80% of the supply, the treasury 0x…08 its
// 13.34%, the Validator Registry 0x…0C the validators' stakes, and the
// validators sharing the rest equally as liquid balances (the first takes
// the remainder of the division).
func Testnet(timestampMs uint64, validators []Validator, faucet types.Address, c Consensus) *Genesis {
	supply := Supply()
	treasury := CBY(133_400_000)
	faucetBal := new(big.Int).Div(new(big.Int).Mul(supply, big.NewInt(80)), big.NewInt(100))
	g := &Genesis{Validators: validators}
	staked := g.TotalStake()
	rest := new(big.Int).Sub(new(big.Int).Sub(new(big.Int).Sub(supply, treasury), faucetBal), staked)
	share, rem := new(big.Int).DivMod(rest, big.NewInt(int64(len(validators))), new(big.Int))
	allocs := []Allocation{
		{Address: faucet, Balance: faucetBal, Label: "faucet"},
		{Address: types.TreasuryAddress, Balance: treasury, Label: "treasury"},
		{Address: types.ValidatorRegistryAddress, Balance: staked, Label: "validator stakes"},
	}
	for i, v := range validators {
		b := new(big.Int).Set(share)
		if i == 0 {
			b.Add(b, rem)
		}
		allocs = append(allocs, Allocation{Address: v.Address, Balance: b, Label: fmt.Sprintf("validator %d", i)})
	}
	f := faucet
	return &Genesis{
		ChainID: 7358, TimestampMs: timestampMs, Fees: fees.Default(), Allocations: allocs,
		Validators: append([]Validator(nil), validators...), Consensus: c, Faucet: &f,
		Governance: governance.DevGenesis(),
	}
}
