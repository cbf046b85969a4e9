package job

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Limits on the volumes a JobSpec names.
const (
	// MaxVolumes bounds JobSpec.Volumes.
	MaxVolumes = 8
	// MaxVolumePathBytes bounds VolumeRef.Path.
	MaxVolumePathBytes = 256
	// MaxVolumeTokenBytes bounds VolumeRef.Token (a CBFS capability token;
	// relay/captoken caps an encoded token at 16 KiB).
	MaxVolumeTokenBytes = 16 << 10
)

// VolumeAccess says how a job uses a volume.
type VolumeAccess uint8

// Volume accesses. Zero is invalid so a missing field never validates.
const (
	// VolumeInput: the runner reads the files under Path; the token must
	// grant read (and list) on Path and nothing that writes.
	VolumeInput VolumeAccess = 1
	// VolumeOutput: the runner writes the job's output files under Path;
	// the token must grant write on Path or a prefix inside it.
	VolumeOutput VolumeAccess = 2
)

func (a VolumeAccess) String() string {
	switch a {
	case VolumeInput:
		return "input"
	case VolumeOutput:
		return "output"
	}
	return fmt.Sprintf("access(%d)", uint8(a))
}

// VolumeRef names one CBFS volume of a job (issue #19 item 2). Token is the
// encoded capability token (relay/captoken) the submitter issued for the
// job; the runner checks that it grants what Access and Path say before it
// reads or writes anything. A token is bound to its grantee's key, so a
// spec that may run on several runners repeats the entry (same access,
// volume and path) once per runner it grants; each runner uses its own.
type VolumeRef struct {
	_      struct{}     `cbor:",toarray"`
	Access VolumeAccess `json:"access"`
	Volume types.Hash   `json:"volume"` // the CBFS volume id (owner ‖ salt)
	// Path is a clean absolute path: the directory read (input) or the
	// only prefix written (output). "/" is the whole volume.
	Path string `json:"path"`
	// Token is 0x-hex in JSON, as `cowboy volume grant` prints it.
	Token types.Bytes `json:"token"`
}

// CleanVolumePath reports whether p is a clean absolute path.
func CleanVolumePath(p string) bool {
	return strings.HasPrefix(p, "/") && path.Clean(p) == p && len(p) <= MaxVolumePathBytes
}

// WithinVolumePath reports whether p is prefix itself or below it.
func WithinVolumePath(prefix, p string) bool {
	if prefix == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == prefix || strings.HasPrefix(p, prefix+"/")
}

func (s *JobSpec) validateVolumes() error {
	if len(s.Volumes) > MaxVolumes {
		return invalid("volumes has %d entries, limit %d", len(s.Volumes), MaxVolumes)
	}
	outputs := 0
	for i, v := range s.Volumes {
		switch v.Access {
		case VolumeInput:
		case VolumeOutput:
			outputs++
		default:
			return invalid("volumes[%d].access %d is not input or output", i, v.Access)
		}
		if v.Volume == (types.Hash{}) {
			return invalid("volumes[%d].volume must be set", i)
		}
		if !CleanVolumePath(v.Path) {
			return invalid("volumes[%d].path %q must be a clean absolute path of at most %d bytes", i, v.Path, MaxVolumePathBytes)
		}
		if len(v.Token) == 0 || len(v.Token) > MaxVolumeTokenBytes {
			return invalid("volumes[%d].token must be 1..%d bytes", i, MaxVolumeTokenBytes)
		}
	}
	if outputs > 1 {
		out, _ := s.OutputVolume()
		for _, v := range s.Volumes {
			if v.Access == VolumeOutput && (v.Volume != out.Volume || v.Path != out.Path) {
				return invalid("volumes: at most one output volume and path (one entry per runner token)")
			}
		}
	}
	return nil
}

// OutputVolume returns the job's output volume, if any.
func (s *JobSpec) OutputVolume() (VolumeRef, bool) {
	for _, v := range s.Volumes {
		if v.Access == VolumeOutput {
			return v, true
		}
	}
	return VolumeRef{}, false
}

// OutputFile is one file a job writes to its output volume.
type OutputFile struct {
	Path    string
	Content []byte
}

// OutputContentDomain separates the output content hash.
const OutputContentDomain = "cowboy-job-output-v1:"

type outputEntry struct {
	_    struct{} `cbor:",toarray"`
	Path string
	Size uint64
	Hash types.Hash
}

// OutputContentHash is what a committee agrees on for a job's output
// volume: Keccak256(domain ‖ CBOR([[path, size, keccak(content)]…]))
// over the files sorted by path. It does not depend on where relays place
// the shards, on encryption or on the manifest version, so every member
// computes the same hash while only the aggregator writes.
func OutputContentHash(files []OutputFile) types.Hash {
	es := make([]outputEntry, len(files))
	for i, f := range files {
		es[i] = outputEntry{Path: f.Path, Size: uint64(len(f.Content)), Hash: types.Keccak256(f.Content)}
	}
	sort.Slice(es, func(i, j int) bool { return es[i].Path < es[j].Path })
	b, err := codec.Marshal(es)
	if err != nil { // a slice of fixed-shape arrays always encodes
		panic(err)
	}
	return types.Keccak256([]byte(OutputContentDomain), b)
}

// OutputCommitment is what the aggregator reports after writing a job's
// output volume: the content hash the committee agreed on and the volume's
// new metadata root and version, which the verifier and the callback actor
// compare with the root the volume anchors on chain.
type OutputCommitment struct {
	_           struct{}   `cbor:",toarray"`
	Volume      types.Hash `json:"volume"`
	ContentHash types.Hash `json:"content_hash"`
	Root        types.Hash `json:"root"`
	Version     uint64     `json:"version"`
}
