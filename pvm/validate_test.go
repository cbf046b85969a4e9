package pvm

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestValidateRejects(t *testing.T) {
	e := engine(t)
	cases := []struct {
		name, src, rule string
		line            int
	}{
		{"import os", "import os\n", "import-not-allowed", 1},
		{"import socket", "x = 1\nimport socket\n", "import-not-allowed", 2},
		{"from subprocess", "from subprocess import run\n", "import-not-allowed", 1},
		{"import random", "import random\n", "import-not-allowed", 1},
		{"import time", "import time\n", "import-not-allowed", 1},
		{"import sys", "import sys\n", "import-not-allowed", 1},
		{"importlib", "import importlib\n", "import-not-allowed", 1},
		{"relative import", "from . import x\n", "import-not-allowed", 1},
		{"json submodule", "import json.decoder\n", "import-not-allowed", 1},
		{"star import", "from math import *\n", "star-import", 1},
		{"dunder import", "x = __import__('os')\n", "dunder-name", 1},
		{"eval", "eval('1')\n", "forbidden-name", 1},
		{"exec", "exec('1')\n", "forbidden-name", 1},
		{"compile", "compile('1', 'f', 'exec')\n", "forbidden-name", 1},
		{"globals", "g = globals()\n", "forbidden-name", 1},
		{"locals", "def f():\n    return locals()\n", "forbidden-name", 2},
		{"vars", "vars()\n", "forbidden-name", 1},
		{"breakpoint", "breakpoint()\n", "forbidden-name", 1},
		{"input", "input()\n", "forbidden-name", 1},
		{"id", "x = id(1)\n", "forbidden-name", 1},
		{"class attr", "x = ().__class__\n", "dunder-attribute", 1},
		{"bases", "x = ().__class__.__bases__[0].__subclasses__()\n", "dunder-attribute", 1},
		{"dict attr", "def f(o):\n    return o.__dict__\n", "dunder-attribute", 2},
		{"builtins name", "x = __builtins__\n", "dunder-name", 1},
		{"gi_frame", "def g():\n    yield 1\nx = g().gi_frame\n", "frame-attribute", 3},
		{"f_back", "def f(fr):\n    return fr.f_back\n", "frame-attribute", 2},
		{"f_globals", "def f(fr):\n    return fr.f_globals\n", "frame-attribute", 2},
		{"tb_frame", "def f(t):\n    return t.tb_frame\n", "frame-attribute", 2},
		{"co_code", "def f(c):\n    return c.co_code\n", "frame-attribute", 2},
		{"cr_frame", "def f(c):\n    return c.cr_frame\n", "frame-attribute", 2},
		{"getattr dynamic", "def f(o, n):\n    return getattr(o, n)\n", "dynamic-attribute", 2},
		{"getattr dunder", "def f(o):\n    return getattr(o, '__class__')\n", "dunder-attribute", 2},
		{"setattr dynamic", "def f(o, n):\n    setattr(o, n, 1)\n", "dynamic-attribute", 2},
		{"delattr dynamic", "def f(o, n):\n    delattr(o, n)\n", "dynamic-attribute", 2},
		{"open etc", "open('/etc/passwd')\n", "open-outside-tmp", 1},
		{"open traversal", "open('/tmp/../etc/passwd')\n", "open-outside-tmp", 1},
		{"open dynamic", "def f(p):\n    return open(p)\n", "open-outside-tmp", 2},
		{"format attr", "s = '{0.__class__}'.format(1)\n", "format-attribute", 1},
		{"format item", "s = '{0[x]}'.format({})\n", "format-attribute", 1},
		{"format_map", "s = 'x'.format_map({})\n", "frame-attribute", 1},
		{"match dunder", "match x:\n    case int(__class__=c):\n        pass\n", "match-dunder", 2},
		{"future annotations", "from __future__ import annotations\n", "typing-eval", 1},
		{"get_type_hints", "from typing import get_type_hints\n", "forbidden-name", 1},
		{"typing attr", "import typing\ntyping.get_type_hints(int)\n", "frame-attribute", 2},
		{"is str", "x = 'a'\ny = x is 'a'\n", "is-literal", 2},
		{"is int", "y = 5 is not 3\n", "is-literal", 1},
		{"huge literal", "x = '" + strings.Repeat("a", 70000) + "'\n", "literal-too-large", 1},
		{"huge int literal", "x = 1" + strings.Repeat("0", 3000) + "\n", "literal-too-large", 1},
		{"bare except", "try:\n    pass\nexcept:\n    pass\n", "bare-except", 3},
		{"base exception", "try:\n    pass\nexcept BaseException:\n    pass\n", "forbidden-name", 3},
		{"reserved name", "_pvm_k = [0, 10**9, 0]\n", "dunder-name", 1},
		{"dunder def module", "def __getattr__(n):\n    pass\n", "dunder-name", 1},
		{"dunder def class", "class A:\n    def __getattribute__(self, n):\n        pass\n", "dunder-name", 2},
		{"metaclass", "class A(metaclass=type):\n    pass\n", "forbidden-name", 1},
		{"async", "async def f():\n    pass\n", "async", 1},
		{"syntax", "def f(:\n", "syntax", 1},
		{"complex", "x = 1j\n", "forbidden-name", 1},
		{"shadow list", "def f(list):\n    return list\n", "shadow-builtin", 1},
		{"shadow str", "x = 1\nstr = 'a'\n", "shadow-builtin", 2},
		{"shadow import", "from json import dumps as dict\n", "shadow-builtin", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := e.Validate(context.Background(), []byte(c.src))
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("want ValidationError, got %v", err)
			}
			if ve.Rule != c.rule || ve.Line != c.line || ve.Col < 1 && c.rule != "syntax" {
				t.Fatalf("got line %d col %d rule %q (%s); want line %d rule %q", ve.Line, ve.Col, ve.Rule, ve.Message, c.line, c.rule)
			}
		})
	}
}

func TestValidateAccepts(t *testing.T) {
	e := engine(t)
	src := `
import json, math, re, hashlib, struct, decimal, typing, abc, enum, functools, itertools, dataclasses
import collections.abc
from collections import OrderedDict, defaultdict
from cowboy_sdk import actor, public, runtime
import pvm_host
import engine
from helpers import util

@dataclasses.dataclass
class Point:
    x: int
    y: int = 0

class Base:
    def __init__(self, v):
        self._v = v
    def __repr__(self):
        return "Base"
    def __eq__(self, o):
        return isinstance(o, Base) and self._v == o._v

class Child(Base):
    def __init__(self, v):
        super().__init__(v)

@actor
class A:
    @public
    def go(self, xs: typing.List[int]):
        try:
            s = sorted(set(xs))
        except (ValueError, TypeError) as e:
            s = []
        with open("/tmp/scratch.txt", "w") as f:
            f.write("x")
        v = getattr(self, "go")
        y = x if (x := 1) is None else 2
        return "{} {:>4}".format(len(s), 3), f"{math.pi:.3f}", [i * i for i in range(3)], {k: 1 for k in "ab"}
`
	libs, err := e.Validate(context.Background(), []byte(src))
	if err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if want := []string{"engine", "helpers"}; !reflect.DeepEqual(libs, want) {
		t.Fatalf("libs = %v, want %v", libs, want)
	}
}
