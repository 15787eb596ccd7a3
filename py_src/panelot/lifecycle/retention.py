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

Never archived: the spared threads (``spared``: the ids the caller names, see below),
pinned threads, threads being deleted, threads with an active run, and threads with
nothing left to archive (no leaf).

Which threads are spared is the caller's knowledge, not this module's: the extension
passes every thread an open panel shows (a Web Lock per panel) and the one a panel will
reopen (``chrome.storage.local``); see ``web/presence.mjs``. This module never asks which
world it runs in.

The setting is the ``retention`` group of :mod:`panelot.settings` (``{days}``, stored as
``settings.retention`` in ``chrome.storage.local``); :func:`configured_days` reads it
from the settings it is given (the store's host's). ``panelot.runtime.start`` applies it
when a page opens the store, and the service worker's daily ``chrome.alarms`` alarm
calls ``panelot.runtime.run_retention`` (:func:`run_configured`) with the spared ids.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any, TypedDict

from panelot.attachments.records import AttachmentInput, put_attachment
from panelot.clock import Clock, now_ms
from panelot.idb import Database, Transaction
from panelot.idb.errors import ValidationError
from panelot.runs.records import ACTIVE_STATES
from panelot.settings import Settings
from panelot.surrogates import replace_lone_surrogates
from panelot.tree.context import thread_markdown
from panelot.tree.integrity import best_leaf, index_nodes, walk_to_root
from panelot.tree.loading import LoadedThread
from panelot.tree.reading import load_nodes
from panelot.tree.records import thread_from_wire

Spared = Collection[str]
"""Ids of threads a retention pass leaves alone whatever their age."""

__all__ = [
    "DAY_MS",
    "MESSAGE_TYPES",
    "RETENTION_TABLES",
    "SUMMARY_REF",
    "Preview",
    "Spared",
    "archive_old_threads",
    "archive_thread",
    "candidates",
    "check_days",
    "configured_days",
    "preview",
    "run_configured",
    "spared_ids",
]

DAY_MS = 24 * 3600 * 1000
"""One day in milliseconds."""

RETENTION_TABLES = ("threads", "nodes", "attachments", "runs")
"""The tables an archiving transaction covers."""

SUMMARY_REF = "retention:summary"
"""``sourceRef`` of the Markdown summary attachment written on archiving."""

MESSAGE_TYPES = ("user_message", "assistant_message")
"""The node types :func:`preview` counts as messages."""


def spared_ids(active: str | None = None, spared: Iterable[str] | None = None) -> frozenset[str]:
    """The spared set: ``active`` (when given) and every id of ``spared``.

    Raises ValidationError (field ``sparedThreadIds``) for an id that is not a string.
    """
    ids = list(spared or ())
    for ident in ids:
        if not isinstance(ident, str):
            raise ValidationError(
                "sparedThreadIds: must be a list of thread ids (strings)", field="sparedThreadIds"
            )
    return frozenset(ids + ([active] if active else []))


def check_days(days: Any, field: str = "days") -> int:
    """Validate a retention period: a positive whole number of days."""
    if not isinstance(days, int) or isinstance(days, bool) or days < 1:
        raise ValidationError(f"{field}: must be a whole number of days, at least 1", field=field)
    return days


async def candidates(
    tx: Transaction, days: int, now: int, spared: Spared = frozenset()
) -> list[str]:
    """Ids of threads whose ``updatedAt`` is older than ``days`` and that may be archived."""
    cutoff = now - check_days(days) * DAY_MS
    rows = await tx.table("threads").where("updatedAt").below(cutoff).to_list()
    return [
        r["id"]
        for r in rows
        if r.get("id") not in spared
        and not r.get("pinned")
        and not r.get("deleting")
        and r.get("leafId") is not None
    ]


async def _has_active_run(tx: Transaction, thread_id: str) -> bool:
    for state in sorted(ACTIVE_STATES):
        if await tx.table("runs").where("[threadId+state]").equals([thread_id, state]).count():
            return True
    return False


class Preview(TypedDict):
    """What a pass would do now: the threads it would summarize, and their messages."""

    threadIds: list[str]
    threads: int
    messages: int


async def preview(tx: Transaction, days: int, now: int, spared: Spared = frozenset()) -> Preview:
    """What archiving threads older than ``days`` would remove, without writing.

    Over :data:`RETENTION_TABLES`, read-only; ``messages`` counts the user and assistant
    messages (every version) the pass would delete.
    """
    ids = []
    messages = 0
    for thread_id in await candidates(tx, days, now, spared):
        if await _has_active_run(tx, thread_id):
            continue
        nodes = await load_nodes(tx, thread_id)
        ids.append(thread_id)
        messages += sum(1 for n in nodes if isinstance(n, dict) and n.get("type") in MESSAGE_TYPES)
    return {"threadIds": ids, "threads": len(ids), "messages": messages}


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
    text = AttachmentInput(
        thread_id=thread_id,
        kind="page_text",
        mime="text/markdown",
        data=replace_lone_surrogates(markdown).encode("utf-8"),  # as a browser's TextEncoder
        meta={"title": thread.title or "Untitled"},
        trust="trusted",
        source_ref=SUMMARY_REF,
    )
    summary = await put_attachment(tx, text, clock)
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
    spared: Spared = frozenset(),
    clock: Clock = now_ms,
) -> list[dict[str, Any]]:
    """Archive every eligible thread older than ``days``, one transaction per thread.

    ``days=None`` (retention off) does nothing; the ``spared`` threads are left alone.
    Returns the archived threads' results.
    """
    if days is None:
        return []
    now = clock()
    cutoff = now - check_days(days) * DAY_MS
    ids = await db.transaction("r", ["threads"], lambda tx: candidates(tx, days, now, spared))
    done = []
    for thread_id in ids:

        async def body(tx: Transaction, t: str = thread_id) -> dict[str, Any]:
            return await archive_thread(tx, t, cutoff, clock)

        result = await db.transaction("rw", RETENTION_TABLES, body)
        if result["archived"]:
            done.append(result)
    return done


async def configured_days(settings: Settings) -> int | None:
    """The ``retention`` setting's ``days`` in ``settings`` (``None``: retention off)."""
    value = await settings.get("retention")
    days: int | None = value.days
    return days


async def run_configured(
    db: Database, settings: Settings, spared: Spared = frozenset(), clock: Clock = now_ms
) -> tuple[int | None, list[dict[str, Any]]]:
    """One retention pass with the setting in ``settings``; ``(days, archived results)``."""
    days = await configured_days(settings)
    return days, await archive_old_threads(db, days, spared, clock)
