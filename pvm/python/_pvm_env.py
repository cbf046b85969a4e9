"""Builds what actor code can reach: restricted builtins, proxies of the
whitelisted stdlib modules with metered entry points, cowboy_sdk/pvm_host
proxies, pinned libraries, and the compile pipeline
(validate -> instrument -> compile)."""

import abc
import builtins as _b
import collections
import dataclasses
import decimal as _decimal
import enum
import functools
import hashlib as _hashlib
import itertools
import json as _json
import re as _re
import struct as _struct
import types
import typing

import _pvm_detmath
import _pvm_meter
import _pvm_rt as rt
import _pvm_validate
import cowboy_sdk
import cowboy_sdk.collections as _oc
import cowboy_sdk.tokens as _tk
import cowboy_sdk.blobs as _bl
import pvm_host

OSET = _oc.mutable_ordered_set
FOSET = _oc.frozen_ordered_set
rt.setup_sized((OSET, FOSET, _oc.ordered_set, collections.deque), (OSET, FOSET, _oc.ordered_set),
               _pvm_validate.FORBIDDEN_ATTRS, _pvm_meter.METHODS)


def _proxy(name, src, names=None, extra=None):
    m = types.ModuleType(name)
    if names is None:
        names = [n for n in dir(src) if not n.startswith("_")]
    for n in names:
        v = getattr(src, n, None)
        if v is None or isinstance(v, types.ModuleType):
            continue
        if n in _pvm_validate.FORBIDDEN_ATTRS:
            continue
        setattr(m, n, v)
    for k, v in (extra or {}).items():
        setattr(m, k, v)
    return m


# --- itertools: every iterator is metered per produced item -------------------

def _wrap_iter(f):
    def w(*a, **k):
        return rt.gen(f(*a, **k))
    w.__name__ = f.__name__
    return w


_IT = {n: _wrap_iter(getattr(itertools, n)) for n in dir(itertools)
       if not n.startswith("_") and callable(getattr(itertools, n))}

# --- collections: constructors consume their iterables through the meter ------


class deque(collections.deque):
    def __init__(self, iterable=(), maxlen=None):
        it = rt.sized(iterable)
        rt.mem(len(it) * 8)
        collections.deque.__init__(self, it, maxlen)


class Counter(collections.Counter):
    def __init__(self, iterable=None, **kw):
        if iterable is not None:
            iterable = rt.sized(iterable)
            rt.charge(len(iterable) * 5)
            rt.mem(len(iterable) * 24)
        collections.Counter.__init__(self, iterable, **kw)


_COLL = {"deque": deque, "Counter": Counter, "OrderedDict": collections.OrderedDict,
         "defaultdict": collections.defaultdict, "namedtuple": collections.namedtuple,
         "ChainMap": collections.ChainMap}

# --- json -----------------------------------------------------------------


def _json_default(o):
    if isinstance(o, _oc.ordered_set):
        return list(o)
    raise TypeError("Object of type %s is not JSON serializable" % type(o).__name__)


def json_dumps(obj, **kw):
    s = _json.dumps(obj, sort_keys=True, separators=(",", ":"), default=_json_default,
                    ensure_ascii=kw.get("ensure_ascii", True), allow_nan=False)
    rt.charge(len(s) * rt.CFG["json_char"])
    rt.mem(len(s))
    return s


def json_loads(s, **kw):
    if type(s) not in (str, bytes, bytearray):
        raise TypeError("json.loads needs str or bytes")
    rt.charge(len(s) * rt.CFG["json_char"])
    rt.mem(len(s) * 4)
    return _json.loads(s)


_JSON = {"dumps": json_dumps, "loads": json_loads, "JSONDecodeError": _json.JSONDecodeError}

# --- re: patterns are analysed; cost is bounded before matching ----------------

from re import _parser as _sre_parse  # noqa: E402
from re import _constants as _sre_c  # noqa: E402

_PAT_CACHE = {}


def _analyse(sub, in_repeat):
    """Return number of unbounded-ish repeats; reject ambiguous nesting."""
    count = 0
    for op, av in sub:
        if op in (_sre_c.MAX_REPEAT, _sre_c.MIN_REPEAT, _sre_c.POSSESSIVE_REPEAT):
            lo, hi, body = av
            if in_repeat and hi > 1:
                raise ValueError("regex: nested repeats are not allowed (catastrophic backtracking)")
            inner = _analyse(body, in_repeat or hi > 1)
            count += inner + (1 if hi > 1 else 0)
        elif op is _sre_c.SUBPATTERN:
            count += _analyse(av[-1], in_repeat)
        elif op is _sre_c.BRANCH:
            if in_repeat and len(av[1]) > 1:
                raise ValueError("regex: alternation inside a repeat is not allowed (catastrophic backtracking)")
            for b in av[1]:
                count += _analyse(b, in_repeat)
        elif op in (_sre_c.GROUPREF, _sre_c.GROUPREF_EXISTS):
            raise ValueError("regex: backreferences are not allowed")
        elif op in (_sre_c.ASSERT, _sre_c.ASSERT_NOT):
            count += _analyse(av[1], in_repeat)
    return count


def _nested_body_check(body):
    for op, av in body:
        if op in (_sre_c.MAX_REPEAT, _sre_c.MIN_REPEAT) and av[1] > 1:
            raise ValueError("regex: nested repeats are not allowed (catastrophic backtracking)")
        if op is _sre_c.SUBPATTERN:
            _nested_body_check(av[-1])
        if op is _sre_c.BRANCH:
            for b in av[1]:
                _nested_body_check(b)


class Match:
    """Wrapper of re.Match that does not expose the compiled pattern."""
    __slots__ = ("_pvm_m",)

    def __init__(self, m):
        self._pvm_m = m

    def group(self, *a):
        return self._pvm_m.group(*a)

    def groups(self, default=None):
        return self._pvm_m.groups(default)

    def groupdict(self, default=None):
        return self._pvm_m.groupdict(default)

    def start(self, g=0):
        return self._pvm_m.start(g)

    def end(self, g=0):
        return self._pvm_m.end(g)

    def span(self, g=0):
        return self._pvm_m.span(g)

    def __getitem__(self, g):
        return self._pvm_m[g]

    def __bool__(self):
        return True

    def __repr__(self):
        return "<re.Match span=%r match=%r>" % (self._pvm_m.span(), self._pvm_m.group())

    @property
    def string(self):
        return self._pvm_m.string

    @property
    def lastindex(self):
        return self._pvm_m.lastindex

    @property
    def lastgroup(self):
        return self._pvm_m.lastgroup


def _wm(m):
    return None if m is None else Match(m)


class Pattern:
    __slots__ = ("_pvm_p", "_pvm_q", "pattern", "flags")

    def __init__(self, pattern, flags=0):
        if type(pattern) not in (str, bytes):
            raise TypeError("pattern must be str or bytes")
        if len(pattern) > 1000:
            raise ValueError("regex: pattern too long")
        rt.charge(len(pattern) * 10)
        if flags & _re.VERBOSE or flags & _re.DEBUG:
            raise ValueError("regex: flag not allowed")
        parsed = _sre_parse.parse(pattern, flags)
        self._pvm_q = _analyse(parsed, False)
        self._pvm_p = _re.compile(pattern, flags)
        self.pattern = pattern
        self.flags = flags

    def _pvm_cost(self, s, anchored):
        if type(s) not in (str, bytes):
            raise TypeError("expected string or bytes-like object")
        n = len(s) + 1
        q = self._pvm_q
        cost = len(self.pattern) * (n ** (q + (0 if anchored else 1)))
        rt.charge(cost * rt.CFG["regex_step"])

    def match(self, s, pos=0):
        self._pvm_cost(s, True)
        return _wm(self._pvm_p.match(s, pos))

    def fullmatch(self, s, pos=0):
        self._pvm_cost(s, True)
        return _wm(self._pvm_p.fullmatch(s, pos))

    def search(self, s, pos=0):
        self._pvm_cost(s, False)
        return _wm(self._pvm_p.search(s, pos))

    def findall(self, s, pos=0):
        self._pvm_cost(s, False)
        return self._pvm_p.findall(s, pos)

    def finditer(self, s, pos=0):
        self._pvm_cost(s, False)
        return [Match(m) for m in self._pvm_p.finditer(s, pos)]

    def split(self, s, maxsplit=0):
        self._pvm_cost(s, False)
        return self._pvm_p.split(s, maxsplit)

    def sub(self, repl, s, count=0):
        self._pvm_cost(s, False)
        if not isinstance(repl, (str, bytes)):
            raise TypeError("regex: replacement must be a string")
        r = self._pvm_p.sub(repl, s, count)
        rt.charge(len(r))
        rt.mem(max(len(r) - len(s), 0))
        return r


def _re_compile(pattern, flags=0):
    return Pattern(pattern, flags)


def _re_fn(name):
    def f(pattern, string, *a):
        p = Pattern(pattern)
        return getattr(p, name)(string, *a)
    f.__name__ = name
    return f


def _re_sub(pattern, repl, string, count=0, flags=0):
    return Pattern(pattern, flags).sub(repl, string, count)


_RE = {"compile": _re_compile, "sub": _re_sub, "escape": _re.escape, "error": _re.error,
       "IGNORECASE": _re.IGNORECASE, "I": _re.I, "MULTILINE": _re.MULTILINE, "M": _re.M,
       "DOTALL": _re.DOTALL, "S": _re.S, "ASCII": _re.ASCII, "A": _re.A, "Pattern": Pattern, "Match": Match}
for _n in ("match", "fullmatch", "search", "findall", "finditer", "split"):
    _RE[_n] = _re_fn(_n)

# --- hashlib --------------------------------------------------------------


class _Hash:
    __slots__ = ("_pvm_h", "name", "digest_size")

    def __init__(self, name, data=b""):
        rt.charge(rt.CFG["hash_base"])
        self._pvm_h = _hashlib.new(name)
        self.name = name
        self.digest_size = self._pvm_h.digest_size
        if data:
            self.update(data)

    def update(self, data):
        if type(data) not in (bytes, bytearray):
            raise TypeError("hash input must be bytes")
        rt.charge(len(data) * rt.CFG["hash_byte"])
        self._pvm_h.update(data)

    def digest(self):
        return self._pvm_h.digest()

    def hexdigest(self):
        return self._pvm_h.hexdigest()

    def copy(self):
        c = _Hash.__new__(_Hash)
        c._pvm_h = self._pvm_h.copy()
        c.name = self.name
        c.digest_size = self.digest_size
        return c


_HASHES = ("sha256", "sha512", "sha3_256", "sha3_512", "blake2b", "blake2s", "sha1", "md5", "sha224", "sha384")


def _hash_ctor(name):
    def f(data=b""):
        return _Hash(name, data)
    f.__name__ = name
    return f


def _hash_new(name, data=b""):
    if name not in _HASHES:
        raise ValueError("unsupported hash type " + str(name))
    return _Hash(name, data)


_HL = {n: _hash_ctor(n) for n in _HASHES}
_HL["new"] = _hash_new
_HL["algorithms_guaranteed"] = frozenset(_HASHES)

# --- struct -----------------------------------------------------------------


def _struct_size(fmt):
    n = _struct.calcsize(fmt)
    rt.charge(n + 10)
    rt.mem(n)


def _struct_pack(fmt, *args):
    _struct_size(fmt)
    return _struct.pack(fmt, *args)


def _struct_unpack(fmt, buf):
    _struct_size(fmt)
    return _struct.unpack(fmt, buf)


def _struct_unpack_from(fmt, buf, offset=0):
    _struct_size(fmt)
    return _struct.unpack_from(fmt, buf, offset)


_STRUCT = {"pack": _struct_pack, "unpack": _struct_unpack, "unpack_from": _struct_unpack_from,
           "calcsize": _struct.calcsize, "error": _struct.error}

# --- math ----------------------------------------------------------------------


def _metered_math():
    m = types.ModuleType("math")
    cost = rt.CFG["math_call"]
    for n in _pvm_detmath.__all__:
        v = getattr(_pvm_detmath, n)
        if callable(v):
            def mk(f):
                def g(*a):
                    rt.charge(cost)
                    return f(*a)
                g.__name__ = f.__name__
                return g
            v = mk(v)
        setattr(m, n, v)

    def factorial(n):
        if type(n) is not int or n < 0:
            raise ValueError("factorial() not defined for negative values")
        if n > 1000:
            raise OverflowError("factorial() argument too large")
        rt.charge(n * 10)
        return _pvm_detmath.factorial(n)

    def comb(n, k):
        if type(n) is int and n > 5000:
            raise OverflowError("comb() argument too large")
        rt.charge(cost + (k if type(k) is int and k > 0 else 0) * 10)
        return _pvm_detmath.comb(n, k)

    def perm(n, k=None):
        if type(n) is int and n > 1000:
            raise OverflowError("perm() argument too large")
        rt.charge(cost + n * 10)
        return _pvm_detmath.perm(n, k)

    def prod(it, start=1):
        r = start
        for v in rt.sized(it):
            r = rt.op_mul(r, v)
        return r

    def fsum(it):
        it = rt.sized(it)
        return _pvm_detmath.fsum(it)

    def _intres(f):
        def g(x):
            rt.charge(cost)
            rt.check_int_source(x)
            return f(x)
        g.__name__ = f.__name__
        return g

    m.floor = _intres(_pvm_detmath.floor)
    m.ceil = _intres(_pvm_detmath.ceil)
    m.trunc = _intres(_pvm_detmath.trunc)
    m.factorial = factorial
    m.comb = comb
    m.perm = perm
    m.prod = prod
    m.fsum = fsum
    return m


# --- decimal: fixed context, not reconfigurable ---------------------------------

DEC_CTX = _decimal.Context(prec=28, rounding=_decimal.ROUND_HALF_EVEN, Emax=999999, Emin=-999999,
                           traps=[_decimal.InvalidOperation, _decimal.DivisionByZero, _decimal.Overflow])


class _CtxView:
    """Read-only view of the fixed decimal context."""
    __slots__ = ()
    prec = 28
    rounding = _decimal.ROUND_HALF_EVEN
    Emax = 999999
    Emin = -999999


def _decimal_module():
    names = ["Decimal", "ROUND_HALF_EVEN", "ROUND_HALF_UP", "ROUND_HALF_DOWN", "ROUND_UP", "ROUND_DOWN",
             "ROUND_CEILING", "ROUND_FLOOR", "ROUND_05UP", "InvalidOperation", "DivisionByZero",
             "Overflow", "Underflow", "Inexact", "Rounded", "DecimalException"]
    return _proxy("decimal", _decimal, names, {"getcontext": lambda: _CtxView()})


# --- typing: nothing that evaluates strings ------------------------------------

_TYPING_DROP = frozenset(("get_type_hints", "ForwardRef", "TYPE_CHECKING", "no_type_check",
                          "no_type_check_decorator", "get_overloads", "clear_overloads"))

_DC_DROP = frozenset(("make_dataclass",))


def base_modules():
    """Module proxies shared by every actor/library in the call."""
    coll = _proxy("collections", collections, [n for n in collections.__all__ if n not in _COLL], _COLL)
    coll.abc = _proxy("collections.abc", collections.abc)
    mods = {
        "collections": coll,
        "collections.abc": coll.abc,
        "dataclasses": _proxy("dataclasses", dataclasses,
                              [n for n in dataclasses.__all__ if n not in _DC_DROP]),
        "enum": _proxy("enum", enum, enum.__all__),
        "functools": _proxy("functools", functools,
                            ["reduce", "partial", "wraps", "total_ordering", "cmp_to_key", "lru_cache", "cache",
                             "cached_property", "singledispatch", "update_wrapper"]),
        "itertools": _proxy("itertools", itertools, [], _IT),
        "json": _proxy("json", _json, [], _JSON),
        "re": _proxy("re", _re, [], _RE),
        "struct": _proxy("struct", _struct, [], _STRUCT),
        "math": _metered_math(),
        "decimal": _decimal_module(),
        "typing": _proxy("typing", typing, [n for n in typing.__all__ if n not in _TYPING_DROP]),
        "abc": _proxy("abc", abc, ["ABC", "ABCMeta", "abstractmethod"]),
        "hashlib": _proxy("hashlib", _hashlib, [], _HL),
        "pvm_host": _proxy("pvm_host", pvm_host,
                           [n for n in dir(pvm_host) if not n.startswith("_") and n not in ("CTX", "RESERVED_KEYS")]),
    }
    sdk_coll = _proxy("cowboy_sdk.collections", _oc, ["ordered_set", "OrderedSet", "FrozenOrderedSet",
                                                      "frozen_ordered_set"])
    sdk = _proxy("cowboy_sdk", cowboy_sdk, ["actor", "public", "view", "runtime", "runner", "storage", "HostError",
                                            "Storage", "OrderedSet", "FrozenOrderedSet", "ordered_set",
                                            "nonreentrant", "ReentrancyError", "eth_event", "ETH_BRIDGE"])
    sdk_tokens = _proxy("cowboy_sdk.tokens", _tk, ["create", "transfer", "transfer_from", "approve", "balance_of",
                                                  "mint", "burn", "info"])
    sdk.collections = sdk_coll
    sdk.tokens = sdk_tokens
    sdk_blobs = _proxy("cowboy_sdk.blobs", _bl, ["commit", "get", "INLINE_MAX", "SHA2_256", "BLAKE3"])
    sdk.blobs = sdk_blobs
    mods["cowboy_sdk.blobs"] = sdk_blobs
    mods["cowboy_sdk"] = sdk
    mods["cowboy_sdk.collections"] = sdk_coll
    mods["cowboy_sdk.tokens"] = sdk_tokens
    return mods


# --- builtins ---------------------------------------------------------------

_PLAIN = (
    "abs", "bin", "bool", "callable", "chr", "divmod", "enumerate", "filter", "float", "hex", "int",
    "isinstance", "issubclass", "iter", "len", "map", "next", "object", "oct", "ord", "property",
    "range", "reversed", "slice", "staticmethod", "classmethod", "super", "zip",
    "NotImplemented", "Ellipsis", "None", "True", "False",
    "Exception", "ArithmeticError", "AssertionError", "AttributeError", "IndexError", "KeyError",
    "LookupError", "NameError", "NotImplementedError", "OverflowError", "RuntimeError",
    "StopIteration", "TypeError", "ValueError", "ZeroDivisionError", "UnicodeError",
    "UnicodeDecodeError", "UnicodeEncodeError", "PermissionError", "ImportError", "FileNotFoundError",
    "OSError", "RecursionError", "MemoryError", "UnboundLocalError",
)


def _make_type_checks():
    # rt.BType instances stand in for the builtin types of the same name;
    # isinstance/issubclass see the real types.
    BT = rt.BTYPES

    def unwrap(cls):
        t = type(cls)
        if t in BT:
            return cls._pvm_real
        if t is tuple:
            return tuple(unwrap(c) for c in cls)
        return cls

    def isinstance_(obj, cls):
        if type(obj) in BT:
            obj = obj._pvm_real  # isinstance(str, type)
        return _b.isinstance(obj, unwrap(cls))

    def issubclass_(sub, cls):
        return _b.issubclass(unwrap(sub), unwrap(cls))

    return isinstance_, issubclass_


def make_builtins(importer):
    bd = {n: getattr(_b, n) for n in _PLAIN}
    bd["isinstance"], bd["issubclass"] = _make_type_checks()
    bd.update({
        "int": int, "sum": rt.sum_, "sorted": rt.sorted_, "min": rt.min_, "max": rt.max_, "any": rt.any_,
        "all": rt.all_, "list": list, "tuple": tuple, "dict": dict, "bytes": bytes,
        "bytearray": bytearray, "str": str, "repr": rt.repr_, "ascii": rt.ascii_,
        "format": rt.format_, "pow": rt.pow_, "round": rt.round_, "hash": rt.hash_, "type": type,
        "getattr": rt.getattr_, "setattr": rt.setattr_, "hasattr": rt.hasattr_, "delattr": rt.delattr_,
        "print": rt.print_, "open": rt.open_, "set": OSET, "frozenset": FOSET,
        "__build_class__": rt.build_class, "__import__": importer,
    })
    return bd


def runtime_globals():
    return {
        "_pvm_k": rt.K, "_pvm_oot": rt.oot, "_pvm_ck": rt.ck, "_pvm_enter_fail": rt.enter_fail,
        "_pvm_add": rt.op_add, "_pvm_sub": rt.op_sub, "_pvm_mul": rt.op_mul, "_pvm_pow": rt.op_pow,
        "_pvm_lshift": rt.op_lshift, "_pvm_mod": rt.op_mod,
        "_pvm_iadd": rt.op_iadd, "_pvm_isub": rt.op_sub, "_pvm_imul": rt.op_imul, "_pvm_ipow": rt.op_pow,
        "_pvm_ilshift": rt.op_lshift, "_pvm_imod": rt.op_mod, "_pvm_or": rt.op_or, "_pvm_ior": rt.op_ior,
        "_pvm_oset": OSET, "_pvm_slice": rt.op_slice, "_pvm_in": rt.op_in, "_pvm_star": rt.op_star,
        "_pvm_dstar": rt.op_dstar, "_pvm_meth": rt.meth, "_pvm_meth0": rt.meth0, "_pvm_meth1": rt.meth1, "_pvm_append": rt.append,
        "_pvm_eq": rt.op_eq, "_pvm_ne": rt.op_ne, "_pvm_lt": rt.op_lt, "_pvm_le": rt.op_le,
        "_pvm_gt": rt.op_gt, "_pvm_ge": rt.op_ge, "_pvm_B_list": rt.LIST, "_pvm_B_dict": rt.DICT, "_pvm_B_tuple": rt.TUPLE, "_pvm_B_str": rt.STR,
        "_pvm_B_int": rt.INT, "_pvm_B_bytes": rt.BYTES, "_pvm_B_bytearray": rt.BYTEARRAY,
        "_pvm_B_type": rt.TYPE,
        "_pvm_C_list": rt.list_, "_pvm_C_dict": rt.dict_, "_pvm_C_tuple": rt.tuple_, "_pvm_C_str": rt.str_,
        "_pvm_C_int": rt.int_, "_pvm_C_bytes": rt.bytes_, "_pvm_C_bytearray": rt.bytearray_,
        "_pvm_C_type": rt.type_, "_pvm_ckm": rt.ckm, "_pvm_type": type, "_pvm_int": int, "_pvm_float": float,
        "_pvm_list": list, "_pvm_dict": dict, "_pvm_sliceval": rt.sliceval, "_pvm_mem": rt.MEM, "_pvm_memfail": rt.memfail, "_pvm_setitem": rt.setitem, "_pvm_fstr": rt.fstr, "_pvm_bind": rt.bind, "_pvm_format": rt.op_format,
    }


# Built once in the zygote; every call is a fresh fork, so a call that
# mutates a proxy affects only itself.
PREBUILT = [None]


def prebuild():
    PREBUILT[0] = base_modules()


class Loader:
    """Compiles and executes the actor module and its pinned libraries."""

    def __init__(self, limits, costs, libraries):
        self.limits = limits
        self.costs = costs
        self.libraries = dict(libraries or {})
        self.modules = dict(PREBUILT[0]) if PREBUILT[0] is not None else base_modules()
        self.loading = set()
        self.builtins = make_builtins(self.import_)

    def compile(self, source, filename):
        tree = _pvm_validate.parse(source, self.limits)
        _pvm_validate.validate_tree(tree, self.limits)
        tree = _pvm_meter.instrument(tree, self.costs)
        return compile(tree, filename, "exec", dont_inherit=True, optimize=0)

    def exec_module(self, name, source, filename):
        code = self.compile(source, filename)
        g = {"__builtins__": self.builtins, "__name__": name}
        g.update(runtime_globals())
        mod = types.ModuleType(name)
        exec(code, g)
        for k, v in g.items():
            if not k.startswith("_"):
                setattr(mod, k, v)
        return g, mod

    def import_(self, name, globals=None, locals=None, fromlist=(), level=0):
        rt.charge(self.costs.get("call", 10))
        if level:
            raise ImportError("relative imports are not allowed")
        m = self.modules.get(name)
        if m is None:
            if name in self.libraries:
                if name in self.loading:
                    raise ImportError("circular library import: " + name)
                self.loading.add(name)
                try:
                    _g, m = self.exec_module(name, self.libraries[name], "<lib:%s>" % name)
                except _pvm_validate.Invalid as e:
                    rt.abort("ValidationError", "library %s: line %d col %d [%s] %s"
                             % (name, e.line, e.col, e.rule, e.message))
                self.modules[name] = m
            else:
                raise ImportError("module not allowed: " + name)
        if "." in name and not fromlist:
            return self.modules[name.split(".")[0]]
        return m
