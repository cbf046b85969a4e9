package node

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/cowboy-foundation/cowboy/chain/consensus/bls"
	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// NodeConfig is a node home's config.json: what `cowboyd` (without --dev)
// reads when the matching flag is not given.
type NodeConfig struct {
	RPC          string   `json:"rpc"`           // HTTP API listen address
	P2P          string   `json:"p2p"`           // QUIC listen address
	Bootstrap    []string `json:"bootstrap"`     // validator peers, "0xADDRESS@host:port"
	ValidatorKey string   `json:"validator_key"` // BLS key file, relative to the home
	// Role "full" runs a full node (no vote); its p2p identity is NodeKey
	// (default node.key). Empty is a validator.
	Role    string `json:"role,omitempty"`
	NodeKey string `json:"node_key,omitempty"`
	// SnapshotInterval is cowboyd's --snapshot-interval (nil: the flag's
	// default); StateSync its --state-sync (full nodes).
	SnapshotInterval *int64 `json:"snapshot_interval,omitempty"`
	StateSync        bool   `json:"state_sync,omitempty"`
	// PruneKeep is the number of recent heights whose state is kept
	// (0: DefaultPruneKeep); Archive keeps all (cowboyd --prune-keep,
	// --archive).
	PruneKeep uint64 `json:"prune_keep,omitempty"`
	Archive   bool   `json:"archive,omitempty"`
	// Peer discovery (cowboyd --bootnodes, --discovery, --max-peers):
	// bootnode records ("enr:…"), discovery on unless NoDiscovery.
	Bootnodes   []string `json:"bootnodes,omitempty"`
	NoDiscovery bool     `json:"no_discovery,omitempty"`
	MaxPeers    int      `json:"max_peers,omitempty"`
}

// NodeConfigPath is the config file of a home.
func NodeConfigPath(home string) string { return filepath.Join(home, "config.json") }

// LoadNodeConfig reads home/config.json; a missing file is an empty config.
func LoadNodeConfig(home string) (*NodeConfig, error) {
	b, err := os.ReadFile(NodeConfigPath(home))
	if errors.Is(err, os.ErrNotExist) {
		return &NodeConfig{}, nil
	}
	if err != nil {
		return nil, err
	}
	var c NodeConfig
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("parse %s: %w", NodeConfigPath(home), err)
	}
	return &c, nil
}

func writeJSON(path string, v any, mode os.FileMode) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), mode); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ParseBootstrap parses "0xADDRESS@host:port" entries into the map that
// Network.Bootstrap takes.
func ParseBootstrap(entries []string) (map[types.Address]string, error) {
	out := map[types.Address]string{}
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		addr, hostport, ok := strings.Cut(e, "@")
		if !ok {
			return nil, fmt.Errorf("bootstrap %q: want 0xVALIDATOR_ADDRESS@host:port", e)
		}
		a, err := types.ParseAddress(addr)
		if err != nil {
			return nil, fmt.Errorf("bootstrap %q: %w", e, err)
		}
		if _, _, err := net.SplitHostPort(hostport); err != nil {
			return nil, fmt.Errorf("bootstrap %q: %w", e, err)
		}
		out[a] = hostport
	}
	return out, nil
}

// TestnetOptions describes a local network of validators on one machine.
type TestnetOptions struct {
	Dir        string
	Validators int
	// FullNodes are non-validator nodes (full0, full1, …) following the
	// validators; their ports follow the validators'.
	FullNodes int
	Host      string // default 127.0.0.1
	// Hosts gives each validator its own address (node i listens and is
	// dialled on Hosts[i]), for validators on separate machines or network
	// namespaces; empty puts them all on Host. With full nodes it may
	// list their addresses too, after the validators'.
	Hosts   []string
	RPCBase int // validator i serves its API on RPCBase+i; default 8645
	P2PBase int // and QUIC on P2PBase+i; default 26656
	// Consensus timing written to the genesis; zero keeps the defaults.
	BlockInterval time.Duration
	ViewTimeout   time.Duration
	Tick          time.Duration
	Stake         uint64 // per validator, whole CBY; default 100,000
	EpochLength   uint64 // blocks per epoch; default 3,600
}

// Testnet is D/testnet.json: the layout `cowboy testnet up|down|status`
// works from.
type Testnet struct {
	ChainID uint64        `json:"chain_id"`
	Nodes   []TestnetNode `json:"nodes"`
}

// TestnetNode is one node of a local testnet: a validator, or a full node
// (Role "full", no Address).
type TestnetNode struct {
	Name    string        `json:"name"`
	Role    string        `json:"role,omitempty"` // RoleValidator when empty
	Home    string        `json:"home"`
	RPC     string        `json:"rpc"`
	P2P     string        `json:"p2p"`
	Address types.Address `json:"address"`
}

// TestnetPath is the manifest of a testnet directory.
func TestnetPath(dir string) string { return filepath.Join(dir, "testnet.json") }

// LoadTestnet reads a testnet manifest.
func LoadTestnet(dir string) (*Testnet, error) {
	b, err := os.ReadFile(TestnetPath(dir))
	if err != nil {
		return nil, fmt.Errorf("%w (run `cowboy testnet init --dir %s` first)", err, dir)
	}
	var t Testnet
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("parse %s: %w", TestnetPath(dir), err)
	}
	return &t, nil
}

// InitTestnet writes a home per validator under o.Dir (node0, node1, …):
// the validator's account key (validator.key), its BLS consensus key
// (consensus.key; it also proves the VRF), config.json with loopback
// ports and every other validator as a bootstrap peer, and the shared
// genesis listing each validator's stake, BLS key and proof of
// possession. node0 also holds the faucet key.
func InitTestnet(o TestnetOptions) (*Testnet, error) {
	if o.Validators < 1 {
		return nil, errors.New("testnet: at least one validator")
	}
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	if o.FullNodes < 0 {
		return nil, errors.New("testnet: negative number of full nodes")
	}
	if len(o.Hosts) > 0 && len(o.Hosts) != o.Validators && len(o.Hosts) != o.Validators+o.FullNodes {
		return nil, fmt.Errorf("testnet: %d hosts for %d validators and %d full nodes", len(o.Hosts), o.Validators, o.FullNodes)
	}
	hostOf := func(i int) string {
		if i < len(o.Hosts) {
			return o.Hosts[i]
		}
		return o.Host
	}
	if o.RPCBase == 0 {
		o.RPCBase = 8645
	}
	if o.P2PBase == 0 {
		o.P2PBase = 26656
	}
	if o.Stake == 0 {
		o.Stake = 100_000
	}
	if _, err := os.Stat(TestnetPath(o.Dir)); err == nil {
		return nil, fmt.Errorf("testnet: %s already exists; remove the directory to start over", TestnetPath(o.Dir))
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, err
	}
	faucet, err := crypto.GenerateKey()
	if err != nil {
		return nil, err
	}
	t := &Testnet{}
	var vals []genesis.Validator
	for i := range o.Validators {
		home, err := filepath.Abs(filepath.Join(o.Dir, "node"+strconv.Itoa(i)))
		if err != nil {
			return nil, err
		}
		if err := os.MkdirAll(home, 0o700); err != nil {
			return nil, err
		}
		acct, err := crypto.GenerateKey()
		if err != nil {
			return nil, err
		}
		bk, err := bls.GenerateKey(nil)
		if err != nil {
			return nil, err
		}
		if err := WriteKeyFile(filepath.Join(home, "validator.key"), acct); err != nil {
			return nil, err
		}
		if err := bls.WriteKeyFile(ConsensusKeyPath(home), bk); err != nil {
			return nil, err
		}
		addr := types.PubkeyToAddress(acct.PublicKey)
		vals = append(vals, genesis.Validator{Address: addr, Stake: o.Stake, BLSKey: bk.PublicKey().Bytes(), BLSPoP: bk.ProvePossession().Bytes()})
		t.Nodes = append(t.Nodes, TestnetNode{
			Name: "node" + strconv.Itoa(i), Role: RoleValidator, Home: home, Address: addr,
			RPC: net.JoinHostPort(hostOf(i), strconv.Itoa(o.RPCBase+i)), P2P: net.JoinHostPort(hostOf(i), strconv.Itoa(o.P2PBase+i)),
		})
	}
	g := genesis.Testnet(uint64(time.Now().UnixMilli()), vals, types.PubkeyToAddress(faucet.PublicKey), genesis.Consensus{
		BlockIntervalMs: uint64(o.BlockInterval.Milliseconds()), ViewTimeoutMs: uint64(o.ViewTimeout.Milliseconds()), TickMs: uint64(o.Tick.Milliseconds()),
		EpochLength: o.EpochLength,
	})
	if err := g.Validate(); err != nil {
		return nil, err
	}
	t.ChainID = g.ChainID
	for i, nd := range t.Nodes {
		if err := g.Save(GenesisPath(nd.Home)); err != nil {
			return nil, err
		}
		var boot []string
		for j, peer := range t.Nodes {
			if j != i {
				boot = append(boot, peer.Address.String()+"@"+peer.P2P)
			}
		}
		if err := writeJSON(NodeConfigPath(nd.Home), &NodeConfig{RPC: nd.RPC, P2P: nd.P2P, Bootstrap: boot, ValidatorKey: "consensus.key"}, 0o600); err != nil {
			return nil, err
		}
		if i == 0 {
			if err := WriteKeyFile(FaucetKeyPath(nd.Home), faucet); err != nil {
				return nil, err
			}
		}
	}
	if err := initFullNodes(o, g, t, hostOf); err != nil {
		return nil, err
	}
	if err := writeJSON(TestnetPath(o.Dir), t, 0o644); err != nil {
		return nil, err
	}
	return t, nil
}

// initFullNodes writes the homes of o.FullNodes full nodes (full0, …):
// the genesis, a node key, and config.json with role "full" and every
// validator as a bootstrap peer. Node i of the network (validators first)
// uses ports RPCBase+i and P2PBase+i.
func initFullNodes(o TestnetOptions, g *genesis.Genesis, t *Testnet, hostOf func(int) string) error {
	var boot []string
	for _, v := range t.Nodes {
		boot = append(boot, v.Address.String()+"@"+v.P2P)
	}
	for j := range o.FullNodes {
		i := o.Validators + j
		home, err := filepath.Abs(filepath.Join(o.Dir, "full"+strconv.Itoa(j)))
		if err != nil {
			return err
		}
		if err := os.MkdirAll(home, 0o700); err != nil {
			return err
		}
		k, err := bls.GenerateKey(nil)
		if err != nil {
			return err
		}
		if err := bls.WriteKeyFile(NodeKeyPath(home), k); err != nil {
			return err
		}
		nd := TestnetNode{Name: "full" + strconv.Itoa(j), Role: RoleFull, Home: home,
			RPC: net.JoinHostPort(hostOf(i), strconv.Itoa(o.RPCBase+i)), P2P: net.JoinHostPort(hostOf(i), strconv.Itoa(o.P2PBase+i))}
		if err := g.Save(GenesisPath(home)); err != nil {
			return err
		}
		if err := writeJSON(NodeConfigPath(home), &NodeConfig{RPC: nd.RPC, P2P: nd.P2P, Bootstrap: boot, Role: RoleFull, NodeKey: "node.key"}, 0o600); err != nil {
			return err
		}
		t.Nodes = append(t.Nodes, nd)
	}
	return nil
}
