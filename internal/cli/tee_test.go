package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestTEEAndSecretCommands: a runner registers with --tee, attests with the
// SIMULATION backend, the owner stores a secret bound to the simulated
// measurement and grants it; tee status, tee policy and secret list show
// it, and the runner's seal key opens it.
func TestTEEAndSecretCommands(t *testing.T) {
	h := newHarness(t)
	h.must("keys", "new", "owner", "--light-kdf")
	h.must("faucet", "owner", "--value", "10")
	h.must("keys", "new", "r1", "--light-kdf")
	h.must("faucet", "r1", "--value", "100")
	seed := sha256.Sum256([]byte("tee runner"))
	keyFile := writeFile(t, "r1.ed25519", hex.EncodeToString(seed[:]))
	h.must("runner", "register", "--from", "r1", "--result-key-file", keyFile, "--tee", "--stake", "20")
	dir := t.TempDir()
	simKey, sealKey := filepath.Join(dir, "sim.key"), filepath.Join(dir, "seal.key")

	if out := h.must("tee", "status", "r1"); !strings.Contains(out, "never attested") {
		t.Fatalf("status before: %s", out)
	}
	if out := h.must("tee", "policy"); !strings.Contains(out, "SIMULATION true") {
		t.Fatalf("policy: %s", out)
	}
	if out := h.must("tee", "attest", "--from", "r1", "--simulation-key-file", simKey, "--result-key-file", keyFile, "--seal-key-file", sealKey); !strings.Contains(out, "success") {
		t.Fatalf("attest: %s", out)
	}
	out := h.must("tee", "status", "r1")
	if !strings.Contains(out, "in force") || !strings.Contains(out, "SIMULATION") || strings.Contains(out, "NOT in force") {
		t.Fatalf("status: %s", out)
	}
	// The attested unique id, read back as JSON, pins the secret's policy.
	var st struct {
		UniqueID string `json:"unique_id"`
		Runner   string `json:"runner"`
	}
	if err := json.Unmarshal([]byte(h.must("tee", "status", "r1", "--json")), &st); err != nil || st.UniqueID == "" {
		t.Fatalf("status json: %v %+v", err, st)
	}

	if _, err := h.run("", "secret", "put", "llm", "--from", "owner", "--value", "sk-1"); err == nil || !strings.Contains(err.Error(), "must pin") {
		t.Fatalf("put without a policy: %v", err)
	}
	if out := h.must("secret", "put", "llm", "--from", "owner", "--value", "sk-1", "--unique-id", st.UniqueID, "--allow-simulation"); !strings.Contains(out, "success") {
		t.Fatalf("put: %s", out)
	}
	if out := h.must("secret", "grant", "llm", "r1", "--from", "owner"); !strings.Contains(out, "success") {
		t.Fatalf("grant: %s", out)
	}
	if out := h.must("secret", "list", "owner"); !strings.Contains(out, "llm") || !strings.Contains(out, "v1  1 grants") || !strings.Contains(out, "SIMULATION allowed") {
		t.Fatalf("list: %s", out)
	}
	if out := h.must("secret", "show", "owner", "llm"); !strings.Contains(out, "version 1") || !strings.Contains(out, "Grant ") || strings.Contains(out, "sk-1") {
		t.Fatalf("show: %s", out)
	}
	if out := h.must("secret", "revoke", "llm", "r1", "--from", "owner"); !strings.Contains(out, "success") {
		t.Fatalf("revoke: %s", out)
	}
	if out := h.must("secret", "rm", "llm", "--from", "owner"); !strings.Contains(out, "success") {
		t.Fatalf("rm: %s", out)
	}
	if out := h.must("secret", "list", "owner"); !strings.Contains(out, "no secrets") {
		t.Fatalf("list after rm: %s", out)
	}
}
