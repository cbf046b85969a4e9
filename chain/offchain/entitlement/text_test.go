package entitlement

import (
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/types"
)

func TestTextRoundTrip(t *testing.T) {
	a := types.Address{1, 2, 3}
	for _, s := range []Scope{GlobalScope(), ActorScope(a), RunnerScope(a), TokenScope([32]byte{9}), RunnerPoolScope([]byte("gpu")),
		NamespaceScope([]byte{0, 1}), RunnerPoolScope([]byte("a:b"))} {
		got, err := ParseScope(s.String())
		if err != nil || !got.Equal(s) {
			t.Fatalf("scope %s: %v %v", s, got, err)
		}
	}
	for _, x := range []Action{{Kind: ActionAll}, RunnerJoinPoolAction([]byte("gpu")), {Kind: ActionActorExecuteHandler, Data: []byte("run")},
		{Kind: ActionRunnerSubmitJob}, {Kind: ActionCustom, Data: []byte{0xff}}} {
		got, err := ParseAction(x.String())
		if err != nil || !got.Equal(x) {
			t.Fatalf("action %s: %v %v", x, got, err)
		}
	}
	for _, bad := range []string{"", "pool", "global:x", "actor:nope", "galaxy:1"} {
		if _, err := ParseScope(bad); err == nil {
			t.Fatalf("scope %q accepted", bad)
		}
	}
	for _, bad := range []string{"", "join_pool", "all:x", "fly"} {
		if _, err := ParseAction(bad); err == nil {
			t.Fatalf("action %q accepted", bad)
		}
	}
}
