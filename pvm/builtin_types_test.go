package pvm

import (
	"fmt"
	"strings"
	"testing"
)

// The names str, int, list, tuple, dict, bytes, bytearray and type are the
// metered stand-ins (rt.BType); type() of a builtin value returns the
// stand-in, so identity and equality checks behave as in CPython, and the
// types' methods can be taken unbound.
func TestBuiltinTypeIdentity(t *testing.T) {
	e := engine(t)
	cases := []struct {
		name, body, want string
	}{
		{"is str", "return type('a') is str", "true"},
		{"== str", "return type('a') == str", "true"},
		{"is not", "return type('a') is not str", "false"},
		{"in tuple", "return type('a') in (str, bytes)", "true"},
		{"not in", "return type(1) in (str, bytes)", "false"},
		{"via variable", "t = type(b'')\ns = bytes\nreturn t is s", "true"},
		{"all wrapped", "return [type(x) is y for x, y in [(1, int), ([], list), ((), tuple), ({}, dict), (b'', bytes), (bytearray(), bytearray), ('', str)]]",
			"[true true true true true true true]"},
		{"all wrapped ==", "return [type(x) == y for x, y in [(1, int), ([], list), ((), tuple), ({}, dict), (b'', bytes), (bytearray(), bytearray), ('', str)]]",
			"[true true true true true true true]"},
		{"bool is not int", "return type(True) is int", "false"},
		{"type of type", "return [type(str) is type, type(type) is type, isinstance(str, type)]", "[true true true]"},
		{"dict key", "return {str: 1, int: 2}[type(3)]", "2"},
		{"subclass", "class S(str):\n    pass\nreturn [type(S('a')) is S, type(S('a')) is str, isinstance(S('a'), str), issubclass(S, str)]", "[true false true true]"},
		{"constructors", "return [str(5), int('7'), list((1, 2)), tuple([3]), dict(a=1), bytes(2), bytearray(b'x'), type(1) is int]",
			"[5 7 [1 2] [3] map[a:1] [0 0] [120] true]"},
		{"repr", "return repr(str)", "<class 'str'>"},
		{"str.upper", "return str.upper('ab')", "AB"},
		{"str.join", "return str.join(',', ['a', 'b'])", "a,b"},
		{"str.format", "return str.format('{}-{}', 1, 2)", "1-2"},
		{"bound value", "f = str.lower\nreturn f('AB')", "ab"},
		{"list.append", "l = [1]\nlist.append(l, 2)\nlist.extend(l, [3])\nreturn l", "[1 2 3]"},
		{"dict.fromkeys", "return dict.fromkeys(['x', 'y'], 0)", "map[x:0 y:0]"},
		{"dict.get", "return dict.get({'a': 1}, 'a')", "1"},
		{"bytes.fromhex", "return bytes.fromhex('ff01')", "[255 1]"},
		{"int.from_bytes", "return int.from_bytes(b'\\x01\\x00', 'big')", "256"},
		{"str.maketrans", "return 'abc'.translate(str.maketrans('a', 'z'))", "zbc"},
		{"getattr", "return getattr(str, 'upper')('q')", "Q"},
		{"wrong receiver", "try:\n    str.upper(1)\nexcept TypeError:\n    return 'TypeError'", "TypeError"},
		{"generic alias", "x = list[int]\nreturn x((1, 2))", "[1 2]"},
		{"no mro", "return hasattr(str, 'upper')", "true"},
		{"annotations", "def g(x: list[int], y: dict[str, tuple[int, ...]] = None) -> str:\n    return str(len(x))\nreturn g([1, 2])", "2"},
		{"map and key", "return [list(map(str, [1, 2])), sorted(['b', 'A'], key=str.lower), list(map(str.upper, ['x']))]", "[[1 2] [A b] [X]]"},
		{"defaultdict", "import collections\nd = collections.defaultdict(list)\nd['a'].append(1)\nreturn dict(d)", "map[a:[1]]"},
		{"type(x)(y)", "return [type('')(5), type(3)('7'), type(str)(1) is int]", "[5 7 true]"},
		{"match", "match 'a':\n    case str():\n        return 'str'\n    case _:\n        return 'other'", "str"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := runHostile(t, e, actorSrc(c.body), 10_000_000)
			if got := fmt.Sprint(decodeRet(t, out)); got != c.want {
				t.Fatalf("got %s, want %s", got, c.want)
			}
		})
	}
}

// Unbound method calls and the stand-ins themselves open no escape.
func TestBuiltinTypeNoEscape(t *testing.T) {
	e := engine(t)
	cases := []struct {
		name, body string
		kind       ErrorKind
		msg        string
	}{
		{"mro", "return str.mro()", ValidationFailed, "mro"},
		{"mro getattr", "return getattr(type, 'mro')", ValidationFailed, "mro"},
		{"mro dynamic", "n = 'mr' + 'o'\nreturn getattr(type, n)", ValidationFailed, "literal attribute name"},
		{"private slot dynamic", "n = '_pvm' + '_real'\nreturn getattr(str, n)", ValidationFailed, "literal attribute name"},
		{"private slot dynamic hasattr", "n = '_pvm' + '_ctor'\nreturn hasattr(int, n)", ValidationFailed, "literal attribute name"},
		{"private attr", "return str._pvm_real", ValidationFailed, ""},
		{"dunder", "return str.__dict__", ValidationFailed, ""},
		{"unknown attr", "return int.nope", ActorException, "AttributeError"},
		{"object attr", "return str.mro", ValidationFailed, ""},
		{"unbound join metered", "return str.join(',', ['ab'] * 100000)", OutOfCycles, ""},
		{"unbound ctor metered", "return str.upper('x' * 50000)", OutOfCycles, ""},
		{"fromkeys metered", "return dict.fromkeys(range(10**9))", OutOfCycles, ""},
		{"alias call metered", "return list[int](range(10**9))", OutOfCycles, ""},
		{"type(x)() metered", "return type([])(range(10**9))", OutOfCycles, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := runHostile(t, e, actorSrc(c.body), 100_000)
			if out.Err == nil {
				t.Fatalf("succeeded: %x", out.Return)
			}
			if out.Err.Kind != c.kind || !strings.Contains(out.Err.Error(), c.msg) {
				t.Fatalf("got %v (%v), want %v %q", out.Err.Kind, out.Err, c.kind, c.msg)
			}
		})
	}
}

// An unbound call charges what the bound call charges, up to the extra
// call overhead.
func TestBuiltinTypeUnboundMetered(t *testing.T) {
	e := engine(t)
	pairs := [][2]string{
		{"s = 'ab' * 20000\nreturn len(s.upper())", "s = 'ab' * 20000\nreturn len(str.upper(s))"},
		{"xs = ['ab'] * 20000\nreturn len(','.join(xs))", "xs = ['ab'] * 20000\nreturn len(str.join(',', xs))"},
		{"l = []\nl.extend(range(20000))\nreturn len(l)", "l = []\nlist.extend(l, range(20000))\nreturn len(l)"},
		{"return len({}.fromkeys(range(20000)))", "return len(dict.fromkeys(range(20000)))"},
	}
	for _, p := range pairs {
		a := runHostile(t, e, actorSrc(p[0]), 10_000_000)
		b := runHostile(t, e, actorSrc(p[1]), 10_000_000)
		if a.Err != nil || b.Err != nil {
			t.Fatalf("%v / %v", a.Err, b.Err)
		}
		if a.CyclesUsed < 20000 || b.CyclesUsed < a.CyclesUsed || b.CyclesUsed > a.CyclesUsed+200 {
			t.Fatalf("%q: bound %d cycles, unbound %d", p[1], a.CyclesUsed, b.CyclesUsed)
		}
	}
}
