"""Exceptions, mapped from the node's stable error codes (docs/API.md
"Error codes"). Match on the class or on ``APIError.code``; never on the
message, which may change."""

from __future__ import annotations

import json
from typing import Any, Dict, Optional, Type

__all__ = [
    "CowboyError", "TransportError", "TimeoutError", "APIError", "NotFoundError", "BadRequestError",
    "InvalidTransactionError", "NonceError", "InsufficientBalanceError", "MempoolError", "FaucetError",
    "InvalidCodeError", "QueryFailedError", "InternalError", "TransactionFailedError", "ProofError",
    "error_from_response",
]


class CowboyError(Exception):
    """Base of every error this SDK raises on purpose."""


class TransportError(CowboyError):
    """The node could not be reached or answered something that is not HTTP."""


class TimeoutError(CowboyError):
    """A wait (for a receipt, a job, a block) ran out of time."""


class ProofError(CowboyError):
    """A state proof does not prove what it claims against the trusted root."""


class APIError(CowboyError):
    """An error answer ``{"error": {"code", "message"}}`` of the node."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.status = status
        self.code = code
        self.message = message


class NotFoundError(APIError):
    """``not_found`` / ``route_not_found`` (HTTP 404)."""


class BadRequestError(APIError):
    """A malformed request: ``bad_json``, ``bad_request``, ``bad_address`` …"""


class InvalidTransactionError(APIError):
    """The transaction itself is invalid (malformed, signature, limits, payload …)."""


class NonceError(InvalidTransactionError):
    """``nonce_too_low`` or ``nonce_gap``."""


class InsufficientBalanceError(InvalidTransactionError):
    """Balance below value + limits × max fees."""


class MempoolError(APIError):
    """``already_known``, ``replacement_underpriced``, ``account_pool_full``, ``pool_full``."""


class FaucetError(APIError):
    """``faucet_disabled`` or ``faucet_limit``."""


class InvalidCodeError(APIError):
    """Actor or library source refused by the PVM validator."""


class QueryFailedError(APIError):
    """A read-only query's handler failed (the actor's deterministic error)."""


class InternalError(APIError):
    """``internal``: a bug in the node."""


class TransactionFailedError(CowboyError):
    """The transaction was included but its receipt says ``failed``."""

    def __init__(self, tx_hash: str, receipt: Dict[str, Any]) -> None:
        super().__init__(f"transaction {tx_hash} failed: {receipt.get('error') or 'no error message'}")
        self.tx_hash = tx_hash
        self.receipt = receipt


_CODES: Dict[str, Type[APIError]] = {
    "route_not_found": NotFoundError,
    "not_found": NotFoundError,
    "bad_json": BadRequestError,
    "bad_request": BadRequestError,
    "bad_address": BadRequestError,
    "bad_hash": BadRequestError,
    "bad_block_id": BadRequestError,
    "bad_key": BadRequestError,
    "bad_cursor": BadRequestError,
    "bad_scope": BadRequestError,
    "bad_action": BadRequestError,
    "bad_height": BadRequestError,
    "malformed_tx": InvalidTransactionError,
    "non_canonical_tx": InvalidTransactionError,
    "tx_too_large": InvalidTransactionError,
    "wrong_chain_id": InvalidTransactionError,
    "missing_signature": InvalidTransactionError,
    "bad_signature": InvalidTransactionError,
    "nonce_too_low": NonceError,
    "nonce_gap": NonceError,
    "limits_exceeded": InvalidTransactionError,
    "intrinsic_cost": InvalidTransactionError,
    "fee_cap_below_tip": InvalidTransactionError,
    "insufficient_balance": InsufficientBalanceError,
    "invalid_access_list": InvalidTransactionError,
    "bad_payload": InvalidTransactionError,
    "unsupported_instruction": InvalidTransactionError,
    "reserved_address": InvalidTransactionError,
    "already_known": MempoolError,
    "replacement_underpriced": MempoolError,
    "account_pool_full": MempoolError,
    "pool_full": MempoolError,
    "faucet_disabled": FaucetError,
    "faucet_limit": FaucetError,
    "invalid_code": InvalidCodeError,
    "query_failed": QueryFailedError,
    "internal": InternalError,
}


def error_from_response(status: int, body: bytes) -> APIError:
    """The exception for a non-2xx answer: by the stable code when the body
    carries one, else ``http_<status>`` (as the Go SDK)."""
    code: Optional[str] = None
    message = body.decode("utf-8", "replace").strip()
    try:
        doc = json.loads(body)
        if isinstance(doc, dict) and isinstance(doc.get("error"), dict) and doc["error"].get("code"):
            code, message = str(doc["error"]["code"]), str(doc["error"].get("message", ""))
    except ValueError:
        pass
    if code is None:
        code = f"http_{status}"
        cls: Type[APIError] = NotFoundError if status == 404 else APIError
    else:
        cls = _CODES.get(code, NotFoundError if status == 404 else APIError)
    return cls(status, code, message)
