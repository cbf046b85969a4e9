package params_test

import (
	"errors"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/params"
)

var defs = []params.Def{
	{Key: "b.two", Tier: 1, Min: 10, Max: 20, Default: 15},
	{Key: "a.one", Tier: 0, Min: 0, Max: 5, Default: 1},
}

// Declarations are checked; a value resolves governance > genesis >
// default; Set checks bounds; All is sorted by key.
func TestStore(t *testing.T) {
	for name, ds := range map[string][]params.Def{
		"duplicate":         {defs[0], defs[0]},
		"default below min": {{Key: "x", Min: 2, Max: 3, Default: 1}},
		"min above max":     {{Key: "x", Min: 4, Max: 3, Default: 4}},
	} {
		if _, err := params.New(ds, nil); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
	if _, err := params.New(defs, map[string]uint64{"b.two": 21}); err == nil {
		t.Error("out-of-range genesis value accepted")
	}
	s, err := params.New(defs, map[string]uint64{"b.two": 12})
	if err != nil {
		t.Fatal(err)
	}
	o := state.NewOverlay(state.MapReader{})
	if v, _ := s.Get(o, "a.one"); v != 1 {
		t.Fatalf("default %d", v)
	}
	if v, _ := s.Get(o, "b.two"); v != 12 {
		t.Fatalf("genesis %d", v)
	}
	if _, err := s.Get(o, "c"); !errors.Is(err, params.ErrUnknown) {
		t.Fatalf("unknown key: %v", err)
	}
	if err := s.Set(o, "b.two", 9); system.CodeOf(err) != system.CodeParamOutOfRange {
		t.Fatalf("below min: %v", err)
	}
	if err := s.Set(o, "zz", 1); system.CodeOf(err) != system.CodeUnknownParam {
		t.Fatalf("unknown: %v", err)
	}
	if len(o.Writes()) != 0 {
		t.Fatal("refused Set wrote state")
	}
	if err := s.Set(o, "b.two", 20); err != nil {
		t.Fatal(err)
	}
	vs, err := s.All(o)
	if err != nil || len(vs) != 2 || vs[0].Key != "a.one" || vs[0].Source != "default" || vs[1].Value != 20 || vs[1].Source != "governance" {
		t.Fatalf("all %+v %v", vs, err)
	}
}
