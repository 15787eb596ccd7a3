"""What the current branch shows, counted, and kept on the thread record (``shown``).

The conversation list says how many turns a thread has and the conversation's header how
many messages: what the user sees on the visible path, not every node ever written
(``stats`` counts those, see :class:`~panelot.tree.records.ThreadStats`). Counting the path
when listing would read every listed thread's path; instead every command that changes
the visible path keeps ``shown = {leafId, turns, messages}`` on the thread record, in
its own transaction, at about no cost:

- an append under the leaf (a turn) adds the new node's share, from records it has read;
- an append elsewhere (an edit, a regenerate) and a branch switch walk up from the old
  leaf and the new one, the higher seq first, until they meet: the counts change only
  below that node (a regenerate reads one or two nodes; past a few gets, a walk reads
  the thread's links in widening windows of seqs, one request each);
- a delete, an import and a repair hold the whole thread in memory and count its path.

The counts hold only while ``shown.leafId`` is the thread's ``leafId``: code that moves
the leaf without them (another program sharing the database, older records) leaves a
``shown`` that no longer matches, which :func:`shown_of` ignores and the next command
that moves the leaf counts afresh (walking the whole path once). A tombstone written by
such code is not seen until then.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from panelot.idb import Transaction
from panelot.tree.descent import LINKS, is_shown
from panelot.tree.integrity import numeric_seq
from panelot.tree.records import ShownCount, ThreadMeta

__all__ = ["count_in", "count_path", "counts_held", "share", "shown_after", "shown_of"]


def share(raw: Any) -> tuple[int, int]:
    """``(turns, messages)`` the node record ``raw`` (whole, or its links) adds to a path."""
    if not isinstance(raw, dict) or not is_shown(raw):
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


STEPS_BY_GET = 3
"""Nodes a walk reads one get each before it reads the thread's links by seq windows."""
FIRST_WINDOW = 256
"""The seqs the first window of links spans; each next one spans twice as many."""


class _Reader:
    """Node records for walks up one thread: gets at first, then windows of links.

    A short walk (an append, a regenerate, an edit) costs a get or two. A longer one (a
    branch switch far up, a first count of a long path) reads, in one request each, the
    links (:data:`~panelot.tree.descent.LINKS`) of the nodes whose seq lies in a window
    below those it has read, twice as wide each time: a parent's seq is below its
    child's. A node the windows miss (a seq that breaks that rule) is read by a get.
    """

    def __init__(self, tx: Transaction, thread_id: str, known: Mapping[str, Any]) -> None:
        self.tx, self.thread_id = tx, thread_id
        self.cache: dict[str, Any] = dict(known)
        self.gets = 0
        self.top: float | None = None  # the windows cover [low, top)
        self.low = math.inf
        self.span = FIRST_WINDOW

    async def get(self, node_id: str, below: float | None) -> Any:
        """The record ``node_id`` (``None`` if absent); ``below``: its child's seq, if known."""
        if node_id in self.cache:
            return self.cache[node_id]
        if self.gets < STEPS_BY_GET or below is None or (self.top is not None and below > self.top):
            self.gets += 1
            raw = await self.tx.table("nodes").get(node_id)
        else:
            if self.top is None:
                self.top = self.low = below
            while node_id not in self.cache and self.low > -math.inf:
                await self._window()
            raw = self.cache.get(node_id)
            if raw is None:
                raw = await self.tx.table("nodes").get(node_id)
        if isinstance(raw, dict):
            self.cache[node_id] = raw
        return raw

    async def _window(self) -> None:
        """Read the links of the next window of seqs below those read."""
        high = self.low
        low = high - self.span
        if low <= 0:
            low = -math.inf
        rows = (
            await self.tx.table("nodes")
            .where("[threadId+seq]")
            .between([self.thread_id, low], [self.thread_id, high], True, False)
            .pick(*LINKS)
            .to_list()
        )
        for row in rows:
            ident = row.get("id") if isinstance(row, dict) else None
            if isinstance(ident, str) and row.get("threadId") == self.thread_id:
                self.cache.setdefault(ident, row)
        self.low, self.span = low, self.span * 2


async def _count_path(reader: _Reader, leaf_id: str | None) -> ShownCount:
    """:func:`count_in` over IndexedDB, through ``reader``."""
    turns = messages = 0
    seen: set[str] = set()
    current, below = leaf_id, None
    while isinstance(current, str) and current not in seen:
        raw = await reader.get(current, below)
        if not isinstance(raw, dict) or raw.get("threadId") != reader.thread_id:
            break
        seen.add(current)
        t, m = share(raw)
        turns, messages = turns + t, messages + m
        current, below = raw.get("parentId"), numeric_seq(raw.get("seq"))
    return ShownCount(leaf_id, turns, messages)


async def count_path(tx: Transaction, thread_id: str, leaf_id: str | None) -> ShownCount:
    """The counts of the path from ``leaf_id`` of thread ``thread_id``, read in ``tx``.

    What a first count costs (:func:`shown_after` without counts that hold): a few gets,
    then the thread's links in widening windows of seqs.
    """
    return await _count_path(_Reader(tx, thread_id, {}), leaf_id)


async def shown_after(
    tx: Transaction, thread: ThreadMeta, new_leaf: str | None, known: Mapping[str, Any] = {}
) -> ShownCount:
    """The counts of the path ending at ``new_leaf``, from those of the thread's leaf.

    Call it before ``thread.leaf_id`` changes. ``known``: node records already read (or
    about to be written, such as the appended node), by id; the others are read. Without
    counts that hold for the old leaf, or over unusual records (a seq that is not a
    number, a loop, a node of another thread), the new path is counted whole.
    """
    reader = _Reader(tx, thread.id, known)
    memo = thread.shown
    if memo is None or memo.leaf_id != thread.leaf_id:
        return await _count_path(reader, new_leaf)
    try:
        return await _two_sided(reader, memo, new_leaf)
    except _Fallback:
        return await _count_path(reader, new_leaf)


async def _two_sided(reader: _Reader, memo: ShownCount, new_leaf: str | None) -> ShownCount:
    """Walk up from the old leaf and the new one, the higher seq first, until they meet.

    Nodes passed on the old side leave the counts, nodes on the new side enter them.
    """
    cache = reader.cache

    async def get(node_id: str, below: float | None) -> tuple[dict[str, Any], int | float]:
        raw = cache.get(node_id)  # most steps: no await
        if raw is None:
            raw = await reader.get(node_id, below)
        if not isinstance(raw, dict) or raw.get("threadId") != reader.thread_id:
            raise _Fallback
        seq = numeric_seq(raw.get("seq"))
        if seq is None:
            raise _Fallback
        return raw, seq

    old_t, old_m, new_t, new_m = 0, 0, 0, 0  # left on the old side, entered on the new
    old, new = memo.leaf_id, new_leaf
    below_old: float | None = None
    below_new: float | None = None
    seen_old: set[str] = set()
    seen_new: set[str] = set()
    while old != new:
        if new is None:  # the whole new path is walked: its counts are known
            return ShownCount(new_leaf, new_t, new_m)
        raw_new, seq_new = await get(new, below_new)
        if old is not None:
            raw_old, seq_old = await get(old, below_old)
            if seq_old >= seq_new:
                if old in seen_old:
                    raise _Fallback
                seen_old.add(old)
                t, m = share(raw_old)
                old_t, old_m = old_t + t, old_m + m
                old, below_old = raw_old.get("parentId"), seq_old
                if old is not None and not isinstance(old, str):
                    raise _Fallback
                continue
        if new in seen_new:
            raise _Fallback
        seen_new.add(new)
        t, m = share(raw_new)
        new_t, new_m = new_t + t, new_m + m
        new, below_new = raw_new.get("parentId"), seq_new
        if new is not None and not isinstance(new, str):
            raise _Fallback
    turns, messages = memo.turns - old_t + new_t, memo.messages - old_m + new_m
    if turns < 0 or messages < 0:
        raise _Fallback
    return ShownCount(new_leaf, turns, messages)
