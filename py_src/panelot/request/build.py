"""The slimmed model request of a thread: context, slimming plan, resolved image bytes.

:func:`build_request` takes a session context (:func:`panelot.tree.views.context_of`), reads only
the metadata of the attachments it names, applies :func:`panelot.request.slimming.slim_context`
and resolves the images it still sends: at full size, or as a thumbnail.

**Thumbnails are derived attachments.** The first request that needs a thumbnail makes
it (with the host's thumbnailer, :mod:`panelot.host.thumbnails`, outside any
transaction) and stores it as an attachment of the original's thread, with the
original's ``kind``, ``trust``, ``provenance`` and ``createdAt``, ``sourceRef:
"thumbnail:<maxDim>:<originalId>"`` and ``meta: {w, h}`` (plus the original's title and
URL), in a transaction of its own that first checks no other context stored one
meanwhile. Later requests read the cached one, so the same tree gives the same request
byte for byte. The original is never changed or replaced. A thumbnail counts against the
attachment budget like any record (it is small); it shares its original's ``createdAt``
so eviction, oldest first, takes the two together, and ``thread.delete`` removes it with
its thread. An evicted thumbnail is made again.

The result (plain JSON)::

    {messages, turnContext, path,
     attachments: {id: {mime, size, dataBase64}                       full size
                     | {mime, size, dataBase64, thumbnail: true, w, h, originalSize}
                     | {evicted: true}},
     slimming: {seenImages, thumbnails, thumbnailFailures, staleStubs,
                unseenImageBytes, imageBudget, textFiles, textFilesCut, summaries},
     history?: {contextBudget, droppedNodes, firstNodeId}}

A context cut to the context budget (:func:`panelot.request.context.request_context_of`)
carries ``history``: the budget, how many visible nodes of the path were left out, and
the first node sent; ``messages``, ``path`` and everything slimmed cover the kept part
only.

Image blocks keep their ``attachmentId``; ``attachments`` is keyed by it, as in
``attachment.resolve``. Text-like file blocks become text blocks holding the file's
text, within the bounds of :mod:`panelot.request.file_text` (``textFiles`` lists them,
``textFilesCut`` those cut short); other file blocks and attachment-backed context
entries that are not stale stay references (read them with ``attachment.get``).

**Summaries.** A stale item whose attachment has a done summary
(:mod:`panelot.request.summaries`) is sent as that summary (``slimming.summaries`` lists
the originals): the one by the request's ``model``, else the done one with the lowest
id. Summaries are read only when the plan has stale attachment-backed items, and the
plan is then made again with them, so a request with none costs what it did.
"""

from __future__ import annotations

import base64
from typing import Any

from panelot.attachments.eviction import evict
from panelot.attachments.records import (
    ATTACHMENT_TABLES,
    AttachmentInput,
    attachment_meta,
    get_blob,
    put_attachment,
    read_bytes,
)
from panelot.host.thumbnails import THUMBNAIL_MAX_DIM, Thumbnail, Thumbnailer, ThumbnailError
from panelot.idb import Database, Transaction
from panelot.idb.errors import NotFoundError
from panelot.request.file_text import (
    REQUEST_TEXT_CHARS,
    decode_text,
    file_text_block,
    is_text_like,
    over_budget_block,
)
from panelot.request.slimming import (
    SlimOptions,
    SlimResult,
    own_message,
    referenced_attachments,
    slim_context,
)
from panelot.request.summaries import done_summaries

__all__ = ["build_request", "read_meta", "thumbnail_ref"]

Meta = dict[str, Any]


def thumbnail_ref(attachment_id: str, max_dim: int = THUMBNAIL_MAX_DIM) -> str:
    """The ``sourceRef`` marking the thumbnail of ``attachment_id`` at ``max_dim`` pixels."""
    return f"thumbnail:{max_dim}:{attachment_id}"


async def read_meta(db: Database, ids: list[str]) -> dict[str, Meta]:
    """Metadata of the live records among ``ids`` (one read; Blob contents never read)."""
    if not ids:
        return {}

    async def body(tx: Transaction) -> list[Any]:
        rows: list[Any] = await tx.table("attachments").bulk_get(ids)
        return rows

    rows = await db.transaction("r", ["attachments"], body)
    return {
        ident: attachment_meta(row)
        for ident, row in zip(ids, rows, strict=True)
        if row is not None and not row.get("deleting")
    }


async def _cached(tx: Transaction, thread_id: str, ref: str) -> Meta | None:
    """The stored thumbnail with ``sourceRef == ref`` in ``thread_id`` (lowest id), if any."""
    rows = await tx.table("attachments").where("threadId").equals(thread_id).to_list()
    found = [r for r in rows if r.get("sourceRef") == ref and not r.get("deleting")]
    return attachment_meta(min(found, key=lambda r: str(r["id"]))) if found else None


async def _store(db: Database, original: Meta, ref: str, thumb: Thumbnail, budget: int) -> Meta:
    """Store ``thumb`` as a derived attachment (within ``budget``), unless another context did."""
    thread_id = str(original["threadId"])
    await evict(db, max(budget - len(thumb.data), 0), thread_id)
    meta = {k: v for k, v in (original.get("meta") or {}).items() if k in ("title", "url")}

    async def body(tx: Transaction) -> Meta:
        existing = await _cached(tx, thread_id, ref)
        if existing is not None:
            return existing
        thumbnail = AttachmentInput(
            thread_id=thread_id,
            kind=str(original["kind"]),
            mime=thumb.mime,
            data=thumb.data,
            meta={**meta, "w": thumb.width, "h": thumb.height},
            trust=original.get("trust"),
            provenance=original.get("provenance"),
            source_ref=ref,
        )
        record = await put_attachment(tx, thumbnail, lambda: int(original["createdAt"]))
        return attachment_meta(record)

    stored: Meta = await db.transaction("rw", ATTACHMENT_TABLES, body)
    return stored


def _entry(meta: Meta, data: bytes) -> dict[str, Any]:
    encoded = base64.b64encode(data).decode("ascii")
    return {"mime": meta.get("mime"), "size": len(data), "dataBase64": encoded}


async def _full(db: Database, original: Meta) -> dict[str, Any]:
    """The request entry of an image sent at full size (``evicted`` if it went meanwhile)."""
    try:
        return _entry(original, (await read_bytes(db, str(original["id"])))[1])
    except NotFoundError:
        return {"evicted": True}


async def _thumbnail(
    db: Database, original: Meta, thumbnailer: Thumbnailer, budget: int, max_dim: int
) -> dict[str, Any]:
    """The request entry of an image sent as a thumbnail (made and cached if missing)."""
    ident, thread_id = str(original["id"]), str(original["threadId"])
    ref = thumbnail_ref(ident, max_dim)
    cached = await db.transaction("r", ["attachments"], lambda tx: _cached(tx, thread_id, ref))
    data: bytes | None = None
    if cached is not None:
        try:
            cached, data = await read_bytes(db, str(cached["id"]))
        except NotFoundError:  # evicted between the two reads: make it again
            cached = None
    if cached is None or data is None:
        _, blob = await get_blob(db, ident)
        thumb = await thumbnailer.thumbnail(blob, max_dim)  # foreign work: no transaction open
        cached = await _store(db, original, ref, thumb, budget)
        cached, data = await read_bytes(db, str(cached["id"]))
    meta = cached.get("meta") or {}
    return {
        **_entry(cached, data),
        "thumbnail": True,
        "w": meta.get("w"),
        "h": meta.get("h"),
        "originalSize": original.get("size"),
    }


async def _file_texts(
    db: Database, messages: list[dict[str, Any]], records: dict[str, Meta]
) -> tuple[list[str], list[str]]:
    """Put the text of attached text files in place of their blocks (see :mod:`.file_text`).

    Newest message first, within the request's budget; returns the ids sent as text and
    those cut short. A file evicted meanwhile, or whose bytes are not UTF-8, stays a
    reference.
    """
    sent: list[str] = []
    cut: list[str] = []
    room = REQUEST_TEXT_CHARS
    copied: set[int] = set()
    for i in range(len(messages) - 1, -1, -1):
        blocks = messages[i].get("content")
        if messages[i].get("role") != "user" or not isinstance(blocks, list):
            continue
        for pos, block in enumerate(blocks):  # a copy made below is written, not this
            ident = block.get("attachmentId") if isinstance(block, dict) else None
            meta = records.get(ident) if isinstance(ident, str) else None
            if meta is None or block.get("type") != "file":
                continue
            if not is_text_like(meta.get("mime") or block.get("mime"), block.get("name")):
                continue
            try:
                text = decode_text((await read_bytes(db, str(ident)))[1])
            except NotFoundError:
                continue
            if text is None:
                continue
            if i not in copied:  # it may share its lists with the context: copy it first
                messages[i] = own_message(messages[i])
                copied.add(i)
                blocks = messages[i]["content"]
            if room <= 0:
                blocks[pos] = over_budget_block(block, len(text))
            else:
                blocks[pos], used = file_text_block(block, text, room)
                room -= used
            sent.append(str(ident))
            if blocks[pos].get("truncated"):
                cut.append(str(ident))
    return sent, cut


async def _with_summaries(
    db: Database,
    context: dict[str, Any],
    records: dict[str, Meta],
    options: SlimOptions,
    slim: SlimResult,
    model: str | None,
) -> SlimResult:
    """The plan again with the done summaries of its stale items, if they have any."""
    if not slim.stale_ids:
        return slim
    thread_id = str(records[slim.stale_ids[0]]["threadId"])
    found = await done_summaries(db, thread_id, slim.stale_ids, model)
    return slim_context(context, records, options, found) if found else slim


async def build_request(
    db: Database,
    context: dict[str, Any],
    options: SlimOptions | None,
    thumbnailer: Thumbnailer,
    budget: int,
    max_dim: int = THUMBNAIL_MAX_DIM,
    model: str | None = None,
) -> dict[str, Any]:
    """The slimmed request for ``context`` (see the module docstring for its shape).

    Reads attachment metadata, then each image's bytes in a read of its own; a
    thumbnail that must be made is made between transactions by ``thumbnailer`` and
    stored in one of its own, within ``budget`` (both the store's host's). A thumbnail
    the browser cannot make (:class:`ThumbnailError`) is sent at full size and listed
    in ``slimming.thumbnailFailures``. ``model`` picks among the stale items' summaries.
    """
    opts = options or SlimOptions()
    named = referenced_attachments(context)
    records = await read_meta(db, named)
    slim = slim_context(context, records, opts)
    slim = await _with_summaries(db, context, records, opts, slim, model)
    attachments: dict[str, Any] = {}
    failures: list[str] = []
    thumbs, sent = set(slim.thumbnails), {*slim.full, *slim.thumbnails}
    for ident in [i for i in named if i in sent]:  # first appearance on the path
        original = records.get(ident)
        if original is None:
            attachments[ident] = {"evicted": True}
            continue
        if ident in thumbs:
            try:
                attachments[ident] = await _thumbnail(db, original, thumbnailer, budget, max_dim)
                continue
            except NotFoundError:  # the original was evicted meanwhile
                attachments[ident] = {"evicted": True}
                continue
            except ThumbnailError:
                failures.append(ident)
        attachments[ident] = await _full(db, original)
    texts, cut = await _file_texts(db, slim.context["messages"], records)
    return {
        **slim.context,
        "attachments": attachments,
        "slimming": {
            "seenImages": slim.seen,
            "thumbnails": [i for i in slim.thumbnails if i not in failures],
            "thumbnailFailures": failures,
            "staleStubs": slim.stale,
            "unseenImageBytes": slim.unseen_bytes,
            "imageBudget": opts.image_budget,
            "textFiles": texts,
            "textFilesCut": cut,
            "summaries": slim.summaries,
        },
    }
