"""Per-call runtime: meters, aborts, metered builtins and operator helpers.

One child process serves exactly one call, so module state here is the
state of that call. Everything an actor can reach is built by make_env().
"""

import builtins as _b
import io as _io
import re as _re
import sys as _sys

import _pvm_detmath

# K[0] cycles remaining (forced hugely negative once aborted so every later
# check re-raises), K[1] unused, K[2] remaining actor call depth, K[3] unused.
# Count-downs keep the instrumented checks to one compare against 0.
K = [0, 0, 0, 32]
MEM = [0, 10 << 20]
TMP = [0, 256 << 10]
ABORT = [None]
CFG = {
    "max_depth": 32, "max_int_bits": 8192, "max_width": 10000,
    "per_item": 1, "per_char": 1, "big_word": 1, "regex_step": 1,
    "hash_base": 100, "hash_byte": 1, "json_char": 1, "math_call": 100,
}
LIMIT = [0]
USED = [None]  # cycles used, frozen when the call aborts
_DEAD = -(1 << 62)
HOST = [None]  # host call function installed by the worker

_B62 = 1 << 62
_NB62 = -_B62
_B31 = 1 << 31
_NB31 = -_B31
_ADDR = _re.compile(r" at 0x[0-9a-fA-F]+")


class Abort(BaseException):
    """Unrecoverable, uncatchable end of the call (actor code cannot name
    BaseException, and the abort is sticky)."""

    def __init__(self, kind, msg):
        BaseException.__init__(self, msg)
        self.kind = kind
        self.msg = msg


def configure(cycles_limit, limits, costs):
    ABORT[0] = None
    USED[0] = None
    MEM[0] = 0
    TMP[0] = 0
    K[0] = int(cycles_limit)
    K[1] = 0
    LIMIT[0] = int(cycles_limit)
    MEM[1] = int(limits.get("memory_bytes", 10 << 20))
    TMP[1] = int(limits.get("tmp_bytes", 256 << 10))
    CFG["max_depth"] = int(limits.get("recursion_depth", 32))
    K[2] = CFG["max_depth"]
    CFG["max_int_bits"] = int(limits.get("max_int_bits", 8192))
    CFG["max_width"] = int(limits.get("max_format_width", 10000))
    for k in ("per_item", "per_char", "big_word", "regex_step", "hash_base", "hash_byte",
              "json_char", "math_call"):
        if k in costs:
            CFG[k] = int(costs[k])
    _refresh()


def _refresh():
    global PER_ITEM, PER_CHAR, BIGW, MAXBITS
    PER_ITEM = CFG["per_item"]
    PER_CHAR = CFG["per_char"]
    BIGW = CFG["big_word"]
    MAXBITS = CFG["max_int_bits"]


_refresh()


def used():
    if USED[0] is not None:
        return USED[0]
    return LIMIT[0] - K[0]


def abort(kind, msg):
    if ABORT[0] is None:
        ABORT[0] = (kind, msg)
        USED[0] = min(LIMIT[0] - K[0], LIMIT[0])
    K[0] = _DEAD
    k, m = ABORT[0]
    raise Abort(k, m)


def oot():
    if ABORT[0] is None:
        ABORT[0] = ("OutOfCycles", "out of cycles")
        USED[0] = LIMIT[0]
    K[0] = _DEAD
    k, m = ABORT[0]
    raise Abort(k, m)


def charge(n):
    K[0] -= n
    if K[0] < 0:
        oot()


def ck(n):
    K[0] -= n
    if K[0] < 0:
        oot()
    return True


def memfail():
    mem(0)


def ckm(n):
    K[0] -= n
    if K[0] < 0:
        oot()
    MEM[0] += 8
    if MEM[0] > MEM[1]:
        mem(0)
    return True


def setitem(o, k, v):
    if type(o) is dict and k not in o:
        MEM[0] += 24
        if MEM[0] > MEM[1]:
            mem(0)
    o[k] = v


def fstr(r):
    n = len(r)
    K[0] -= n * PER_CHAR
    if K[0] < 0:
        oot()
    if n > 256:
        mem(n)
    return sanitize(r)


def bind(o, name):
    f = getattr(o, name)
    if type(o) in BTYPES:
        return f  # already metered
    if name in _METH or name == "append" or name in _METERED_NAMES:
        def bound(*args, **kw):
            return meth(o, name, *args, **kw)
        return bound
    return f


def mem(n):
    MEM[0] += n
    if MEM[0] > MEM[1]:
        abort("MemoryLimit", "memory limit exceeded (%d bytes)" % MEM[1])


def enter_fail():
    if K[0] < 0:
        oot()
    if K[2] < 0:
        abort("RecursionLimit", "recursion depth exceeded (%d frames)" % CFG["max_depth"])


def sanitize(s):
    if " at 0x" in s:
        return _ADDR.sub("", s)
    return s


# ---------------------------------------------------------------------------
# sized / metered iteration

_SIZED = None  # filled in below (needs ordered_set types)


def sized(x):
    """Return x if its size is known (charging per element), else a list
    materialised with a per-element charge."""
    t = type(x)
    if t in _SIZED:
        n = len(x)
        K[0] -= n * PER_ITEM
        if K[0] < 0:
            oot()
        return x
    return list_from_iter(x)


def list_from_iter(x):
    out = []
    app = out.append
    per = PER_ITEM
    for v in x:
        K[0] -= per
        if K[0] < 0:
            oot()
        MEM[0] += 8
        if MEM[0] > MEM[1]:
            mem(0)
        app(v)
    return out


def gen(x):
    per = PER_ITEM
    for v in x:
        K[0] -= per
        if K[0] < 0:
            oot()
        yield v


def lazy(x):
    if type(x) in _SIZED:
        charge(len(x) * PER_ITEM)
        return x
    return gen(x)


# ---------------------------------------------------------------------------
# operators

_SEQ = (str, bytes, bytearray, list, tuple)
_SEQ8 = (list, tuple)


def _bigres(r):
    bits = r.bit_length()
    charge((bits >> 6) * BIGW)
    if bits > MAXBITS:
        raise OverflowError("integer result wider than %d bits" % MAXBITS)
    return r


def _seqres(r, a, b):
    t = type(r)
    n = len(r)
    K[0] -= n * PER_CHAR
    if K[0] < 0:
        oot()
    la = len(a) if type(a) is t else 0
    lb = len(b) if type(b) is t else 0
    g = n - (la if la > lb else lb)
    if g > 0:
        mem(g * 8 if t in _SEQ8 else g)
    return r


def op_add(a, b):
    r = a + b
    if type(r) is int:
        if _NB62 < r < _B62:
            return r
        return _bigres(r)
    if type(r) is float:
        return r
    if type(r) in _SEQ:
        return _seqres(r, a, b)
    return r


def op_sub(a, b):
    r = a - b
    if type(r) is int:
        if not (_NB62 < r < _B62):
            return _bigres(r)
        return r
    if type(r) is set or type(r) is frozenset:
        charge(_m_len(a) * PER_ITEM)
    return r


def op_or(a, b):
    r = a | b
    t = type(r)
    if t is int or t is bool:
        return r
    if t is dict or t is set or t is frozenset:
        n = len(r)
        charge(n * PER_ITEM)
        g = n - max(_m_len(a), _m_len(b))
        if g > 0:
            mem(g * 24)
    return r


def op_ior(a, b):
    t = type(a)
    if t is int or t is bool:
        return a | b
    if t is dict or t is set:
        n = _m_len(b)
        charge(n * PER_ITEM)
        mem(n * 24)
    a |= b
    return a


def _rep(seq, n):
    cnt = len(seq) * (n if n > 0 else 0)
    charge(cnt * PER_CHAR)
    mem(cnt * 8 if type(seq) in _SEQ8 else cnt)


def op_mul(a, b):
    ta = type(a)
    tb = type(b)
    if ta is int and tb is int:
        if _NB31 < a < _B31 and _NB31 < b < _B31:
            return a * b
        ba = a.bit_length()
        bb = b.bit_length()
        charge(((ba + bb) >> 6) * BIGW)
        if ba + bb > MAXBITS + 1:
            raise OverflowError("integer result wider than %d bits" % MAXBITS)
        charge(((ba >> 6) + 1) * ((bb >> 6) + 1) * BIGW)
        return _bigres(a * b) if ba + bb > 62 else a * b
    if ta is float or tb is float:
        return a * b
    if tb is int and ta in _SEQ:
        _rep(a, b)
    elif ta is int and tb in _SEQ:
        _rep(b, a)
    elif tb is bool and ta in _SEQ:
        _rep(a, int(b))
    return a * b


def op_pow(a, b):
    ta = type(a)
    tb = type(b)
    if ta is int and tb is int:
        if b < 0:
            if a == 0:
                raise ZeroDivisionError("0.0 cannot be raised to a negative power")
            return _pvm_detmath.pow(float(a), float(b))
        if a in (0, 1) or b in (0, 1):
            return a ** b
        if a == -1:
            return 1 if b % 2 == 0 else -1
        bits = (a.bit_length() - 1) * b + 1 if (a > 0 and a & (a - 1) == 0) else a.bit_length() * b
        charge((bits >> 6) * BIGW)
        if bits > MAXBITS + 1:
            raise OverflowError("integer result wider than %d bits" % MAXBITS)
        w = (bits >> 6) + 1
        charge(w * w * BIGW)
        return a ** b
    if (ta is float or ta is int) and (tb is float or tb is int):
        charge(CFG["math_call"])
        if a == 0 and b < 0:
            raise ZeroDivisionError("0.0 cannot be raised to a negative power")
        return _pvm_detmath.pow(a, b)
    if ta is bool or tb is bool:
        return op_pow(int(a) if ta is bool else a, int(b) if tb is bool else b)
    return a ** b


def op_lshift(a, b):
    if type(a) is int and type(b) is int and b > 0:
        bits = a.bit_length() + b
        if bits > 62:
            charge((bits >> 6) * BIGW)
            if bits > MAXBITS + 1:
                raise OverflowError("integer result wider than %d bits" % MAXBITS)
    return a << b


_PCT = _re.compile(r"%(?:\([^)]*\))?[-+ #0]*(\*|\d+)?(?:\.(\*|\d+))?")
_SPEC = _re.compile(r"(\d+)")


def _check_width_numbers(nums):
    mw = CFG["max_width"]
    for n in nums:
        if n == "*":
            raise ValueError("'*' width is not allowed")
        if n and int(n) > mw:
            raise ValueError("format width or precision larger than %d" % mw)


def op_mod(a, b):
    ta = type(a)
    if ta is int or ta is float:
        return a % b
    if ta is str or ta is bytes:
        charge(len(a) * PER_CHAR)
        s = a if ta is str else a.decode("latin-1")
        for m in _PCT.finditer(s):
            _check_width_numbers(m.groups())
        r = a % b
        if type(r) is str:
            r = sanitize(r)
        return _seqres(r, a, a)
    return a % b


def op_iadd(a, b):
    t = type(a)
    if t is list or t is bytearray:
        b = sized(b)
        n = len(b)
        mem(n * 8 if t is list else n)
        a += b
        return a
    return op_add(a, b)


def op_imul(a, b):
    if type(a) is list and type(b) is int:
        _rep(a, b - 1 if b > 0 else 0)
        a *= b
        return a
    return op_mul(a, b)


def op_slice(o, lo, hi, st):
    r = o[lo:hi:st]
    t = type(r)
    if t in _SEQ:
        K[0] -= len(r) * PER_ITEM
        if K[0] < 0:
            oot()
    return r


_SIZEDCMP = (str, bytes, bytearray, list, tuple, dict)


def _cmpcost(a, b):
    t = type(a)
    if t in _SIZEDCMP and type(b) is t:
        la = len(a)
        lb = len(b)
        K[0] -= (la if la < lb else lb) * PER_ITEM
        if K[0] < 0:
            oot()


def op_eq(a, b):
    if type(a) is int or type(a) is float:
        return a == b
    _cmpcost(a, b)
    return a == b


def op_ne(a, b):
    if type(a) is int or type(a) is float:
        return a != b
    _cmpcost(a, b)
    return a != b


def op_lt(a, b):
    if type(a) is int or type(a) is float:
        return a < b
    _cmpcost(a, b)
    return a < b


def op_le(a, b):
    if type(a) is int or type(a) is float:
        return a <= b
    _cmpcost(a, b)
    return a <= b


def op_gt(a, b):
    if type(a) is int or type(a) is float:
        return a > b
    _cmpcost(a, b)
    return a > b


def op_ge(a, b):
    if type(a) is int or type(a) is float:
        return a >= b
    _cmpcost(a, b)
    return a >= b


_DIRECT_IN = None


def op_in(x, c):
    t = type(c)
    if t in _DIRECT_IN:
        return x in c
    if t is str or t is bytes or t is list or t is tuple or t is bytearray:
        charge(len(c) * PER_ITEM)
        return x in c
    if hasattr(c, "__contains__"):
        if hasattr(c, "__len__"):
            charge(len(c) * PER_ITEM)
        return x in c
    for v in gen(c):
        if v == x:
            return True
    return False


def op_star(x):
    return sized(x)


def op_dstar(x):
    if hasattr(x, "__len__"):
        charge(len(x) * PER_ITEM)
    return x


import decimal as _decimal

_DEC = _decimal.Decimal


def _dec_guard(v):
    """Fixed-point formatting of a Decimal with a huge exponent would build a
    string with that many digits: refuse it before formatting."""
    if type(v) is _DEC and v.is_finite() and not (-10000 < v.adjusted() < 10000):
        raise ValueError("decimal exponent too large to format")


def check_spec(spec, v=None):
    if type(spec) is str:
        _check_width_numbers(_SPEC.findall(spec))
    if v is not None:
        _dec_guard(v)


def op_format(v, spec, conv):
    if conv == 115:
        v = str_(v)
    elif conv == 114:
        v = repr_(v)
    elif conv == 97:
        v = ascii_(v)
    check_spec(spec, v)
    r = format(v, spec)
    charge(len(r) * PER_CHAR)
    return sanitize(r)


# ---------------------------------------------------------------------------
# metered methods (receiver.name(...) calls are routed here by name)

def _fmt_fields(s):
    import string
    for _lit, field, spec, _conv in string.Formatter().parse(s):
        if field is not None and ("." in field or "[" in field):
            raise ValueError("format fields may not access attributes or items")
        if spec:
            if "{" in spec:
                raise ValueError("nested format specs are not allowed")
            check_spec(spec)


def _m_len(o):
    try:
        return len(o)
    except TypeError:
        return 0


def append(o, x):
    if type(o) is list:
        K[0] -= PER_ITEM
        MEM[0] += 8
        if MEM[0] > MEM[1]:
            mem(0)
        o.append(x)
        return None
    return meth(o, "append", x)


_NOKW = {}  # shared empty kwargs: handlers never mutate kw


def meth0(o, name):
    f = getattr(o, name)
    if type(o) in BTYPES:
        return f()
    h = _METH.get(name)
    if h is not None:
        return h(o, f, (), _NOKW)
    K[0] -= _m_len(o) * PER_ITEM
    if K[0] < 0:
        oot()
    r = f()
    if type(r) is list:
        mem(len(r) * 8)
    return r


def meth1(o, name, a):
    f = getattr(o, name)
    if type(o) in BTYPES:
        return f(a)
    h = _METH.get(name)
    if h is not None:
        return h(o, f, (a,), _NOKW)
    K[0] -= _m_len(o) * PER_ITEM
    if K[0] < 0:
        oot()
    r = f(a)
    if type(r) is list:
        mem(len(r) * 8)
    return r


def meth(o, name, *args, **kw):
    t = type(o)
    f = getattr(o, name)
    if t is list and name == "append":
        K[0] -= PER_ITEM
        MEM[0] += 8
        if MEM[0] > MEM[1]:
            mem(0)
        return f(*args)
    if t in BTYPES:
        return f(*args, **kw)
    h = _METH.get(name)
    if h is not None:
        return h(o, f, args, kw)
    charge(_m_len(o) * PER_ITEM)
    r = f(*args, **kw)
    if type(r) is list:
        mem(len(r) * 8)
    return r


def _h_pop(o, f, args, kw):
    if type(o) is list and args and args[0] != -1:
        charge(len(o) * PER_ITEM)
    else:
        charge(PER_ITEM)
    return f(*args, **kw)


def sliceval(v):
    v = sized(v)
    mem(len(v) * 8)
    return v


def _h_extend(o, f, args, kw):
    if args:
        a0 = sized(args[0])
        n = len(a0)
        mem(n * 8)
        args = (a0,) + args[1:]
    if kw:
        charge(len(kw) * PER_ITEM)
    return f(*args, **kw)


def _h_insert(o, f, args, kw):
    charge(_m_len(o) * PER_ITEM)
    mem(8)
    return f(*args, **kw)


def _h_join(o, f, args, kw):
    items = sized(args[0]) if args else ()
    r = f(items, *args[1:], **kw)
    if type(r) in _SEQ:
        n = len(r)
        charge(n * PER_CHAR)
        mem(n)
    return r


def _h_format(o, f, args, kw):
    if type(o) is str:
        _fmt_fields(o)
    for a in args:
        _dec_guard(a)
    for a in kw.values():
        _dec_guard(a)
    charge(_m_len(o) * PER_CHAR)
    r = f(*args, **kw)
    if type(r) is str:
        charge(len(r) * PER_CHAR)
        mem(len(r))
        r = sanitize(r)
    return r


def _h_pad(o, f, args, kw):
    w = args[0] if args else kw.get("width", 0)
    if type(w) is int and w > 0:
        charge(w * PER_CHAR)
        mem(w)
    return f(*args, **kw)


def _h_expandtabs(o, f, args, kw):
    ts = args[0] if args else kw.get("tabsize", 8)
    if type(ts) is int and ts > 1:
        charge(len(o) * ts * PER_CHAR)
        mem(len(o) * ts)
    return f(*args, **kw)


def _h_replace(o, f, args, kw):
    n = _m_len(o)
    if len(args) >= 2:
        old, new = args[0], args[1]
        cnt = args[2] if len(args) > 2 else kw.get("count", -1)
        occ = n + 1 if _m_len(old) == 0 else n // max(_m_len(old), 1)
        if type(cnt) is int and cnt >= 0:
            occ = min(occ, cnt)
        est = n + occ * _m_len(new)
        charge(est * PER_CHAR)
        r = f(*args, **kw)
        g = _m_len(r) - n
        if g > 0:
            mem(g)
        return r
    return f(*args, **kw)


def _h_to_bytes(o, f, args, kw):
    ln = args[0] if args else kw.get("length", 1)
    if type(ln) is int and ln > 0:
        charge(ln)
        mem(ln)
    return f(*args, **kw)


def _h_sort(o, f, args, kw):
    n = _m_len(o)
    charge(n * max(n.bit_length(), 1) * PER_ITEM)
    return f(*args, **kw)


def _h_setops(o, f, args, kw):
    args = tuple(sized(a) for a in args)
    charge(_m_len(o) * PER_ITEM)
    return f(*args, **kw)


def _h_copy(o, f, args, kw):
    n = _m_len(o)
    charge(n * PER_ITEM)
    mem(n * 8)
    return f(*args, **kw)


def _h_const(o, f, args, kw):
    charge(PER_ITEM)
    return f(*args, **kw)


_METH = {
    "extend": _h_extend, "extendleft": _h_extend, "update": _h_extend, "fromkeys": _h_extend,
    "insert": _h_insert, "join": _h_join, "format": _h_format,
    "ljust": _h_pad, "rjust": _h_pad, "center": _h_pad, "zfill": _h_pad,
    "expandtabs": _h_expandtabs, "replace": _h_replace, "to_bytes": _h_to_bytes,
    "sort": _h_sort, "union": _h_setops, "intersection": _h_setops, "difference": _h_setops,
    "symmetric_difference": _h_setops, "issubset": _h_setops, "issuperset": _h_setops,
    "isdisjoint": _h_setops, "copy": _h_copy, "setdefault": _h_const, "add": _h_const,
    "append": _h_const, "pop": _h_pop,
}

# ---------------------------------------------------------------------------
# metered builtins

_sum = _b.sum
_sorted = _b.sorted
_min = _b.min
_max = _b.max
_any = _b.any
_all = _b.all
_list = _b.list
_tuple = _b.tuple
_dict = _b.dict
_bytes = _b.bytes
_bytearray = _b.bytearray
_str = _b.str
_repr = _b.repr
_ascii = _b.ascii
_format = _b.format
_pow = _b.pow
_round = _b.round
_hash = _b.hash
_type = _b.type
_getattr = _b.getattr
_setattr = _b.setattr
_hasattr = _b.hasattr
_delattr = _b.delattr


def sum_(it, start=0):
    it = sized(it)
    if type(start) in _SEQ:
        acc = start
        for v in it:
            acc = op_add(acc, v)
        return acc
    r = _sum(it, start)
    if type(r) is int and not (_NB62 < r < _B62):
        _bigres(r)
    return r


def sorted_(it, key=None, reverse=False):
    lst = _list(sized(it))
    n = len(lst)
    mem(n * 8)
    charge(n * max(n.bit_length(), 1) * PER_ITEM)
    return _sorted(lst, key=key, reverse=reverse)


def min_(*args, **kw):
    if len(args) == 1:
        return _min(sized(args[0]), **kw)
    return _min(*args, **kw)


def max_(*args, **kw):
    if len(args) == 1:
        return _max(sized(args[0]), **kw)
    return _max(*args, **kw)


def any_(it):
    return _any(lazy(it))


def all_(it):
    return _all(lazy(it))


def list_(it=()):
    if type(it) in _SIZED:
        n = len(it)
        charge(n * PER_ITEM)
        mem(n * 8)
        return _list(it)
    return list_from_iter(it)


def tuple_(it=()):
    if type(it) is tuple:
        return it
    return _tuple(list_(it))


def dict_(*args, **kw):
    if args:
        a0 = args[0]
        if not isinstance(a0, _dict):
            a0 = sized(a0)
        n = len(a0)
        charge(n * PER_ITEM)
        mem(n * 24)
        args = (a0,)
    if kw:
        charge(len(kw) * PER_ITEM)
    return _dict(*args, **kw)


def bytes_(x=b"", *args):
    if type(x) is int:
        charge(x * PER_CHAR if x > 0 else 0)
        mem(x if x > 0 else 0)
    elif type(x) is str:
        charge(len(x) * PER_CHAR)
    elif type(x) not in _SIZED:
        x = list_from_iter(x)
    else:
        charge(len(x) * PER_CHAR)
    return _bytes(x, *args)


def bytearray_(x=b"", *args):
    if type(x) is int:
        charge(x * PER_CHAR if x > 0 else 0)
        mem(x if x > 0 else 0)
    elif type(x) is str:
        charge(len(x) * PER_CHAR)
    elif type(x) not in _SIZED:
        x = list_from_iter(x)
    else:
        charge(len(x) * PER_CHAR)
    return _bytearray(x, *args)


def _intcost(x):
    if type(x) is int and not (_NB62 < x < _B62):
        w = (x.bit_length() >> 6) + 1
        charge(w * w * BIGW)


_NOARG = object()


def str_(x="", encoding=_NOARG, errors=_NOARG):
    t = type(x)
    if encoding is _NOARG and errors is _NOARG:
        if (t is int and _NB62 < x < _B62) or t is float or t is str:
            r = _str(x)
            K[0] -= len(r) * PER_CHAR
            if K[0] < 0:
                oot()
            return r
        _intcost(x)
        r = _str(x)
    else:
        kw = {}
        if encoding is not _NOARG:
            kw["encoding"] = encoding
        if errors is not _NOARG:
            kw["errors"] = errors
        r = _str(x, **kw)
    charge(len(r) * PER_CHAR)
    return sanitize(r)


def repr_(x):
    _intcost(x)
    r = _repr(x)
    charge(len(r) * PER_CHAR)
    return sanitize(r)


def ascii_(x):
    r = _ascii(x)
    charge(len(r) * PER_CHAR)
    return sanitize(r)


def format_(v, spec=""):
    check_spec(spec, v)
    _intcost(v)
    r = _format(v, spec)
    charge(len(r) * PER_CHAR)
    return sanitize(r)


def pow_(a, b, m=None):
    if m is None:
        return op_pow(a, b)
    if type(a) is int and type(b) is int and type(m) is int:
        for v in (a, b, m):
            if v.bit_length() > MAXBITS:
                raise OverflowError("integer operand wider than %d bits" % MAXBITS)
        w = (m.bit_length() >> 6) + 1
        charge(w * w * max(b.bit_length(), 1) * BIGW)
    return _pow(a, b, m)


def check_int_source(x):
    """Converting x to int must not create an integer wider than the cap."""
    t = type(x)
    if t is int or t is float or t is bool or t is str:
        return
    adj = getattr(x, "adjusted", None)  # decimal.Decimal
    if adj is not None and x.is_finite() and adj() > MAXBITS * 0.302 + 1:
        raise OverflowError("integer result wider than %d bits" % MAXBITS)


_int = _b.int


def int_(*args, **kw):
    if args:
        check_int_source(args[0])
    r = _int(*args, **kw)
    if not (_NB62 < r < _B62):
        _bigres(r)
    return r


def round_(x, n=None):
    if n is None:
        check_int_source(x)
        return _round(x)
    if type(n) is int and (n > 10000 or n < -10000):
        raise ValueError("ndigits out of range")
    return _round(x, n)


_HASHABLE = (int, str, bytes, float, bool, type(None))


def hash_(x):
    t = type(x)
    if t in _HASHABLE:
        return _hash(x)
    if t is tuple:
        for v in x:
            hash_(v)
        return _hash(x)
    h = t.__hash__
    if h is None or h is object.__hash__:
        raise TypeError("hash() of %s is not deterministic" % t.__name__)
    return _hash(x)


def type_(*args):
    if len(args) != 1:
        raise TypeError("type() takes exactly one argument")
    t = _type(args[0])
    w = WRAPPED.get(t)
    if w is not None:
        return w
    if t in BTYPES:
        return TYPE
    return t


# ---------------------------------------------------------------------------
# builtin types as actor code sees them

_MDESC = _type(_b.str.upper)  # method_descriptor: an instance method of a builtin type


class BType:
    """What the names str, int, list, tuple, dict, bytes, bytearray and type
    are bound to in actor code. Calling it is the metered constructor;
    type() of a builtin value returns it (so `type(x) is str`,
    `type(x) == str` and `type(x) in (str, bytes)` hold); it equals and
    hashes like the real type; isinstance/issubclass/class bases/match
    patterns see the real type; attribute access gives the type's methods
    unbound and metered (str.upper("a"), list.append(l, 1),
    dict.fromkeys(k)). Nothing reachable from it hands out the real type or
    an unmetered constructor."""

    __slots__ = ("_pvm_real", "_pvm_ctor", "_pvm_attrs")

    def __init__(self, real, ctor):
        self._pvm_real = real
        self._pvm_ctor = ctor
        self._pvm_attrs = {}

    def __eq__(self, o):
        return o is self or o is self._pvm_real

    def __ne__(self, o):
        return not (o is self or o is self._pvm_real)

    def __hash__(self):
        return _hash(self._pvm_real)

    def __repr__(self):
        return "<class '%s'>" % self._pvm_real.__name__

    def __instancecheck__(self, obj):
        return _b.isinstance(obj, self._pvm_real)

    def __subclasscheck__(self, sub):
        if _type(sub) in BTYPES:
            sub = sub._pvm_real
        return _b.issubclass(sub, self._pvm_real)

    def __mro_entries__(self, bases):
        return (self._pvm_real,)

    def __getitem__(self, item):
        # list[int] in annotations; the alias's origin stays the wrapper
        return _GenericAlias(self, item)

    def __getattr__(self, name):
        cache = self._pvm_attrs
        v = cache.get(name)
        if v is not None:
            return v
        real = self._pvm_real
        if _type(name) is not str or name[:1] == "_" or name in _FORBIDDEN_ATTRS:
            raise AttributeError("type object '%s' has no attribute '%s'" % (real.__name__, name))
        for c in real.__mro__:
            if c is object:
                c = None
                break
            if name in c.__dict__:
                d = c.__dict__[name]
                break
        if c is None:
            raise AttributeError("type object '%s' has no attribute '%s'" % (real.__name__, name))
        if name not in _METERED_NAMES and name not in _METH:
            v = _getattr(real, name)
        elif _type(d) is _MDESC:
            v = _unbound(real, name)
        else:
            v = _classmeth(real, name)  # dict.fromkeys, bytes.fromhex, str.maketrans
        cache[name] = v
        return v


def _unbound(real, name):
    def unbound(self, *args, **kw):
        if not _b.isinstance(self, real):
            raise TypeError("descriptor '%s' for '%s' objects doesn't apply to a '%s' object"
                            % (name, real.__name__, _type(self).__name__))
        return meth(self, name, *args, **kw)
    unbound.__name__ = unbound.__qualname__ = name
    return unbound


def _classmeth(real, name):
    def cm(*args, **kw):
        return meth(real, name, *args, **kw)
    cm.__name__ = cm.__qualname__ = name
    return cm


from types import GenericAlias as _GenericAlias  # noqa: E402

def _btype(real, ctor):
    # one subclass per type whose __call__ is the constructor itself (a
    # staticmethod: no extra Python frame per str(x)/list(x) call)
    cls = _type("BType", (BType,), {"__slots__": (), "__call__": staticmethod(ctor)})
    return cls(real, ctor)


TYPE = _btype(_type, type_)
STR = _btype(_str, str_)
INT = _btype(_int, int_)
LIST = _btype(_list, list_)
TUPLE = _btype(_tuple, tuple_)
DICT = _btype(_dict, dict_)
BYTES = _btype(_bytes, bytes_)
BYTEARRAY = _btype(_bytearray, bytearray_)
WRAPPED = {w._pvm_real: w for w in (TYPE, STR, INT, LIST, TUPLE, DICT, BYTES, BYTEARRAY)}
BTYPES = frozenset(_type(w) for w in WRAPPED.values())


def _attr_ok(name):
    if type(name) is not str:
        raise TypeError("attribute name must be a string")
    if name.startswith("__") or name.startswith("_pvm") or name in _FORBIDDEN_ATTRS:
        raise AttributeError("attribute not allowed: " + name)


def getattr_(o, name, *default):
    _attr_ok(name)
    if name in _METERED_NAMES and _hasattr(o, name):
        return bind(o, name)
    return _getattr(o, name, *default)


def setattr_(o, name, v):
    _attr_ok(name)
    return _setattr(o, name, v)


def hasattr_(o, name):
    _attr_ok(name)
    return _hasattr(o, name)


def delattr_(o, name):
    _attr_ok(name)
    return _delattr(o, name)


def print_(*args, **kw):
    charge(len(args) * PER_ITEM)


def _det_repr(self):
    return "<%s object>" % _type(self).__name__


def build_class(func, name, *bases, **kw):
    if "metaclass" in kw:
        raise TypeError("metaclasses are not allowed")
    cls = _b.__build_class__(func, name, *bases, **kw)
    for c in cls.__mro__:
        if c is object:
            cls.__repr__ = _det_repr
            break
        if "__repr__" in c.__dict__ or "__str__" in c.__dict__:
            break
    return cls


# ---------------------------------------------------------------------------
# /tmp sandbox

TMP_BASE = [""]


class TmpFile:
    __slots__ = ("_pvm_f",)

    def __init__(self, f):
        self._pvm_f = f

    def write(self, s):
        n = len(s.encode("utf-8")) if type(s) is str else len(s)
        TMP[0] += n
        if TMP[0] > TMP[1]:
            abort("TmpLimit", "/tmp quota exceeded (%d bytes)" % TMP[1])
        charge(n * PER_CHAR)
        return self._pvm_f.write(s)

    def read(self, n=-1):
        r = self._pvm_f.read(n)
        charge(len(r) * PER_CHAR)
        return r

    def readline(self):
        r = self._pvm_f.readline()
        charge(len(r) * PER_CHAR)
        return r

    def seek(self, *a):
        return self._pvm_f.seek(*a)

    def tell(self):
        return self._pvm_f.tell()

    def close(self):
        self._pvm_f.close()

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self._pvm_f.close()
        return False

    def __iter__(self):
        while True:
            line = self.readline()
            if not line:
                return
            yield line


def open_(path, mode="r"):
    if type(path) is not str or not path.startswith("/tmp/") or ".." in path or "\x00" in path:
        raise PermissionError("file access is limited to /tmp")
    if type(mode) is not str or any(c not in "rwab+t" for c in mode):
        raise ValueError("invalid mode")
    charge(CFG["hash_base"])
    if "b" in mode:
        f = _io.open(TMP_BASE[0] + path, mode)
    else:
        f = _io.open(TMP_BASE[0] + path, mode, encoding="utf-8")
    return TmpFile(f)


_FORBIDDEN_ATTRS = frozenset()
_METERED_NAMES = frozenset()


def setup_sized(extra_types, direct_in, forbidden_attrs, metered_names=()):
    global _SIZED, _DIRECT_IN, _FORBIDDEN_ATTRS, _METERED_NAMES
    _METERED_NAMES = frozenset(metered_names)
    _SIZED = frozenset((list, tuple, str, bytes, bytearray, dict, range, _b.set, _b.frozenset,
                        type({}.keys()), type({}.values()), type({}.items())) + tuple(extra_types))
    _DIRECT_IN = frozenset((dict, range, _b.set, _b.frozenset, type({}.keys())) + tuple(direct_in))
    _FORBIDDEN_ATTRS = frozenset(forbidden_attrs)
