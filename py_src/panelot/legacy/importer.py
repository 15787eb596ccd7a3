"""The browsa layout into Panelot threads: a plan read first, then written in one go.

:func:`plan_import` (outside any IndexedDB transaction) reads ``chrome.storage.local``
by explicit keys only — runs the legacy → split migration unless told not to — and
plans every thread. :func:`write_plan` then writes the threads, nodes and image
attachments inside one transaction (``legacy.import`` puts its receipt in it), all or
nothing. The result::

    {threads, skippedThreads, sessions, skippedSessions, historyImported, migrated,
     messages, images, imagesWithoutBytes, externalImages, pageContexts, skippedEntries,
     threadIds: {history: id | null, sessions: {sessionId: threadId}}}

``skippedSessions`` counts the ``savedSessions`` entries that cannot be imported: not
an object, or without a non-empty id free of lone surrogates (the id is a storage key
and a ``uuid5`` input). They are skipped like malformed history entries, and left in
the index as they are. A session name longer than a title may be is cut to
:data:`~panelot.tree.records.MAX_TITLE_CHARS`; names keep lone surrogates, as free text does.

Thread ids are derived from the source (``uuid5``), so a second import — with the same
submission (the receipt answers) or a new one (existing threads are skipped) — imports
once; ``messages`` .. ``skippedEntries`` count what this run imported.
The source keys are read, never changed (beyond the layout's own migration, which
keeps every message). Sessions keep their name (as the title), ``createdAt`` and
``pinned``; the global history becomes one thread titled after its first question.
Images become ``image`` attachments (provenance ``import``) with their exact bytes; an
image whose bytes the layout does not hold keeps an empty ``attachmentId`` with
``evicted: true`` and is counted in ``imagesWithoutBytes`` (see
:mod:`panelot.legacy.convert`).

An import is not an edit. A session's ``createdAt`` — when browsa saved the snapshot,
the only date a session has — becomes the thread's ``createdAt`` and ``updatedAt`` and every node's
``ts``, so the list orders the sessions by their dates and retention ages them. A
session whose ``createdAt`` is missing or not a time (:func:`~panelot.clock.stamp_from`),
and the global history, which has no date, take the time of the import (one reading
of the clock for the whole import).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from panelot.attachments.records import AttachmentInput, attach, put_attachment
from panelot.clock import Clock, stamp_from
from panelot.idb import Transaction
from panelot.idb.errors import ValidationError
from panelot.legacy.bounds import Budget, check_history
from panelot.legacy.convert import PAGE_CONTEXT_PREFIX, PlannedNode, plan_history
from panelot.legacy.layout import (
    HISTORY_KEY,
    body_key,
    read_history,
    read_session_bodies,
    read_session_index,
)
from panelot.settings.backend import StorageBackend
from panelot.tree.nodes import LEAF, append_node
from panelot.tree.records import MAX_TITLE_CHARS, ThreadMeta, thread_to_wire

__all__ = ["NAMESPACE", "Plan", "PlannedThread", "plan_import", "write_plan"]

NAMESPACE = uuid.UUID("6f7c2a2e-5b1d-4c8e-9a57-0b7a1f2e3d4c")
"""uuid5 namespace of imported thread ids."""
TAGS = ["imported:browsa"]


@dataclass(slots=True)
class PlannedThread:
    """One thread to import."""

    id: str
    title: str
    created_at: int | None
    pinned: bool
    nodes: list[PlannedNode]
    session_id: str | None
    counts: dict[str, int]


def _auto_title(history: list[Any]) -> str:
    for m in history:
        content = m.get("content") if isinstance(m, dict) else None
        if (
            isinstance(m, dict)
            and m.get("role") == "user"
            and isinstance(content, str)
            and not content.startswith(PAGE_CONTEXT_PREFIX)
        ):
            text = content.strip()
            return text[:48] + ("…" if len(text) > 48 else "")
    return "Browsa history"


Plan = tuple[list["PlannedThread"], dict[str, Any]]
"""The threads to write and the totals the plan already knows."""


async def plan_import(backend: StorageBackend, migrate: bool, include_history: bool) -> Plan:
    """Read the layout in ``backend`` (migrating unless told not to); plan every thread."""
    try:  # a value nested too deeply for the JSON decoder is refused, not raised
        entries, inline, migrated, unusable = await read_session_index(backend, migrate)
        bodies = await read_session_bodies(backend, [e["id"] for e in entries], inline)
        history = await read_history(backend) if include_history else []
    except RecursionError:
        raise ValidationError(
            "legacy layout: a stored value is nested too deeply to read", field="legacy"
        ) from None
    threads: list[PlannedThread] = []
    totals: dict[str, Any] = {
        "sessions": len(entries),
        "skippedSessions": unusable,
        "migrated": migrated,
    }
    sources: list[tuple[str | None, list[Any], dict[str, Any]]] = []
    if history:
        sources.append((None, history, {"name": _auto_title(history)}))
    sources += [(e["id"], bodies[e["id"]], e) for e in entries]
    budget = Budget()
    for session_id, hist, _entry in sources:
        check_history(hist, HISTORY_KEY if session_id is None else body_key(session_id), budget)
    for session_id, hist, entry in sources:
        nodes, counts = plan_history(hist)
        key = "browsa:history" if session_id is None else f"browsa:session:{session_id}"
        name = entry.get("name")
        threads.append(
            PlannedThread(
                str(uuid.uuid5(NAMESPACE, key)),
                (name if isinstance(name, str) else "Untitled session")[:MAX_TITLE_CHARS],
                stamp_from(entry.get("createdAt")),
                bool(entry.get("pinned")),
                nodes,
                session_id,
                counts,
            )
        )
    return threads, totals


async def _write_thread(tx: Transaction, t: PlannedThread, now: int, clock: Clock) -> None:
    """Write one planned thread dated ``t.created_at`` (``now`` when it has no date)."""
    when = t.created_at if t.created_at is not None else now
    meta = ThreadMeta(t.id, t.title, when, when, None, list(TAGS), t.pinned)
    await tx.table("threads").add(thread_to_wire(meta))
    for node in t.nodes:
        payload = node.payload
        ids: list[str] = []
        for image in node.images:
            imported = AttachmentInput(
                thread_id=t.id,
                kind="image",
                mime=image.mime,
                data=image.data,
                meta={"title": image.name} if image.name else None,
                provenance="import",
                source_ref="browsa",
            )
            record = await put_attachment(tx, imported, clock)
            ids.append(record["id"])
        held = [b for b in payload["content"] if b["type"] == "image" and not b.get("evicted")]
        for block, attachment_id in zip(held, ids, strict=True):
            block["attachmentId"] = attachment_id
        written = await append_node(tx, t.id, node.type, payload, LEAF, lambda: when)
        for attachment_id in ids:
            await attach(tx, attachment_id, written.id)


async def write_plan(tx: Transaction, plan: Plan, clock: Clock) -> dict[str, Any]:
    """Write a plan's threads inside ``tx`` (those already there are skipped); the result."""
    threads, totals = plan
    created = skipped = 0
    now = clock()
    counts = dict.fromkeys(
        (
            "messages",
            "images",
            "imagesWithoutBytes",
            "externalImages",
            "pageContexts",
            "skippedEntries",
        ),
        0,
    )
    ids: dict[str, Any] = {"history": None, "sessions": {}}
    for t in threads:
        if t.session_id is None:
            ids["history"] = t.id
        else:
            ids["sessions"][t.session_id] = t.id
        if await tx.table("threads").get(t.id) is not None:
            skipped += 1
            continue
        await _write_thread(tx, t, now, clock)
        created += 1
        for k, v in t.counts.items():
            counts[k] += v
    return {
        "threads": created,
        "skippedThreads": skipped,
        "historyImported": ids["history"] is not None,
        **totals,
        **counts,
        "threadIds": ids,
    }
