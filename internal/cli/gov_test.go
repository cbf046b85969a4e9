package cli

import (
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
