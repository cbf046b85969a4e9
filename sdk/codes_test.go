package sdk

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/system"
)

func TestReceiptErrMapsCodes(t *testing.T) {
	if err := ReceiptErr(&apitypes.Receipt{Status: "success"}); err != nil {
		t.Fatalf("success: %v", err)
	}
	r := &apitypes.Receipt{Status: "failed", Code: uint32(system.CodeVersionConflict), Error: "VersionConflict: v3 is not v2 + 1"}
	err := fmt.Errorf("commit: %w", ReceiptErr(r))
	if !errors.Is(err, ErrVersionConflict) || errors.Is(err, ErrNoSuchVolume) {
		t.Fatalf("errors.Is on %v", err)
	}
	var re *ReceiptError
	if !errors.As(err, &re) || re.Code != system.CodeVersionConflict || err.Error() != "commit: VersionConflict: v3 is not v2 + 1" {
		t.Fatalf("ReceiptError %+v, text %q", re, err)
	}
	// A failure without a code (a node before receipt codes) matches no
	// sentinel but is still an error.
	if err := ReceiptErr(&apitypes.Receipt{Status: "failed", Error: "x"}); err == nil || errors.Is(err, ErrVersionConflict) {
		t.Fatalf("uncoded failure: %v", err)
	}
	// Every sentinel is reachable from exactly one code.
	seen := map[error]system.Code{}
	for _, c := range system.Codes() {
		if s := sentinel(c); s != nil {
			if prev, dup := seen[s]; dup {
				t.Fatalf("%v is the sentinel of %s and %s", s, prev, c)
			}
			seen[s] = c
		}
	}
	if len(seen) != 42 { // 34 + 8 rent sentinels (sdk/rent.go)
		t.Fatalf("%d sentinels mapped", len(seen))
	}
}
