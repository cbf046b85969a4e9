package node_test

import (
	"math/big"
	"path/filepath"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/execution"
	"github.com/cowboy-foundation/cowboy/chain/node"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

func epochOf(t *testing.T, n *node.Node) *execution.Epoch {
	t.Helper()
	var ep *execution.Epoch
	if err := n.Store().View(func(v *store.View) error {
		var err error
		ep, err = execution.ReadEpoch(v)
		return err
	}); err != nil || ep == nil {
		t.Fatalf("epoch: %v", err)
	}
	return ep
}

func sameChain(t *testing.T, nodes ...*node.Node) {
	t.Helper()
	top := ^uint64(0)
	for _, n := range nodes {
		h, _ := n.Store().Head()
		top = min(top, h.Height)
	}
	for h := uint64(1); h <= top; h++ {
		var want types.Hash
		for i, n := range nodes {
			var got types.Hash
			if err := n.Store().View(func(v *store.View) error {
				hd, err := v.Header(h)
				if err == nil {
					got = hd.Hash()
				}
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				want = got
			} else if got != want {
				t.Fatalf("fork at height %d", h)
			}
		}
	}
}

// TestEpochsAndValidatorExit runs four in-process validators with 8-block
// epochs: consensus reconfigures at every boundary from the set the
// Validator Registry wrote (fillers finalize each epoch's last block, the
// next core starts above every round signed before). Then validator 3
// exits: from the next boundary the other three carry on alone, on one
// chain, with supply conserved.
func TestEpochsAndValidatorExit(t *testing.T) {
	if testing.Short() {
		t.Skip("runs four validators for several seconds")
	}
	nw := startNetworkOpts(t, node.TestnetOptions{Validators: 4, EpochLength: 8}, 20*time.Millisecond)
	nw.waitHeight(t, 0, 20, 60*time.Second)
	if ep := epochOf(t, nw.nodes[0]); ep.Number < 2 || len(ep.Members) != 4 {
		t.Fatalf("after height 20: epoch %d with %d members", ep.Number, len(ep.Members))
	}

	// Validator 3 signals its exit with its account key.
	home3 := nw.testnet.Nodes[3].Home
	key3, err := node.LoadKeyFile(filepath.Join(home3, "validator.key"))
	if err != nil {
		t.Fatal(err)
	}
	addr3 := types.PubkeyToAddress(key3.PublicKey)
	var nonce uint64
	if err := nw.nodes[0].Store().View(func(v *store.View) error {
		acc, err := state.ReadAccount(v, addr3)
		nonce = acc.Nonce
		return err
	}); err != nil {
		t.Fatal(err)
	}
	payload, _ := types.EncodeInstruction(&types.ValidatorExit{})
	to := types.ValidatorRegistryAddress
	tx, _ := types.NewTx(types.TxData{ChainID: nw.nodes[0].Genesis().ChainID, Nonce: nonce, To: &to, Value: new(big.Int),
		CyclesLimit: 1_000_000, CellsLimit: 10_000, MaxFeePerCycle: 1e11, MaxFeePerCell: 1e11, Payload: payload})
	signed, _ := types.SignTx(tx, key3)
	if _, err := nw.nodes[1].SubmitTx(signed.Encode()); err != nil {
		t.Fatal(err)
	}
	waitTx(t, nw.nodes[0], signed.Hash())

	deadline := time.Now().Add(60 * time.Second)
	for len(epochOf(t, nw.nodes[0]).Members) != 3 {
		if time.Now().After(deadline) {
			t.Fatal("the exit never took effect")
		}
		time.Sleep(50 * time.Millisecond)
	}
	h, _ := nw.nodes[0].Store().Head()
	for i := range 3 {
		nw.waitHeight(t, i, h.Height+20, 60*time.Second)
	}
	sameChain(t, nw.nodes[0], nw.nodes[1], nw.nodes[2])
	cs, _ := nw.nodes[0].Consensus()
	if cs.Validators != 3 {
		t.Fatalf("consensus runs %d validators, want 3", cs.Validators)
	}
	if err := nw.nodes[0].Store().View(func(v *store.View) error {
		rec, err := execution.ReadValidator(v, addr3)
		if err != nil || rec == nil || rec.Status != execution.ValidatorExited {
			t.Fatalf("validator 3: %+v %v", rec, err)
		}
		_, err = node.AuditSupply(v)
		return err
	}); err != nil {
		t.Fatal(err)
	}
}
