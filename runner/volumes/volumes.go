// Package volumes gives a runner access to the CBFS volumes a job names
// (JobSpec.Volumes, issue #19 item 2). It works through the CBFS client
// library (relay/cbfs), so no FUSE mount is needed.
//
// Before anything is read or written, Check verifies every volume's
// capability token against the spec: the token must decode and verify, be
// for the named volume, be granted to this runner's key, and grant exactly
// what the access needs: read (and nothing that writes) on the whole input
// path for an input, write on the output path for an output. ReadInputs then
// returns the files under each input path; WriteOutputs writes files under
// the output path and returns the job.OutputCommitment (content hash, new
// metadata root and version, anchored at once). A path outside the output
// path refuses the whole write before any file is stored.
//
// Every refusal wraps executor.ErrBadInput (the job's fault, reported as an
// actor fault like any bad input) and one of the sentinels below; Code maps
// a sentinel to its numeric code (chain/system, 1301–1307).
package volumes

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/relay/captoken"
	"github.com/cowboy-foundation/cowboy/relay/cbfs"
	"github.com/cowboy-foundation/cowboy/runner/executor"
	"github.com/ethereum/go-ethereum/crypto"
)

// Refusals. Each wraps executor.ErrBadInput as well.
var (
	ErrTokenMalformed  = errors.New("volume token malformed or not verifiable")
	ErrTokenWrongVol   = errors.New("volume token is for another volume")
	ErrTokenNotHolder  = errors.New("volume token is not granted to this runner")
	ErrTokenNotGranted = errors.New("volume token does not grant the access the job names")
	ErrOutsidePrefix   = errors.New("output file outside the job's output path")
	ErrVolumeMissing   = errors.New("volume or input path missing")
	ErrInputTooLarge   = errors.New("volume inputs exceed the job's memory bound")
)

var codes = map[error]system.Code{
	ErrTokenMalformed:  system.CodeVolumeTokenMalformed,
	ErrTokenWrongVol:   system.CodeVolumeTokenWrongVol,
	ErrTokenNotHolder:  system.CodeVolumeTokenNotHolder,
	ErrTokenNotGranted: system.CodeVolumeTokenNotGranted,
	ErrOutsidePrefix:   system.CodeVolumeOutsidePrefix,
	ErrVolumeMissing:   system.CodeVolumeMissing,
	ErrInputTooLarge:   system.CodeVolumeInputTooLarge,
}

// Code returns the numeric code of a refusal, or 0 if err is none.
func Code(err error) system.Code {
	for e, c := range codes {
		if errors.Is(err, e) {
			return c
		}
	}
	return 0
}

func refuse(sentinel error, format string, args ...any) error {
	return fmt.Errorf("%w: %w: %s", executor.ErrBadInput, sentinel, fmt.Sprintf(format, args...))
}

// File is one file read from or written to a volume. Path is absolute in
// the volume.
type File = executor.VolumeFile

// Access reads and writes a job's volumes with one CBFS client, whose key
// must be the runner key the job's tokens are granted to.
type Access struct {
	client *cbfs.Client
	key    *ecdsa.PrivateKey
	anchor bool
}

// New returns an Access over client; key is the client's account key. With
// anchor, WriteOutputs anchors the output volume's new head at once
// (Volume.Checkpoint); without, the head is durable on the relays and the
// volume owner anchors it (on chain only the owner may: storage
// NotVolumeOwner), naming the same root the commitment carries.
func New(client *cbfs.Client, key *ecdsa.PrivateKey, anchor bool) *Access {
	return &Access{client: client, key: key, anchor: anchor}
}

// token decodes and checks ref's token for this runner (see package doc).
func (a *Access) token(ref job.VolumeRef) (*captoken.Token, error) {
	tok, err := captoken.Decode(ref.Token)
	if err != nil {
		return nil, refuse(ErrTokenMalformed, "%s volume %x: %v", ref.Access, ref.Volume[:6], err)
	}
	if [32]byte(tok.Volume) != [32]byte(ref.Volume) {
		return nil, refuse(ErrTokenWrongVol, "%s token is for %x, spec names %x", ref.Access, tok.Volume[:6], ref.Volume[:6])
	}
	if !bytes.Equal(tok.Holder(), crypto.CompressPubkey(&a.key.PublicKey)) {
		return nil, refuse(ErrTokenNotHolder, "%s volume %x", ref.Access, ref.Volume[:6])
	}
	return tok, nil
}

// Check verifies every volume token of spec before any I/O.
func (a *Access) Check(ctx context.Context, spec *job.JobSpec) error {
	for _, ref := range a.mine(spec) {
		if _, err := a.check(ref); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// mine picks, for every (access, volume, path) the spec names, the entry
// whose token is granted to this runner; with none, the first entry (whose
// check then says why it is refused). Order is the spec's.
func (a *Access) mine(spec *job.JobSpec) []job.VolumeRef {
	type use struct {
		acc  job.VolumeAccess
		vol  types.Hash
		path string
	}
	idx := map[use]int{}
	var out []job.VolumeRef
	self := crypto.CompressPubkey(&a.key.PublicKey)
	for _, ref := range spec.Volumes {
		u := use{ref.Access, ref.Volume, ref.Path}
		i, seen := idx[u]
		if !seen {
			idx[u] = len(out)
			out = append(out, ref)
			continue
		}
		if tok, err := captoken.Decode(ref.Token); err == nil && bytes.Equal(tok.Holder(), self) {
			if cur, err := captoken.Decode(out[i].Token); err != nil || !bytes.Equal(cur.Holder(), self) {
				out[i] = ref
			}
		}
	}
	return out
}

func (a *Access) check(ref job.VolumeRef) (*captoken.Token, error) {
	tok, err := a.token(ref)
	if err != nil {
		return nil, err
	}
	cav, err := tok.Verify(time.Now())
	if err != nil {
		return nil, refuse(ErrTokenMalformed, "%s volume %x: %v", ref.Access, ref.Volume[:6], err)
	}
	prefix := cav.Prefix
	if prefix == "" {
		prefix = "/"
	}
	switch ref.Access {
	case job.VolumeInput:
		// Read-only: the token must read (and list) all of the input path
		// and must not be able to write or delete anything.
		need := captoken.PermRead | captoken.PermList
		if cav.Perms&need != need || cav.Perms&(captoken.PermWrite|captoken.PermDelete) != 0 {
			return nil, refuse(ErrTokenNotGranted, "input token allows %s, want read-only r-l-", cav.Perms)
		}
		if !job.WithinVolumePath(prefix, ref.Path) {
			return nil, refuse(ErrTokenNotGranted, "input token covers %q, not %q", prefix, ref.Path)
		}
	case job.VolumeOutput:
		if cav.Perms&captoken.PermWrite == 0 {
			return nil, refuse(ErrTokenNotGranted, "output token allows %s, want write", cav.Perms)
		}
		if !job.WithinVolumePath(prefix, ref.Path) {
			return nil, refuse(ErrTokenNotGranted, "output token covers %q, not %q", prefix, ref.Path)
		}
	default:
		return nil, refuse(ErrTokenNotGranted, "unknown access %d", ref.Access)
	}
	if len(cav.WrappedKey) == 0 {
		return nil, refuse(ErrTokenNotGranted, "%s token carries no volume key", ref.Access)
	}
	return tok, nil
}

func (a *Access) open(ctx context.Context, ref job.VolumeRef) (*cbfs.Volume, error) {
	tok, err := a.check(ref)
	if err != nil {
		return nil, err
	}
	v, err := a.client.OpenShared(ctx, tok)
	if err != nil {
		if errors.Is(err, cbfs.ErrNotFound) {
			return nil, refuse(ErrVolumeMissing, "volume %x: %v", ref.Volume[:6], err)
		}
		return nil, fmt.Errorf("%w: open volume %x: %w", executor.ErrUpstream, ref.Volume[:6], err)
	}
	return v, nil
}

// ReadInputs returns the files under every input path of spec, in path
// order, and the plaintext bytes read. maxBytes bounds the total (the job's
// memory bound); an input path with no file is a missing volume.
func (a *Access) ReadInputs(ctx context.Context, spec *job.JobSpec, maxBytes int64) ([]File, int64, error) {
	if err := a.Check(ctx, spec); err != nil {
		return nil, 0, err
	}
	var out []File
	var total int64
	for _, ref := range a.mine(spec) {
		if ref.Access != job.VolumeInput {
			continue
		}
		v, err := a.open(ctx, ref)
		if err != nil {
			return nil, total, err
		}
		list, err := v.List(ctx, ref.Path)
		if err != nil {
			return nil, total, fmt.Errorf("%w: list %s: %w", executor.ErrUpstream, ref.Path, err)
		}
		if len(list) == 0 {
			return nil, total, refuse(ErrVolumeMissing, "no file under %q in volume %x", ref.Path, ref.Volume[:6])
		}
		for _, fi := range list {
			if total+fi.Size > maxBytes {
				return nil, total, refuse(ErrInputTooLarge, "%d bytes after %s, limit %d", total+fi.Size, fi.Path, maxBytes)
			}
			var buf bytes.Buffer
			n, err := v.Get(ctx, fi.Path, &buf)
			if err != nil {
				return nil, total, fmt.Errorf("%w: read %s: %w", executor.ErrUpstream, fi.Path, err)
			}
			total += n.Size
			out = append(out, File{Path: fi.Path, Content: buf.Bytes()})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, total, nil
}

// ContentHash is the committee-agreed hash of files (job.OutputContentHash).
func ContentHash(files []File) types.Hash {
	of := make([]job.OutputFile, len(files))
	for i, f := range files {
		of[i] = job.OutputFile{Path: f.Path, Content: f.Content}
	}
	return job.OutputContentHash(of)
}

// CheckOutputs refuses files that are not clean paths under the output path
// of spec. It does no I/O: committee members run it too.
func CheckOutputs(spec *job.JobSpec, files []File) error {
	ref, ok := spec.OutputVolume()
	if !ok {
		return refuse(ErrOutsidePrefix, "the job names no output volume")
	}
	seen := map[string]bool{}
	for _, f := range files {
		if !job.CleanVolumePath(f.Path) || f.Path == ref.Path || !job.WithinVolumePath(ref.Path, f.Path) {
			return refuse(ErrOutsidePrefix, "%q is not a file under %q", f.Path, ref.Path)
		}
		if seen[f.Path] || strings.HasSuffix(f.Path, "/") {
			return refuse(ErrOutsidePrefix, "%q written twice", f.Path)
		}
		seen[f.Path] = true
	}
	return nil
}

// WriteOutputs writes files to spec's output volume (only the aggregator, or
// the one designated member, calls it), anchors the new head and returns
// the commitment. With a whole-volume write token Root and Version name the
// new head (anchored at once when the Access anchors, see New); with a prefix-restricted token the files are stored as
// pending entries (relay/cbfs) that the owner merges, and Root is zero.
func (a *Access) WriteOutputs(ctx context.Context, spec *job.JobSpec, files []File) (job.OutputCommitment, error) {
	if err := CheckOutputs(spec, files); err != nil {
		return job.OutputCommitment{}, err
	}
	var ref job.VolumeRef
	for _, r := range a.mine(spec) {
		if r.Access == job.VolumeOutput {
			ref = r
		}
	}
	v, err := a.open(ctx, ref)
	if err != nil {
		return job.OutputCommitment{}, err
	}
	for _, f := range files {
		if _, err := v.Put(ctx, f.Path, bytes.NewReader(f.Content)); err != nil {
			return job.OutputCommitment{}, fmt.Errorf("%w: write %s: %w", executor.ErrUpstream, f.Path, err)
		}
	}
	c := job.OutputCommitment{Volume: ref.Volume, ContentHash: ContentHash(files)}
	info, err := v.Info(ctx)
	if err != nil {
		return c, fmt.Errorf("%w: output volume info: %w", executor.ErrUpstream, err)
	}
	if info.Prefix != "" {
		return c, nil
	}
	if a.anchor {
		if err := v.Checkpoint(ctx); err != nil {
			return c, fmt.Errorf("%w: anchor output volume: %w", executor.ErrUpstream, err)
		}
	}
	c.Root, c.Version = types.Hash(v.Root()), info.Version
	return c, nil
}
