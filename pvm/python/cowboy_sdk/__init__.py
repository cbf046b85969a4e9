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
