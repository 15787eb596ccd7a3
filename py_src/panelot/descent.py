"""Children of a node, and the descent to its deepest newest descendant (seed §3).

A branch switch moves the leaf to the deepest newest descendant of a node: from it,
repeatedly to the child with the highest seq, until a node has no children. Asking
IndexedDB for each level's children costs one round trip per level, so a long descent
(a branch of 50 messages) costs 50. Instead, after :data:`LEVELS_BY_QUERY` levels the
descent reads, in one request, the links (no payloads) of the thread's nodes with a
higher seq than where it stands: every descendant was appended later, so it has one.
The rest of the descent is walked in memory, and its last node is still asked for its
children, so a descent that stopped early goes on level by level. A record whose seq
breaks that rule (corrupt data, or a seq that is not a key) is not in the one read, so
the walk in memory does not see it.
"""

from __future__ import annotations

from typing import Any

from .idb import MAX_KEY, Transaction
from .integrity import numeric_seq, seq_order

__all__ = ["LEVELS_BY_QUERY", "children", "newest_descendant"]

LEVELS_BY_QUERY = 8
"""Levels descended one query each before the later nodes are read at once."""

_LINKS = ("id", "threadId", "parentId", "seq")


async def children(tx: Transaction, thread_id: str, parent_id: str | None) -> list[Any]:
    """The children of ``parent_id`` in the thread, by seq: their links only, no payload."""
    nodes = tx.table("nodes")
    if parent_id is None:
        rows = await nodes.where("threadId").equals(thread_id).pick(*_LINKS).to_list()
        kids = [r for r in rows if r.get("parentId") is None]
    else:
        rows = await nodes.where("parentId").equals(parent_id).pick(*_LINKS).to_list()
        kids = [r for r in rows if r.get("threadId") == thread_id]
    return sorted(kids, key=seq_order) if len(kids) > 1 else kids


async def _step_by_query(
    tx: Transaction, thread_id: str, current: str, seen: set[str]
) -> dict[str, Any] | None:
    """The newest child of ``current``, or ``None``: a leaf, or a loop in corrupt links."""
    kids = await children(tx, thread_id, current)
    if not kids or kids[-1]["id"] in seen:
        return None
    return kids[-1]  # type: ignore[no-any-return]


async def _later_links(tx: Transaction, thread_id: str, seq: float) -> dict[Any, list[Any]]:
    """The links of the thread's nodes stored with a seq above ``seq``, by parent."""
    rows = (
        await tx.table("nodes")
        .where("[threadId+seq]")
        .between([thread_id, seq], [thread_id, MAX_KEY], False, True)
        .pick(*_LINKS)
        .to_list()
    )
    by_parent: dict[Any, list[Any]] = {}
    for row in rows:
        if row.get("threadId") == thread_id:
            by_parent.setdefault(row.get("parentId"), []).append(row)
    return by_parent


async def newest_descendant(tx: Transaction, thread_id: str, start: dict[str, Any]) -> str:
    """The id of the deepest newest descendant of the node record ``start``.

    That is ``start`` itself when it has no children. The descent stops at a node it
    has seen, so corrupt parent links cannot loop.
    """
    current = str(start["id"])
    seen = {current}
    seq: Any = start.get("seq")
    for _ in range(LEVELS_BY_QUERY):
        child = await _step_by_query(tx, thread_id, current, seen)
        if child is None:
            return current
        current, seq = child["id"], child.get("seq")
        seen.add(current)
    number = numeric_seq(seq)
    if number is not None:
        later = await _later_links(tx, thread_id, number)
        while kids := later.get(current):
            newest = max(kids, key=seq_order)
            if newest["id"] in seen:
                return current
            current = newest["id"]
            seen.add(current)
    while (child := await _step_by_query(tx, thread_id, current, seen)) is not None:
        current = child["id"]
        seen.add(current)
    return current
