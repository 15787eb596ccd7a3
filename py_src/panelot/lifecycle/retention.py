"""Retention: archive threads untouched for N days.

Opt-in: ``retention_days`` is ``None`` (off) or a positive number of days; where the
setting lives (chrome.storage) is the settings module's business, this one only
takes the number. Archiving a thread, in one transaction:

1. writes a Markdown summary of its visible path as a ``page_text`` attachment
   (``mime: text/markdown``, ``sourceRef: "retention:summary"``, ``trust: trusted``).
   An attachment rather than a ThreadMeta field: summaries can be long, and the
   conversation list reads every ThreadMeta; the attachment is found by ``threadId``
   and is a Blob the UI can show or download as it is;
2. keeps ThreadMeta, with ``archived: true`` and ``leafId: null`` (``updatedAt`` is
   left alone, so the list order does not change);
3. deletes the thread's nodes and its other attachments (only its nodes used them).

Never archived: the active thread, pinned threads, threads being deleted, threads
with an active run, and threads with nothing left to archive (no leaf).

The setting is the ``retention`` group of :mod:`panelot.settings` (``{days}``, stored
as ``settings.retention`` in ``chrome.storage.local``); :func:`configured_days` reads
it. ``panelot.runtime.start`` applies it when a page opens the store, and the service
worker's daily ``chrome.alarms`` alarm calls ``panelot.runtime.run_retention``
(:func:`run_configured`) with the thread a side panel has open.
"""

from __future__ import annotations

from typing import Any

from panelot.attachments.records import put_attachment
from panelot.clock import Clock, now_ms
from panelot.idb import Database, Transaction
from panelot.idb.errors import ValidationError
from panelot.runs.records import ACTIVE_STATES
from panelot.settings import services
from panelot.surrogates import replace_lone_surrogates
from panelot.tree.context import thread_markdown
from panelot.tree.integrity import best_leaf, index_nodes, walk_to_root
from panelot.tree.loading import LoadedThread
from panelot.tree.reading import load_nodes
from panelot.tree.records import thread_from_wire

__all__ = [
    "DAY_MS",
    "RETENTION_TABLES",
    "SUMMARY_REF",
    "archive_old_threads",
    "archive_thread",
    "candidates",
    "check_days",
    "configured_days",
    "run_configured",
]

DAY_MS = 24 * 3600 * 1000
"""One day in milliseconds."""

RETENTION_TABLES = ("threads", "nodes", "attachments", "runs")
"""The tables an archiving transaction covers."""

SUMMARY_REF = "retention:summary"
"""``sourceRef`` of the Markdown summary attachment written on archiving."""


def check_days(days: Any, field: str = "days") -> int:
    """Validate a retention period: a positive whole number of days."""
    if not isinstance(days, int) or isinstance(days, bool) or days < 1:
        raise ValidationError(f"{field}: must be a whole number of days, at least 1", field=field)
    return days


async def candidates(
    tx: Transaction, days: int, now: int, active_thread_id: str | None = None
) -> list[str]:
    """Ids of threads whose ``updatedAt`` is older than ``days`` and that may be archived."""
    cutoff = now - check_days(days) * DAY_MS
    rows = await tx.table("threads").where("updatedAt").below(cutoff).to_list()
    return [
        r["id"]
        for r in rows
        if r.get("id") != active_thread_id
        and not r.get("pinned")
        and not r.get("deleting")
        and r.get("leafId") is not None
    ]


async def _has_active_run(tx: Transaction, thread_id: str) -> bool:
    for state in sorted(ACTIVE_STATES):
        if await tx.table("runs").where("[threadId+state]").equals([thread_id, state]).count():
            return True
    return False


async def archive_thread(
    tx: Transaction, thread_id: str, cutoff: int | None = None, clock: Clock = now_ms
) -> dict[str, Any]:
    """Archive one thread inside ``tx`` (over :data:`RETENTION_TABLES`).

    Returns ``{threadId, archived: bool, summaryId?, nodes?, attachments?}``; a thread
    that may not be archived (pinned, deleting, active run, no leaf, or updated at or
    after ``cutoff`` in the meantime) is left untouched.
    """
    raw = await tx.table("threads").get(thread_id)
    if (
        raw is None
        or (cutoff is not None and raw.get("updatedAt", 0) >= cutoff)
        or raw.get("pinned")
        or raw.get("deleting")
        or raw.get("leafId") is None
        or await _has_active_run(tx, thread_id)
    ):
        return {"threadId": thread_id, "archived": False}
    thread = thread_from_wire(raw)
    nodes = await load_nodes(tx, thread_id)
    index = index_nodes(thread_id, nodes)
    walk = walk_to_root(index, thread.leaf_id)
    path = walk.path
    if walk.problem:
        path = walk_to_root(index, best_leaf(index)[0]).path
    markdown = thread_markdown(LoadedThread(thread, index, path))
    old = await tx.table("attachments").where("threadId").equals(thread_id).primary_keys()
    summary = await put_attachment(
        tx,
        thread_id,
        "page_text",
        "text/markdown",
        replace_lone_surrogates(markdown).encode("utf-8"),  # as a browser's TextEncoder
        meta={"title": thread.title or "Untitled"},
        trust="trusted",
        source_ref=SUMMARY_REF,
        clock=clock,
    )
    await tx.table("nodes").bulk_delete([n["id"] for n in nodes if isinstance(n, dict)])
    keep = [k for k in old if k != summary["id"]]
    if keep:
        await tx.table("attachments").bulk_delete(keep)
    await tx.table("threads").put({**raw, "archived": True, "leafId": None})
    return {
        "threadId": thread_id,
        "archived": True,
        "summaryId": summary["id"],
        "nodes": len(nodes),
        "attachments": len(keep),
    }


async def archive_old_threads(
    db: Database,
    days: int | None,
    active_thread_id: str | None = None,
    clock: Clock = now_ms,
) -> list[dict[str, Any]]:
    """Archive every eligible thread older than ``days``, one transaction per thread.

    ``days=None`` (retention off) does nothing. Returns the archived threads' results.
    """
    if days is None:
        return []
    now = clock()
    cutoff = now - check_days(days) * DAY_MS
    ids = await db.transaction(
        "r", ["threads"], lambda tx: candidates(tx, days, now, active_thread_id)
    )
    done = []
    for thread_id in ids:

        async def body(tx: Transaction, t: str = thread_id) -> dict[str, Any]:
            return await archive_thread(tx, t, cutoff, clock)

        result = await db.transaction("rw", RETENTION_TABLES, body)
        if result["archived"]:
            done.append(result)
    return done


async def configured_days() -> int | None:
    """The ``retention`` setting's ``days`` (``None``: retention off)."""
    value = await services().settings.get("retention")
    days: int | None = value.days
    return days


async def run_configured(
    db: Database, active_thread_id: str | None = None, clock: Clock = now_ms
) -> tuple[int | None, list[dict[str, Any]]]:
    """One retention pass with the configured setting; ``(days, archived results)``."""
    days = await configured_days()
    return days, await archive_old_threads(db, days, active_thread_id, clock)
