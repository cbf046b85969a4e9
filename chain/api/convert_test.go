package api

import (
	"encoding/json"
	"math/big"
	"strings"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/types"
)

// The API serves the failing message's index beside the code, and leaves
// it out when no message failed.
func TestReceiptJSONFailedMessage(t *testing.T) {
	one := uint64(1)
	r := &types.Receipt{Status: types.ReceiptSuccess, FeePaid: new(big.Int), Burned: new(big.Int), Tip: new(big.Int),
		Messages: []types.MessageRecord{{Value: new(big.Int), Parent: -1, Status: types.ReceiptSuccess},
			{Value: new(big.Int), Parent: -1, Status: types.ReceiptFailed, Code: 100, Error: "boom"}},
		FailedMessage: &one}
	b, err := json.Marshal(receiptJSON(r, 3, 0))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"failed_message":1`) {
		t.Fatalf("no failed_message in %s", b)
	}
	r.FailedMessage = nil
	if b, _ = json.Marshal(receiptJSON(r, 3, 0)); strings.Contains(string(b), "failed_message") {
		t.Fatalf("failed_message without a failed message: %s", b)
	}
}
