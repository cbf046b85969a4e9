"""Minimal deterministic CBOR (RFC 8949 core deterministic encoding).

Supported: None, bool, int (bignums via tags 2/3), float (shortest exact
form), str, bytes/bytearray, list/tuple, dict (keys sorted by their encoded
bytes). Decoding accepts the same subset. Nesting is capped so hostile
values fail with a deterministic error instead of exhausting the C stack.

Tagged mode (plain actor state, __STATE__): dumps(..., tag_tuples=True)
writes a tuple as tag TAG_TUPLE around its array, and an encode hook may
return Tagged(tag, value) (ordered sets: TAG_SET / TAG_FROZENSET around the
array of elements in insertion order). loads(..., tags={tag: ctor}) rebuilds
those; without tags a tag is ignored and its content returned (old states
and payloads keep decoding as before).
"""

TAG_SET = 258  # IANA "mathematical finite set"; here insertion ordered
TAG_TUPLE = 0x43420001  # Cowboy private: tuple
TAG_FROZENSET = 0x43420002  # Cowboy private: frozen (ordered) set


class Tagged:
    __slots__ = ("tag", "value")

    def __init__(self, tag, value):
        self.tag = tag
        self.value = value

import struct

MAX_DEPTH = 64


class CBORError(ValueError):
    pass


def _head(major, n):
    if n < 24:
        return bytes(((major << 5) | n,))
    if n < 0x100:
        return bytes(((major << 5) | 24, n))
    if n < 0x10000:
        return bytes(((major << 5) | 25,)) + n.to_bytes(2, "big")
    if n < 0x100000000:
        return bytes(((major << 5) | 26,)) + n.to_bytes(4, "big")
    return bytes(((major << 5) | 27,)) + n.to_bytes(8, "big")


def _float(v):
    if v != v:
        return b"\xf9\x7e\x00"
    for fmt, ib in (("e", 0xF9), ("f", 0xFA)):
        try:
            p = struct.pack(">" + fmt, v)
        except (OverflowError, struct.error):
            continue
        if struct.unpack(">" + fmt, p)[0] == v:
            return bytes((ib,)) + p
    return b"\xfb" + struct.pack(">d", v)


def dumps(obj, _depth=0, _enc_hook=None, tag_tuples=False):
    out = []
    _enc(obj, out, 0, _enc_hook, tag_tuples)
    return b"".join(out)


def _enc(v, out, depth, hook, tt=False):
    if depth > MAX_DEPTH:
        raise CBORError("value nested too deeply")
    t = type(v)
    if v is None:
        out.append(b"\xf6")
    elif v is True:
        out.append(b"\xf5")
    elif v is False:
        out.append(b"\xf4")
    elif t is int:
        if 0 <= v < (1 << 64):
            out.append(_head(0, v))
        elif -(1 << 64) <= v < 0:
            out.append(_head(1, -1 - v))
        elif v >= 0:
            b = v.to_bytes((v.bit_length() + 7) // 8, "big")
            out.append(b"\xc2" + _head(2, len(b)) + b)
        else:
            n = -1 - v
            b = n.to_bytes((n.bit_length() + 7) // 8, "big")
            out.append(b"\xc3" + _head(2, len(b)) + b)
    elif t is float:
        out.append(_float(v))
    elif t is str:
        b = v.encode("utf-8")
        out.append(_head(3, len(b)))
        out.append(b)
    elif t is bytes or t is bytearray:
        out.append(_head(2, len(v)))
        out.append(bytes(v))
    elif t is list or t is tuple:
        if tt and t is tuple:
            out.append(_head(6, TAG_TUPLE))
        out.append(_head(4, len(v)))
        for x in v:
            _enc(x, out, depth + 1, hook, tt)
    elif t is Tagged:
        out.append(_head(6, v.tag))
        _enc(v.value, out, depth + 1, hook, tt)
    elif t is dict:
        items = []
        for k, x in v.items():
            kb = []
            _enc(k, kb, depth + 1, hook, tt)
            vb = []
            _enc(x, vb, depth + 1, hook, tt)
            items.append((b"".join(kb), b"".join(vb)))
        items.sort(key=lambda kv: kv[0])
        for i in range(1, len(items)):
            if items[i][0] == items[i - 1][0]:
                raise CBORError("duplicate map key")
        out.append(_head(5, len(items)))
        for kb, vb in items:
            out.append(kb)
            out.append(vb)
    else:
        if hook is not None:
            r = hook(v)
            if r is not v:
                _enc(r, out, depth, hook if type(r) is Tagged else None, tt)
                return
        if isinstance(v, int) and not isinstance(v, bool):
            _enc(int(v), out, depth, hook, tt)
        elif isinstance(v, str):
            _enc(str(v), out, depth, hook, tt)
        elif isinstance(v, dict):
            _enc(dict(v), out, depth, hook, tt)
        elif isinstance(v, (list, tuple)):
            _enc(list(v), out, depth, hook, tt)
        else:
            raise CBORError("cannot encode value of type " + t.__name__)


def loads(data, tags=None, info=None):
    """tags: {tag: constructor} applied to tagged content (tagged mode).
    info: if a dict, info["array_keys"] is set when an untagged array was
    decoded as a map key (turned into a tuple, as before tagging existed)."""
    data = bytes(data)
    v, i = _dec(data, 0, 0, tags, info)
    if i != len(data):
        raise CBORError("trailing bytes")
    return v


def _arg(data, i, ai):
    if ai < 24:
        return ai, i
    if ai == 24:
        return data[i], i + 1
    if ai == 25:
        return int.from_bytes(data[i:i + 2], "big"), i + 2
    if ai == 26:
        return int.from_bytes(data[i:i + 4], "big"), i + 4
    if ai == 27:
        return int.from_bytes(data[i:i + 8], "big"), i + 8
    raise CBORError("indefinite or reserved length not supported")


def _dec(data, i, depth, tags=None, info=None):
    if depth > MAX_DEPTH:
        raise CBORError("value nested too deeply")
    if i >= len(data):
        raise CBORError("truncated")
    ib = data[i]
    i += 1
    major, ai = ib >> 5, ib & 31
    if major == 7:
        if ai == 20:
            return False, i
        if ai == 21:
            return True, i
        if ai == 22 or ai == 23:
            return None, i
        if ai == 25:
            return struct.unpack(">e", data[i:i + 2])[0], i + 2
        if ai == 26:
            return struct.unpack(">f", data[i:i + 4])[0], i + 4
        if ai == 27:
            return struct.unpack(">d", data[i:i + 8])[0], i + 8
        raise CBORError("unsupported simple value")
    n, i = _arg(data, i, ai)
    if i > len(data):
        raise CBORError("truncated")
    if major == 0:
        return n, i
    if major == 1:
        return -1 - n, i
    if major == 2 or major == 3:
        if i + n > len(data):
            raise CBORError("truncated")
        b = data[i:i + n]
        if major == 3:
            return b.decode("utf-8"), i + n
        return b, i + n
    if major == 4:
        if n > len(data):
            raise CBORError("truncated")
        out = []
        for _ in range(n):
            v, i = _dec(data, i, depth + 1, tags, info)
            out.append(v)
        return out, i
    if major == 5:
        if n > len(data):
            raise CBORError("truncated")
        out = {}
        for _ in range(n):
            k, i = _dec(data, i, depth + 1, tags, info)
            if type(k) is list:
                k = tuple(k)
                if info is not None:
                    info["array_keys"] = True
            v, i = _dec(data, i, depth + 1, tags, info)
            out[k] = v
        return out, i
    if major == 6:
        v, i = _dec(data, i, depth + 1, tags, info)
        if n == 2 and type(v) is bytes:
            return int.from_bytes(v, "big"), i
        if n == 3 and type(v) is bytes:
            return -1 - int.from_bytes(v, "big"), i
        if tags is not None and type(v) is list:
            ctor = tags.get(n)
            if ctor is not None:
                return ctor(v), i
        return v, i
    raise CBORError("bad major type")
