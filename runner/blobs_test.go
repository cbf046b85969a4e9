package runner

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/blob"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/relay/captoken"
	"github.com/cowboy-foundation/cowboy/relay/cbfs"
	"github.com/cowboy-foundation/cowboy/runner/executor"
	"github.com/cowboy-foundation/cowboy/runner/volumes"
	"github.com/cowboy-foundation/cowboy/runner/volumes/volumestest"
	"github.com/ethereum/go-ethereum/crypto"
)

// bigExecutor answers with a deterministic JSON document of more than 64 KiB.
type bigExecutor struct{}

func (bigExecutor) Type() job.JobType { return job.JobTypeHTTP }
func (bigExecutor) Close() error      { return nil }
func (bigExecutor) Execute(context.Context, executor.Request) (executor.Result, error) {
	return executor.Result{Output: bigOutput(), Usage: job.Usage{WallTimeMs: 1}}, nil
}

func bigOutput() []byte {
	return []byte(fmt.Sprintf(`{"price": 7, "rows": %q}`, strings.Repeat("row,", 30_000)))
}

// A job output over the inline cap takes the blob path: the committee
// agrees on a reference ({"blob": {multihash, size, volume, path}}), the
// aggregator stores the full output in the job's output volume at that
// path, and the content fetched from there verifies against the agreed
// multihash. (Before the blob path the executor refused the output as
// over max_return_bytes.)
func TestVolumeJobBlobResult(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	n := newTestNet(t)
	dir := volumestest.Relays(t, 3)
	anchor := &cbfs.MemAnchor{}
	owner, _ := crypto.GenerateKey()
	oc := volumestest.Client(t, owner, dir, anchor)
	out, err := oc.CreateVolume(ctx, volumestest.Options)
	if err != nil {
		t.Fatal(err)
	}

	spec := httpSpec(3)
	spec.Verification.VoteField = "/blob/multihash"
	var rs []*testRunner
	for range 3 {
		key, _ := crypto.GenerateKey()
		_, ed, _ := ed25519.GenerateKey(rand.Reader)
		acc := volumes.New(volumestest.Client(t, key, dir, anchor), key, true)
		rs = append(rs, &testRunner{key: key, ed: ed, dir: t.TempDir(), real: bigExecutor{},
			opts: func(o *Options) { o.Volumes = acc }})
		tok, err := out.Grant(ctx, cbfs.GrantOptions{Grantee: &key.PublicKey, Perms: captoken.PermAll, TTL: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		spec.Volumes = append(spec.Volumes, job.VolumeRef{Access: job.VolumeOutput, Volume: types.Hash(out.ID()), Path: "/jobs/big", Token: tok.Encode()})
	}
	for _, r := range rs {
		n.fund(t, types.PubkeyToAddress(r.key.PublicKey), "100")
		r.start(t, n)
	}
	id := n.submit(t, spec)
	j := n.waitJob(t, id, 60*time.Second, finished)
	if j.Status != job.StateFinalized || len(j.Agreed) != 3 {
		t.Fatalf("job: %+v", j)
	}
	ref, ok := ParseBlobResult(j.Result)
	if !ok || len(j.Result) > int(spec.ResultSchema.MaxReturnBytes) {
		t.Fatalf("result is not a blob reference: %s", j.Result)
	}
	want := bigOutput()
	if ref.Size != uint64(len(want)) || ref.Volume != types.Hash(out.ID()) || ref.Path != "/jobs/big/"+OutputFileName || ref.Multihash.Verify(want) != nil {
		t.Fatalf("reference %+v", ref)
	}
	for _, r := range rs {
		waitState(t, r, id, 60*time.Second, StateDone)
	}
	ov, err := oc.OpenVolume(ctx, out.ID())
	if err != nil {
		t.Fatal(err)
	}
	got, err := ov.GetBlob(ctx, ref)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("blob from the output volume: %d bytes, %v", len(got), err)
	}
	if _, err := blob.Parse(ref.Multihash); err != nil {
		t.Fatal(err)
	}
}
