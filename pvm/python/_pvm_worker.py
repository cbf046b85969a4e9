"""One forked child = one call. Frames on the call socket are a 4-byte
big-endian length followed by a CBOR map with key "t" (type)."""

import gc
import os
import resource
import socket
import struct
import sys
import traceback

import _pvm_cbor as cbor
import _pvm_env
import _pvm_rt as rt
import _pvm_validate
import pvm_host

MAX_FRAME = 64 << 20


class Chan:
    def __init__(self, sock):
        self.sock = sock

    def _recv_exact(self, n):
        buf = bytearray()
        while len(buf) < n:
            b = self.sock.recv(n - len(buf))
            if not b:
                raise EOFError("host closed the call socket")
            buf += b
        return bytes(buf)

    def recv(self):
        (n,) = struct.unpack(">I", self._recv_exact(4))
        if n > MAX_FRAME:
            raise EOFError("frame too large")
        return cbor.loads(self._recv_exact(n))

    def send(self, msg):
        b = cbor.dumps(msg)
        self.sock.sendall(struct.pack(">I", len(b)) + b)


STICKY = frozenset(("OutOfCycles", "OutOfCells", "ReadOnlyViolation", "MemoryLimit", "TmpLimit"))


def make_host(chan):
    def host(op, args):
        if rt.ABORT[0] is not None:
            rt.abort(*rt.ABORT[0])
        msg = {"t": "host", "op": op}
        msg.update(args)
        chan.send(msg)
        r = chan.recv()
        cy = r.get("cy", 0)
        if cy:
            rt.K[0] -= cy
        if r.get("t") == "ok":
            if rt.K[0] < 0:
                rt.oot()
            return r.get("v")
        kind = r.get("kind", "HostError")
        msg = r.get("msg", "host call failed")
        if kind in STICKY:
            rt.abort(kind, msg)
        if rt.K[0] < 0:
            rt.oot()
        raise pvm_host.HostError(msg)
    return host


def _actor_line(tb):
    line = None
    while tb is not None:
        fn = tb.tb_frame.f_code.co_filename
        if fn == "<actor>" or fn.startswith("<lib:"):
            line = (fn, tb.tb_lineno)
        tb = tb.tb_next
    return line


def _exc_message(e):
    try:
        s = rt.sanitize(str(e))
    except BaseException:
        s = ""
    msg = type(e).__name__ + (": " + s if s else "")
    where = _actor_line(e.__traceback__)
    if where:
        msg += " (%s line %d)" % where
    return msg[:1024]


def _decode_args(payload):
    if not payload:
        return (), {}
    v = cbor.loads(payload)
    if v is None:
        return (), {}
    if type(v) is list:
        return tuple(v), {}
    if type(v) is dict and all(type(k) is str for k in v):
        return (), v
    return (v,), {}


def _enc_hook(v):
    from cowboy_sdk.collections import ordered_set
    if isinstance(v, ordered_set):
        return list(v)
    return v


def _state_hook(v):
    # __STATE__ keeps sets and tuples (see _pvm_cbor tagged mode)
    from cowboy_sdk.collections import ordered_set, frozen_ordered_set
    if isinstance(v, frozen_ordered_set):
        return cbor.Tagged(cbor.TAG_FROZENSET, list(v))
    if isinstance(v, ordered_set):
        return cbor.Tagged(cbor.TAG_SET, list(v))
    return v


def _state_tags():
    from cowboy_sdk.collections import mutable_ordered_set, frozen_ordered_set
    # rebuilt without charging, like the lists of an untagged state
    return {cbor.TAG_TUPLE: tuple,
            cbor.TAG_SET: lambda v: mutable_ordered_set._pvm_from(dict.fromkeys(v)),
            cbor.TAG_FROZENSET: lambda v: frozen_ordered_set._pvm_from(dict.fromkeys(v))}


def _dump_state(d):
    return cbor.dumps(d, _enc_hook=_state_hook, tag_tuples=True)


def _find_actor(g):
    cand = None
    for k, v in g.items():
        if isinstance(v, type) and not k.startswith("_"):
            if getattr(v, "_pvm_actor", False):
                return v, True
            if k == "Actor":
                cand = v
    if cand is None:
        raise LookupError("no actor class: define `class Actor` or decorate a class with @actor")
    return cand, False


def _handler(cls, name, sdk, deploying=False):
    if not name or name.startswith("_"):
        raise LookupError("handler not callable: " + repr(name))
    f = getattr(cls, name, None)
    if f is None or not callable(f):
        raise LookupError("no such handler: " + name)
    if sdk:
        publics = [n for n in dir(cls) if getattr(getattr(cls, n, None), "_pvm_public", False)]
        if publics and not deploying and not getattr(f, "_pvm_public", False):
            raise LookupError("handler is not public: " + name)
    return name


def execute(chan, call):
    limits = call.get("limits", {})
    costs = call.get("costs", {})
    rt.configure(call["cycles_limit"], limits, costs)
    rt.HOST[0] = make_host(chan)
    import decimal
    decimal.setcontext(_pvm_env.DEC_CTX.copy())
    pvm_host.CTX.update({
        "actor": call["actor"], "caller": call["caller"], "origin": call["origin"],
        "value": call.get("value", 0), "depth": call.get("depth", 0), "read_only": call.get("read_only", False),
    })
    result = {"t": "done"}
    try:
        try:
            loader = _pvm_env.Loader(limits, costs, call.get("libs", {}))
            try:
                g, _mod = loader.exec_module("actor", call["code"], "<actor>")
            except _pvm_validate.Invalid as e:
                raise _Fail("ValidationError", "line %d col %d [%s] %s" % (e.line, e.col, e.rule, e.message))
            cls, sdk = _find_actor(g)
            try:
                args, kw = _decode_args(call.get("payload"))
            except (cbor.CBORError, ValueError, IndexError, TypeError, UnicodeDecodeError) as e:
                raise _Fail("InvalidPayload", "payload is not valid CBOR: " + str(e))
            plain_state = None
            if call.get("init"):
                gc.collect()  # drop the runtime's own garbage (see _check_cycles)
                inst = cls(*args, **kw)
                ret = None
            else:
                try:
                    hname = _handler(cls, call.get("handler", ""), sdk, call.get("deploying", False))
                except LookupError as e:
                    raise _Fail("HandlerNotFound", str(e))
                inst = cls.__new__(cls)
                if not sdk:
                    raw = pvm_host.storage_get(b"__STATE__")
                    plain_state = raw
                    if raw is not None:
                        info = {}
                        st = cbor.loads(raw, tags=_state_tags(), info=info)
                        if info.get("array_keys"):
                            # a state written before tagging, with tuple map
                            # keys: it re-encodes differently though unchanged
                            plain_state = _dump_state(st)
                        for k, v in st.items():
                            inst.__dict__[k] = v
                gc.collect()  # drop the runtime's own garbage (see _check_cycles)
                ret = getattr(inst, hname)(*args, **kw)
            if rt.ABORT[0] is not None:  # an abort swallowed by a user __exit__
                rt.abort(*rt.ABORT[0])
            _check_cycles()
            if not sdk:
                d = {k: v for k, v in inst.__dict__.items()}
                raw = _dump_state(d)
                if raw != plain_state:
                    if call.get("read_only"):
                        raise _Fail("ReadOnlyViolation", "state modified in a read-only call")
                    rt.HOST[0]("storage_set", {"key": b"__STATE__", "val": raw})
            out = cbor.dumps(ret, _enc_hook=_enc_hook)
            mr = int(limits.get("max_return_bytes", 1 << 20))
            if len(out) > mr:
                raise _Fail("ReturnTooLarge", "return value larger than %d bytes" % mr)
            rt.charge(len(out) * rt.PER_CHAR)
            if rt.ABORT[0] is not None:
                rt.abort(*rt.ABORT[0])
            result["ok"] = True
            result["ret"] = out
        except rt.Abort:
            raise
        except _Fail:
            raise
        except cbor.CBORError as e:
            raise _Fail("ActorException", "CBORError: " + str(e))
        except MemoryError:
            raise _Fail("MemoryLimit", "memory limit exceeded (address space)")
        except RecursionError as e:
            raise _Fail("RecursionLimit", "recursion limit exceeded")
        except pvm_host.HostError as e:
            raise _Fail("HostError", _exc_message(e))
        except Exception as e:
            raise _Fail("ActorException", _exc_message(e))
    except rt.Abort as a:
        kind, msg = rt.ABORT[0] or (a.kind, a.msg)
        result = {"t": "done", "ok": False, "kind": kind, "msg": msg}
    except _Fail as f:
        if rt.ABORT[0] is not None:
            kind, msg = rt.ABORT[0]
        else:
            kind, msg = f.kind, f.msg
        result = {"t": "done", "ok": False, "kind": kind, "msg": msg}
    result["cycles"] = max(0, min(rt.used(), rt.LIMIT[0]))
    result["tmp"] = rt.TMP[0]
    result["mem"] = rt.MEM[0]
    return result


_FUNC = type(lambda: 0)


def _data_cycle(garbage):
    """True if the garbage holds an object that no garbage function or class
    reaches: a cycle of plain data (lists, dicts, instances) the actor made."""
    ids = {id(o) for o in garbage}
    seen = set()
    todo = [o for o in garbage if type(o) is _FUNC or isinstance(o, type)]
    while todo:
        o = todo.pop()
        if id(o) in seen:
            continue
        seen.add(id(o))
        todo.extend(r for r in gc.get_referents(o) if id(r) in ids and id(r) not in seen)
    return len(seen) < len(ids)


def _check_cycles():
    """Spec 002 §3: the cyclic collector is disabled, so creating a reference
    cycle must raise DeterminismError. Once the handler has returned, any
    cycle it created is either unreachable garbage (found here by one explicit
    collection over the call's own objects; the zygote's are frozen) or still
    reachable (e.g. from the state, which the encoder must walk). The count
    depends only on the call's object graph, so every node decides alike.
    The runtime's own garbage (the validator's ast helpers and the state
    decoder leave closure cycles) is collected just before the handler runs,
    so only cycles made while it ran count.

    Deviation, on purpose: cycles made by code structure are tolerated: a
    nested function that calls itself (function -> cell -> function) and a
    class defined inside the handler (class -> mro -> class), with whatever
    they reach. They are common idioms, the test is still a pure function of
    the object graph, and the worker process exits after the call anyway."""
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
        bad = _data_cycle(gc.garbage)
    finally:
        gc.set_debug(0)
        del gc.garbage[:]
    if bad:
        raise _Fail("DeterminismError", "reference cycle created (the cyclic garbage collector is disabled)")


class _Fail(Exception):
    def __init__(self, kind, msg):
        Exception.__init__(self, msg)
        self.kind = kind
        self.msg = msg


def validate(call):
    try:
        libs = _pvm_validate.validate(call["code"], call.get("limits", {}))
        return {"t": "done", "ok": True, "imports": libs}
    except _pvm_validate.Invalid as e:
        return {"t": "done", "ok": False, "kind": "ValidationError", "line": e.line, "col": e.col,
                "rule": e.rule, "msg": e.message}


def serve(chan):
    chan.send({"t": "hello", "pid": os.getpid()})
    try:
        call = chan.recv()
        sys.setrecursionlimit(int(call.get("limits", {}).get("c_recursion", 400)))
        if call.get("op") == "validate":
            res = validate(call)
        else:
            res = execute(chan, call)
    except EOFError:
        raise
    except BaseException:
        # A bug in the runtime, not in the actor: report it as a crash.
        sys.setrecursionlimit(1000)
        chan.send({"t": "crash", "msg": traceback.format_exc()[-4000:]})
        return
    chan.send(res)
