"""Attachments on demand: bringing one attachment's bytes from the server when asked.

A pull fetches an attachment's bytes only while the attachment budget has room; the
others stay *on the server* (their state row says ``onServer``). An attachment evicted
here stays on the server too (eviction is local): its record is gone from
``panelot_v1`` while the state still has its row. :func:`fetch_attachment` brings
either back:

1. the state's row of ``attachments:<id>`` names the revision and the attachment's
   MD5 digest and length (no live row with them: an unknown attachment,
   ``NotFoundError``);
2. ``GET /db/attachments:<id>?rev=<that revision>``: the record, checked as a pull
   checks a leaf (its shape, and the digest of what it carries is the row's);
3. ``GET /db/attachments:<id>/bytes``, streamed into a Blob (``Host.http``'s ``blob``:
   in a page the bytes never sit whole in Python's heap), at most the attachment's
   length, its MD5 computed as it comes and checked against the row's digest and
   length (``SyncDigestError``, nothing written);
4. room in the attachment budget as ``attachment.put`` makes it: the oldest attachments
   of other threads are evicted first (an attachment larger than the whole budget is
   refused with ``QuotaExceededError``);
5. in one transaction of ``panelot_v1`` (:func:`~panelot.attachments.restore.restore_attachment`):
   the record, with its bytes as a Blob, unless another context wrote it meanwhile,
   and the nodes naming it lose their ``evicted`` marks; its thread must be here;
6. the state's row no longer says ``onServer``: a later push sends nothing (the record
   is what the server has) and a later pull fetches nothing (the revision is known).

Every step that decides is idempotent: a second fetch, or one racing the continuous
loop's pull in this or another context, finds the record here and writes nothing
(``fetched: false``).
"""

from __future__ import annotations

import urllib.parse
from typing import Any

from panelot.attachments.eviction import evict
from panelot.attachments.records import record_size, sized_rows
from panelot.attachments.restore import RESTORE_TABLES, restore_attachment
from panelot.errors import NetworkError, SyncDigestError
from panelot.idb import Database, QuotaExceededError, Transaction
from panelot.idb.blobs import make_blob
from panelot.idb.errors import NotFoundError, ValidationError
from panelot.sync.apply import check_record
from panelot.sync.couch import Couch
from panelot.sync.docid import doc_id
from panelot.sync.fetch import check_leaf
from panelot.sync.mapping import ATTACHMENT, content_digest, local_view

__all__ = ["MAX_FETCH_BYTES", "attachment_row", "fetch_attachment", "held", "locate"]

MAX_FETCH_BYTES = 64 * 1024 * 1024
"""The largest attachment fetched on demand (the largest ``attachment.put`` takes)."""


def _key(attachment_id: Any) -> str:
    if not isinstance(attachment_id, str) or not 0 < len(attachment_id) <= 200:
        raise ValidationError(
            "attachmentId: must be a string of 1 to 200 characters", field="attachmentId"
        )
    return attachment_id


async def attachment_row(state: Database, attachment_id: str) -> dict[str, Any] | None:
    """The state's row of a live attachment document with its bytes' metadata, or ``None``."""

    async def read(tx: Transaction) -> Any:
        return await tx.table("docs").get(doc_id("attachments", attachment_id))

    row = await state.transaction("r", ["docs"], read)
    if not isinstance(row, dict) or row.get("deleted") or row.get("table") != "attachments":
        return None
    meta = row.get("attachment")
    if not isinstance(meta, dict) or not isinstance(meta.get("digest"), str):
        return None
    length = meta.get("length")
    if not isinstance(length, int) or isinstance(length, bool) or length < 0:
        return None
    return row


async def held(db: Database, attachment_id: str) -> dict[str, Any] | None:
    """The attachment's record here without its Blob (``None``: not here, or being evicted)."""

    async def read(tx: Transaction) -> Any:
        return await tx.table("attachments").get(attachment_id)

    record = await db.transaction("r", ["attachments"], read)
    if not isinstance(record, dict) or record.get("deleting") or record.get(ATTACHMENT) is None:
        return None
    return {k: v for k, v in record.items() if k != ATTACHMENT}


async def locate(db: Database, state: Database | None, attachment_id: Any) -> dict[str, Any]:
    """``{attachmentId, held, onServer, size?, mime?}``: where the attachment's bytes are.

    ``state``: the sync state when sync is configured (else nothing is on a server).
    ``size`` and ``mime`` are the server's (its length and content type) when only there.
    """
    key = _key(attachment_id)
    here = await held(db, key)
    out: dict[str, Any] = {"attachmentId": key, "held": here is not None, "onServer": False}
    if here is not None or state is None:
        return out
    row = await attachment_row(state, key)
    if row is not None:
        meta = row["attachment"]
        mime = meta.get("content_type")
        out.update(onServer=True, size=meta["length"])
        out["mime"] = mime if isinstance(mime, str) else "application/octet-stream"
    return out


def _answer(record: dict[str, Any], fetched: bool) -> dict[str, Any]:
    out = {k: record.get(k) for k in ("threadId", "kind", "mime", "size")}
    return {"attachmentId": record["id"], **out, "fetched": fetched}


async def _settle(state: Database, attachment_id: str, digest: str) -> None:
    """The state's row no longer says ``onServer`` (its bytes are here now)."""
    did = doc_id("attachments", attachment_id)

    async def write(tx: Transaction) -> None:
        row = await tx.table("docs").get(did)
        if not isinstance(row, dict) or not row.get("onServer"):
            return
        meta = row.get("attachment")
        if isinstance(meta, dict) and meta.get("digest") == digest:
            await tx.table("docs").put({k: v for k, v in row.items() if k != "onServer"})

    await state.transaction("rw", ["docs"], write)


async def _server_record(couch: Couch, did: str, row: dict[str, Any]) -> dict[str, Any]:
    """Step 2: the record of the row's revision, checked; the server's view of it."""
    rev = row.get("rev")
    if not isinstance(rev, str):
        raise NotFoundError(
            f"sync.fetch: {did}: the sync state names no revision", field="attachmentId"
        )
    path = "/" + urllib.parse.quote(did, safe=":") + "?" + urllib.parse.urlencode({"rev": rev})
    leaf = await couch.call("GET", path, missing_ok=True)
    if leaf is None or (isinstance(leaf, dict) and leaf.get("_deleted") is True):
        raise NotFoundError(
            f"sync.fetch: {did}: the server no longer has the revision this device knows "
            "(a pull brings what changed)",
            field="attachmentId",
        )
    if not isinstance(leaf, dict):
        raise NetworkError(f"GET {couch.target.url}/{did}: not a document")
    reason = check_leaf(did, leaf, [rev])
    if reason is not None:
        raise NetworkError(f"GET {couch.target.url}/{did}: {reason}")
    record = local_view("attachments", leaf["record"])
    digest = row["attachment"]["digest"]
    stub = (leaf.get("_attachments") or {}).get(ATTACHMENT)
    if not isinstance(stub, dict) or stub.get("digest") != digest:
        raise SyncDigestError(
            f"sync.fetch: {did}: the server's attachment is not the one this device knows"
        )
    if content_digest(record, digest) != row.get("digest"):
        raise SyncDigestError(
            f"sync.fetch: {did}: the server's record is not the one this device knows"
        )
    return record


def _live_thread(thread: Any) -> bool:
    return isinstance(thread, dict) and not thread.get("deleting")


async def _thread_here(db: Database, thread_id: Any) -> bool:
    if not isinstance(thread_id, str):
        return False

    async def read(tx: Transaction) -> Any:
        return await tx.table("threads").get(thread_id)

    return _live_thread(await db.transaction("r", ["threads"], read))


async def _attachments_size(db: Database) -> int:
    async def read(tx: Transaction) -> int:
        return sum(record_size(r) for r in await sized_rows(tx) if not r.get("deleting"))

    return await db.transaction("r", ["attachments"], read)


async def fetch_attachment(
    db: Database, state: Database, couch: Couch, attachment_id: Any, budget: int
) -> dict[str, Any]:
    """Bring the attachment's bytes from the server (module docstring's steps).

    ``{attachmentId, threadId, kind, mime, size, fetched}``; ``fetched`` is false when
    the attachment was here already (nothing fetched nor written).
    """
    key = _key(attachment_id)
    here = await held(db, key)
    if here is not None:
        row = await attachment_row(state, key)
        if row is not None:
            await _settle(state, key, row["attachment"]["digest"])
        return _answer(here, False)
    row = await attachment_row(state, key)
    did = doc_id("attachments", key)
    if row is None:
        raise NotFoundError(
            f"sync.fetch: no attachment {key!r} is known on the sync server", field="attachmentId"
        )
    meta = row["attachment"]
    length, digest = meta["length"], meta["digest"]
    if length > MAX_FETCH_BYTES or length > budget:
        raise QuotaExceededError(
            f"sync.fetch: {did}: its {length} bytes are more than the "
            f"{'attachment budget' if length > budget else 'largest fetch'} "
            f"({min(budget, MAX_FETCH_BYTES)} bytes)"
        )
    record = await _server_record(couch, did, row)
    thread_id = record.get("threadId")
    if not await _thread_here(db, thread_id):  # before any download or eviction
        raise NotFoundError(
            f"sync.fetch: {did}: its thread {thread_id!r} is not here", field="attachmentId"
        )
    path = "/" + urllib.parse.quote(did, safe="") + "/" + ATTACHMENT  # ids may hold '/'
    mime = meta.get("content_type")
    kind = mime if isinstance(mime, str) else "application/octet-stream"
    got = await couch.get_blob(path, length, kind, lambda data, m: make_blob(db, data, m))
    if got is None:
        raise NotFoundError(
            f"sync.fetch: {did}: the server has no bytes for it", field="attachmentId"
        )
    blob, size, md5 = got
    if size != length or md5 != digest:
        raise SyncDigestError(f"sync.fetch: {did}: the bytes are not the digest the server gave")
    record[ATTACHMENT] = blob
    reason = check_record("attachments", record, did)
    if reason is not None:
        raise ValidationError(f"sync.fetch: {reason}", field="attachmentId")
    if budget - await _attachments_size(db) < length:
        await evict(db, max(budget - length, 0), thread_id if isinstance(thread_id, str) else None)

    async def write(tx: Transaction) -> bool:
        if not _live_thread(await tx.table("threads").get(thread_id)):  # decided here
            raise NotFoundError(
                f"sync.fetch: {did}: its thread {thread_id!r} is not here", field="attachmentId"
            )
        return await restore_attachment(tx, record)

    fetched = await db.transaction("rw", RESTORE_TABLES, write)
    await _settle(state, key, digest)
    return _answer(record, fetched)
