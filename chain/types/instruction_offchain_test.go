package types

import (
	"bytes"
	"math/big"
	"reflect"
	"testing"
)

// TestOffchainInstructionsRoundTrip encodes each off-chain extra instruction,
// decodes it back and re-encodes it to the same canonical bytes.
func TestOffchainInstructionsRoundTrip(t *testing.T) {
	a, h := Address{1, 2}, Hash{3, 4}
	for _, in := range []Instruction{
		&EntitlementGrant{Grantee: a, Scope: Bytes{0x81, 0}, Action: Bytes{0x81, 0}, Constraints: Bytes{0x80}},
		&EntitlementRevoke{ID: h},
		&EntitlementDelegate{Parent: h, Grantee: a, Constraints: Bytes{0x80}},
		&RoleCreate{Name: "ops", Scopes: Bytes{0x80}, Actions: Bytes{0x80}, Constraints: Bytes{0x80}},
		&RoleAssign{RoleID: h, Assignee: a},
		&RoleRevoke{RoleID: h, Assignee: a},
		&RunnerDelegateStake{Runner: a},
		&RunnerUndelegateStake{Runner: a, Amount: big.NewInt(5)},
		&RunnerWithdraw{},
		&ChallengeResult{JobID: h, Evidence: Bytes{1}},
		&RunnerStake{},
		&RunnerUnstake{Amount: new(big.Int).Lsh(big.NewInt(1), 100)},
		&RunnerSetCommission{CommissionBps: 500},
	} {
		b, err := EncodeInstruction(in)
		if err != nil {
			t.Fatalf("%T: %v", in, err)
		}
		back, err := DecodeInstruction(b)
		if err != nil {
			t.Fatalf("%T: decode: %v", in, err)
		}
		if !reflect.DeepEqual(back, in) {
			t.Fatalf("%T: round trip %+v != %+v", in, back, in)
		}
		b2, _ := EncodeInstruction(back)
		if !bytes.Equal(b, b2) {
			t.Fatalf("%T: re-encoding differs", in)
		}
		if name := in.InstructionKind().String(); name == "" || name[:4] == "kind" {
			t.Fatalf("%T: no name (%s)", in, name)
		}
	}
	if _, err := DecodeInstruction([]byte{0x81, 0x18, 54}); err == nil {
		t.Fatal("unallocated kind 54 decoded")
	}
}
