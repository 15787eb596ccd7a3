"""Command receipts: fingerprints, lookup, writing once, expiry.

A receipt is keyed by ``[clientId+submissionId]`` and written in the same transaction
as the command's effect. It holds the command type, its status, the terminal
response, ``createdAt``/``expiresAt`` and a ``requestFingerprint``: the SHA-256 of the
RFC 8785 canonical JSON of the command without ``type``, ``submissionId`` and
``clientId`` (lone surrogates escaped as ``JSON.stringify`` escapes them). It never
holds the input itself.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from panelot.canonical import canonical_json
from panelot.errors import ConflictError
from panelot.idb import Database, Transaction
from panelot.idb.errors import ValidationError

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
    """SHA-256 (hex) of the RFC 8785 canonical JSON of the command minus transport identity.

    Lone surrogates in strings are written as ``JSON.stringify`` writes them
    (:func:`panelot.canonical.canonical_json`), so free text holding one is fingerprinted
    as a browser would, and never refused.
    """
    rest = {k: v for k, v in command.items() if k not in _TRANSPORT}
    try:
        canonical = canonical_json(rest)
    except (TypeError, ValueError) as exc:
        raise ValidationError(
            f"payload: cannot be canonicalized ({exc})", field="payload"
        ) from None
    except RecursionError:
        raise ValidationError(
            "payload: nested too deeply to be canonicalized", field="payload"
        ) from None
    return hashlib.sha256(canonical).hexdigest()


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
