package types

import (
	"math/big"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/codec"
)

// The receipts root commits to the failing message's index, not to the
// error texts.
func TestReceiptHashCoversFailedMessage(t *testing.T) {
	base := func() *Receipt {
		return &Receipt{Status: ReceiptSuccess, FeePaid: new(big.Int), Burned: new(big.Int), Tip: new(big.Int), Return: Bytes{},
			Messages: []MessageRecord{{Value: new(big.Int), Parent: -1, Status: ReceiptFailed, Code: 1, Error: "boom"}}}
	}
	a, b := base(), base()
	zero, one := uint64(0), uint64(1)
	b.FailedMessage = &zero
	if a.Hash() == b.Hash() {
		t.Fatal("FailedMessage is not hashed")
	}
	c := base()
	c.FailedMessage = &one
	if b.Hash() == c.Hash() {
		t.Fatal("the index of the failed message is not hashed")
	}
	d := base()
	d.FailedMessage = &zero
	d.Error, d.Messages[0].Error = "reworded", "reworded"
	if b.Hash() != d.Hash() {
		t.Fatal("error texts reach the receipt hash")
	}
	var back Receipt
	if err := codec.Unmarshal(codec.MustMarshal(b), &back); err != nil || back.FailedMessage == nil || *back.FailedMessage != 0 {
		t.Fatalf("round trip: %v %v", err, back.FailedMessage)
	}
}
