"""Low-level PVM host API. Every function is one synchronous request to
the Go host; Go charges the host-call cycles (spec §17.3) and cells."""

import _pvm_cbor
import _pvm_rt

CTX = {}
RESERVED_KEYS = frozenset((b"__OWNER__", b"__INITIALIZED__", b"__STATE__"))


class HostError(Exception):
    """A host call failed (insufficient balance, unknown address, ...)."""


def _call(op, **args):
    return _pvm_rt.HOST[0](op, args)


def _key(key):
    if type(key) is str:
        return key.encode("utf-8")
    if type(key) is bytes:
        return key
    raise TypeError("storage keys must be str or bytes")


def _addr(a):
    if type(a) is bytes and len(a) == 20:
        return a
    if type(a) is str:
        s = a[2:] if a.startswith("0x") else a
        if len(s) == 40:
            return bytes.fromhex(s)
    raise ValueError("address must be 20 bytes or a 0x-prefixed hex string")


def storage_get(key):
    return _call("storage_get", key=_key(key))


def storage_set(key, value):
    k = _key(key)
    if k in RESERVED_KEYS:
        raise PermissionError("storage key is reserved: " + k.decode("utf-8", "replace"))
    if type(value) is not bytes:
        raise TypeError("storage values must be bytes")
    _call("storage_set", key=k, val=value)


def storage_delete(key):
    k = _key(key)
    if k in RESERVED_KEYS:
        raise PermissionError("storage key is reserved: " + k.decode("utf-8", "replace"))
    _call("storage_delete", key=k)


def emit_event(topic, data=b""):
    if type(topic) is not str:
        raise TypeError("topic must be a string")
    if type(data) is not bytes:
        data = _pvm_cbor.dumps(data)
    _call("emit_event", topic=topic, data=data)


def send(to, handler, payload=None, value=0):
    if type(handler) is not str:
        raise TypeError("handler must be a string")
    if type(value) is not int or value < 0:
        raise ValueError("value must be a non-negative int")
    return _call("send", to=_addr(to), handler=handler, payload=_pvm_cbor.dumps(payload), amount=value)


def transfer(to, value):
    if type(value) is not int or value < 0:
        raise ValueError("value must be a non-negative int")
    _call("transfer", to=_addr(to), amount=value)


def balance(addr=None):
    return _call("balance", to=_addr(addr) if addr is not None else CTX["actor"])


def block_info():
    return _call("block_info")


def randomness(label=b""):
    if type(label) is str:
        label = label.encode("utf-8")
    return _call("randomness", label=label)


_BUILTIN_OPS = frozenset(("storage_get", "storage_set", "storage_delete", "emit_event", "send", "transfer",
                          "balance", "block_info", "randomness"))


def host_call(op, **args):
    """Call a host extension op (timers, jobs, signature checks, ...) served
    by the chain's ExtendedHost. Arguments must be CBOR-encodable."""
    if type(op) is not str or op in _BUILTIN_OPS:
        raise ValueError("not an extension op: %r" % (op,))
    _pvm_cbor.dumps(args)
    return _call(op, args=args)


def self_address():
    return CTX["actor"]


def caller():
    return CTX["caller"]


def origin():
    return CTX["origin"]


def value():
    return CTX["value"]


def depth():
    return CTX["depth"]


def read_only():
    return CTX["read_only"]
