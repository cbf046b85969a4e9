package node_test

import (
	"errors"
	"os"
	"strconv"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/node"
)

// TestInitTestnetHosts: with Hosts every validator listens on, and is
// bootstrapped at, its own address; a count that does not match is refused
// before anything is written.
func TestInitTestnetHosts(t *testing.T) {
	dir := t.TempDir() + "/tn"
	hosts := []string{"10.250.0.10", "10.250.0.11", "10.250.0.12"}
	if _, err := node.InitTestnet(node.TestnetOptions{Dir: dir, Validators: 3, Hosts: hosts[:2]}); err == nil {
		t.Fatal("2 hosts for 3 validators accepted")
	}
	if _, err := os.Stat(node.TestnetPath(dir)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("refused init left %s (%v)", node.TestnetPath(dir), err)
	}
	tn, err := node.InitTestnet(node.TestnetOptions{Dir: dir, Validators: 3, Hosts: hosts, RPCBase: 8645, P2PBase: 26656})
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range tn.Nodes {
		cfg, err := node.LoadNodeConfig(n.Home)
		if err != nil {
			t.Fatal(err)
		}
		wantRPC, wantP2P := hosts[i]+":"+strconv.Itoa(8645+i), hosts[i]+":"+strconv.Itoa(26656+i)
		if n.RPC != wantRPC || cfg.RPC != wantRPC || n.P2P != wantP2P || cfg.P2P != wantP2P {
			t.Fatalf("node%d: manifest %s %s, config %s %s; want %s %s", i, n.RPC, n.P2P, cfg.RPC, cfg.P2P, wantRPC, wantP2P)
		}
		peers, err := node.ParseBootstrap(cfg.Bootstrap)
		if err != nil {
			t.Fatal(err)
		}
		for j, m := range tn.Nodes {
			if j != i && peers[m.Address] != hosts[j]+":"+strconv.Itoa(26656+j) {
				t.Fatalf("node%d bootstraps node%d at %q", i, j, peers[m.Address])
			}
		}
	}
}
