"""cowboy-py: the Python client SDK of the Cowboy chain.

Pure standard library (CPython ≥ 3.9). The pieces:

* :mod:`cowboy.keys` — secp256k1 keys and keystore v3 files shared with the
  Go CLI (``cowboy keys``);
* :mod:`cowboy.tx`, :mod:`cowboy.instructions`, :mod:`cowboy.cbor` —
  canonical CBOR transactions and payloads, byte-identical to the node;
* :class:`cowboy.Client` (sync) and :class:`cowboy.AsyncClient` (asyncio) —
  the node's HTTP API, fee estimation, submission, receipts, proofs, the SSE
  block stream, actors, libraries, jobs and timers;
* :mod:`cowboy.volume` — CBFS volume put/get through the Go ``cowboy`` binary;
* :mod:`cowboy.blobs` — blob commitments from receipts, verified against their multihash.
"""

from . import blobs
from .aio import AsyncClient
from .client import Client, TxOptions
from .errors import APIError, CowboyError, NotFoundError, TimeoutError
from .instructions import Call, Deploy, JobSpec, PublishLibrary, RemoveLibrary, SubmitJob, encode_args, encode_manifest
from .keys import KeyStore, PrivateKey, decrypt_key, encrypt_key
from .proof import Proof, verify_account, verify_proof
from .tx import Transaction
from .types import Address, Hash

__version__ = "0.1.0"

__all__ = [
    "AsyncClient", "Client", "TxOptions", "APIError", "CowboyError", "NotFoundError", "TimeoutError",
    "Call", "Deploy", "JobSpec", "PublishLibrary", "RemoveLibrary", "SubmitJob", "encode_args",
    "encode_manifest", "KeyStore", "PrivateKey", "decrypt_key", "encrypt_key", "Proof", "verify_account",
    "verify_proof", "Transaction", "Address", "Hash", "blobs",
]
