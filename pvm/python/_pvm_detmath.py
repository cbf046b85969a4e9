"""Deterministic `math` for actors.

Transcendental functions never call the platform libm: they are evaluated
with CPython's decimal module (libmpdec, pure integer arithmetic) at 40
significant digits and rounded once to the nearest double, so every node
gets the same bits. sqrt uses IEEE-754 correctly rounded square root
(math.sqrt), which is exact by the standard on every platform.
"""

import decimal as _d
import math as _m

_CTX = _d.Context(prec=40, rounding=_d.ROUND_HALF_EVEN, Emax=999999, Emin=-999999,
                  traps=[_d.InvalidOperation, _d.DivisionByZero, _d.Overflow])
_D = _d.Decimal
_PI = _D("3.141592653589793238462643383279502884197169399375105820974944592307816406286208998628034825342117067982148086513282306647")
_TWO_PI = _d.Context(prec=200).multiply(_PI, 2)

pi = _m.pi
e = _m.e
tau = _m.tau
inf = _m.inf
nan = _m.nan

sqrt = _m.sqrt
floor = _m.floor
ceil = _m.ceil
trunc = _m.trunc
fabs = _m.fabs
copysign = _m.copysign
isnan = _m.isnan
isinf = _m.isinf
isfinite = _m.isfinite
ldexp = _m.ldexp
frexp = _m.frexp
modf = _m.modf
fmod = _m.fmod
gcd = _m.gcd
lcm = _m.lcm
isqrt = _m.isqrt
isclose = _m.isclose


def _f(x):
    if type(x) is not float:
        x = float(x)
    return x


def _out(dv):
    return float(dv)


def exp(x):
    x = _f(x)
    if x != x:
        return x
    if x > 709.8:
        raise OverflowError("math range error")
    if x < -745.2:
        return 0.0
    return _out(_CTX.exp(_D(x)))


def expm1(x):
    x = _f(x)
    if x != x:
        return x
    if x > 709.8:
        raise OverflowError("math range error")
    if x < -50:
        return -1.0
    return _out(_CTX.subtract(_CTX.exp(_D(x)), 1))


def log(x, base=None):
    x = _f(x)
    if x != x:
        return x
    if x <= 0.0:
        raise ValueError("math domain error")
    if x == inf:
        return x
    r = _CTX.ln(_D(x))
    if base is not None:
        b = _f(base)
        if b <= 0.0 or b == 1.0:
            raise ValueError("math domain error")
        r = _CTX.divide(r, _CTX.ln(_D(b)))
    return _out(r)


def log2(x):
    x = _f(x)
    if x > 0 and x != inf:
        m, ex = _m.frexp(x)
        if m == 0.5:
            return float(ex - 1)
    return log(x, 2.0)


def log10(x):
    x = _f(x)
    if x != x:
        return x
    if x <= 0.0:
        raise ValueError("math domain error")
    if x == inf:
        return x
    return _out(_CTX.log10(_D(x)))


def log1p(x):
    x = _f(x)
    if x <= -1.0:
        raise ValueError("math domain error")
    return _out(_CTX.ln(_CTX.add(_D(1), _D(x))))


def pow(x, y):
    x = _f(x)
    y = _f(y)
    if y == 0.0:
        return 1.0
    if x != x or y != y:
        return nan
    if x == 1.0:
        return 1.0
    if y == int(y) and abs(y) < 2 ** 53:
        yi = int(y)
        if x == 0.0:
            if yi < 0:
                raise ValueError("math domain error")
            return _m.copysign(0.0, x) if yi % 2 else 0.0
        try:
            r = _CTX.power(_D(x), yi)
        except _d.Overflow:
            raise OverflowError("math range error")
        return _out(r)
    if x < 0.0:
        raise ValueError("math domain error")
    if x == 0.0:
        if y < 0:
            raise ValueError("math domain error")
        return 0.0
    if x == inf:
        return inf if y > 0 else 0.0
    try:
        r = _CTX.exp(_CTX.multiply(_D(y), _CTX.ln(_D(x))))
    except _d.Overflow:
        raise OverflowError("math range error")
    if r.adjusted() > 310:
        raise OverflowError("math range error")
    return _out(r)


def _reduce(x):
    """x mod 2*pi in high precision; returns a Decimal in [-pi, pi]."""
    dx = _D(x)
    two_pi = _TWO_PI
    if abs(x) > 1e6:
        c = _d.Context(prec=400)
        k = c.divide_int(dx, two_pi)
        dx = c.subtract(dx, c.multiply(k, two_pi))
    else:
        c = _d.Context(prec=80)
        k = c.to_integral_value(c.divide(dx, two_pi))
        dx = c.subtract(dx, c.multiply(k, two_pi))
    c = _d.Context(prec=60)
    if dx > _PI:
        dx = c.subtract(dx, two_pi)
    elif dx < -_PI:
        dx = c.add(dx, two_pi)
    return dx


def _sin_series(dx):
    c = _d.Context(prec=45)
    x2 = c.multiply(dx, dx)
    term = dx
    total = dx
    n = 1
    while True:
        term = c.divide(c.multiply(-term, x2), (2 * n) * (2 * n + 1))
        if term == 0 or abs(term) < _D("1e-60"):
            break
        total = c.add(total, term)
        n += 1
    return total


def _cos_series(dx):
    c = _d.Context(prec=45)
    x2 = c.multiply(dx, dx)
    term = _D(1)
    total = _D(1)
    n = 1
    while True:
        term = c.divide(c.multiply(-term, x2), (2 * n - 1) * (2 * n))
        if term == 0 or abs(term) < _D("1e-60"):
            break
        total = c.add(total, term)
        n += 1
    return total


def sin(x):
    x = _f(x)
    if x != x or x in (inf, -inf):
        if x != x:
            return x
        raise ValueError("math domain error")
    if x == 0.0:
        return x
    return _out(_CTX.plus(_sin_series(_reduce(x))))


def cos(x):
    x = _f(x)
    if x != x or x in (inf, -inf):
        if x != x:
            return x
        raise ValueError("math domain error")
    return _out(_CTX.plus(_cos_series(_reduce(x))))


def tan(x):
    x = _f(x)
    if x != x or x in (inf, -inf):
        if x != x:
            return x
        raise ValueError("math domain error")
    if x == 0.0:
        return x
    r = _reduce(x)
    return _out(_CTX.divide(_sin_series(r), _cos_series(r)))


def _atan_dec(dx):
    # argument reduction: atan(x) = 2*atan(x / (1 + sqrt(1 + x^2))) twice, then series
    c = _d.Context(prec=45)
    neg = dx < 0
    if neg:
        dx = -dx
    inv = False
    if dx > 1:
        dx = c.divide(1, dx)
        inv = True
    for _ in range(3):
        dx = c.divide(dx, c.add(1, c.sqrt(c.add(1, c.multiply(dx, dx)))))
    x2 = c.multiply(dx, dx)
    term = dx
    total = dx
    n = 1
    while True:
        term = c.multiply(-term, x2)
        t = c.divide(term, 2 * n + 1)
        if t == 0 or abs(t) < _D("1e-60"):
            break
        total = c.add(total, t)
        n += 1
    total = c.multiply(total, 8)
    if inv:
        total = c.subtract(c.divide(_PI, 2), total)
    return -total if neg else total


def atan(x):
    x = _f(x)
    if x != x:
        return x
    if x == inf:
        return _out(_CTX.divide(_PI, 2))
    if x == -inf:
        return -_out(_CTX.divide(_PI, 2))
    if x == 0.0:
        return x
    return _out(_CTX.plus(_atan_dec(_D(x))))


def atan2(y, x):
    y = _f(y)
    x = _f(x)
    if x != x or y != y:
        return nan
    if x == 0.0 and y == 0.0:
        return _m.copysign(pi if _m.copysign(1.0, x) < 0 else 0.0, y)
    if x in (inf, -inf) or y in (inf, -inf):
        # rare; compute via limits
        if y in (inf, -inf) and x not in (inf, -inf):
            return _m.copysign(pi / 2, y)
        if x == inf:
            return _m.copysign(0.0, y) if y not in (inf, -inf) else _m.copysign(pi / 4, y)
        if y not in (inf, -inf):
            return _m.copysign(pi, y)
        return _m.copysign(3 * pi / 4, y)
    c = _d.Context(prec=45)
    if x > 0:
        r = _atan_dec(c.divide(_D(y), _D(x)))
    elif x < 0:
        a = _atan_dec(c.divide(_D(y), _D(x)))
        r = c.add(a, _PI) if y >= 0 else c.subtract(a, _PI)
    else:
        r = c.divide(_PI, 2) if y > 0 else -c.divide(_PI, 2)
    return _out(_CTX.plus(r))


def asin(x):
    x = _f(x)
    if not -1.0 <= x <= 1.0:
        raise ValueError("math domain error")
    if x == 1.0 or x == -1.0:
        return _m.copysign(_out(_CTX.divide(_PI, 2)), x)
    c = _d.Context(prec=45)
    dx = _D(x)
    r = _atan_dec(c.divide(dx, c.sqrt(c.subtract(1, c.multiply(dx, dx)))))
    return _out(_CTX.plus(r))


def acos(x):
    x = _f(x)
    if not -1.0 <= x <= 1.0:
        raise ValueError("math domain error")
    c = _d.Context(prec=45)
    dx = _D(x)
    if x == 1.0:
        return 0.0
    if x == -1.0:
        return _out(_CTX.plus(_PI))
    r = c.subtract(c.divide(_PI, 2), _atan_dec(c.divide(dx, c.sqrt(c.subtract(1, c.multiply(dx, dx))))))
    return _out(_CTX.plus(r))


def sinh(x):
    x = _f(x)
    if abs(x) > 710:
        raise OverflowError("math range error")
    c = _d.Context(prec=45)
    ex = c.exp(_D(x))
    return _out(_CTX.plus(c.divide(c.subtract(ex, c.divide(1, ex)), 2)))


def cosh(x):
    x = _f(x)
    if abs(x) > 710:
        raise OverflowError("math range error")
    c = _d.Context(prec=45)
    ex = c.exp(_D(x))
    return _out(_CTX.plus(c.divide(c.add(ex, c.divide(1, ex)), 2)))


def tanh(x):
    x = _f(x)
    if x > 30:
        return 1.0
    if x < -30:
        return -1.0
    if x == 0.0:
        return x
    c = _d.Context(prec=45)
    e2 = c.exp(_D(2 * x) if abs(x) < 1e300 else _D(x) * 2)
    return _out(_CTX.plus(c.divide(c.subtract(e2, 1), c.add(e2, 1))))


def hypot(*xs):
    s = _D(0)
    c = _d.Context(prec=60)
    for v in xs:
        v = _f(v)
        if v in (inf, -inf):
            return inf
        s = c.add(s, c.multiply(_D(v), _D(v)))
    return _out(_CTX.plus(c.sqrt(s)))


def degrees(x):
    return _out(_CTX.divide(_CTX.multiply(_D(_f(x)), 180), _PI))


def radians(x):
    return _out(_CTX.divide(_CTX.multiply(_D(_f(x)), _PI), 180))


def factorial(n):
    return _m.factorial(n)


def comb(n, k):
    return _m.comb(n, k)


def perm(n, k=None):
    return _m.perm(n, k)


def prod(it, start=1):
    r = start
    for v in it:
        r = r * v
    return r


def fsum(it):
    return _m.fsum(it)


__all__ = [n for n in dir() if not n.startswith("_")]
