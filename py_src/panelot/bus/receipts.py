"""Command receipts: fingerprints, lookup, writing once, expiry.

A receipt is keyed by ``[clientId+submissionId]`` and written in the same transaction
as the command's effect. It holds the command type, its status, the terminal
response, ``createdAt``/``expiresAt`` and a ``requestFingerprint``: the SHA-256 of the
RFC 8785 canonical JSON of the command without ``type``, ``submissionId`` and
``clientId`` (lone surrogates escaped as ``JSON.stringify`` escapes them). It never
holds the input itself. Python reads a receipt one way: as a :class:`Receipt`,
through :func:`panelot.codec.decode`.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from panelot.canonical import canonical_json
from panelot.codec import Id, Natural, Raw, decode, invalid, open_record
from panelot.errors import ConflictError
from panelot.idb import Database, Transaction
from panelot.idb.errors import ValidationError

__all__ = [
    "RECEIPT_TTL_MS",
    "Receipt",
    "cleanup_receipts",
    "fingerprint",
    "find_receipt",
    "list_receipts",
    "receipt_from_record",
    "receipt_id",
    "write_receipt",
]

RECEIPT_TTL_MS = 30 * 24 * 3600 * 1000
"""How long a receipt is kept for replays: 30 days."""

_TRANSPORT = ("type", "submissionId", "clientId")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


@open_record
@dataclass(frozen=True, slots=True)
class Receipt:
    """A record of the ``commandReceipts`` table (camelCase on the wire).

    Read past keys it does not declare, as the table's hand-written check always did.
    """

    id: str
    client_id: Id
    submission_id: Id
    command_type: str
    status: str
    response: Raw
    request_fingerprint: str
    created_at: Natural
    expires_at: Natural

    def to_wire(self) -> dict[str, Any]:
        """The record as IndexedDB holds it (the response as it is, not copied)."""
        return {
            "id": self.id,
            "clientId": self.client_id,
            "submissionId": self.submission_id,
            "commandType": self.command_type,
            "status": self.status,
            "response": self.response,
            "requestFingerprint": self.request_fingerprint,
            "createdAt": self.created_at,
            "expiresAt": self.expires_at,
        }


def receipt_from_record(value: Any, where: str = "receipt") -> Receipt:
    """Read a stored receipt strictly (a restore's check); errors name the field under ``where``.

    Beyond its fields' types: its ``id`` is the receipt id of its two ids, and its
    fingerprint a SHA-256 in hex.
    """
    receipt = decode(Receipt, value, where)
    if receipt.id != receipt_id(receipt.client_id, receipt.submission_id):
        raise invalid(f"{where}.id", "is not the receipt id of its clientId and submissionId")
    if not _HEX64.match(receipt.request_fingerprint):
        raise invalid(f"{where}.requestFingerprint", "must be a SHA-256 in hex")
    return receipt


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
) -> Receipt | None:
    """Return the receipt of a submission, or ``None``; ConflictError if its fingerprint differs."""
    found = await tx.table("commandReceipts").get(receipt_id(client_id, submission_id))
    if found is None:
        return None
    receipt = decode(Receipt, found, "commandReceipts")
    if receipt.request_fingerprint != fp:
        raise ConflictError(
            f"submission {submission_id!r} of client {client_id!r} was already used for a "
            "different request",
            field="submissionId",
        )
    return receipt


async def write_receipt(
    tx: Transaction,
    command: dict[str, Any],
    fp: str,
    response: Any,
    now: int,
    status: str = "completed",
) -> None:
    """Write a terminal receipt; ``add`` refuses to overwrite an existing one."""
    receipt = Receipt(
        id=receipt_id(command["clientId"], command["submissionId"]),
        client_id=command["clientId"],
        submission_id=command["submissionId"],
        command_type=command["type"],
        status=status,
        response=response,
        request_fingerprint=fp,
        created_at=now,
        expires_at=now + RECEIPT_TTL_MS,
    )
    await tx.table("commandReceipts").add(receipt.to_wire())


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
