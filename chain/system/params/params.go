// Package params is the parameter store of the Governance actor
// (0x09.params, spec 002 §9, §11, §13): typed, bounded parameters that
// governance may change. System actors read a value through Store.Get
// (the config consumer pattern) instead of a Go constant.
//
// A value resolves, in order, to the value a passed proposal wrote into
// the state, else the genesis value, else the declared default. Nothing is
// written at genesis, so a chain that never changes a parameter has the
// same state root as before the store existed.
package params

import (
	"errors"
	"fmt"
	"slices"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// ErrUnknown is returned for a key the store does not declare.
var ErrUnknown = errors.New("unknown parameter")

// Def declares one governed parameter: its key, the lowest proposal tier
// that may change it, its inclusive bounds and its default.
type Def struct {
	Key      string
	Tier     uint8
	Min, Max uint64
	Default  uint64
	Doc      string
}

// Value is a parameter's current value and where it comes from.
type Value struct {
	Def
	Value  uint64
	Source string // "default", "genesis" or "governance"
}

// Store resolves parameter values: the declarations and the genesis
// values. It holds no state of its own.
type Store struct {
	defs    []Def // sorted by key
	genesis map[string]uint64
}

// New returns a store over defs with the genesis values (a key not
// declared or a value outside its bounds is an error).
func New(defs []Def, genesis map[string]uint64) (*Store, error) {
	s := &Store{defs: slices.Clone(defs), genesis: map[string]uint64{}}
	slices.SortFunc(s.defs, func(a, b Def) int {
		switch {
		case a.Key < b.Key:
			return -1
		case a.Key > b.Key:
			return 1
		}
		return 0
	})
	for i := 1; i < len(s.defs); i++ {
		if s.defs[i].Key == s.defs[i-1].Key {
			return nil, fmt.Errorf("params: %s declared twice", s.defs[i].Key)
		}
	}
	for _, d := range s.defs {
		if d.Min > d.Max || d.Default < d.Min || d.Default > d.Max {
			return nil, fmt.Errorf("params: %s: default %d outside [%d, %d]", d.Key, d.Default, d.Min, d.Max)
		}
	}
	for k, v := range genesis {
		if err := s.Check(k, v); err != nil {
			return nil, fmt.Errorf("params: genesis: %w", err)
		}
		s.genesis[k] = v
	}
	return s, nil
}

// Def is the declaration of key.
func (s *Store) Def(key string) (Def, bool) {
	i, ok := slices.BinarySearchFunc(s.defs, key, func(d Def, k string) int {
		switch {
		case d.Key < k:
			return -1
		case d.Key > k:
			return 1
		}
		return 0
	})
	if !ok {
		return Def{}, false
	}
	return s.defs[i], true
}

// Check checks that key is declared and v is within its bounds; the error
// is a system.Failure (CodeUnknownParam, CodeParamOutOfRange).
func (s *Store) Check(key string, v uint64) error {
	d, ok := s.Def(key)
	if !ok {
		return system.Failf(system.CodeUnknownParam, "UnknownParam: %q is not a governed parameter", key)
	}
	if v < d.Min || v > d.Max {
		return system.Failf(system.CodeParamOutOfRange, "ParamOutOfRange: %s = %d outside [%d, %d]", key, v, d.Min, d.Max)
	}
	return nil
}

// Key is the state key of a governed value.
func Key(key string) []byte {
	return system.Key(types.GovernanceAddress, []byte("param"), []byte(key))
}

// Get is key's current value in r. An undeclared key is ErrUnknown.
func (s *Store) Get(r state.Reader, key string) (uint64, error) {
	v, err := s.get(r, key)
	return v.Value, err
}

func (s *Store) get(r state.Reader, key string) (Value, error) {
	d, ok := s.Def(key)
	if !ok {
		return Value{}, fmt.Errorf("%w: %q", ErrUnknown, key)
	}
	b, ok, err := r.Get(Key(key))
	if err != nil {
		return Value{}, err
	}
	if ok {
		var v uint64
		if err := codec.Unmarshal(b, &v); err != nil {
			return Value{}, fmt.Errorf("params: %s: %w", key, err)
		}
		return Value{Def: d, Value: v, Source: "governance"}, nil
	}
	if v, ok := s.genesis[key]; ok {
		return Value{Def: d, Value: v, Source: "genesis"}, nil
	}
	return Value{Def: d, Value: d.Default, Source: "default"}, nil
}

// All is every declared parameter's value in r, sorted by key.
func (s *Store) All(r state.Reader) ([]Value, error) {
	out := make([]Value, 0, len(s.defs))
	for _, d := range s.defs {
		v, err := s.get(r, d.Key)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Set writes key's governed value after checking it (a system.Failure if
// the key is unknown or v out of range).
func (s *Store) Set(o *state.Overlay, key string, v uint64) error {
	if err := s.Check(key, v); err != nil {
		return err
	}
	o.Set(Key(key), codec.MustMarshal(v))
	return nil
}

// Source is what a consuming actor reads its governed values through
// (*Store implements it).
type Source interface {
	Get(r state.Reader, key string) (uint64, error)
}

var _ Source = (*Store)(nil)
