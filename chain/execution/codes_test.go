package execution_test

import (
	"strings"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/execution"
	"github.com/cowboy-foundation/cowboy/chain/fees"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// checkCodes asserts that every failed receipt and message record of a
// block carries a failure code, and that a named code agrees with the
// text beside it (which by convention starts with the code's name).
func checkCodes(t *testing.T, rs []*types.Receipt) {
	t.Helper()
	check := func(what string, status uint8, code uint32, text string) {
		c := system.Code(code)
		switch {
		case status == types.ReceiptSuccess && c != system.CodeOK:
			t.Errorf("%s succeeded with code %s", what, c)
		case status != types.ReceiptSuccess && c == system.CodeOK:
			t.Errorf("%s failed without a code: %q", what, text)
		case c > system.CodePending && !strings.HasPrefix(text, c.String()) && !strings.Contains(text, c.String()):
			t.Errorf("%s: code %s beside text %q", what, c, text)
		}
	}
	for _, r := range rs {
		// A timer receipt whose owner cannot pay is not failed (nothing ran)
		// but still says why.
		if r.Status == types.ReceiptSuccess && system.Code(r.Code) == system.CodeInsufficientBalance {
			continue
		}
		check("receipt "+r.TxHash.String(), r.Status, r.Code, r.Error)
		for _, m := range r.Messages {
			check("message "+m.ID.String(), m.Status, m.Code, m.Error)
		}
	}
}

// The receipts root commits to the code, not to the text: rewording a
// failure cannot fork the chain, changing its code does.
func TestReceiptHashCoversCodeNotText(t *testing.T) {
	r := &types.Receipt{Status: types.ReceiptFailed, Code: uint32(system.CodeVersionConflict), Error: "VersionConflict: v3 is not v2 + 1",
		Messages: []types.MessageRecord{{Status: types.ReceiptFailed, Code: uint32(system.CodeReverted), Error: "reverted with the transaction"}}}
	h := r.Hash()
	reworded := *r
	reworded.Error = "VersionConflict: something else"
	reworded.Messages = []types.MessageRecord{r.Messages[0]}
	reworded.Messages[0].Error = "reworded"
	if reworded.Hash() != h {
		t.Fatal("the receipt hash depends on the error text")
	}
	if r.Messages[0].Error != "reverted with the transaction" {
		t.Fatal("Hash modified the receipt's messages")
	}
	recoded := *r
	recoded.Code = uint32(system.CodeNoSuchVolume)
	if recoded.Hash() == h {
		t.Fatal("the receipt hash ignores the code")
	}
	msg := *r
	msg.Messages = []types.MessageRecord{r.Messages[0]}
	msg.Messages[0].Code = uint32(system.CodeNotDelivered)
	if msg.Hash() == h {
		t.Fatal("the receipt hash ignores a message's code")
	}
}

// Result.Block fills every header field execution determines.
func TestResultBlock(t *testing.T) {
	parent := &types.Header{ChainID: 9, Height: 4}
	rcpt := &types.Receipt{Status: types.ReceiptSuccess}
	res := &execution.Result{Receipts: []*types.Receipt{rcpt}, CyclesUsed: 7, CellsUsed: 8, Basefees: fees.Basefees{Cycle: 2, Cell: 3}}
	env := execution.BlockEnv{Height: 5, Timestamp: 5000, Proposer: types.Address{1}}
	b := res.Block(9, parent, env, types.Hash{0xaa})
	h := b.Header
	if h.ChainID != 9 || h.Height != 5 || h.ParentHash != parent.Hash() || h.Timestamp != 5000 || h.Proposer != env.Proposer ||
		h.StateRoot != (types.Hash{0xaa}) || h.ReceiptsRoot != types.ReceiptsRoot(res.Receipts) || h.TxRoot != types.TxRoot(nil) ||
		h.BasefeeCycle != 2 || h.BasefeeCell != 3 || h.CyclesUsed != 7 || h.CellsUsed != 8 || len(b.Txs) != 0 {
		t.Fatalf("header %+v", h)
	}
}
