"""What the current branch shows, counted, and kept on the thread record (``shown``).

The conversation list says how many turns a thread has and the conversation's header how
many messages: what the user sees on the visible path, not every node ever written
(``stats`` counts those, see :class:`~panelot.tree.records.ThreadStats`). Counting the path
when listing would read every listed thread's path; instead every command that changes
the visible path keeps ``shown = {leafId, turns, messages}`` on the thread record, in
its own transaction, at about no cost:

- an append under the leaf (a turn) adds the new node's share, from records it has read;
- an append elsewhere (an edit, a regenerate) and a branch switch walk up from the old
  leaf and the new one, a node at a time by seq, until they meet: the counts change only
  below that node (a regenerate reads one or two nodes);
- a delete, an import and a repair hold the whole thread in memory and count its path.

The counts hold only while ``shown.leafId`` is the thread's ``leafId``: code that moves
the leaf without them (another program sharing the database, older records) leaves a
``shown`` that no longer matches, which :func:`shown_of` ignores and the next command
that moves the leaf counts afresh (walking the whole path once). A tombstone written by
such code is not seen until then.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from panelot.idb import Transaction
from panelot.tree.descent import is_shown, is_tombstone
from panelot.tree.integrity import numeric_seq
from panelot.tree.records import ShownCount, ThreadMeta

__all__ = ["count_in", "counts_held", "share", "shown_after", "shown_of"]


def share(raw: Any, revived: bool = False) -> tuple[int, int]:
    """``(turns, messages)`` the node record ``raw`` adds to a path that holds it.

    ``revived``: as it was before it was tombstoned (a delete's old state).
    """
    if not isinstance(raw, dict):
        return 0, 0
    if revived and is_tombstone(raw):
        raw = {**raw, "payload": {**raw["payload"], "deleted": False}}
    if not is_shown(raw):
        return 0, 0
    return (1 if raw.get("type") == "user_message" else 0), 1


def shown_of(raw_thread: Any) -> dict[str, int] | None:
    """The stored thread record's ``{turns, messages}`` when they hold, else ``None``.

    They hold when the record's ``shown`` names its current ``leafId`` and both counts are
    non-negative integers.
    """
    if not isinstance(raw_thread, dict):
        return None
    memo = raw_thread.get("shown")
    if not isinstance(memo, dict) or "leafId" not in memo:
        return None
    if memo["leafId"] != raw_thread.get("leafId"):
        return None
    turns, messages = memo.get("turns"), memo.get("messages")
    for value in (turns, messages):
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            return None
    return {"turns": turns, "messages": messages}  # type: ignore[dict-item]


def counts_held(row: dict[str, Any]) -> dict[str, Any]:
    """The thread record ``row`` as queries return it: without a ``shown`` that does not hold.

    ``row`` itself when there is nothing to leave out.
    """
    if "shown" not in row or shown_of(row) is not None:
        return row
    return {k: v for k, v in row.items() if k != "shown"}


def count_in(nodes: Mapping[str, Any], leaf_id: str | None) -> ShownCount:
    """The counts of the path from ``leaf_id`` over the records ``nodes`` (by id).

    The walk stops at a missing node or a node seen before, counting what it passed.
    """
    turns = messages = 0
    seen: set[str] = set()
    current = leaf_id
    while isinstance(current, str) and current not in seen:
        raw = nodes.get(current)
        if not isinstance(raw, dict):
            break
        seen.add(current)
        t, m = share(raw)
        turns, messages = turns + t, messages + m
        current = raw.get("parentId")
    return ShownCount(leaf_id, turns, messages)


class _Fallback(Exception):
    """The two-sided walk met something unusual: count the new path whole."""


async def _count_path(
    tx: Transaction, thread_id: str, leaf_id: str | None, known: dict[str, Any]
) -> ShownCount:
    """:func:`count_in` over IndexedDB: a get per node not in ``known``."""
    turns = messages = 0
    seen: set[str] = set()
    current = leaf_id
    while isinstance(current, str) and current not in seen:
        raw = known[current] if current in known else await tx.table("nodes").get(current)
        if not isinstance(raw, dict) or raw.get("threadId") != thread_id:
            break
        seen.add(current)
        t, m = share(raw)
        turns, messages = turns + t, messages + m
        current = raw.get("parentId")
    return ShownCount(leaf_id, turns, messages)


async def shown_after(
    tx: Transaction,
    thread: ThreadMeta,
    new_leaf: str | None,
    known: Mapping[str, Any] = {},
    revived: Collection[str] = (),
) -> ShownCount:
    """The counts of the path ending at ``new_leaf``, from those of the thread's leaf.

    Call it before ``thread.leaf_id`` changes. ``known``: node records already read (or
    about to be written, such as the appended node), by id; the others are read by id.
    ``revived``: nodes tombstoned in this transaction, counted as live on the old path.
    Without counts that hold for the old leaf, or over unusual records (a seq that is not
    a number, a loop, a node of another thread), the new path is counted whole.
    """
    cache = dict(known)
    memo = thread.shown
    if memo is None or memo.leaf_id != thread.leaf_id:
        return await _count_path(tx, thread.id, new_leaf, cache)
    try:
        return await _two_sided(tx, thread.id, memo, new_leaf, cache, set(revived))
    except _Fallback:
        return await _count_path(tx, thread.id, new_leaf, cache)


async def _two_sided(
    tx: Transaction,
    thread_id: str,
    memo: ShownCount,
    new_leaf: str | None,
    cache: dict[str, Any],
    revived: set[str],
) -> ShownCount:
    """Walk up from the old leaf and the new one, the higher seq first, until they meet.

    Nodes passed on the old side leave the counts (as they were: ``revived`` ones live),
    nodes on the new side enter them. Once the walks meet they go on together while a
    ``revived`` node may lie above, each node's share changing from old to new.
    """

    async def get(node_id: str) -> tuple[dict[str, Any], int | float]:
        raw = cache[node_id] if node_id in cache else await tx.table("nodes").get(node_id)
        if not isinstance(raw, dict) or raw.get("threadId") != thread_id:
            raise _Fallback
        cache[node_id] = raw
        seq = numeric_seq(raw.get("seq"))
        if seq is None:
            raise _Fallback
        return raw, seq

    floor = None
    for node_id in revived:
        _, seq = await get(node_id)
        floor = seq if floor is None else min(floor, seq)
    old_t, old_m, new_t, new_m = 0, 0, 0, 0  # left on the old side, entered on the new
    old, new = memo.leaf_id, new_leaf
    seen_old: set[str] = set()
    seen_new: set[str] = set()
    while True:
        if new is None:  # the whole new path is walked: its counts are known
            return ShownCount(new_leaf, new_t, new_m)
        if old == new:
            if floor is None:
                break
            raw, seq = await get(new)
            if seq < floor:
                break
            if new in seen_new:
                raise _Fallback
            seen_new.add(new)
            (ot, om), (nt, nm) = share(raw, new in revived), share(raw)
            old_t, old_m, new_t, new_m = old_t + ot, old_m + om, new_t + nt, new_m + nm
            old = new = raw.get("parentId")
            continue
        raw_new, seq_new = await get(new)
        raw_old, seq_old = (None, None) if old is None else await get(old)
        if seq_old is not None and seq_old >= seq_new and old is not None:
            if old in seen_old:
                raise _Fallback
            seen_old.add(old)
            ot, om = share(raw_old, old in revived)
            old_t, old_m = old_t + ot, old_m + om
            old = raw_old.get("parentId")  # type: ignore[union-attr]
        else:
            if new in seen_new:
                raise _Fallback
            seen_new.add(new)
            nt, nm = share(raw_new)
            new_t, new_m = new_t + nt, new_m + nm
            new = raw_new.get("parentId")
        for side in (old, new):
            if side is not None and not isinstance(side, str):
                raise _Fallback
    turns, messages = memo.turns - old_t + new_t, memo.messages - old_m + new_m
    if turns < 0 or messages < 0:
        raise _Fallback
    return ShownCount(new_leaf, turns, messages)
