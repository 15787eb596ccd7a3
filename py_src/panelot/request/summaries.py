"""Attachment summaries: derived records holding a model's summary of a large attachment.

A summary is its own record in ``attachments``, made the way thumbnails are
(:mod:`panelot.request.build`): the original's ``threadId``, ``kind``, ``trust``,
``provenance`` and ``createdAt`` (so eviction, oldest first, takes the two together,
and ``thread.delete``, backup and restore carry it), ``mime: "text/plain"``,
``sourceRef: "summary:<originalId>:<model>"`` (looked up by exact string, never
parsed), no ``refs``, and::

    meta: {summaryOf: <originalId>, model, state: "pending"|"done"|"failed",
           title?, claimedAt?, error?}

Its ``bytes`` are the summary's UTF-8 text once ``done``, an empty Blob before. The
original is never changed.

**One pass per attachment and model.** :func:`claim` decides inside one read-write
transaction: a done summary, a pending one claimed less than :data:`PENDING_MS` ago
(another context is making it) or a failed one (unless ``again``) is not claimed again;
otherwise it writes the pending record. Only then, outside any transaction (a Blob's
bytes are a foreign await in the browser), the caller reads the original's text and
builds the prompt (:func:`summary_prompt`). :func:`store_summary` and
:func:`fail_summary` end the pass, each in a transaction of its own.

Only originals are summarized: a ``page_text`` record or a ``file`` that
:func:`panelot.request.file_text.is_text_like` accepts; never an image and never a
derived record (a ``sourceRef`` starting ``summary:`` or ``thumbnail:``, or a
retention summary's ``retention:summary``).

Requests read the done summaries of their stale items with :func:`done_summaries`;
:func:`summarized` says which items have one without reading any bytes.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from panelot.attachments.records import attachment_meta, get_record
from panelot.clock import new_id
from panelot.idb import Database, Transaction
from panelot.idb.blobs import blob_bytes, make_blob
from panelot.idb.errors import NotFoundError, ValidationError
from panelot.request.file_text import decode_text, is_text_like
from panelot.surrogates import check_well_formed
from panelot.tree.admission import check_admission

__all__ = [
    "ERROR_CHARS",
    "PENDING_MS",
    "PROMPT_CHARS",
    "SUMMARY_CHARS",
    "candidates",
    "check_text",
    "claim",
    "done_summaries",
    "fail_summary",
    "list_summaries",
    "prompt_text",
    "read_prompt",
    "refusal",
    "store_summary",
    "summarized",
    "summary_prompt",
    "summary_ref",
]

PENDING_MS = 10 * 60 * 1000
"""A pending summary claimed longer ago than this (its context died) may be claimed again."""

PROMPT_CHARS = 200_000
"""The most characters of an original's text a summary prompt carries (head and tail)."""

SUMMARY_CHARS = 100_000
"""The longest summary text :func:`store_summary` takes."""

ERROR_CHARS = 300
"""A failed summary's error is kept cut to this many characters."""

_DERIVED = ("summary:", "thumbnail:", "retention:")
_IMAGE_KINDS = ("image", "screenshot")
_SYSTEM = (
    "You write summaries of documents that a user attached to a conversation. The "
    "summary will stand in for the document in later turns, so keep what a later "
    "question may need: its subject and structure, key facts, names, numbers, dates, "
    "definitions, decisions and conclusions. Be dense and faithful; add nothing that "
    "is not in the document. Answer with the summary only."
)

Meta = dict[str, Any]


def summary_ref(original_id: str, model: str) -> str:
    """The ``sourceRef`` of the summary of ``original_id`` by ``model``."""
    return f"summary:{original_id}:{model}"


def check_text(text: Any) -> str:
    """A summary's text: not blank, at most :data:`SUMMARY_CHARS`; else naming ``text``."""
    if not isinstance(text, str) or not text.strip():
        raise ValidationError("text: must be a non-empty string", field="text")
    if len(text) > SUMMARY_CHARS:
        raise ValidationError(f"text: must be at most {SUMMARY_CHARS:,} characters", field="text")
    return check_well_formed(text, "text")


def _derived(record: Meta) -> bool:
    ref = record.get("sourceRef")
    return isinstance(ref, str) and ref.startswith(_DERIVED)


def _name(record: Meta) -> str | None:
    meta = record.get("meta")
    title = meta.get("title") if isinstance(meta, dict) else None
    return title if isinstance(title, str) else None


def refusal(record: Meta) -> str | None:
    """Why ``record`` is never summarized (``"image"``, ``"not_text"``), or ``None``."""
    mime = str(record.get("mime") or "")
    if record.get("kind") in _IMAGE_KINDS or mime.lower().startswith("image/"):
        return "image"
    if _derived(record):
        return "not_text"
    if record.get("kind") == "page_text":
        return None
    if record.get("kind") == "file" and is_text_like(mime, _name(record)):
        return None
    return "not_text"


def _summary_meta(record: Meta) -> Meta | None:
    """The ``meta`` of a live summary record, or ``None`` for any other record."""
    meta = record.get("meta")
    ref = record.get("sourceRef")
    if record.get("deleting") or not isinstance(ref, str) or not ref.startswith("summary:"):
        return None
    return meta if isinstance(meta, dict) and isinstance(meta.get("summaryOf"), str) else None


async def _thread_rows(tx: Transaction, thread_id: str) -> list[Meta]:
    rows: list[Meta] = await tx.table("attachments").where("threadId").equals(thread_id).to_list()
    rows.sort(key=lambda r: (r.get("createdAt", 0), str(r.get("id", ""))))
    return rows


async def _find(tx: Transaction, original: Meta, model: str) -> Meta | None:
    """The summary record of ``original`` by ``model`` (lowest id if several), if any."""
    ref = summary_ref(str(original["id"]), model)
    rows = await _thread_rows(tx, str(original["threadId"]))
    found = [r for r in rows if r.get("sourceRef") == ref and _summary_meta(r) is not None]
    return min(found, key=lambda r: str(r["id"])) if found else None


def _settled(meta: Meta, now: int) -> bool:
    """Whether a summary record stops a claim: done, failed, or pending and fresh."""
    claimed_at = meta.get("claimedAt")
    fresh = isinstance(claimed_at, int) and now - claimed_at < PENDING_MS
    return meta.get("state") != "pending" or fresh


async def candidates(
    tx: Transaction, thread_id: str, model: str, threshold: int, now: int
) -> list[Meta]:
    """The thread's originals to summarize with ``model``, oldest first.

    Text-like, at least ``threshold`` bytes, and with no summary record for ``model``,
    except a pending one whose claim is older than :data:`PENDING_MS` (its context
    died: :func:`claim` takes it again). Returns ``[{attachmentId, name, kind, size}]``.
    """
    rows = await _thread_rows(tx, thread_id)
    taken = {
        str(meta["summaryOf"])
        for r in rows
        if (meta := _summary_meta(r)) is not None
        and meta.get("model") == model
        and _settled(meta, now)
    }
    out: list[Meta] = []
    for r in rows:
        size = r.get("size")
        if r.get("deleting") or r["id"] in taken or refusal(r) is not None:
            continue
        if isinstance(size, int) and size >= threshold:
            out.append({"attachmentId": r["id"], "name": _name(r), "kind": r["kind"], "size": size})
    return out


async def claim(
    tx: Transaction, attachment_id: str, model: str, again: bool, now: int
) -> dict[str, Any]:
    """Claim the summary of ``attachment_id`` by ``model`` (see the module docstring).

    ``{claimed: true, summaryId}`` after writing the pending record, else
    ``{claimed: false, reason}``: ``done``, ``pending``, ``failed``, ``image`` or
    ``not_text``. NotFoundError (``attachmentId``) if the original is gone.
    """
    original = await get_record(tx, attachment_id)
    check_admission(await tx.table("threads").get(original["threadId"]))
    reason = refusal(original)
    if reason is not None:
        return {"claimed": False, "reason": reason}
    table = tx.table("attachments")
    existing = await _find(tx, original, model)
    if existing is not None:
        meta = dict(existing["meta"])
        state = meta.get("state")
        if state in ("done", "pending") and _settled(meta, now):
            return {"claimed": False, "reason": state}
        if state == "failed" and not again:
            return {"claimed": False, "reason": state}
        meta.pop("error", None)
        await table.put({**existing, "meta": {**meta, "state": "pending", "claimedAt": now}})
        return {"claimed": True, "summaryId": existing["id"]}
    meta = {"summaryOf": original["id"], "model": model, "state": "pending", "claimedAt": now}
    if _name(original) is not None:
        meta["title"] = _name(original)
    record: Meta = {
        "id": new_id(),
        "threadId": original["threadId"],
        "createdAt": original["createdAt"],
        "kind": original["kind"],
        "mime": "text/plain",
        "bytes": make_blob(tx.db, b"", "text/plain"),
        "size": 0,
        "sourceRef": summary_ref(str(original["id"]), model),
        "meta": meta,
    }
    for key in ("trust", "provenance"):
        if original.get(key) is not None:
            record[key] = original[key]
    await table.add(record)
    return {"claimed": True, "summaryId": record["id"]}


async def _pending(tx: Transaction, attachment_id: str, model: str) -> Meta:
    original = await get_record(tx, attachment_id)
    existing = await _find(tx, original, model)
    if existing is None:
        raise NotFoundError(
            f"attachment {attachment_id!r} has no summary by {model!r}; claim it first",
            field="attachmentId",
        )
    return existing


async def store_summary(
    tx: Transaction, attachment_id: str, model: str, text: str
) -> dict[str, Any]:
    """The claimed summary becomes ``done`` with ``text``; returns ``{summaryId, size}``.

    A summary already done keeps its text (the first pass to end wins).
    NotFoundError (``attachmentId``) if the original or the claimed record is gone.
    """
    existing = await _pending(tx, attachment_id, model)
    meta = dict(existing["meta"])
    if meta.get("state") == "done":
        return {"summaryId": existing["id"], "size": existing.get("size", 0)}
    data = check_text(text).encode("utf-8")
    meta.pop("error", None)
    record = {
        **existing,
        "bytes": make_blob(tx.db, data, "text/plain"),
        "size": len(data),
        "meta": {**meta, "state": "done"},
    }
    await tx.table("attachments").put(record)
    return {"summaryId": existing["id"], "size": len(data)}


async def fail_summary(
    tx: Transaction, attachment_id: str, model: str, error: str
) -> dict[str, Any]:
    """The claimed summary becomes ``failed``, ``error`` kept (cut); returns ``{summaryId}``.

    A done summary stays done.
    """
    existing = await _pending(tx, attachment_id, model)
    meta = dict(existing["meta"])
    if meta.get("state") != "done":
        kept = "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in error[:ERROR_CHARS])
        meta.update(state="failed", error=kept)
        await tx.table("attachments").put({**existing, "meta": meta})
    return {"summaryId": existing["id"]}


async def list_summaries(tx: Transaction, thread_id: str) -> list[Meta]:
    """``[{attachmentId, summaryId, model, state, size, error?}]`` of a thread, oldest first."""
    out: list[Meta] = []
    for r in await _thread_rows(tx, thread_id):
        meta = _summary_meta(r)
        if meta is None:
            continue
        item = {
            "attachmentId": meta["summaryOf"],
            "summaryId": r["id"],
            "model": meta.get("model"),
            "state": meta.get("state"),
            "size": r.get("size", 0),
        }
        if meta.get("error") is not None:
            item["error"] = meta["error"]
        out.append(item)
    return out


def prompt_text(text: str, limit: int = PROMPT_CHARS) -> str:
    """``text`` within ``limit`` characters: its head and tail around a note of the cut."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    left = len(text) - head - tail
    return f"{text[:head]}\n\n[… {left:,} characters left out …]\n\n{text[-tail:]}"


def summary_prompt(original: Meta, text: str) -> list[dict[str, Any]]:
    """The OpenAI-style chat ``messages`` asking a model for a summary of ``original``."""
    name = _name(original)
    what = "page text" if original.get("kind") == "page_text" else "file"
    label = f"{what} {name!r}" if name else f"attached {what}"
    url = (original.get("meta") or {}).get("url")
    where = f" from {url}" if isinstance(url, str) else ""
    size = original.get("size", len(text))
    head = f"Summarize this {label}{where} ({size:,} bytes):\n\n"
    return [
        {"role": "system", "content": _SYSTEM},
        {"role": "user", "content": head + prompt_text(text)},
    ]


async def read_prompt(db: Database, attachment_id: str) -> list[dict[str, Any]]:
    """The prompt for ``attachment_id``: its record read, then its Blob after that read."""

    async def body(tx: Transaction) -> Meta:
        return await get_record(tx, attachment_id)

    record = await db.transaction("r", ["attachments"], body)
    blob = record.get("bytes")
    data = b"" if blob is None else await blob_bytes(blob)  # no transaction open
    text = decode_text(data)
    if text is None:
        text = data.decode("utf-8", errors="replace")
    return summary_prompt(attachment_meta(record), text)


async def _chosen(
    tx: Transaction, thread_id: str, wanted: set[str], model: str | None
) -> dict[str, Meta]:
    """``{originalId: summary row}`` (no Blob: picked fields only) of the done summaries."""
    fields = ("id", "sourceRef", "meta", "deleting")  # no Blob handle crosses into Python
    table = tx.table("attachments")
    rows = await table.where("threadId").equals(thread_id).pick(*fields).to_list()
    chosen: dict[str, Meta] = {}
    for r in rows:
        meta = _summary_meta(r)
        if meta is None or meta.get("state") != "done" or meta["summaryOf"] not in wanted:
            continue
        best = chosen.get(str(meta["summaryOf"]))
        if best is None or _better(r, best, model):
            chosen[str(meta["summaryOf"])] = r
    return chosen


async def summarized(
    db: Database, thread_id: str, ids: Collection[str], model: str | None
) -> dict[str, str]:
    """``{originalId: summaryId}``: which of ``ids`` have a done summary (no bytes read).

    The summary :func:`done_summaries` would pick (``model``'s first).
    """
    wanted = set(ids)
    if not wanted:
        return {}

    async def body(tx: Transaction) -> dict[str, Meta]:
        return await _chosen(tx, thread_id, wanted, model)

    chosen = await db.transaction("r", ["attachments"], body)
    return {k: str(chosen[k]["id"]) for k in sorted(chosen)}


async def done_summaries(
    db: Database, thread_id: str, ids: Collection[str], model: str | None
) -> dict[str, str]:
    """``{originalId: text}``: the done summary of each of ``ids`` that has one.

    ``model``'s where done, else the done one with the lowest id. The records are read
    in one transaction, their Blobs after it. An id without a done summary is absent.
    """
    wanted = set(ids)
    if not wanted:
        return {}

    async def body(tx: Transaction) -> list[Meta]:
        chosen = await _chosen(tx, thread_id, wanted, model)
        keys = sorted(chosen)
        found = await tx.table("attachments").bulk_get([chosen[k]["id"] for k in keys])
        return [{**row, "original": k} for k, row in zip(keys, found, strict=True) if row]

    out: dict[str, str] = {}
    for row in await db.transaction("r", ["attachments"], body):
        blob = row.get("bytes")
        text = decode_text(await blob_bytes(blob)) if blob is not None else None  # after it
        if text:
            out[str(row["original"])] = text
    return out


def _better(row: Meta, best: Meta, model: str | None) -> bool:
    """Whether ``row`` is preferred to ``best``: the request's model first, then the lowest id."""
    mine, theirs = row["meta"].get("model") == model, best["meta"].get("model") == model
    if mine != theirs:
        return bool(mine)
    return str(row["id"]) < str(best["id"])
