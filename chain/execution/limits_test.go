package execution_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/execution"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

const spammer = `from cowboy_sdk import actor, runtime

@actor
class Spammer:
    def __init__(self):
        self.storage["got"] = 0

    def fan(self, other, n):
        for i in range(n):
            runtime.send(other, "noop", [])

    def big(self, other, n, size):
        for i in range(n):
            runtime.send(other, "noop", ["x" * size])

    def noop(self, *args):
        self.storage["got"] += 1

    def got(self):
        return self.storage["got"]
`

// Spec 002 §3.3: a transaction may enqueue at most 1,024 messages, and a
// mailbox takes at most 1,000,000 payload bytes per transaction.
func TestFanoutAndMailboxCaps(t *testing.T) {
	alice, _ := genKey()
	c := newChain(t, alice)
	rs := c.ok(c.tx(alice, nil, deployIn(spammer, "a"), 0), c.tx(alice, nil, deployIn(spammer, "b"), 0))
	a, b := *rs[0].Created, *rs[1].Created
	rs = c.block(c.tx(alice, &a, &types.Call{Handler: "fan", Args: codec.MustMarshal([]any{b[:], 1025})}, 0))
	if rs[0].Status != types.ReceiptFailed || !strings.Contains(rs[0].Error, "fanout cap") {
		t.Fatalf("1,025 sends: %s", rs[0].Error)
	}
	// With the genesis defaults the 1,000,000-cell transaction maximum binds
	// before a 1,000,000-byte mailbox can fill, so test the mailbox check
	// with a smaller capacity.
	small, err := execution.New(execution.Config{ChainID: c.g.ChainID, Fees: c.g.Fees, VM: sharedEngine(t), Limits: execution.ActorLimits{MailboxBytes: 50_000}})
	if err != nil {
		t.Fatal(err)
	}
	c.ex = small
	rs = c.block(c.tx(alice, &a, &types.Call{Handler: "big", Args: codec.MustMarshal([]any{b[:], 3, 20_000})}, 0))
	if rs[0].Status != types.ReceiptFailed || !strings.Contains(rs[0].Error, "mailbox") {
		t.Fatalf("60 kB to a 50 kB mailbox: %s", rs[0].Error)
	}
	// Nothing of either failed transaction reached b.
	if got := c.query(b, "got", nil); got != uint64(0) {
		t.Fatalf("b received %v messages from failed transactions", got)
	}
}

// Seed 000 §3.4/§3.6: imports resolve transitively within the deployer's
// account, and at most MAX_LIBS_PER_ACTOR = 8 libraries may be pinned.
func TestLibraryTransitiveAndCap(t *testing.T) {
	alice, _ := genKey()
	c := newChain(t, alice)
	c.ok(c.tx(alice, nil, &types.PublishLibrary{Name: "base", Code: types.Bytes("K = 7\n")}, 0))
	c.ok(c.tx(alice, nil, &types.PublishLibrary{Name: "mid", Code: types.Bytes("import base\n\ndef k():\n    return base.K * 2\n")}, 0))
	user := "import mid\nfrom cowboy_sdk import actor\n\n@actor\nclass U:\n    def k(self):\n        return mid.k()\n"
	rs := c.ok(c.tx(alice, nil, deployIn(user, "u"), 0))
	u := *rs[0].Created
	if p := pins(t, c, u); len(p) != 2 || p["base"].IsZero() || p["mid"].IsZero() {
		t.Fatalf("transitive pins %v", p)
	}
	if got := c.query(u, "k", nil); got != uint64(14) {
		t.Fatalf("k() = %v", got)
	}
	var imports []string
	for i := 0; i < 9; i++ {
		name := fmt.Sprintf("lib%d", i)
		c.ok(c.tx(alice, nil, &types.PublishLibrary{Name: name, Code: types.Bytes("X = 1\n")}, 0))
		imports = append(imports, "import "+name)
	}
	many := strings.Join(imports, "\n") + "\nclass Actor:\n    pass\n"
	rs = c.block(c.tx(alice, nil, deployIn(many, "m"), 0))
	if rs[0].Status != types.ReceiptFailed || !strings.Contains(rs[0].Error, "MAX_LIBS_PER_ACTOR") {
		t.Fatalf("nine libraries: %+v", rs[0].Error)
	}
}
