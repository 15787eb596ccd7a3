"""How many nodes a thread has, for its stamp, without counting the thread whole each time.

A thread doc's stamp holds the thread's node count (what start-up's catch-up compares).
IndexedDB counts an index range entry by entry: ~30 ms for a 10,000-node thread in
Chromium, which an index batch paid after every turn and which held back the turn's
next write (a read of ``nodes`` delays a later read-write transaction on it).

A :class:`Tally` is a fact about the stored thread: it had ``nodes`` records, and
``top`` was its highest ``[threadId+seq]`` key. Nodes are appended with a seq above the
highest (never removed but with their thread), so the fact stays true and the count now
is ``nodes`` plus the entries above ``top``: one short read of the index. The indexer
keeps the tallies it has counted (:class:`Tallies`) and forgets a thread's whenever a
batch sees a change the rule does not cover (a node removed or moved, a node written
at or below ``top`` that was not indexed before); the next batch counts it whole. A
tally that still went wrong (a writer breaking the rule unseen) only gives a stamp that
start-up's exact count does not match: that thread is indexed again, and counted again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from panelot.idb import MAX_KEY, MIN_KEY, DataError, Transaction, compare_keys, validate_key
from panelot.tree.reading import count_nodes

__all__ = ["Tallies", "Tally", "seq_key"]


@dataclass(frozen=True, slots=True)
class Tally:
    """A thread had ``nodes`` node records, and ``top`` was its highest seq key."""

    nodes: int
    top: Any
    """The highest seq in ``[threadId+seq]`` (``None``: no node had a seq)."""

    def covers(self, seq: Any) -> bool:
        """Whether a node with this seq key was already counted, were it stored then."""
        return self.top is not None and compare_keys(seq, self.top) <= 0


def seq_key(record: Any) -> Any:
    """A node record's seq as an IndexedDB key (``None``: none, so not in ``[threadId+seq]``)."""
    seq = record.get("seq") if isinstance(record, dict) else None
    if seq is None:
        return None
    try:
        return validate_key(seq, "seq")
    except DataError:
        return None


async def _whole(tx: Transaction, thread_id: str) -> Tally:
    """The thread counted whole, and its highest seq key: one round trip."""
    nodes = tx.table("nodes")
    count, last = await tx.gather(
        count_nodes(tx, thread_id),
        nodes.where("[threadId+seq]")
        .between([thread_id, MIN_KEY], [thread_id, MAX_KEY])
        .reverse()
        .limit(1)
        .keys(),
    )
    return Tally(count, last[0][1] if last else None)


async def _since(tx: Transaction, thread_id: str, known: Tally) -> Tally:
    """``known`` and the thread's entries above its ``top``: the nodes appended since."""
    added = (
        await tx.table("nodes")
        .where("[threadId+seq]")
        .between([thread_id, known.top], [thread_id, MAX_KEY], False, True)
        .keys()
    )
    return Tally(known.nodes + len(added), added[-1][1] if added else known.top)


class Tallies:
    """The tallies one indexer has counted: thread id -> :class:`Tally`."""

    def __init__(self) -> None:
        self._known: dict[str, Tally] = {}
        self.whole = 0
        """How many times a thread was counted whole (for tests and diagnostics)."""

    async def count(self, tx: Transaction, thread_id: str) -> int:
        """The thread's node count now, in ``tx`` (over ``nodes``); remember its tally."""
        known = self._known.get(thread_id)
        if known is not None and known.top is not None:
            tally = await _since(tx, thread_id, known)
        else:
            self.whole += 1
            tally = await _whole(tx, thread_id)
        self._known[thread_id] = tally
        return tally.nodes

    def get(self, thread_id: str) -> Tally | None:
        """The thread's tally, if one is kept."""
        return self._known.get(thread_id)

    def forget(self, thread_id: str) -> None:
        """Count the thread whole next time."""
        self._known.pop(thread_id, None)

    def clear(self) -> None:
        """Count every thread whole next time."""
        self._known.clear()
