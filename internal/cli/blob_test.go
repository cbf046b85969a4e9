package cli

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/blob"
	"github.com/cowboy-foundation/cowboy/sdk"
)

const blobRecorder = `from cowboy_sdk import actor, blobs

@actor
class Recorder:
    def record(self, multihash, size, volume, path):
        blobs.commit(multihash, size, volume, path)
`

// An output over the inline cap, end to end with real relays: the
// producer stores it (cowboy blob put), an actor commits to its multihash
// on chain (cowboy_sdk.blobs.commit: a BlobCommitted event), a reader
// fetches it by the transaction and verifies it (cowboy blob get --tx);
// after the file at the blob's path is replaced, the same get is refused
// with BlobMismatch and writes nothing.
func TestBlobEndToEnd(t *testing.T) {
	h := newActorHarness(t)
	startRelays(t, sdk.New(h.url), 3)
	h.must("keys", "new", "alice", "--light-kdf")
	h.must("faucet", "alice", "--value", "10")
	h.must("volume", "create", "outs", "--k", "2", "--m", "1")

	data := make([]byte, 3*blob.InlineMax+17)
	rand.Read(data)
	file := filepath.Join(t.TempDir(), "out.bin")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var ref blob.Ref
	if err := json.Unmarshal([]byte(h.must("blob", "put", "outs", file, "--json")), &ref); err != nil {
		t.Fatal(err)
	}
	if err := ref.Multihash.Verify(data); err != nil || ref.Size != uint64(len(data)) {
		t.Fatalf("put: %+v %v", ref, err)
	}

	actor := deployed(t, h.must("actor", "deploy", "--code", writeFile(t, "rec.py", blobRecorder), "--salt", "rec"))
	payload, _ := json.Marshal([]any{ref.Multihash.Hex(), ref.Size, ref.Volume.String(), ref.Path})
	out := h.must("actor", "call", actor, "record", "--payload", string(payload))
	if !strings.Contains(out, blob.TopicBlobCommitted) {
		t.Fatalf("call shows no BlobCommitted event:\n%s", out)
	}
	var tx string // "  tx 0x…, block …"
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "tx" {
			tx = strings.TrimSuffix(f[1], ",")
		}
	}

	got := filepath.Join(t.TempDir(), "got.bin")
	h.must("blob", "get", "--tx", tx, got)
	if b, err := os.ReadFile(got); err != nil || !bytes.Equal(b, data) {
		t.Fatalf("fetched %d bytes: %v", len(b), err)
	}
	h.must("blob", "get", ref.Multihash.Hex(), "--volume", "outs", "--size", "196625", filepath.Join(t.TempDir(), "by-hash.bin"))

	// Tamper: replace the file at the blob's path with other content.
	bad := bytes.Clone(data)
	bad[1000] ^= 0xff
	h.must("volume", "put", "outs", writeFile(t, "bad.bin", string(bad)), ref.Path)
	refused := filepath.Join(t.TempDir(), "refused.bin")
	_, err := h.run("", "blob", "get", "--tx", tx, refused)
	if err == nil || !strings.Contains(err.Error(), "BlobMismatch") || !strings.Contains(err.Error(), "does not match its multihash") {
		t.Fatalf("tampered blob: %v", err)
	}
	if _, err := os.Stat(refused); !os.IsNotExist(err) {
		t.Fatalf("a refused blob was written: %v", err)
	}
}
