package job

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

func volumeSpec() JobSpec {
	s := validSpec()
	s.Volumes = []VolumeRef{
		{Access: VolumeInput, Volume: types.Hash{1}, Path: "/in", Token: []byte{0xa1}},
		{Access: VolumeOutput, Volume: types.Hash{2}, Path: "/out/job", Token: []byte{0xa2}},
	}
	return s
}

// Specs without volumes keep their exact bytes and ids; specs with volumes
// round-trip through the 18-element form, with or without a model id.
func TestVolumesEncoding(t *testing.T) {
	plain := validSpec()
	before, err := plain.Encode()
	if err != nil {
		t.Fatal(err)
	}
	idBefore, _ := plain.DeriveID(7)
	plain.Volumes = []VolumeRef{} // empty, not nil: still the old form
	after, _ := plain.Encode()
	idAfter, _ := plain.DeriveID(7)
	if !bytes.Equal(before, after) || idBefore != idAfter {
		t.Fatal("an empty volume list changed the encoding or the id")
	}

	s := volumeSpec()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	perRunner := volumeSpec() // the same output named once per runner token
	perRunner.Volumes = append(perRunner.Volumes, VolumeRef{Access: VolumeOutput, Volume: types.Hash{2}, Path: "/out/job", Token: []byte{0xa3}})
	if err := perRunner.Validate(); err != nil {
		t.Fatal(err)
	}
	enc, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	d, err := DecodeJobSpec(enc)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Volumes) != 2 || d.Volumes[1].Path != "/out/job" || d.ModelID != (types.Hash{}) {
		t.Fatalf("decoded %+v", d.Volumes)
	}
	re, _ := d.Encode()
	if !bytes.Equal(enc, re) {
		t.Fatal("decode-encode is not the identity")
	}
	id1, _ := s.DeriveID(1)
	if id1 == idBefore {
		t.Fatal("volumes do not enter the job id")
	}

	// The 18-element form with an empty volume list is not canonical.
	var v3 jobSpecV3
	v1 := validSpec()
	v3 = jobSpecV3{JobType: v1.JobType, Bounds: v1.Bounds, Verification: v1.Verification, MaxPrice: v1.MaxPrice, Tip: v1.Tip,
		TimeoutBlocks: v1.TimeoutBlocks, Callback: v1.Callback, Submitter: v1.Submitter, ResultSchema: v1.ResultSchema,
		RequiredDomains: v1.RequiredDomains, Input: v1.Input, Volumes: []VolumeRef{}}
	bad, err := codec.Marshal(v3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeJobSpec(bad); !errors.Is(err, codec.ErrNonCanonical) {
		t.Fatalf("empty volumes in the 18-element form: %v, want ErrNonCanonical", err)
	}
}

func TestVolumesValidate(t *testing.T) {
	tests := []struct {
		name string
		mut  func(*JobSpec)
		want string
	}{
		{"bad access", func(s *JobSpec) { s.Volumes[0].Access = 3 }, "access"},
		{"zero volume", func(s *JobSpec) { s.Volumes[0].Volume = types.Hash{} }, "volume must be set"},
		{"relative path", func(s *JobSpec) { s.Volumes[0].Path = "in" }, "clean absolute"},
		{"unclean path", func(s *JobSpec) { s.Volumes[1].Path = "/out/../etc" }, "clean absolute"},
		{"trailing slash", func(s *JobSpec) { s.Volumes[1].Path = "/out/" }, "clean absolute"},
		{"no token", func(s *JobSpec) { s.Volumes[0].Token = nil }, "token"},
		{"huge token", func(s *JobSpec) { s.Volumes[0].Token = make([]byte, MaxVolumeTokenBytes+1) }, "token"},
		{"two outputs", func(s *JobSpec) { s.Volumes[0].Access = VolumeOutput }, "at most one output"},
		{"two output paths", func(s *JobSpec) {
			o := s.Volumes[1]
			o.Path = "/elsewhere"
			s.Volumes = append(s.Volumes, o)
		}, "at most one output"},
		{"too many", func(s *JobSpec) {
			for len(s.Volumes) <= MaxVolumes {
				s.Volumes = append(s.Volumes, s.Volumes[0])
			}
		}, "limit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := volumeSpec()
			tc.mut(&s)
			err := s.Validate()
			if err == nil || !errors.Is(err, ErrInvalidSpec) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

func TestOutputContentHash(t *testing.T) {
	a := []OutputFile{{Path: "/out/a", Content: []byte("x")}, {Path: "/out/b", Content: []byte("y")}}
	b := []OutputFile{a[1], a[0]}
	if OutputContentHash(a) != OutputContentHash(b) {
		t.Fatal("the hash depends on file order")
	}
	c := []OutputFile{{Path: "/out/a", Content: []byte("y")}, {Path: "/out/b", Content: []byte("x")}}
	if OutputContentHash(a) == OutputContentHash(c) {
		t.Fatal("swapped contents hash equal")
	}
	if !WithinVolumePath("/out", "/out/a") || WithinVolumePath("/out", "/outside") || !WithinVolumePath("/", "/x") {
		t.Fatal("WithinVolumePath")
	}
}

// The JSON form (cowboy job submit --spec) carries the token as 0x-hex.
func TestVolumesJSON(t *testing.T) {
	s := volumeSpec()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"token":"0xa1"`) {
		t.Fatalf("token not hex in %s", b)
	}
	var d JobSpec
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Volumes) != 2 || !bytes.Equal(d.Volumes[1].Token, []byte{0xa2}) || d.Volumes[1].Volume != s.Volumes[1].Volume {
		t.Fatalf("decoded %+v", d.Volumes)
	}
}
