package execution_test

import (
	"strings"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/blob"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/fees"
	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

const blobActor = `from cowboy_sdk import actor, blobs, HostError

@actor
class Out:
    def commit(self, mh, size, vol, path):
        blobs.commit(mh, size, vol, path)

    def try_commit(self, mh, size):
        try:
            blobs.commit(mh, size)
            return ""
        except HostError as e:
            return str(e)

    def get(self, mh):
        return blobs.get(mh)
`

// host: blob commit is 40 cycles per started KiB (spec 002 §3.5): two
// commits that run the same Python differ by exactly the KiB difference;
// the record is stored, readable through blobs.get, and announced by a
// BlobCommitted event; a malformed or unsupported multihash is a HostError
// that names its code and stores nothing.
func TestBlobCommit(t *testing.T) {
	alice, _ := genKey()
	c := newChain(t, alice)
	rs := c.ok(c.txValue(alice, nil, &types.Deploy{Code: types.Bytes(blobActor), Salt: types.Bytes("blob")}, genesis.CBY(1)))
	out := *rs[0].Created
	vol := types.Hash{7}
	commit := func(data string, size uint64) (*types.Receipt, uint64) {
		t.Helper()
		mh, _ := blob.Sum(blob.SHA2_256, []byte(data))
		in := &types.Call{Handler: "commit", Args: cborArgs([]any{[]byte(mh), size, vol[:], "/.blobs/x"})}
		tx := c.tx(alice, &out, in, 0)
		r := c.ok(tx)[0]
		ic, _ := fees.Intrinsic(tx, in)
		return r, r.CyclesUsed - ic
	}
	// Sizes whose CBOR encodings have the same length (5 bytes), so the
	// calldata is the same size.
	_, small := commit("a", 70_000)  // 69 KiB (68.36 started: 69)
	r, large := commit("b", 900_000) // 879 KiB (878.9: 879)
	if want := uint64(40 * (879 - 69)); large-small != want {
		t.Fatalf("cycles: %d for 879 KiB, %d for 69 KiB: difference %d, want %d", large, small, large-small, want)
	}
	if len(r.Events) != 1 || r.Events[0].Topic != blob.TopicBlobCommitted || r.Events[0].Emitter != out {
		t.Fatalf("events: %+v", r.Events)
	}
	var ev blob.CommittedEvent
	if err := codec.Unmarshal(r.Events[0].Data, &ev); err != nil || ev.Size != 900_000 || ev.Volume != vol || ev.Path != "/.blobs/x" {
		t.Fatalf("event %+v: %v", ev, err)
	}
	mh, _ := blob.Sum(blob.SHA2_256, []byte("b"))
	if !strings.EqualFold(blob.Multihash(ev.Multihash).Hex(), mh.Hex()) {
		t.Fatalf("event multihash %x", ev.Multihash)
	}
	got, _ := c.query(out, "get", []any{[]byte(mh)}).(map[any]any)
	if got == nil || got["size"] != uint64(900_000) || got["path"] != "/.blobs/x" {
		t.Fatalf("blobs.get: %v", got)
	}
	c.st.View(func(v *store.View) error {
		rec, err := blob.Read(v, out, mh)
		if err != nil || rec == nil || rec.Size != 900_000 || rec.Actor != out {
			t.Fatalf("record %+v: %v", rec, err)
		}
		return nil
	})

	try := func(mh []byte, size uint64) string {
		t.Helper()
		r := c.ok(c.tx(alice, &out, &types.Call{Handler: "try_commit", Args: cborArgs([]any{mh, size})}, 0))[0]
		var s string
		if err := codec.Unmarshal(r.Return, &s); err != nil {
			t.Fatal(err)
		}
		if len(r.Events) != 0 {
			t.Fatalf("a refused commit emitted %+v", r.Events)
		}
		return s
	}
	bad := blob.New(0xb240, make([]byte, 64)) // blake2b-512: not supported
	for name, tc := range map[string]struct {
		mh   []byte
		want string
	}{
		"truncated":   {mh[:10], "blob_commit: BlobMalformed: blob: malformed multihash"},
		"unsupported": {bad, "blob_commit: BlobMalformed: blob: unsupported multihash function"},
	} {
		if s := try(tc.mh, 5); !strings.HasPrefix(s, tc.want) {
			t.Errorf("%s: %q, want %q", name, s, tc.want)
		}
	}
	c.st.View(func(v *store.View) error {
		if rec, err := blob.Read(v, out, bad); rec != nil || err != nil {
			t.Fatalf("a refused commit stored %+v (%v)", rec, err)
		}
		return nil
	})
}

const bigReturnActor = `from cowboy_sdk import actor

@actor
class Big:
    def out(self, n):
        return b"x" * n
`

// The inline cap (spec 002 §7.1): a call's return value of more than
// 64 KiB fails the transaction with BlobTooLarge; 64 KiB is returned; a
// read-only query is not an on-chain output and is not capped here.
func TestInlineReturnCap(t *testing.T) {
	alice, _ := genKey()
	c := newChain(t, alice)
	rs := c.ok(c.txValue(alice, nil, &types.Deploy{Code: types.Bytes(bigReturnActor), Salt: types.Bytes("big")}, genesis.CBY(1)))
	big := *rs[0].Created
	// The return value is CBOR: a byte string of 256..65,535 bytes has a 3-byte header.
	r := c.ok(c.tx(alice, &big, &types.Call{Handler: "out", Args: cborArgs([]any{blob.InlineMax - 3})}, 0))[0]
	if len(r.Return) != blob.InlineMax {
		t.Fatalf("return %d bytes", len(r.Return))
	}
	r = c.block(c.tx(alice, &big, &types.Call{Handler: "out", Args: cborArgs([]any{blob.InlineMax - 2})}, 0))[0]
	if r.Status == types.ReceiptSuccess || system.Code(r.Code) != system.CodeBlobTooLarge || !strings.Contains(r.Error, "inline cap is 65536") {
		t.Fatalf("over the cap: status %d code %d %q", r.Status, r.Code, r.Error)
	}
	if v, _ := c.query(big, "out", []any{blob.InlineMax}).([]byte); len(v) != blob.InlineMax {
		t.Fatalf("query: %d bytes", len(v))
	}
}
