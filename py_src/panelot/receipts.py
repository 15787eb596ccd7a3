"""Command receipts (seed §2.4): fingerprints, lookup, writing once, expiry.

A receipt is keyed by ``[clientId+submissionId]`` and written in the same transaction
as the command's effect. It holds the command type, its status, the terminal
response, ``createdAt``/``expiresAt`` and a ``requestFingerprint``: the SHA-256 of the
RFC 8785 canonical JSON of the command without ``type``, ``submissionId`` and
``clientId``. It never holds the input itself.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import rfc8785

from .errors import ConflictError
from .idb import Database, Transaction
from .idb.errors import ValidationError

__all__ = [
    "RECEIPT_TTL_MS",
    "cleanup_receipts",
    "fingerprint",
    "find_receipt",
    "list_receipts",
    "receipt_id",
    "write_receipt",
]

RECEIPT_TTL_MS = 30 * 24 * 3600 * 1000
"""How long a receipt is kept for replays: 30 days."""

_TRANSPORT = ("type", "submissionId", "clientId")


def fingerprint(command: dict[str, Any]) -> str:
    """SHA-256 (hex) of the RFC 8785 canonical JSON of the command minus transport identity."""
    rest = {k: v for k, v in command.items() if k not in _TRANSPORT}
    canonical = _fast_canonical(rest)
    if canonical is None:
        try:
            canonical = rfc8785.dumps(rest)
        except (rfc8785.CanonicalizationError, TypeError, ValueError) as exc:
            raise ValidationError(
                f"payload: cannot be canonicalized ({exc})", field="payload"
            ) from None
    return hashlib.sha256(canonical).hexdigest()


_SAFE_INT = 2**53 - 1
_FAST_DEPTH = 64


def _fast_canonical(value: dict[str, Any]) -> bytes | None:
    """RFC 8785 bytes of ``value`` by the C JSON encoder, or ``None`` when it may differ.

    For plain dicts with ASCII keys (their code-point order is RFC 8785's UTF-16 order),
    lists, strings, booleans, ``None`` and safe integers, sorted compact ``json.dumps``
    without ASCII escaping writes exactly RFC 8785's text: the same escapes, the same
    integers. Floats (ECMAScript number formatting), other keys and types take the
    reference encoder instead, and so do strings that are not valid UTF-8 (lone
    surrogates), for which it raises.
    """
    if not _plain(value, 0):
        return None
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    try:
        return text.encode()
    except UnicodeEncodeError:
        return None


def _plain(value: Any, depth: int) -> bool:
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return bool(-_SAFE_INT <= value <= _SAFE_INT)
    if depth > _FAST_DEPTH:
        return False
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str or not key.isascii() or not _plain(item, depth + 1):
                return False
        return True
    if kind is list:
        for item in value:
            if not _plain(item, depth + 1):
                return False
        return True
    return False


def receipt_id(client_id: str, submission_id: str) -> str:
    """The primary key of a receipt: the JSON pair of its two ids."""
    return json.dumps([client_id, submission_id])


async def find_receipt(
    tx: Transaction, client_id: str, submission_id: str, fp: str
) -> dict[str, Any] | None:
    """Return the receipt of a submission, or ``None``; ConflictError if its fingerprint differs."""
    found: dict[str, Any] | None = await tx.table("commandReceipts").get(
        receipt_id(client_id, submission_id)
    )
    if found is not None and found.get("requestFingerprint") != fp:
        raise ConflictError(
            f"submission {submission_id!r} of client {client_id!r} was already used for a "
            "different request",
            field="submissionId",
        )
    return found


async def write_receipt(
    tx: Transaction,
    command: dict[str, Any],
    fp: str,
    response: Any,
    now: int,
    status: str = "completed",
) -> None:
    """Write a terminal receipt; ``add`` refuses to overwrite an existing one."""
    await tx.table("commandReceipts").add(
        {
            "id": receipt_id(command["clientId"], command["submissionId"]),
            "clientId": command["clientId"],
            "submissionId": command["submissionId"],
            "commandType": command["type"],
            "status": status,
            "response": response,
            "requestFingerprint": fp,
            "createdAt": now,
            "expiresAt": now + RECEIPT_TTL_MS,
        }
    )


async def cleanup_receipts(db: Database, now: int) -> int:
    """Delete receipts whose ``expiresAt`` has passed; return how many."""
    return await db.table("commandReceipts").where("expiresAt").below(now).delete()


async def list_receipts(
    db: Database, client_id: str | None = None, limit: int = 50
) -> list[dict[str, Any]]:
    """Newest receipts first (optionally of one client), for debugging."""
    table = db.table("commandReceipts")
    coll = table.order_by("createdAt").reverse()
    if client_id is not None:
        coll = coll.filter(lambda r: r.get("clientId") == client_id)
    return await coll.limit(limit).to_list()
