"""cowboy_sdk (CIP-6): the high-level actor SDK.

    from cowboy_sdk import actor, public, runtime

    @actor
    class Counter:
        def __init__(self):
            self.storage["count"] = 0

        @public
        def increment(self):
            self.storage["count"] += 1
            return self.storage["count"]
"""

import _pvm_cbor
import pvm_host
from cowboy_sdk import collections  # noqa: F401  (cowboy_sdk.collections.ordered_set)
from cowboy_sdk.collections import OrderedSet, FrozenOrderedSet, ordered_set  # noqa: F401
from cowboy_sdk import tokens  # noqa: F401  (cowboy_sdk.tokens: CIP-20 platform tokens)
from cowboy_sdk import blobs  # noqa: F401  (cowboy_sdk.blobs: content-addressed blobs, spec 002 §7)

HostError = pvm_host.HostError


class Storage:
    """Dict-like view of the actor's persistent storage. Keys are str or
    bytes; values are any CBOR-encodable value."""

    __slots__ = ()

    def __getitem__(self, key):
        raw = pvm_host.storage_get(key)
        if raw is None:
            raise KeyError(key)
        return _pvm_cbor.loads(raw)

    def get(self, key, default=None):
        raw = pvm_host.storage_get(key)
        if raw is None:
            return default
        return _pvm_cbor.loads(raw)

    def __setitem__(self, key, value):
        pvm_host.storage_set(key, _pvm_cbor.dumps(value))

    def __delitem__(self, key):
        pvm_host.storage_delete(key)

    def __contains__(self, key):
        return pvm_host.storage_get(key) is not None

    def setdefault(self, key, default=None):
        raw = pvm_host.storage_get(key)
        if raw is None:
            self[key] = default
            return default
        return _pvm_cbor.loads(raw)

    def pop(self, key, *default):
        raw = pvm_host.storage_get(key)
        if raw is None:
            if default:
                return default[0]
            raise KeyError(key)
        pvm_host.storage_delete(key)
        return _pvm_cbor.loads(raw)


class _Runtime:
    __slots__ = ()

    def emit_event(self, topic, data=b""):
        pvm_host.emit_event(topic, data)

    def send(self, to, handler, payload=None, value=0):
        return pvm_host.send(to, handler, payload, value)

    def transfer(self, to, value):
        pvm_host.transfer(to, value)

    def balance(self, addr=None):
        return pvm_host.balance(addr)

    def block_info(self):
        return pvm_host.block_info()

    def randomness(self, label=b""):
        return pvm_host.randomness(label)

    def self_address(self):
        return pvm_host.self_address()

    def caller(self):
        return pvm_host.caller()

    def origin(self):
        return pvm_host.origin()

    def value(self):
        return pvm_host.value()

    # Native timers (spec 002 §3.3). A timer message calls
    # self.<handler>(data) (or self.<handler>() when data is None) on this
    # actor, paid from its balance; gba names a Gas Bidding Agent actor whose
    # get_gas_bid(context) handler bids for the timer's execution.

    def set_timer(self, height, handler, data=None, gba=None):
        """Schedule a one-shot timer at block `height`; returns its 32-byte id."""
        if type(height) is not int or height <= 0:
            raise ValueError("height must be a positive int")
        return pvm_host.host_call("set_timer", **_timer_args(handler, data, gba, height=height))

    def set_interval(self, every_n_blocks, handler, data=None, gba=None):
        """Schedule a timer every `every_n_blocks` blocks; returns its id."""
        if type(every_n_blocks) is not int or every_n_blocks <= 0:
            raise ValueError("every_n_blocks must be a positive int")
        return pvm_host.host_call("set_interval", **_timer_args(handler, data, gba, every=every_n_blocks))

    def cancel_timer(self, timer_id):
        """Cancel a pending timer of this actor; returns the refunded deposit."""
        if type(timer_id) is not bytes or len(timer_id) != 32:
            raise ValueError("timer_id must be 32 bytes")
        return pvm_host.host_call("cancel_timer", timer_id=timer_id)

    # Off-chain compute (CIP-2). submit_job escrows max_price + tip from this
    # actor's balance and returns the 32-byte job id; the verified result
    # (or the failure) arrives as self.<handler>(result) where result is a
    # dict with job_id, status ("verified"/"failed"), result, result_hash
    # and fail_reason.

    # Signature checks (spec 002 §16.1, §17.3). Both return a bool: False
    # for a well-formed signature that does not verify; malformed input
    # raises HostError.

    def verify_signature(self, scheme, pubkey_or_address, message, signature):
        """Check `signature` of `message` (10,000 cycles). scheme "secp256k1":
        keccak256(message) signed r||s||v (65 bytes), checked against a 20-byte
        address or a 33/65-byte public key; scheme "ed25519": a 64-byte
        signature under a 32-byte key."""
        if type(scheme) is not str:
            raise ValueError("scheme must be 'secp256k1' or 'ed25519'")
        if type(pubkey_or_address) is str:
            pubkey_or_address = pvm_host._addr(pubkey_or_address)
        if type(message) is str:
            message = message.encode("utf-8")
        return pvm_host.host_call("verify_signature", scheme=scheme, key=pubkey_or_address,
                                  message=message, signature=signature)

    def verify_eip712(self, typed_data, signature, address, chain_id=None):
        """Check that `address` signed the EIP-712 `typed_data` (JSON text or
        bytes, as eth_signTypedData_v4 takes it). With `chain_id`, typed data
        whose domain names another chain raises HostError ("wrong chain")."""
        if type(typed_data) is str:
            typed_data = typed_data.encode("utf-8")
        args = {"typed_data": typed_data, "signature": signature, "address": pvm_host._addr(address)}
        if chain_id is not None:
            if type(chain_id) is not int or chain_id < 0:
                raise ValueError("chain_id must be a non-negative int")
            args["chain_id"] = chain_id
        return pvm_host.host_call("verify_eip712", **args)

    def submit_job(self, spec):
        """Submit an off-chain job (a dict of JobSpec fields); returns its id."""
        if type(spec) is not dict:
            raise ValueError("spec must be a dict")
        return pvm_host.host_call("submit_job", **spec)


def _timer_args(handler, data, gba, **args):
    if type(handler) is not str or not handler:
        raise ValueError("handler must be a non-empty string")
    args["handler"] = handler
    if data is not None:
        args["data"] = _pvm_cbor.dumps(data)
    if gba is not None:
        args["gba"] = pvm_host._addr(gba)
    return args


runtime = _Runtime()
storage = Storage()


# Off-chain jobs as message-passing continuations (spec 002 "Message-Passing
# Continuation Model"): runner.submit_job records the job under its id (the
# correlation id) with the context the continuation needs, optionally with
# a timeout timer; the verified result (or the failure) arrives in a later
# block as a message from the Result Verifier to the @runner.continuation
# handler, which finds the record, cancels the timer and calls the handler
# with (result, context). If the timer fires first, the @runner.timeout
# handler gets (job_id, context) and a late result is dropped.
#
# In a class that marks handlers @public, mark continuations and timeout
# handlers @public too (the decorators stack in either order).

RESULT_VERIFIER = bytes(19) + b"\x03"
TIMER_ESCROW = bytes(18) + b"\x00\x10"


def _job_key(job_id):
    if type(job_id) is not bytes or len(job_id) != 32:
        raise ValueError("job_id must be 32 bytes")
    return "_runner/" + job_id.hex()


def _handler_name(h, marker, what):
    if type(h) is str and h:
        return h
    if callable(h) and getattr(h, marker, False):
        return h.__name__
    raise ValueError(what + " must be a handler name or a method decorated with @runner." + what)


class _Runner:
    __slots__ = ()

    def submit_job(self, spec, continuation, context=None, timeout_blocks=None, on_timeout=None):
        """Submit an off-chain job (a dict of JobSpec fields, see
        runtime.submit_job) whose result goes to `continuation`; returns the
        32-byte job id, which is also the correlation id. `context` is kept
        for the continuation (capture what it needs: state may change before
        the result arrives). With timeout_blocks, `on_timeout` runs if no
        result arrived that many blocks from now."""
        if type(spec) is not dict:
            raise ValueError("spec must be a dict")
        spec = dict(spec)
        spec["handler"] = _handler_name(continuation, "_runner_continuation", "continuation")
        timeout_name = None
        if timeout_blocks is not None or on_timeout is not None:
            if type(timeout_blocks) is not int or timeout_blocks <= 0:
                raise ValueError("timeout_blocks must be a positive int")
            timeout_name = _handler_name(on_timeout, "_runner_timeout", "timeout")
        job_id = runtime.submit_job(spec)
        timer = None
        if timeout_name is not None:
            timer = runtime.set_timer(runtime.block_info()["height"] + timeout_blocks, timeout_name, job_id)
        storage[_job_key(job_id)] = [spec["handler"], context, timer]
        return job_id

    def pending(self, job_id):
        """Whether job_id still awaits its result here."""
        return storage.get(_job_key(job_id)) is not None

    def continuation(self, fn):
        """Decorate the method that receives job results:
        fn(self, result, context), result being the dict with job_id, status
        ("verified"/"failed"), result, result_hash and fail_reason. Messages
        not from the Result Verifier are refused; results of jobs this actor
        did not submit through this continuation, or that already timed
        out, are dropped (event RunnerResultDropped)."""
        name = fn.__name__

        def handler(actor_self, res):
            if runtime.caller() != RESULT_VERIFIER:
                raise PermissionError("job results come only from the Result Verifier")
            key = _job_key(res["job_id"])
            rec = storage.get(key)
            if rec is None or rec[0] != name:
                runtime.emit_event("RunnerResultDropped", {"job_id": res["job_id"], "status": res["status"]})
                return None
            del storage[key]
            if rec[2] is not None:
                runtime.cancel_timer(rec[2])
            return fn(actor_self, res, rec[1])

        handler.__name__ = name
        handler.__doc__ = fn.__doc__
        handler._runner_continuation = True
        handler._pvm_public = getattr(fn, "_pvm_public", False)
        return handler

    def timeout(self, fn):
        """Decorate the method run when a job's timeout timer fires before
        its result: fn(self, job_id, context). The job is forgotten; its
        result, if it still comes, is dropped."""
        name = fn.__name__

        def handler(actor_self, job_id):
            if runtime.caller() != TIMER_ESCROW:
                raise PermissionError("job timeouts are run by the timer")
            key = _job_key(job_id)
            rec = storage.get(key)
            if rec is None:
                return None  # the result came first
            del storage[key]
            return fn(actor_self, job_id, rec[1])

        handler.__name__ = name
        handler.__doc__ = fn.__doc__
        handler._runner_timeout = True
        handler._pvm_public = getattr(fn, "_pvm_public", False)
        return handler


runner = _Runner()


# Ethereum events (spec 002 §16.3; chain/system/ethbridge,
# docs/ETHEREUM.md). A subscribed, confirmed Ethereum log arrives as a
# message from the bridge module (0x…11) to the handler named by the
# subscription (on_eth_event by default), with one dict: chain_id,
# contract (20 bytes), block_number, tx_hash (32 bytes), log_index, topics
# (a list of 32-byte values, topics[0] the event signature hash) and data
# (bytes). Each log is delivered once.

ETH_BRIDGE = bytes(19) + b"\x11"


def eth_event(fn):
    """Decorate the method that receives Ethereum events: fn(self, event).
    Messages not from the bridge module are refused, so nobody can forge
    an event by calling the handler directly."""

    def handler(actor_self, event):
        if runtime.caller() != ETH_BRIDGE:
            raise PermissionError("Ethereum events come only from the bridge module")
        return fn(actor_self, event)

    handler.__name__ = fn.__name__
    handler.__doc__ = fn.__doc__
    handler._eth_event = True
    handler._pvm_public = getattr(fn, "_pvm_public", False)
    return handler


def actor(cls):
    """Mark a class as a CIP-6 actor: instances get `self.storage`."""
    cls._pvm_actor = True
    cls.storage = storage
    return cls


def public(fn):
    """Mark a method as an externally callable handler. If a class marks any
    method public, only public methods can be invoked."""
    fn._pvm_public = True
    return fn


def view(fn):
    """A public handler that does not write state."""
    fn._pvm_public = True
    return fn


class ReentrancyError(Exception):
    """A @nonreentrant handler was entered again within one call chain
    (spec 002 §10, §12.3)."""


def nonreentrant(fn=None, key=None):
    """Guard a handler against re-entry within one call chain: a message
    chain that started at this actor's guarded handler (A.h -> B.x -> A.h,
    at any depth) raises ReentrancyError instead of running it again.
    Unrelated deliveries (sibling messages, other transactions) are not
    affected. Handlers that share `key` guard each other; the default key
    is the handler's name.

        @nonreentrant
        def withdraw(self, amount): ...

        @nonreentrant(key="vault")
        def deposit(self): ...
    """
    def wrap(f):
        k = key if key is not None else f.__name__
        if type(k) is not str or not k:
            raise ValueError("key must be a non-empty string")

        def guarded(*args, **kwargs):
            try:
                pvm_host.host_call("reentrancy_enter", key=k)
            except HostError as e:
                msg = str(e)
                if msg.startswith("ReentrancyError: "):
                    raise ReentrancyError(msg[len("ReentrancyError: "):]) from None
                raise
            return f(*args, **kwargs)

        guarded.__name__ = f.__name__
        guarded.__qualname__ = f.__qualname__
        guarded.__doc__ = f.__doc__
        guarded.__dict__.update(f.__dict__)
        guarded._pvm_guard = k
        return guarded

    if fn is not None:
        return wrap(fn)
    return wrap
