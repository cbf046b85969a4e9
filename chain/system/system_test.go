package system_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

type rec struct {
	_ struct{} `cbor:",toarray"`
	A uint64
}

func TestGet(t *testing.T) {
	key := system.Key(types.Address{9}, []byte("k"))
	m := state.MapReader{string(key): codec.MustMarshal(&rec{A: 7}), "bad": {0xff}}
	if v, err := system.Get[rec](m, key, "decode %s", "k"); err != nil || v == nil || v.A != 7 {
		t.Fatalf("present: %+v %v", v, err)
	}
	if v, err := system.Get[rec](m, []byte("absent"), "decode"); v != nil || err != nil {
		t.Fatalf("absent: %+v %v", v, err)
	}
	_, err := system.Get[rec](m, []byte("bad"), "decode record %d", 3)
	if err == nil || !strings.HasPrefix(err.Error(), "decode record 3: ") {
		t.Fatalf("bad: %v", err)
	}
}

func TestFailureCodes(t *testing.T) {
	err := fmt.Errorf("wrapped: %w", system.Failf(system.CodeVersionConflict, "VersionConflict: v%d", 3))
	if !system.IsFailure(err) || system.CodeOf(err) != system.CodeVersionConflict || err.Error() != "wrapped: VersionConflict: v3" {
		t.Fatalf("%v: code %s", err, system.CodeOf(err))
	}
	if system.CodeOf(nil) != system.CodeOK || system.CodeOf(errors.New("x")) != system.CodeFailed {
		t.Fatal("CodeOf of nil or a plain error")
	}
	// Every code has a distinct name, and codes sort in their owners' ranges.
	names := map[string]system.Code{}
	for _, c := range system.Codes() {
		n := c.String()
		if strings.HasPrefix(n, "Code(") {
			t.Fatalf("code %d has no name", uint32(c))
		}
		if prev, dup := names[n]; dup {
			t.Fatalf("%s names %d and %d", n, prev, c)
		}
		names[n] = c
	}
	if system.Code(99999).String() != "Code(99999)" {
		t.Fatal("unknown code name")
	}
}
