package volumes_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"errors"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/relay/captoken"
	"github.com/cowboy-foundation/cowboy/relay/cbfs"
	"github.com/cowboy-foundation/cowboy/runner/executor"
	"github.com/cowboy-foundation/cowboy/runner/volumes"
	"github.com/cowboy-foundation/cowboy/runner/volumes/volumestest"
	"github.com/ethereum/go-ethereum/crypto"
)

type fixture struct {
	owner, runner *ecdsa.PrivateKey
	anchor        *cbfs.MemAnchor
	in, out       *cbfs.Volume
	access        *volumes.Access
	ownerClient   *cbfs.Client
	runnerClient  *cbfs.Client
}

func setup(t *testing.T, ctx context.Context) *fixture {
	t.Helper()
	dir := volumestest.Relays(t, 3)
	f := &fixture{anchor: &cbfs.MemAnchor{}}
	f.owner, _ = crypto.GenerateKey()
	f.runner, _ = crypto.GenerateKey()
	f.ownerClient = volumestest.Client(t, f.owner, dir, f.anchor)
	var err error
	opts := volumestest.Options
	if f.in, err = f.ownerClient.CreateVolume(ctx, opts); err != nil {
		t.Fatal(err)
	}
	if f.out, err = f.ownerClient.CreateVolume(ctx, opts); err != nil {
		t.Fatal(err)
	}
	for p, c := range map[string]string{"/data/a.txt": "alpha", "/data/b.txt": "bravo", "/other/secret": "no"} {
		if _, err := f.in.Put(ctx, p, bytes.NewReader([]byte(c))); err != nil {
			t.Fatal(err)
		}
	}
	f.runnerClient = volumestest.Client(t, f.runner, dir, f.anchor)
	f.access = volumes.New(f.runnerClient, f.runner, true)
	return f
}

func (f *fixture) grant(t *testing.T, ctx context.Context, v *cbfs.Volume, perms, prefix string) []byte {
	t.Helper()
	p, err := captoken.ParsePerm(perms)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := v.Grant(ctx, cbfs.GrantOptions{Grantee: &f.runner.PublicKey, Perms: p, Prefix: prefix, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return tok.Encode()
}

func (f *fixture) spec(in, out []byte) *job.JobSpec {
	return &job.JobSpec{Volumes: []job.VolumeRef{
		{Access: job.VolumeInput, Volume: types.Hash(f.in.ID()), Path: "/data", Token: in},
		{Access: job.VolumeOutput, Volume: types.Hash(f.out.ID()), Path: "/jobs/j1", Token: out},
	}}
}

// A job reads its input volume through a read-only token and writes its
// output under the output path; the commitment's root is the root the
// volume anchors, and its content hash is what members compute without
// writing.
func TestReadInputsWriteOutputs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	f := setup(t, ctx)
	spec := f.spec(f.grant(t, ctx, f.in, "rl", "/data"), f.grant(t, ctx, f.out, "rwl", ""))

	// A committee spec names each volume once per runner token: the
	// runner uses its own and ignores the others.
	other, _ := crypto.GenerateKey()
	for _, ref := range spec.Volumes[:2] {
		v := f.in
		if ref.Access == job.VolumeOutput {
			v = f.out
		}
		tok, err := v.Grant(ctx, cbfs.GrantOptions{Grantee: &other.PublicKey, Perms: captoken.PermRead | captoken.PermList, TTL: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		ref.Token = tok.Encode()
		spec.Volumes = append([]job.VolumeRef{ref}, spec.Volumes...)
	}
	if err := f.access.Check(ctx, spec); err != nil {
		t.Fatal(err)
	}

	files, n, err := f.access.ReadInputs(ctx, spec, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0].Path != "/data/a.txt" || string(files[1].Content) != "bravo" || n != 10 {
		t.Fatalf("read %d bytes: %+v", n, files)
	}

	outs := []volumes.File{{Path: "/jobs/j1/result.txt", Content: []byte("alpha+bravo")}}
	c, err := f.access.WriteOutputs(ctx, spec, outs)
	if err != nil {
		t.Fatal(err)
	}
	if c.ContentHash != volumes.ContentHash(outs) || c.Volume != types.Hash(f.out.ID()) {
		t.Fatalf("commitment %+v", c)
	}
	root, ver, err := f.anchor.LatestManifest(ctx, f.out.ID())
	if err != nil {
		t.Fatal(err)
	}
	if types.Hash(root) != c.Root || ver != c.Version || c.Root == (types.Hash{}) {
		t.Fatalf("committed root %x v%d, anchored %x v%d", c.Root[:6], c.Version, root[:6], ver)
	}
	// The owner reads back what the runner wrote.
	out, err := f.ownerClient.OpenVolume(ctx, f.out.ID())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := out.Get(ctx, "/jobs/j1/result.txt", &buf); err != nil || buf.String() != "alpha+bravo" {
		t.Fatalf("read back %q: %v", buf.String(), err)
	}
	if out.Root() != root {
		t.Fatal("owner sees another root than the anchored one")
	}

	// Without anchoring (on chain only the owner anchors), the commitment
	// names the head the owner's next checkpoint anchors.
	unanchored := volumes.New(f.runnerClient, f.runner, false)
	outs = []volumes.File{{Path: "/jobs/j1/result.txt", Content: []byte("second")}}
	c2, err := unanchored.WriteOutputs(ctx, spec, outs)
	if err != nil {
		t.Fatal(err)
	}
	if r, _, _ := f.anchor.LatestManifest(ctx, f.out.ID()); r != root {
		t.Fatal("an unanchoring Access anchored")
	}
	out2, err := f.ownerClient.OpenVolume(ctx, f.out.ID())
	if err != nil {
		t.Fatal(err)
	}
	if err := out2.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	root2, ver2, err := f.anchor.LatestManifest(ctx, f.out.ID())
	if err != nil || types.Hash(root2) != c2.Root || ver2 != c2.Version || c2.Version <= c.Version {
		t.Fatalf("owner anchored %x v%d, commitment %x v%d: %v", root2[:6], ver2, c2.Root[:6], c2.Version, err)
	}
}

// Bad volumes are refused with their code before anything is written.
func TestRefusals(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	f := setup(t, ctx)
	readOnly := f.grant(t, ctx, f.in, "rl", "/data")
	writeOut := f.grant(t, ctx, f.out, "rwl", "")
	other, _ := crypto.GenerateKey()
	foreign, err := f.in.Grant(ctx, cbfs.GrantOptions{Grantee: &other.PublicKey, Perms: captoken.PermRead | captoken.PermList, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	// A volume that lives on other relays and another anchor: the runner's
	// relays and anchor have never heard of it.
	elsewhere := volumestest.Client(t, f.owner, volumestest.Relays(t, 3), &cbfs.MemAnchor{})
	gone, err := elsewhere.CreateVolume(ctx, volumestest.Options)
	if err != nil {
		t.Fatal(err)
	}
	missingID := gone.ID()
	missingTok, err := gone.Grant(ctx, cbfs.GrantOptions{Grantee: &f.runner.PublicKey, Perms: captoken.PermRead | captoken.PermList, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}

	reads := []struct {
		name string
		mut  func(*job.JobSpec)
		code system.Code
	}{
		{"garbage token", func(s *job.JobSpec) { s.Volumes[0].Token = []byte{1, 2, 3} }, system.CodeVolumeTokenMalformed},
		{"token for another volume", func(s *job.JobSpec) { s.Volumes[0].Token = writeOut }, system.CodeVolumeTokenWrongVol},
		{"token for another runner", func(s *job.JobSpec) { s.Volumes[0].Token = foreign.Encode() }, system.CodeVolumeTokenNotHolder},
		{"input token can write", func(s *job.JobSpec) { s.Volumes[0].Token = f.grant(t, ctx, f.in, "rwl", "/data") }, system.CodeVolumeTokenNotGranted},
		{"input token without read", func(s *job.JobSpec) { s.Volumes[0].Token = f.grant(t, ctx, f.in, "l", "/data") }, system.CodeVolumeTokenNotGranted},
		{"input path beyond the token", func(s *job.JobSpec) { s.Volumes[0].Path = "/other" }, system.CodeVolumeTokenNotGranted},
		{"output token read-only", func(s *job.JobSpec) { s.Volumes[1].Token = f.grant(t, ctx, f.out, "rl", "") }, system.CodeVolumeTokenNotGranted},
		{"output path beyond the token", func(s *job.JobSpec) { s.Volumes[1].Token = f.grant(t, ctx, f.out, "rwl", "/jobs/j2") }, system.CodeVolumeTokenNotGranted},
		{"empty input path", func(s *job.JobSpec) { s.Volumes[0].Path = "/data/none" }, system.CodeVolumeMissing},
		{"missing volume", func(s *job.JobSpec) {
			s.Volumes[0].Volume, s.Volumes[0].Token = types.Hash(missingID), missingTok.Encode()
		}, system.CodeVolumeMissing},
	}
	for _, tc := range reads {
		t.Run(tc.name, func(t *testing.T) {
			s := f.spec(readOnly, writeOut)
			tc.mut(s)
			_, _, err := f.access.ReadInputs(ctx, s, 1<<20)
			if err == nil || !errors.Is(err, executor.ErrBadInput) || volumes.Code(err) != tc.code {
				t.Fatalf("got %v (code %d), want code %d", err, volumes.Code(err), tc.code)
			}
		})
	}
	t.Run("inputs over the memory bound", func(t *testing.T) {
		_, _, err := f.access.ReadInputs(ctx, f.spec(readOnly, writeOut), 7)
		if volumes.Code(err) != system.CodeVolumeInputTooLarge {
			t.Fatalf("got %v", err)
		}
	})

	before, _, err := f.anchor.LatestManifest(ctx, f.out.ID())
	if err != nil {
		t.Fatal(err)
	}
	writes := map[string][]volumes.File{
		"outside the prefix": {{Path: "/jobs/j1/ok", Content: []byte("x")}, {Path: "/jobs/j2/evil", Content: []byte("x")}},
		"dot-dot escape":     {{Path: "/jobs/j1/../j2/evil", Content: []byte("x")}},
		"the prefix itself":  {{Path: "/jobs/j1", Content: []byte("x")}},
		"duplicate":          {{Path: "/jobs/j1/a", Content: []byte("x")}, {Path: "/jobs/j1/a", Content: []byte("y")}},
	}
	for name, files := range writes {
		t.Run("write "+name, func(t *testing.T) {
			_, err := f.access.WriteOutputs(ctx, f.spec(readOnly, writeOut), files)
			if volumes.Code(err) != system.CodeVolumeOutsidePrefix || !errors.Is(err, executor.ErrBadInput) {
				t.Fatalf("got %v", err)
			}
		})
	}
	t.Run("refused write token", func(t *testing.T) {
		_, err := f.access.WriteOutputs(ctx, f.spec(readOnly, f.grant(t, ctx, f.out, "rl", "")), []volumes.File{{Path: "/jobs/j1/a", Content: []byte("x")}})
		if volumes.Code(err) != system.CodeVolumeTokenNotGranted {
			t.Fatalf("got %v", err)
		}
	})
	// Nothing was written: the output volume's root and files are unchanged.
	after, _, err := f.anchor.LatestManifest(ctx, f.out.ID())
	if err != nil || after != before {
		t.Fatalf("output volume changed after refusals: %v", err)
	}
	list, err := f.out.List(ctx, "/")
	if err != nil || len(list) != 0 {
		t.Fatalf("output volume holds %d files: %v", len(list), err)
	}
}
