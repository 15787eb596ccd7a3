"""Reading a thread's records: its nodes by seq, quickly, whatever is stored.

Each function reads inside a caller's transaction over at least ``threads`` and ``nodes``.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable
from typing import Any

from panelot.codec import id_field
from panelot.idb import MAX_KEY, MIN_KEY, Collection, Transaction
from panelot.tree.integrity import numeric_seq

__all__ = [
    "FIRST_NODES",
    "MAX_PARTS",
    "PART_NODES",
    "count_nodes",
    "last_node",
    "load_nodes",
    "load_thread_records",
    "newest_nodes",
    "seq_after",
    "top_seq",
]


def _by_seq_all(tx: Transaction, thread_id: str) -> Collection:
    """The thread's nodes in ``[threadId+seq]`` order."""
    return (
        tx.table("nodes")
        .where("[threadId+seq]")
        .between([thread_id, MIN_KEY], [thread_id, MAX_KEY])
    )


def last_node(tx: Transaction, thread_id: str) -> Awaitable[Any]:
    """The thread's node with the highest seq (raw), read through ``[threadId+seq]``."""
    return _by_seq_all(tx, thread_id).last()


def newest_nodes(tx: Transaction, thread_id: str, count: int) -> Awaitable[list[Any]]:
    """The thread's ``count`` nodes of highest seq (raw), highest first."""
    return _by_seq_all(tx, thread_id).reverse().limit(count).to_list()


async def top_seq(tx: Transaction, thread_id: str, last: Any) -> int:
    """The seq of ``last`` (0 for none); a corrupt one (text, array, infinite) means a scan."""
    seq = numeric_seq(last.get("seq")) if last else 0
    if seq is None:  # such records sort after every number in [threadId+seq]
        seqs = [numeric_seq(r.get("seq")) for r in await load_nodes(tx, thread_id)]
        seq = max((s for s in seqs if s is not None), default=0)
    return int(seq)


async def load_nodes(tx: Transaction, thread_id: str) -> list[Any]:
    """Every stored node record of a thread (raw), through the ``threadId`` index."""
    return await tx.table("nodes").where("threadId").equals(thread_id).to_list()


#: Nodes read with the thread in a load's first round trip (see load_thread_records).
FIRST_NODES = 500
#: About this many nodes per part of the rest of a longer thread, in at most MAX_PARTS.
PART_NODES = 800
MAX_PARTS = 16


def _by_seq(
    tx: Transaction,
    thread_id: str,
    lower: Any = MIN_KEY,
    upper: Any = MAX_KEY,
    include_lower: bool = True,
    include_upper: bool = True,
    limit: int | None = None,
) -> Awaitable[list[Any]]:
    """The thread's records in ``[threadId+seq]`` (seqs within the bounds), in seq order."""
    found = (
        tx.table("nodes")
        .where("[threadId+seq]")
        .between([thread_id, lower], [thread_id, upper], include_lower, include_upper)
    )
    return (found if limit is None else found.limit(limit)).to_list()


def seq_after(tx: Transaction, thread_id: str, seq: Any) -> Awaitable[list[Any]]:
    """The thread's records whose seq is above ``seq`` in key order, in that order."""
    return _by_seq(tx, thread_id, seq, include_lower=False)


def count_nodes(tx: Transaction, thread_id: str) -> Awaitable[int]:
    """How many node records the thread has, counted whole through ``threadId``."""
    return tx.table("nodes").where("threadId").equals(thread_id).count()


async def _rest_by_seq(tx: Transaction, thread_id: str, after: Any, expected: int) -> list[Any]:
    """The records after seq ``after``, read as parallel parts split by seq.

    Appends number a thread's seqs densely, so ``expected`` more records split the seqs
    after ``after`` into parts of about :data:`PART_NODES`. The parts cover every key
    after ``after`` whatever the seqs are (the last one is open-ended): a guess that
    misses only makes the parts uneven.
    """
    start = numeric_seq(after)
    parts = min(MAX_PARTS, -(-expected // PART_NODES))
    step = -(-expected // parts)
    points = [] if start is None else [start + step * i for i in range(parts)]
    cuts = points[1:]
    # One open read for a seq that is no number, a short rest, or seqs so large that
    # adding to them stops making them larger (floats past 2**53) or overflows.
    if not cuts or cuts[-1] == math.inf or any(a >= b for a, b in zip(points, cuts, strict=False)):
        return await _by_seq(tx, thread_id, after, include_lower=False)
    bounds = [after, *cuts, MAX_KEY]
    # Each part takes its lower bound but the first (``after`` was read), not its upper.
    reads = [
        _by_seq(tx, thread_id, bounds[i], bounds[i + 1], i > 0, i == parts - 1)
        for i in range(parts)
    ]
    return [row for part in await tx.gather(*reads) for row in part]


async def load_thread_records(tx: Transaction, thread_id: str) -> tuple[Any, list[Any]]:
    """The raw thread record (``None`` if absent) and its raw nodes in seq order.

    The thread, its first :data:`FIRST_NODES` nodes and the node count are read in one
    round trip. The nodes are read through ``[threadId+seq]``, so they come already
    ordered as :func:`~panelot.tree.integrity.index_nodes` wants them. The rest of a longer
    thread is read in a second round trip as several reads at once, split by seq: the
    marshal writer and Python's decode of one part then overlap IndexedDB's read of the
    next, where one read of everything made them follow it (measured in Chromium: the
    context of a 10,000-node thread took ~440-475 ms with one read, ~350 ms in parts).

    A record whose seq is not a key (missing, null, a boolean, an object) is not in that
    index, and several records with the seq at the first round trip's end may be cut
    between the two: when the count through ``threadId`` says that the reads did not
    get each record once, every record is read through ``threadId`` instead.
    """
    raw, rows, total = await tx.gather(
        tx.table("threads").get(id_field(thread_id, "threadId")),
        _by_seq(tx, thread_id, limit=FIRST_NODES),
        count_nodes(tx, thread_id),
    )
    if len(rows) == FIRST_NODES and total > FIRST_NODES:
        rows += await _rest_by_seq(tx, thread_id, rows[-1]["seq"], total - FIRST_NODES)
    return raw, rows if total == len(rows) else await load_nodes(tx, thread_id)
