package cli

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/sdk"
)

// TestTimerCommands runs examples/timers end to end on a devnet node: a
// heartbeat bid for by a GBA beats on its own; timer list/show/stats and
// tx show on a timer receipt.
func TestTimerCommands(t *testing.T) {
	h := newActorHarness(t)
	h.must("keys", "new", "alice", "--light-kdf")
	h.must("faucet", "alice", "--value", "10")
	gbaSrc, err := os.ReadFile("../../examples/timers/gba.py")
	if err != nil {
		t.Fatal(err)
	}
	hbSrc, err := os.ReadFile("../../examples/timers/heartbeat.py")
	if err != nil {
		t.Fatal(err)
	}
	gba := deployed(t, h.must("actor", "deploy", "--code", writeFile(t, "gba.py", string(gbaSrc)), "--salt", "g"))
	hb := deployed(t, h.must("actor", "deploy", "--code", writeFile(t, "hb.py", string(hbSrc)), "--salt", "h",
		"--manifest", "../../examples/timers/heartbeat.manifest.json", "--value", "1", "--init-payload", `{"every": 2, "gba": "`+gba+`"}`))
	h.must("actor", "call", hb, "start")
	out := h.must("timer", "list", hb)
	if !strings.Contains(out, "beat at") || !strings.Contains(out, "once") {
		t.Fatalf("timer list: %s", out)
	}
	c := sdk.New(h.url)
	ctx := context.Background()
	owner, _ := types.ParseAddress(hb)
	var timerRcpt types.Hash
	deadline := time.Now().Add(20 * time.Second)
	for timerRcpt == (types.Hash{}) {
		if time.Now().After(deadline) {
			t.Fatal("no timer receipt within 20 s")
		}
		time.Sleep(50 * time.Millisecond)
		st, err := c.Chain().Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		b, err := c.Chain().Block(ctx, itoa(st.Height), false)
		if err != nil {
			t.Fatal(err)
		}
		if len(b.TimerReceipts) > 0 {
			timerRcpt = b.TimerReceipts[0]
		}
	}
	var rcptHeight uint64
	if r, err := c.Chain().Tx(ctx, timerRcpt); err != nil || r.BlockHeight == nil {
		t.Fatalf("tx %s: %v", timerRcpt, err)
	} else {
		rcptHeight = *r.BlockHeight
	}
	if out := h.must("block", "show", itoa(rcptHeight)); !strings.Contains(out, "timer receipts 1") || !strings.Contains(out, timerRcpt.String()+" success") {
		t.Fatalf("block show: %s", out)
	}
	out = h.must("tx", "show", timerRcpt.String())
	if !strings.Contains(out, "Timer receipt") || !strings.Contains(out, "result     success") || !strings.Contains(out, "TimerFired") || !strings.Contains(out, "Heartbeat") {
		t.Fatalf("tx show (timer): %s", out)
	}
	var r apitypes.TxResult
	if err := json.Unmarshal([]byte(h.must("tx", "show", timerRcpt.String(), "--json")), &r); err != nil || r.Kind != apitypes.ReceiptKindTimer || r.Receipt == nil || r.Receipt.Tip == "0" {
		t.Fatalf("tx show --json (the GBA's bid pays a tip): %+v %v", r, err)
	}
	l, err := c.Timers().List(ctx, owner)
	if err != nil || len(l.Timers) != 1 || l.Timers[0].GBA == nil || l.Timers[0].GBA.String() != gba {
		t.Fatalf("timers of %s: %+v %v", hb, l, err)
	}
	id := l.Timers[0].ID.String()
	if out := h.must("timer", "show", id); !strings.Contains(out, "handler    beat") || !strings.Contains(out, gba) {
		// the beat may have fired and been replaced meanwhile
		if _, err := h.run("", "timer", "show", id); err == nil {
			t.Fatalf("timer show: %s", out)
		}
	}
	if out := h.must("timer", "stats"); !strings.Contains(out, "Lane budget") {
		t.Fatalf("timer stats: %s", out)
	}
	if out := h.must("actor", "query", hb, "status"); strings.Contains(out, `"beats":0`) || strings.Contains(out, `"beats": 0`) {
		t.Fatalf("status: %s", out)
	}
	h.must("actor", "call", hb, "stop")
	if out := h.must("timer", "list", hb); !strings.Contains(out, ": 0") {
		t.Fatalf("timer list after stop: %s", out)
	}
	if _, err := h.run("", "timer", "show", "0x"+strings.Repeat("00", 32)); err == nil {
		t.Fatal("unknown timer shown")
	}
}
