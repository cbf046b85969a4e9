package node_test

import (
	"crypto/ecdsa"
	"math/big"
	"sort"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/cowboy-foundation/cowboy/chain/fees"
	"github.com/cowboy-foundation/cowboy/chain/node"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/sdk"
)

// TestTransferFinalWithinOneInterval: on a four-validator network at low
// load a transfer is executed (final, receipt readable) well within one
// block interval of its submission. When a leader always waited for the
// interval after its parent, the block finalizing the transfer's block
// came at least one interval later, so this took more than 900 ms.
func TestTransferFinalWithinOneInterval(t *testing.T) {
	if testing.Short() {
		t.Skip("four validators")
	}
	const interval = 900 * time.Millisecond
	nw, key := startFunded(t, interval)
	n0 := nw.nodes[0]
	var lat []time.Duration
	for nonce := range uint64(3) {
		time.Sleep(2 * interval) // idle: the chain is back to empty blocks
		tx := signedTransfer(t, n0, key, nonce)
		start := time.Now()
		if _, err := n0.SubmitTx(tx.Encode()); err != nil {
			t.Fatal(err)
		}
		waitTx(t, n0, tx.Hash())
		lat = append(lat, time.Since(start))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	t.Logf("submit -> executed: %v (interval %v)", lat, interval)
	// The bound is the interval itself, not a fraction of it: before the
	// change the median was over two intervals (1.87 s), after it ~0.2 s, so
	// one interval separates the two cleanly without failing on a machine
	// whose other core is busy.
	if lat[1] >= interval {
		t.Fatalf("median submit -> final %v, want under the %v interval", lat[1], interval)
	}
}

// startFunded starts four validators with blocks every interval and
// returns them with a key the faucet funded through node 0 (executed).
func startFunded(t *testing.T, interval time.Duration) (*network, *ecdsa.PrivateKey) {
	t.Helper()
	nw := startNetwork(t, 4, interval)
	nw.waitHeight(t, 0, 2, 30*time.Second)
	key, _ := crypto.GenerateKey()
	h, err := nw.nodes[0].Faucet(types.PubkeyToAddress(key.PublicKey), sdk.MustCBY("10"))
	if err != nil {
		t.Fatal(err)
	}
	waitTx(t, nw.nodes[0], h)
	return nw, key
}

func signedTransfer(t *testing.T, n *node.Node, key *ecdsa.PrivateKey, nonce uint64) *types.Tx {
	t.Helper()
	to := types.Address{0xbe, byte(nonce)}
	tx, err := types.NewTx(types.TxData{ChainID: n.Genesis().ChainID, Nonce: nonce, To: &to, Value: big.NewInt(1),
		CyclesLimit: fees.TransferCycles, MaxFeePerCycle: 1e11, MaxFeePerCell: 1e11, TipPerCycle: 1})
	if err != nil {
		t.Fatal(err)
	}
	s, err := types.SignTx(tx, key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
