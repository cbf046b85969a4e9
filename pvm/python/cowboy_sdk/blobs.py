"""Blobs (spec 002 §7): an output of more than INLINE_MAX (64 KiB) bytes
is stored off chain as a content-addressed blob (in CBFS) and the actor
commits to it by its multihash. The chain never sees the content: the
runner or client that produced it uploads it and hands the actor the
reference (multihash, size, CBFS volume and path); readers fetch it and
verify it against the multihash (`cowboy blob get`).

A refused commit (malformed multihash, zero size, ...) raises HostError
whose text names the failure code ("blob_commit: BlobMalformed: ...") and
changes nothing.
"""

import pvm_host

INLINE_MAX = 64 * 1024
SHA2_256 = 0x12
BLAKE3 = 0x1e


def _mh(multihash):
    if type(multihash) is str:
        s = multihash[2:] if multihash.startswith("0x") else multihash
        multihash = bytes.fromhex(s)
    if type(multihash) is not bytes:
        raise ValueError("multihash must be bytes or hex")
    return multihash


def commit(multihash, size, volume=None, path=None):
    """Commit this actor to a blob of `size` bytes (40 cycles per KiB, the
    record's bytes as cells) and emit BlobCommitted. `volume` (32-byte
    CBFS volume id, bytes or hex) and `path` say where to fetch it;
    `multihash` is bytes or hex."""
    if type(size) is not int or size <= 0:
        raise ValueError("size must be a positive int")
    args = {"multihash": _mh(multihash), "size": size}
    if volume is not None:
        if type(volume) is str:
            volume = bytes.fromhex(volume[2:] if volume.startswith("0x") else volume)
        if type(volume) is not bytes or len(volume) != 32:
            raise ValueError("volume must be a 32-byte id (bytes or hex)")
        args["volume"] = volume
    if path is not None:
        if type(path) is not str:
            raise ValueError("path must be a string")
        args["path"] = path
    return pvm_host.host_call("blob_commit", **args)


def get(multihash, actor=None):
    """`actor`'s (default: this actor's) record of a blob: a dict with
    multihash, size, volume, path, actor and height, or None (100 cycles)."""
    args = {"multihash": _mh(multihash)}
    if actor is not None:
        args["actor"] = pvm_host._addr(actor)
    return pvm_host.host_call("blob_get", **args)
