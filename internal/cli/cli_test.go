package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/node/nodetest"
)

type harness struct {
	t    *testing.T
	url  string
	home string
}

func newHarness(t *testing.T) *harness {
	d := nodetest.New(t)
	srv := d.Serve(t, 20*time.Millisecond)
	t.Setenv("COWBOY_PASSWORD", "pw")
	return &harness{t: t, url: srv.URL, home: t.TempDir()}
}

func (h *harness) run(stdin string, args ...string) (string, error) {
	f := NewFactory()
	var out, errOut bytes.Buffer
	f.In, f.Out, f.ErrOut = strings.NewReader(stdin), &out, &errOut
	root := NewRoot(f)
	root.SetArgs(append([]string{"--node", h.url, "--home", h.home}, args...))
	err := root.Execute()
	return out.String(), err
}

func (h *harness) must(args ...string) string {
	h.t.Helper()
	out, err := h.run("", args...)
	if err != nil {
		h.t.Fatalf("cowboy %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func TestKeysLifecycle(t *testing.T) {
	h := newHarness(t)
	h.must("keys", "new", "a", "--light-kdf")
	out := h.must("keys", "list", "--json")
	var list []map[string]string
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 1 || list[0]["name"] != "a" {
		t.Fatalf("list: %s", out)
	}
	hexKey := strings.TrimSpace(h.must("keys", "export", "a"))
	if _, err := h.run(hexKey+"\n", "keys", "import", "b", "--light-kdf"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.must("keys", "show", "b"), list[0]["address"]) {
		t.Fatal("imported key has a different address")
	}
	if _, err := h.run("", "keys", "new", "a", "--light-kdf"); err == nil {
		t.Fatal("duplicate key name accepted")
	}
	if _, err := h.run("", "keys", "new", "../evil"); err == nil {
		t.Fatal("path-like key name accepted")
	}
	t.Setenv("COWBOY_PASSWORD", "wrong")
	if _, err := h.run("", "keys", "export", "a"); err == nil || !strings.Contains(err.Error(), "wrong password") {
		t.Fatalf("wrong password: %v", err)
	}
}

func TestTransferFlow(t *testing.T) {
	h := newHarness(t)
	h.must("keys", "new", "alice", "--light-kdf")
	h.must("keys", "new", "bob", "--light-kdf")
	if out := h.must("faucet", "alice", "--value", "5"); !strings.Contains(out, "result     success") {
		t.Fatalf("faucet: %s", out)
	}
	out := h.must("tx", "transfer", "--from", "alice", "--to", "bob", "--value", "1.5", "--json")
	var r apitypes.TxResult
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.Receipt.Status != "success" {
		t.Fatalf("transfer: %s", out)
	}
	if !strings.Contains(h.must("account", "show", "bob"), "1.5 CBY") {
		t.Fatal("bob's balance")
	}
	if !strings.Contains(h.must("tx", "show", r.Tx.Hash.String()), "result     success") {
		t.Fatal("tx show")
	}
	if !strings.Contains(h.must("block", "show", itoa(*r.BlockHeight)), r.Tx.Hash.String()) {
		t.Fatal("block show lacks the transaction")
	}
	var st apitypes.Status
	if err := json.Unmarshal([]byte(h.must("status", "--json")), &st); err != nil || st.Height == 0 || st.Burned == "0" {
		t.Fatalf("status: %+v %v", st, err)
	}
	// --from is required once there are two keys.
	if _, err := h.run("", "tx", "transfer", "--to", "bob", "--value", "1"); err == nil || !strings.Contains(err.Error(), "--from") {
		t.Fatalf("missing --from: %v", err)
	}
	// Bad amounts and addresses are refused before anything is sent.
	if _, err := h.run("", "tx", "transfer", "--from", "alice", "--to", "0x12", "--value", "1"); err == nil {
		t.Fatal("short address accepted")
	}
	if _, err := h.run("", "tx", "transfer", "--from", "alice", "--to", "bob", "--value", "1.2.3"); err == nil {
		t.Fatal("bad amount accepted")
	}
	if _, err := h.run("", "tx", "transfer", "--from", "alice", "--to", "bob", "--value", "999999"); err == nil || !strings.Contains(err.Error(), "insufficient_balance") {
		t.Fatalf("overspend: %v", err)
	}
}

func itoa(n uint64) string { b, _ := json.Marshal(n); return string(b) }

func TestTxEncodeVectors(t *testing.T) {
	h := &harness{t: t, url: "http://127.0.0.1:1", home: t.TempDir()}
	v1 := `{"chain_id":1,"nonce":0,"to":"0x1111111111111111111111111111111111111111","value":1,"cycles_limit":21000,"cells_limit":0,"max_fee_per_cycle":10,"max_fee_per_cell":2,"tip_per_cycle":1,"tip_per_cell":0,"access_list":null,"payload":"0x","signature":null}`
	file := filepath.Join(t.TempDir(), "v1.json")
	os.WriteFile(file, []byte(v1), 0o644)
	out := h.must("tx", "encode", "--json", file)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || lines[0] != "8d010054111111111111111111111111111111111111111101195208000a020100f640f6" || !strings.HasPrefix(lines[1], "0x") {
		t.Fatalf("vector 1: %q", out)
	}
	v2 := strings.Replace(v1, `"signature":null`, `"signature":[0,"0x`+strings.Repeat("01", 32)+`","0x`+strings.Repeat("02", 32)+`"]`, 1)
	out2, err := h.run(v2, "tx", "encode", "--json", "-")
	if err != nil {
		t.Fatal(err)
	}
	l2 := strings.Split(strings.TrimSpace(out2), "\n")
	if l2[1] != lines[1] || !strings.HasSuffix(l2[0], "83005820"+strings.Repeat("01", 32)+"5820"+strings.Repeat("02", 32)) {
		t.Fatalf("vector 2: %q", out2)
	}
	for _, bad := range []string{`{`, `{"chain_id":1}`, strings.Replace(v1, `"nonce":0`, `"nonce":-1`, 1),
		strings.Replace(v1, `"value":1`, `"value":1.5`, 1), strings.Replace(v1, `}`, `,"extra":1}`, 1),
		strings.Replace(v1, `"payload":"0x"`, `"payload":"zz"`, 1)} {
		if _, err := h.run(bad, "tx", "encode", "--json", "-"); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}
