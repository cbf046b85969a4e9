package executor

import (
	"errors"
	"testing"
)

func TestExpandVolumes(t *testing.T) {
	in := []VolumeFile{{Path: "/data/a.txt", Content: []byte("alpha")}, {Path: "/data/bin", Content: []byte{0xff}}}
	got, err := ExpandVolumes("sum {{volume:/data/a.txt}} and {{volume:/data/a.txt}}.", in)
	if err != nil || got != "sum alpha and alpha." {
		t.Fatalf("got %q, %v", got, err)
	}
	if got, err := ExpandVolumes("no refs {{x}}", nil); err != nil || got != "no refs {{x}}" {
		t.Fatalf("got %q, %v", got, err)
	}
	for _, bad := range []string{"{{volume:/data/missing}}", "{{volume:/data/a.txt", "{{volume:/data/bin}}"} {
		if _, err := ExpandVolumes(bad, in); !errors.Is(err, ErrBadInput) {
			t.Errorf("%q: %v, want ErrBadInput", bad, err)
		}
	}
}
