package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestCowboyDoesNotLinkTheNode: the client binary must not carry the node,
// the executor or the chain store (testnet setup runs in cowboyd).
func TestCowboyDoesNotLinkTheNode(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps printed %d packages", len(deps))
	}
	for _, p := range deps {
		for _, bad := range []string{"chain/node", "chain/execution", "chain/store"} {
			if p == "github.com/cowboy-foundation/cowboy/"+bad || strings.HasPrefix(p, "github.com/cowboy-foundation/cowboy/"+bad+"/") {
				t.Errorf("cowboy links %s", p)
			}
		}
	}
}
