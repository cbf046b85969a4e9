package types

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// kindsPinned is every kind's number, name and lane as they were before the
// registry: names are API output and lanes order blocks (consensus), so a
// change here must be deliberate.
const kindsPinned = `1 call user
2 deploy user
3 publish_library user
4 remove_library user
10 relay_register user
11 relay_heartbeat user
12 relay_deregister user
13 storage_proof user
14 claim_rent user
15 refuse_placement user
17 repair_placement user
20 volume_create user
21 commit_manifest user
22 revoke_token user
23 volume_fund user
30 entitlement_grant user
31 entitlement_revoke user
32 entitlement_delegate user
33 role_create user
34 role_assign user
35 role_revoke user
40 runner_register runner
41 runner_heartbeat runner
42 runner_deregister runner
43 submit_job user
44 commit_result runner
45 submit_verified_result runner
46 reveal_result runner
47 runner_delegate_stake user
48 runner_undelegate_stake user
49 runner_withdraw user
50 challenge_result runner
51 runner_stake runner
52 runner_unstake runner
53 runner_set_commission runner
54 model_publish user
55 model_retire user
56 model_withdraw user
57 model_ban system
58 model_unban system
59 report_wrong_model user
60 tee_attest runner
61 tee_attest_result runner
62 secret_put user
63 secret_grant user
64 secret_revoke user
65 secret_delete user
70 validator_register system
71 validator_exit system
72 validator_withdraw system
73 validator_evidence system
74 validator_unjail system
120 gov_propose user
121 gov_vote user
122 gov_execute user
123 gov_council user
130 token_create user
131 token_transfer user
132 token_transfer_from user
133 token_approve user
134 token_mint user
135 token_burn user
136 rent_pay user
137 rent_sponsor user
138 storage_bond user
139 rent_restore user
140 bridge_subscribe user
141 bridge_event user
142 bridge_wrap user
143 bridge_mint user
144 bridge_burn user
`

func TestKindTable(t *testing.T) {
	var b strings.Builder
	for _, k := range Kinds() {
		fmt.Fprintf(&b, "%d %s %s\n", uint64(k), k, k.Lane())
	}
	if b.String() != kindsPinned {
		t.Fatalf("kind table changed:\n%s", b.String())
	}
	if got := InstructionKind(99).String(); got != "kind(99)" {
		t.Fatalf("unknown kind name %q", got)
	}
	if InstructionKind(79).Lane() != LaneSystem || InstructionKind(80).Lane() != LaneUser {
		t.Fatal("reserved validator range lanes")
	}
}

// Every registered kind encodes from its constructor's value, stamping the
// kind, and decodes back to the same type.
func TestKindTableRoundTrip(t *testing.T) {
	for _, k := range Kinds() {
		in, _ := newInstruction(k)
		b, err := EncodeInstruction(in)
		if err != nil {
			t.Fatalf("%s: encode: %v", k, err)
		}
		out, err := DecodeInstruction(b)
		if err != nil {
			t.Fatalf("%s: decode: %v", k, err)
		}
		if out.InstructionKind() != k || fmt.Sprintf("%T", out) != fmt.Sprintf("%T", in) {
			t.Fatalf("%s: decoded %T kind %d", k, out, uint64(out.InstructionKind()))
		}
	}
}

func TestEncodeInstructionRejects(t *testing.T) {
	for _, in := range []Instruction{nil, Call{}, (*Call)(nil)} {
		if _, err := EncodeInstruction(in); err == nil {
			t.Errorf("%#v: encoded", in)
		}
	}
	if _, err := DecodeInstruction([]byte{0x81, 0x18, 99}); !errors.Is(err, ErrBadPayload) {
		t.Fatalf("unknown kind: %v", err)
	}
}
