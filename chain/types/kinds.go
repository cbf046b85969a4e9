package types

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/cowboy-foundation/cowboy/chain/codec"
)

// kindSpec is the one declaration of an instruction kind: its wire number,
// its name (String, errors, the API), the lane its transactions run in,
// and a constructor of an empty value to decode into. Each instruction file
// lists the specs of its kinds next to their types; kindTable joins them.
// Adding a kind is its const, its struct and one kindSpec.
type kindSpec struct {
	Kind InstructionKind
	Name string
	Lane Lane
	New  func() Instruction
}

// newOf is the constructor of a kindSpec: an empty *T.
func newOf[T any, P interface {
	*T
	Instruction
}]() Instruction {
	return P(new(T))
}

// kindEntry is a kindSpec with what the encoder needs, resolved once.
type kindEntry struct {
	kindSpec
	typ       reflect.Type // the pointer type New returns
	kindField []int        // index of its Kind field
}

// kindTable maps every instruction kind to its declaration. It is built
// once from the literal tables of the instruction files and only read
// afterwards.
var kindTable = buildKindTable(baseKinds, offchainKinds, teeKinds, validatorKinds, modelKinds, govKinds, tokenKinds, rentKinds, bridgeKinds)

// buildKindTable joins the per-file tables. A duplicate kind or name, or a
// type that does not report its own kind or has no Kind field, is a
// programming error caught at init (and by TestKindTable).
func buildKindTable(tables ...[]kindSpec) map[InstructionKind]kindEntry {
	out := make(map[InstructionKind]kindEntry)
	names := make(map[string]InstructionKind)
	for _, t := range tables {
		for _, s := range t {
			if _, dup := out[s.Kind]; dup {
				panic(fmt.Sprintf("types: instruction kind %d registered twice", uint64(s.Kind)))
			}
			if k, dup := names[s.Name]; dup {
				panic(fmt.Sprintf("types: instruction name %q used by kinds %d and %d", s.Name, uint64(k), uint64(s.Kind)))
			}
			in := s.New()
			if in.InstructionKind() != s.Kind {
				panic(fmt.Sprintf("types: %T reports kind %d, registered as %d", in, uint64(in.InstructionKind()), uint64(s.Kind)))
			}
			typ := reflect.TypeOf(in)
			f, ok := typ.Elem().FieldByName("Kind")
			if !ok || f.Type != reflect.TypeFor[InstructionKind]() {
				panic(fmt.Sprintf("types: %T has no Kind InstructionKind field", in))
			}
			out[s.Kind] = kindEntry{kindSpec: s, typ: typ, kindField: f.Index}
			names[s.Name] = s.Kind
		}
	}
	return out
}

// Kinds returns every registered instruction kind in ascending order.
func Kinds() []InstructionKind {
	ks := make([]InstructionKind, 0, len(kindTable))
	for k := range kindTable {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func (k InstructionKind) String() string {
	if e, ok := kindTable[k]; ok {
		return e.Name
	}
	return fmt.Sprintf("kind(%d)", uint64(k))
}

// The validator/consensus range of kinds: its transactions go to the
// system lane even for a kind not registered yet.
const (
	firstSystemKind InstructionKind = 70
	lastSystemKind  InstructionKind = 79
)

// Lane returns the lane of a transaction carrying an instruction of kind
// k: the registered lane, else the system lane inside the validator range
// (70–79), else the user lane.
func (k InstructionKind) Lane() Lane {
	if e, ok := kindTable[k]; ok {
		return e.Lane
	}
	if k >= firstSystemKind && k <= lastSystemKind {
		return LaneSystem
	}
	return LaneUser
}

// EncodeInstruction stamps in's Kind field and returns its canonical
// payload bytes. in must be a pointer to a registered instruction type.
func EncodeInstruction(in Instruction) ([]byte, error) {
	v := reflect.ValueOf(in)
	if !v.IsValid() || (v.Kind() == reflect.Pointer && v.IsNil()) {
		return nil, fmt.Errorf("encode instruction: nil %T", in)
	}
	e, ok := kindTable[in.InstructionKind()]
	if !ok || v.Type() != e.typ {
		return nil, fmt.Errorf("encode instruction: unsupported type %T", in)
	}
	v.Elem().FieldByIndex(e.kindField).SetUint(uint64(e.Kind))
	return codec.Marshal(in)
}

// newInstruction returns an empty instruction of kind k to decode into.
func newInstruction(k InstructionKind) (Instruction, bool) {
	e, ok := kindTable[k]
	if !ok {
		return nil, false
	}
	return e.New(), true
}
