package gov

import (
	"strings"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/types"
)

func TestParseUpgrade(t *testing.T) {
	a := types.RunnerRegistryAddress
	u, err := parseUpgrade(a.String() + ":v2@100:200")
	if err != nil || u.Actor != a || u.Version != "v2" || u.Activation != 100 || u.RollbackDeadline != 200 {
		t.Fatalf("%+v %v", u, err)
	}
	if u, err := parseUpgrade(a.String() + ":v2@100"); err != nil || u.RollbackDeadline != 100 {
		t.Fatalf("default deadline: %+v %v", u, err)
	}
	for _, bad := range []string{"v2@100", a.String() + ":v2", a.String() + ":v2@x", "0xzz:v2@1", a.String() + ":v2@1:y"} {
		if _, err := parseUpgrade(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestParseModelActions(t *testing.T) {
	a, b := types.Hash{0xab}, types.Hash{2}
	ms, err := parseModelActions([]string{a.String()}, []string{b.String()}, "unsafe")
	if err != nil || len(ms) != 2 || ms[0] != (types.GovModel{ID: a, Ban: true, Reason: "unsafe"}) || ms[1] != (types.GovModel{ID: b}) {
		t.Fatalf("%+v %v", ms, err)
	}
	for name, c := range map[string]struct {
		ban, unban []string
		reason     string
	}{
		"ban without reason": {[]string{a.String()}, nil, ""},
		"reason without ban": {nil, []string{a.String()}, "r"},
		"not an id":          {[]string{"tiny-llama"}, nil, "r"},
		"uppercase hex":      {nil, []string{"0x" + strings.ToUpper(a.String()[2:])}, ""},
	} {
		if _, err := parseModelActions(c.ban, c.unban, c.reason); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
}
