"""Counting ``shown`` afresh for threads without counts that hold, a batch at a time.

A thread record written before ``shown`` existed, or whose leaf other code sharing the
database moved (Dexie code), has no ``shown`` that holds (:func:`~panelot.tree.shown.shown_of`
is ``None``): the list shows no count for it until a command next moves its leaf. The
``thread.count_shown`` command fills them in, the newest threads (by ``updatedAt``) first,
``limit`` of them per call, in two steps:

1. :func:`count_unheld`, in a read-only transaction over ``threads`` and ``nodes``, picks
   the threads and counts each one's visible path from the leaf it read
   (:func:`~panelot.tree.shown.count_path`: a few gets, then windows of links);
2. :func:`write_counted`, inside the command's read-write transaction over ``threads``,
   reads those threads again and writes ``shown`` only on a thread whose leaf is still
   the one counted and whose counts still do not hold. A thread whose leaf moved
   meanwhile is skipped (the command that moved it wrote its own counts, or, if other
   code moved it, a later call counts it again); counts written meanwhile are kept.

Nothing else of the record changes (not ``updatedAt``: the list keeps its order). A
thread being deleted, or a record whose ``id`` or ``leafId`` is malformed (which
``thread.check`` reports), is not counted.
"""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any

from panelot.codec import encode
from panelot.idb import Database, Transaction
from panelot.idb.errors import ValidationError
from panelot.tree.records import ShownCount
from panelot.tree.shown import count_path, shown_of

__all__ = ["BATCH", "MAX_BATCH", "Counted", "check_limit", "count_unheld", "write_counted"]

BATCH = 20
"""Threads one call counts when the caller does not say."""
MAX_BATCH = 100
"""The most threads one call counts: each call's work stays bounded."""


@dataclass(frozen=True, slots=True)
class Counted:
    """What :func:`count_unheld` found: the counts of a batch, and how many lack them.

    ``counts``: ``(thread id, counts of the path from the leaf read)``, newest first;
    ``unheld``: the threads without counts that hold when they were read, the batch
    included.
    """

    counts: list[tuple[str, ShownCount]]
    unheld: int


def check_limit(limit: int | None, field: str = "limit") -> int:
    """``limit``, or :data:`BATCH` for ``None``; anything but 1 to :data:`MAX_BATCH` is refused."""
    if limit is None:
        return BATCH
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_BATCH:
        raise ValidationError(
            f"{field}: must be an integer from 1 to {MAX_BATCH}, got {limit!r}", field=field
        )
    return limit


def _unheld(raw: Any) -> bool:
    """Whether the stored thread record ``raw`` lacks counts that hold and can be counted."""
    if not isinstance(raw, dict) or not isinstance(raw.get("id"), str) or raw.get("deleting"):
        return False
    leaf = raw.get("leafId")
    return (leaf is None or isinstance(leaf, str)) and shown_of(raw) is None


async def count_unheld(db: Database, limit: int) -> Counted:
    """Count the paths of the ``limit`` newest threads without counts that hold."""

    async def body(tx: Transaction) -> Counted:
        rows = await tx.table("threads").order_by("updatedAt").to_list()
        todo = [row for row in reversed(rows) if _unheld(row)]
        counts = [
            (row["id"], await count_path(tx, row["id"], row.get("leafId"))) for row in todo[:limit]
        ]
        return Counted(counts, len(todo))

    result: Counted = await db.transaction("r", ["threads", "nodes"], body)
    return result


async def write_counted(tx: Transaction, counted: Counted) -> list[Awaitable[Any]]:
    """Issue the writes of the counts that still apply, re-reading each thread in ``tx``.

    A count applies while its thread's leaf is the one counted and the thread has no
    counts that hold. Returns the writes, not awaited (one per thread written).
    """
    table = tx.table("threads")
    rows = await tx.gather(*(table.get(thread_id) for thread_id, _ in counted.counts))
    return [
        table.update(thread_id, {"shown": encode(count)})
        for (thread_id, count), raw in zip(counted.counts, rows, strict=True)
        if _unheld(raw) and raw.get("leafId") == count.leaf_id
    ]
