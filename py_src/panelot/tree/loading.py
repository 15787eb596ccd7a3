"""Loading a thread for reading, with the integrity repair.

:func:`load_thread` reads a thread and all its nodes in one read-only transaction and
walks from the leaf. When the leaf cannot reach a root (missing node, missing
parent, cycle, parent in another thread), :func:`repair_thread` moves the leaf to the
highest-seq reachable leaf and appends a ``system_notice`` saying what was repaired,
in one read-write transaction that re-checks first, so two contexts never repair twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from panelot.clock import Clock, now_ms
from panelot.codec import encode
from panelot.idb import Database, Transaction
from panelot.idb.errors import ValidationError
from panelot.tree.cache import ThreadCache, thread_cache
from panelot.tree.descent import is_tombstone
from panelot.tree.integrity import TreeIndex, best_leaf, index_nodes, walk_to_root
from panelot.tree.nodes import TREE_TABLES, append_node, thread_of
from panelot.tree.path_memo import indexed, walked
from panelot.tree.reading import load_nodes, load_thread_records
from panelot.tree.records import ThreadMeta, thread_from_wire
from panelot.tree.shown import count_in
from panelot.tree.tombstones import live_leaf

__all__ = ["LoadedThread", "check_thread", "load_thread", "repair_thread", "revive_leaf"]


@dataclass(slots=True)
class LoadedThread:
    """A thread, its indexed nodes, and the root→leaf path of its current leaf."""

    thread: ThreadMeta
    index: TreeIndex
    path: list[str]
    problem: str | None = None
    memo: dict[str, Any] | None = None
    """The thread cache's memo for these records (:meth:`ThreadCache.memo`), if cached.

    Loaded with ``shared``, ``index`` and ``path`` may be the memo's own
    (:mod:`panelot.tree.path_memo`): read them only.
    """


def _thread_and_problem(raw: Any, thread_id: str) -> tuple[ThreadMeta, str | None]:
    """The thread, and a problem when its stored ``leafId`` is not even an id (to repair)."""
    try:
        return thread_of(raw, thread_id), None
    except ValidationError as exc:
        if exc.field != "thread.leafId":
            raise
    thread = thread_from_wire({**raw, "leafId": None})  # any other bad field still raises
    return thread, f"the leaf {raw['leafId']!r} is not a node id"


async def _read(
    tx: Transaction,
    thread_id: str,
    leaf_id: str | None = None,
    cache: ThreadCache | None = None,
    shared: bool = False,
) -> LoadedThread:
    raw, raw_nodes = await (
        cache.records(tx, thread_id, shared) if cache else load_thread_records(tx, thread_id)
    )
    thread, bad_leaf = _thread_and_problem(raw, thread_id)
    memo = cache.memo(thread_id) if cache else None
    held = memo if shared else None  # the index and path are kept only over lent records
    index = indexed(held, thread_id, raw_nodes) if held is not None else None
    if index is None:
        index = index_nodes(thread_id, raw_nodes)
    if index.problems:  # report the problems in the order of the threadId read
        index, memo, held = index_nodes(thread_id, await load_nodes(tx, thread_id)), None, None
    leaf = leaf_id if leaf_id is not None else thread.leaf_id
    walk = walked(held, index, leaf) if held is not None else walk_to_root(index, leaf)
    problem = bad_leaf if bad_leaf and leaf_id is None else walk.problem
    return LoadedThread(thread, index, walk.path, problem, memo)


async def check_thread(db: Database, thread_id: str) -> dict[str, Any]:
    """Report integrity problems without changing anything: ``{ok, problems}``."""

    async def body(tx: Transaction) -> dict[str, Any]:
        loaded = await _read(tx, thread_id)
        problems = list(loaded.index.problems)
        if loaded.problem:
            problems.append(loaded.problem)
        for node in loaded.index.nodes.values():
            parent = node["parentId"]
            if parent is not None and parent not in loaded.index.nodes:
                other = await tx.table("nodes").get(parent)
                where = "in another thread" if other is not None else "missing"
                problems.append(f"node {node['id']!r} has its parent {parent!r} {where}")
        return {"ok": not problems, "problems": problems}

    return await db.transaction("r", TREE_TABLES, body)


async def repair_thread(tx: Transaction, thread_id: str, clock: Clock = now_ms) -> LoadedThread:
    """Re-check inside a read-write transaction and repair the leaf if it is still broken."""
    loaded = await _read(tx, thread_id)
    if loaded.problem is None:
        return loaded
    leaf, _ = best_leaf(loaded.index)
    notice = {
        "text": f"The conversation was repaired: {loaded.problem}. "
        "It continues from the newest intact message.",
        "level": "warning",
        "code": "integrity_repair",
    }
    await tx.table("threads").update(thread_id, {"leafId": leaf})  # a valid id, or None
    await append_node(tx, thread_id, "system_notice", notice, leaf, clock)  # moves the leaf
    return await _read(tx, thread_id)


def _dead_leaf(loaded: LoadedThread) -> bool:
    """Whether the loaded path ends in a tombstone (see :func:`revive_leaf`)."""
    return bool(loaded.path) and is_tombstone(loaded.index.nodes[loaded.path[-1]])


async def revive_leaf(tx: Transaction, thread_id: str) -> LoadedThread:
    """Re-read inside a read-write transaction; move a leaf left on tombstones to live content.

    A thread whose leaf path ends in tombstones while other versions live (written by
    older code, or by another program sharing the database) shows neither: the leaf
    moves as deleting would have moved it (:func:`panelot.tree.tombstones.live_leaf`).
    """
    loaded = await _read(tx, thread_id)
    if loaded.problem is not None or not _dead_leaf(loaded):
        return loaded
    moved = live_leaf(loaded.index, loaded.thread.leaf_id)
    if moved == loaded.thread.leaf_id:
        return loaded
    shown = encode(count_in(loaded.index.nodes, moved))
    await tx.table("threads").update(thread_id, {"leafId": moved, "shown": shown})
    return await _read(tx, thread_id)


async def load_thread(
    db: Database,
    thread_id: str,
    leaf_id: str | None = None,
    clock: Clock = now_ms,
    shared: bool = False,
) -> LoadedThread:
    """Load a thread for reading; repair its leaf first if it cannot reach a root.

    A leaf left on tombstones while live versions exist is moved to them
    (:func:`revive_leaf`). With an explicit ``leaf_id`` nothing is repaired: an
    unreachable leaf is an error of the caller, reported as the ``problem`` of the result.
    ``shared``: the nodes may be the thread cache's own records, which the caller must
    neither change nor return (:meth:`~panelot.tree.cache.ThreadCache.records`).
    """
    cache = thread_cache(db)
    loaded = await db.transaction(
        "r", TREE_TABLES, lambda tx: _read(tx, thread_id, leaf_id, cache, shared)
    )
    if leaf_id is not None:
        return loaded
    if loaded.problem is None:
        if not _dead_leaf(loaded) or live_leaf(loaded.index, loaded.thread.leaf_id) == (
            loaded.thread.leaf_id
        ):
            return loaded
        return await db.transaction("rw", TREE_TABLES, lambda tx: revive_leaf(tx, thread_id))
    return await db.transaction("rw", TREE_TABLES, lambda tx: repair_thread(tx, thread_id, clock))
