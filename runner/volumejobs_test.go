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

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/relay/captoken"
	"github.com/cowboy-foundation/cowboy/relay/cbfs"
	"github.com/cowboy-foundation/cowboy/runner/executor"
	"github.com/cowboy-foundation/cowboy/runner/volumes"
	"github.com/cowboy-foundation/cowboy/runner/volumes/volumestest"
	"github.com/ethereum/go-ethereum/crypto"
)

// inputsExecutor answers with the input files it was given, as JSON.
type inputsExecutor struct{}

func (inputsExecutor) Type() job.JobType { return job.JobTypeHTTP }
func (inputsExecutor) Close() error      { return nil }
func (inputsExecutor) Execute(_ context.Context, req executor.Request) (executor.Result, error) {
	var parts []string
	for _, f := range req.Inputs {
		parts = append(parts, f.Path+"="+string(f.Content))
	}
	out := fmt.Sprintf(`{"price": %d, "inputs": %q}`, len(req.Inputs), strings.Join(parts, ";"))
	return executor.Result{Output: []byte(out), Usage: job.Usage{WallTimeMs: 1}}, nil
}

// volumeSetup starts three relays and creates, as a fresh owner, an input
// volume holding /data/a.txt ("alpha") and /data/b.txt ("bravo") and an
// empty output volume.
func volumeSetup(t *testing.T, ctx context.Context) (cbfs.MemDirectory, *cbfs.MemAnchor, *cbfs.Client, *cbfs.Volume, *cbfs.Volume) {
	t.Helper()
	dir := volumestest.Relays(t, 3)
	anchor := &cbfs.MemAnchor{}
	owner, _ := crypto.GenerateKey()
	oc := volumestest.Client(t, owner, dir, anchor)
	in, err := oc.CreateVolume(ctx, volumestest.Options)
	if err != nil {
		t.Fatal(err)
	}
	out, err := oc.CreateVolume(ctx, volumestest.Options)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/data/a.txt", "/data/b.txt"} {
		c := map[string]string{"/data/a.txt": "alpha", "/data/b.txt": "bravo"}[p]
		if _, err := in.Put(ctx, p, strings.NewReader(c)); err != nil {
			t.Fatal(err)
		}
	}
	return dir, anchor, oc, in, out
}

// TestVolumeJobCommittee: three daemons run a job that reads an input
// volume through their own read-only tokens; they agree on the result, and
// only the aggregator writes it to the output volume, whose anchored root
// is the one the aggregator records.
func TestVolumeJobCommittee(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	n := newTestNet(t)
	dir, anchor, oc, in, out := volumeSetup(t, ctx)

	spec := httpSpec(3)
	var rs []*testRunner
	for range 3 {
		key, _ := crypto.GenerateKey()
		_, ed, _ := ed25519.GenerateKey(rand.Reader)
		acc := volumes.New(volumestest.Client(t, key, dir, anchor), key, true)
		rs = append(rs, &testRunner{key: key, ed: ed, dir: t.TempDir(), real: inputsExecutor{},
			opts: func(o *Options) { o.Volumes = acc }})
		grant := func(v *cbfs.Volume, p captoken.Perm, prefix string) []byte {
			tok, err := v.Grant(ctx, cbfs.GrantOptions{Grantee: &key.PublicKey, Perms: p, Prefix: prefix, TTL: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			return tok.Encode()
		}
		spec.Volumes = append(spec.Volumes,
			job.VolumeRef{Access: job.VolumeInput, Volume: types.Hash(in.ID()), Path: "/data", Token: grant(in, captoken.PermRead|captoken.PermList, "/data")},
			job.VolumeRef{Access: job.VolumeOutput, Volume: types.Hash(out.ID()), Path: "/jobs/j1", Token: grant(out, captoken.PermAll, "")})
	}
	for _, r := range rs {
		n.fund(t, types.PubkeyToAddress(r.key.PublicKey), "100")
		r.start(t, n)
	}
	id := n.submit(t, spec)
	j := n.waitJob(t, id, 60*time.Second, finished)
	want := `{"price": 2, "inputs": "/data/a.txt=alpha;/data/b.txt=bravo"}`
	if j.Status != job.StateFinalized || string(j.Result) != want || len(j.Agreed) != 3 {
		t.Fatalf("job: %+v", j)
	}

	var wrote []*JobRecord
	for _, r := range rs {
		rec := waitState(t, r, id, 60*time.Second, StateDone)
		if rec.Output != nil {
			if rec.Aggregator != r.d.Address() {
				t.Fatalf("runner %s wrote the output but is not the aggregator", r.d.Address())
			}
			wrote = append(wrote, rec)
		}
	}
	if len(wrote) != 1 {
		t.Fatalf("%d runners wrote the output volume, want exactly the aggregator", len(wrote))
	}
	c := wrote[0].Output
	files := []volumes.File{{Path: "/jobs/j1/" + OutputFileName, Content: j.Result}}
	if c.ContentHash != volumes.ContentHash(files) {
		t.Fatal("the written content hash is not the hash of the agreed result")
	}
	root, ver, err := anchor.LatestManifest(ctx, out.ID())
	if err != nil || types.Hash(root) != c.Root || ver != c.Version {
		t.Fatalf("anchored %x v%d, aggregator committed %x v%d: %v", root[:6], ver, c.Root[:6], c.Version, err)
	}
	ov, err := oc.OpenVolume(ctx, out.ID())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := ov.Get(ctx, "/jobs/j1/"+OutputFileName, &buf); err != nil || buf.String() != want {
		t.Fatalf("output file %q: %v", buf.String(), err)
	}
	if list, err := ov.List(ctx, "/"); err != nil || len(list) != 1 {
		t.Fatalf("output volume holds %d files: %v", len(list), err)
	}
}

// TestVolumeJobRefused: an input token granted to another key is the job's
// fault: the runner commits an actor-fault report and writes nothing.
func TestVolumeJobRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	n := newTestNet(t)
	dir, anchor, _, in, out := volumeSetup(t, ctx)
	before, _, err := anchor.LatestManifest(ctx, out.ID())
	if err != nil {
		t.Fatal(err)
	}
	key, _ := crypto.GenerateKey()
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	acc := volumes.New(volumestest.Client(t, key, dir, anchor), key, true)
	r := &testRunner{key: key, ed: ed, dir: t.TempDir(), real: inputsExecutor{}, opts: func(o *Options) { o.Volumes = acc }}
	stranger, _ := crypto.GenerateKey()
	foreign, err := in.Grant(ctx, cbfs.GrantOptions{Grantee: &stranger.PublicKey, Perms: captoken.PermRead | captoken.PermList, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	own, err := out.Grant(ctx, cbfs.GrantOptions{Grantee: &key.PublicKey, Perms: captoken.PermAll, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	spec := httpSpec(1)
	spec.Verification = job.VerificationConfig{Mode: job.ModeNone, Runners: 1}
	spec.Volumes = []job.VolumeRef{
		{Access: job.VolumeInput, Volume: types.Hash(in.ID()), Path: "/data", Token: foreign.Encode()},
		{Access: job.VolumeOutput, Volume: types.Hash(out.ID()), Path: "/jobs/j1", Token: own.Encode()},
	}
	n.fund(t, types.PubkeyToAddress(key.PublicKey), "100")
	r.start(t, n)
	id := n.submit(t, spec)
	j := n.waitJob(t, id, 60*time.Second, finished)
	if j.Status != job.StateFailed || len(j.Reveals) != 1 || j.Reveals[0].Report == nil || j.Reveals[0].Report.Fault != "actor_fault" {
		t.Fatalf("job: %+v", j)
	}
	rec := waitState(t, r, id, 60*time.Second, StateDone)
	if rec.Output != nil || !strings.Contains(rec.ExecError, volumes.ErrTokenNotHolder.Error()) {
		t.Fatalf("record: output %+v, error %q", rec.Output, rec.ExecError)
	}
	after, _, err := anchor.LatestManifest(ctx, out.ID())
	if err != nil || after != before {
		t.Fatalf("the output volume changed: %v", err)
	}
}
