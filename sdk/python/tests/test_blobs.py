"""Blob commitments (docs/BLOBS.md) read and verified by cowboy-py: the
published multihash vectors, and against a real ``cowboyd --dev`` an actor's
``cowboy_sdk.blobs.commit`` read back from the receipt and checked."""

from __future__ import annotations

import os

import pytest

from cowboy import Client, PrivateKey, blobs, encode_args

RECORDER = b"""from cowboy_sdk import actor, blobs

@actor
class Recorder:
    def record(self, multihash, size, volume, path):
        blobs.commit(multihash, size, volume, path)
"""


def test_multihash_vectors() -> None:
    # go-multihash / rust-multihash: sha2-256("hello world"); js-multihash: "foo".
    assert blobs.multihash(b"hello world").hex() == "1220b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9"
    assert blobs.multihash(b"foo").hex() == "12202c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"
    code, digest = blobs.decode_multihash(bytes.fromhex("c0e40240") + bytes(64))  # blake2b-512's varint
    assert (code, len(digest)) == (0xB240, 64)
    with pytest.raises(ValueError):
        blobs.decode_multihash(bytes.fromhex("1220") + bytes(20))
    with pytest.raises(ValueError):
        blobs.decode_multihash(bytes.fromhex("9200") + bytes(1))
    with pytest.raises(blobs.UnsupportedHashError):
        blobs.multihash(b"x", blobs.BLAKE3)


def test_commit_read_and_verify(client: Client, funded_key: PrivateKey) -> None:
    c = client
    actor = c.wait(c.deploy(funded_key, RECORDER, salt="rec"))["receipt"]["created"]
    data = os.urandom(2 * blobs.INLINE_MAX + 1)
    mh, vol, path = blobs.multihash(data), bytes(range(32)), "/.blobs/x"
    r = c.wait(c.call(funded_key, actor, "record", encode_args(mh, len(data), vol, path)))
    (ref,) = blobs.commits(r)
    assert (ref.multihash, ref.size, ref.volume, ref.path, str(ref.actor)) == (mh, len(data), vol, path, actor)
    blobs.verify(ref, data)
    tampered = bytearray(data)
    tampered[7] ^= 1
    with pytest.raises(blobs.BlobMismatchError):
        blobs.verify(ref, bytes(tampered))
    with pytest.raises(blobs.BlobMismatchError):
        blobs.verify(ref, data[:-1])
