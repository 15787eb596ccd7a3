"""The ``attachments`` table: records whose bytes are a Blob.

A record, as Dexie code sees it (read as :class:`~panelot.attachments.stored.Attachment`)::

    {id, threadId, createdAt, kind, mime, bytes: Blob, size,
     trust?, provenance?, sourceRef?, refs?: {nodeIds?, runIds?, pluginId?},
     deleting?, meta?: {url?, title?, w?, h?}}

``size`` (an extension field) is the Blob's byte size, written with the record so the
attachment total is a sum over records and never reads a Blob's contents (see
:func:`attachment_total`). A record with ``deleting: true`` is being evicted: it is
invisible to reads and is deleted by the second step of an eviction or at start-up
(:mod:`panelot.attachments.eviction`).

Functions taking a ``tx`` run inside the caller's transaction (the bus puts a receipt
next to them); :func:`read_bytes` and :func:`get_blob` read the record in a
transaction of their own and then, for bytes, await the Blob after it has ended.
"""

from __future__ import annotations

from typing import Any

from panelot.attachments.stored import KINDS, PROVENANCES, TRUST_LEVELS, AttachmentInput
from panelot.clock import Clock, new_id, now_ms
from panelot.codec import id_field
from panelot.idb import Database, Transaction
from panelot.idb.blobs import blob_bytes, blob_size, is_blob, make_blob
from panelot.idb.errors import NotFoundError, ValidationError
from panelot.tree.nodes import get_node, get_thread

__all__ = [
    "ATTACHMENT_TABLES",
    "KINDS",
    "AttachmentInput",
    "MAX_PUT_BYTES",
    "MAX_SEND_BYTES",
    "PROVENANCES",
    "TRUST_LEVELS",
    "attach",
    "attachment_meta",
    "attachment_total",
    "get_blob",
    "get_record",
    "list_attachments",
    "put_attachment",
    "read_bytes",
]

ATTACHMENT_TABLES = ("threads", "nodes", "attachments")
"""The tables an attachment write covers."""

MAX_PUT_BYTES = 64 * 1024 * 1024
"""Largest attachment a command takes as base64 (decoded size)."""

MAX_SEND_BYTES = 20 * 1024 * 1024
"""Largest file a message may carry (each upload of ``message.send``, decoded size).

The side panel reads it from the ``file.readable`` query (``maxUploadBytes``) and refuses
a larger file when it is chosen; ``message.send`` refuses one from any caller.
"""

_META_FIELDS = {"url": str, "title": str, "w": int, "h": int}


def _choice(value: Any, name: str, allowed: tuple[str, ...], required: bool = True) -> Any:
    if value is None and not required:
        return None
    if value not in allowed:
        raise ValidationError(f"{name}: must be one of {list(allowed)}", field=name)
    return value


def _short_text(value: Any, name: str, limit: int) -> str:
    """A short text (``mime``, ``sourceRef``): 1 to ``limit`` characters, kept as given."""
    if not isinstance(value, str) or not 0 < len(value) <= limit:
        raise ValidationError(f"{name}: must be a string of 1 to {limit} characters", field=name)
    return value


def _meta(meta: Any) -> dict[str, Any] | None:
    if meta is None:
        return None
    if not isinstance(meta, dict):
        raise ValidationError("meta: must be an object", field="meta")
    out: dict[str, Any] = {}
    for key, value in meta.items():
        kind = _META_FIELDS.get(key)
        if kind is None:
            raise ValidationError(f"meta.{key}: unknown field", field=f"meta.{key}")
        if value is None:
            continue
        if not isinstance(value, kind) or isinstance(value, bool):
            raise ValidationError(f"meta.{key}: has the wrong type", field=f"meta.{key}")
        out[key] = value
    return out


def attachment_meta(record: dict[str, Any]) -> dict[str, Any]:
    """The record without its Blob: plain JSON data for the wire."""
    return {k: v for k, v in record.items() if k != "bytes"}


async def put_attachment(
    tx: Transaction, attachment: AttachmentInput, clock: Clock = now_ms
) -> dict[str, Any]:
    """Store ``attachment.data`` (bytes, or a Blob handle kept as it is) as a new attachment.

    Returns the stored record (its ``bytes`` a Blob). The thread must exist; nodes in
    ``node_ids`` must exist too and are recorded in ``refs.nodeIds``.
    """
    a = attachment
    await get_thread(tx, a.thread_id)
    data = a.data
    if isinstance(data, bytes | bytearray | memoryview):
        raw = bytes(data)
        blob, size = make_blob(tx.db, raw, _short_text(a.mime, "mime", 200)), len(raw)
    elif is_blob(data):
        blob, size = data, blob_size(data)
    else:
        raise ValidationError("data: must be bytes or a Blob", field="data")
    record: dict[str, Any] = {
        "id": a.attachment_id or new_id(),
        "threadId": a.thread_id,
        "createdAt": clock(),
        "kind": _choice(a.kind, "kind", KINDS),
        "mime": _short_text(a.mime, "mime", 200),
        "bytes": blob,
        "size": size,
    }
    optional = {
        "trust": _choice(a.trust, "trust", TRUST_LEVELS, False),
        "provenance": _choice(a.provenance, "provenance", PROVENANCES, False),
        "sourceRef": None if a.source_ref is None else _short_text(a.source_ref, "sourceRef", 2000),
        "meta": _meta(a.meta),
    }
    record.update({k: v for k, v in optional.items() if v is not None})
    refs: dict[str, Any] = {}
    for i, node_id in enumerate(a.node_ids or []):
        await get_node(tx, id_field(node_id, f"nodeIds[{i}]"))
        refs.setdefault("nodeIds", []).append(node_id)
    if a.run_ids:
        refs["runIds"] = [id_field(r, f"runIds[{i}]") for i, r in enumerate(a.run_ids)]
    if a.plugin_id is not None:
        refs["pluginId"] = id_field(a.plugin_id, "pluginId")
    if refs:
        record["refs"] = refs
    await tx.table("attachments").add(record)
    return record


async def get_record(tx: Transaction, attachment_id: str) -> dict[str, Any]:
    """The live record of an attachment; NotFoundError if absent or being evicted."""
    record: dict[str, Any] | None = await tx.table("attachments").get(
        id_field(attachment_id, "attachmentId")
    )
    if record is None:
        raise NotFoundError(f"attachment {attachment_id!r} does not exist", field="attachmentId")
    if record.get("deleting"):
        raise NotFoundError(f"attachment {attachment_id!r} was evicted", field="attachmentId")
    return record


async def attach(
    tx: Transaction, attachment_id: str, node_id: str | None = None, run_id: str | None = None
) -> dict[str, Any]:
    """Record that a node (and/or a run) references an attachment; return its refs."""
    record = await get_record(tx, attachment_id)
    refs = dict(record.get("refs") or {})
    if node_id is not None:
        await get_node(tx, node_id)
        ids = list(refs.get("nodeIds") or [])
        if node_id not in ids:
            refs["nodeIds"] = [*ids, node_id]
    if run_id is not None:
        ids = list(refs.get("runIds") or [])
        if id_field(run_id, "runId") not in ids:
            refs["runIds"] = [*ids, run_id]
    record["refs"] = refs
    await tx.table("attachments").put(record)
    return refs


async def get_blob(db: Database, attachment_id: str) -> tuple[dict[str, Any], Any]:
    """``(metadata, blob)``: the Blob handle itself, its contents not copied (for display)."""

    async def body(tx: Transaction) -> dict[str, Any]:
        return await get_record(tx, attachment_id)

    record = await db.transaction("r", ["attachments"], body)
    return attachment_meta(record), record.get("bytes")


async def read_bytes(db: Database, attachment_id: str) -> tuple[dict[str, Any], bytes]:
    """``(metadata, bytes)``: the record is read in a transaction, the Blob after it."""
    meta, blob = await get_blob(db, attachment_id)
    if blob is None:
        return meta, b""
    return meta, await blob_bytes(blob)


async def list_attachments(
    tx: Transaction, thread_id: str | None = None, limit: int | None = None
) -> list[dict[str, Any]]:
    """Metadata of the live attachments (of one thread, or all), oldest ``createdAt`` first."""
    table = tx.table("attachments")
    if thread_id is None:
        rows = await table.order_by("createdAt").to_list()
    else:
        rows = await table.where("threadId").equals(thread_id).to_list()
        rows.sort(key=lambda r: (r.get("createdAt", 0), r.get("id", "")))
    live = [attachment_meta(r) for r in rows if not r.get("deleting")]
    return live if limit is None else live[:limit]


def record_size(record: dict[str, Any]) -> int:
    """A record's byte size: its ``size`` field, else its Blob's size (no contents read)."""
    size = record.get("size")
    if isinstance(size, int) and not isinstance(size, bool):
        return size
    blob = record.get("bytes")
    return blob_size(blob) if blob is not None and is_blob(blob) else 0


async def attachment_total(tx: Transaction) -> dict[str, int]:
    """``{total, count}`` over every attachment record (deleting ones included).

    A sum over the records' ``size`` fields: Blob handles are read with the records,
    their contents never. Chosen over a counter record because the ``attachments``
    table is shared with Dexie code, which would have to keep a counter in step.
    """
    rows = await sized_rows(tx)
    return {"total": sum(record_size(r) for r in rows), "count": len(rows)}


SIZE_FIELDS = ("id", "threadId", "createdAt", "size", "deleting")
"""The fields budget checks read: never the Blob, never the metadata."""


async def sized_rows(tx: Transaction, by_created: bool = False) -> list[dict[str, Any]]:
    """Every attachment's :data:`SIZE_FIELDS` (oldest first with ``by_created``).

    Only those fields cross into Python, so a budget check costs a few bytes per record.
    A record without a numeric ``size`` (written by other code) is read whole, once, to
    take its Blob's size.
    """
    table = tx.table("attachments")
    source = table.order_by("createdAt") if by_created else table.to_collection()
    rows: list[dict[str, Any]] = await source.pick(*SIZE_FIELDS).to_list()
    unsized = [r["id"] for r in rows if record_size(r) == 0 and r.get("size") != 0]
    if unsized:
        whole = {r["id"]: r for r in await table.bulk_get(unsized) if isinstance(r, dict)}
        for row in rows:
            if row["id"] in whole:
                row["size"] = record_size(whole[row["id"]])
    return rows
