"""The shape of the threads a query's hits were in: ``onVisibleBranch`` without their records.

Telling whether a hit is on its thread's visible branch walks up from the thread's
leaf, so it needs the ``parentId`` of every node of the hit threads. Reading their
records for it (every payload crossing into Python) was a third of a warm query's
time; the next query, or the next keystroke, finds hits in the same threads again.
:class:`BranchMemo` keeps, per thread, each node's ``parentId``, and each use reads
only the threads' node **keys** (the same ``threadId`` range, so a live query still
records it and runs again when any node of those threads changes). What keeps it true:

* **The keys.** A thread is served from its entry only when the keys read now are the
  entry's: a node added or removed reads the records again.
* **The change feed.** A change the connection hears to a node an entry holds (its own
  commits at once, other contexts' and Dexie's as they arrive) drops that entry; a
  change too wide to name its keys, or an upgrade, drops every entry. A read-only
  transaction sees the database as it was when it started, and no write to the nodes
  commits while it runs, so an entry made in it cannot miss a change: such a change is
  heard after the entry is made, and drops it then. An entry is used only if it is
  still there after the keys were read (a change heard meanwhile dropped it).

A connection opened with ``observe=False`` does not hear its own commits: it reads the
records every time, as does a closed one. The memo is bounded (threads and nodes held).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any
from weakref import WeakKeyDictionary, ref

from panelot.idb import Database, Transaction
from panelot.idb.observe import ObsSet, RangeSet
from panelot.idb.observe.changes import ALL, PRIMARY, part_name
from panelot.idb.observe.track import reading

__all__ = ["MAX_KNOWN", "MAX_NODES", "MAX_THREADS", "BranchMemo", "branch_memo"]

MAX_THREADS = 256
"""The most threads held (the least recently used go first)."""

MAX_NODES = 50_000
"""The most nodes held in all."""

MAX_KNOWN = 200_000
"""The most nodes whose thread is remembered (past it, they are forgotten at once)."""


class BranchMemo:
    """Each node's ``parentId``, per thread, for the threads hits were in (see the module)."""

    def __init__(self, db: Database) -> None:
        self._db = ref(db)  # weak: the registry below must not keep a connection alive
        self._feed = db.feed
        self._entries: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._held = 0
        self._thread_of: dict[str, str] = {}
        self._nodes = self._primary = part_name(db.name, "nodes", PRIMARY)
        self._dels = part_name(db.name, "nodes", ":dels")
        self._feed.subscribe(self._changed)  # until the connection closes its feed
        self.hits = 0
        """Threads served from an entry (for tests and diagnostics)."""

    @property
    def threads(self) -> list[str]:
        """The ids of the threads held, least recently used first."""
        return list(self._entries)

    def _changed(self, changes: ObsSet) -> None:
        if not self._entries and not self._thread_of:
            return
        if ALL in changes:
            self._clear()
            return
        written = [changes.get(self._nodes), changes.get(self._dels)]
        if not any(written):
            return
        keys: set[object] = set()
        for ranges in written:
            for lo, hi in ranges or RangeSet():
                if lo is not hi and lo != hi:
                    self._clear()  # a range, not keys: anything may have changed
                    return
                keys.add(lo)
        for key in keys:
            self._thread_of.pop(key, None)  # type: ignore[call-overload]
        for thread_id, entry in list(self._entries.items()):
            if not keys.isdisjoint(entry):
                self._drop(thread_id)

    def _clear(self) -> None:
        self._entries.clear()
        self._held = 0
        self._thread_of.clear()

    def _drop(self, thread_id: str) -> None:
        entry = self._entries.pop(thread_id, None)
        if entry is not None:
            self._held -= len(entry)

    def _live(self) -> bool:
        """Whether it may serve: the connection is open and announces its commits."""
        db = self._db()
        if db is not None and db.observe and self._feed.has(self._changed):
            return True
        self._clear()
        return False

    def threads_of(self, node_ids: list[str]) -> dict[str, str]:
        """``{nodeId: threadId}`` of the nodes of ``node_ids`` whose thread it knows."""
        if not self._thread_of or not self._live():
            return {}
        known = self._thread_of
        return {nid: known[nid] for nid in node_ids if nid in known}

    def watcher(self) -> Callable[[list[str]], None]:
        """A function that records node ids as read by the live query running now.

        Call it outside the transaction (where the live query's context is set) and use
        what it returns inside: for the nodes not read because their known thread could
        hold no hit, so that a change to one of them still runs the live query again
        (as if a ``bulk_get`` had read them). Outside a live query it does nothing.
        """
        reads = reading.get()
        primary = self._primary

        def watch(node_ids: list[str]) -> None:
            if reads is None or not node_ids:
                return
            part = reads.get(primary)
            if part is None:
                part = reads[primary] = RangeSet()
            part.add_keys(node_ids)

        return watch

    def note(self, nodes: Iterable[Any]) -> None:
        """Remember the thread of each node record read (in the transaction that read it)."""
        if not self._live():
            return
        known = self._thread_of
        for node in nodes:
            if isinstance(node, dict):
                nid, tid = node.get("id"), node.get("threadId")
                if isinstance(nid, str) and isinstance(tid, str):
                    known[nid] = tid
        if len(known) > MAX_KNOWN:
            known.clear()

    async def parents(self, tx: Transaction, thread_ids: list[str]) -> dict[str, Any]:
        """``{nodeId: parentId}`` of every node of ``thread_ids``, as ``tx`` sees them.

        With entries for some of the threads: their node keys (all of them, one
        ``threadId`` range) and the records of the others; when an entry is stale (a key
        it lacks, one it has that is gone, or dropped meanwhile), or with no entry,
        every thread's records (one range).
        """
        nodes = tx.table("nodes").where("threadId")
        live = self._live()
        held = {tid: self._entries[tid] for tid in thread_ids if tid in self._entries}
        if held and live:
            keys = set(await nodes.any_of(*thread_ids).primary_keys())
            missing = [tid for tid in thread_ids if tid not in held]
            rows = await nodes.any_of(*missing).to_list() if missing else []
            out, fresh = _shape(rows, missing)
            for entry in held.values():
                out.update(entry)
            if len(out) == len(keys) and keys.issuperset(out):
                if all(self._entries.get(tid) is entry for tid, entry in held.items()):
                    self.hits += len(held)
                    for tid in held:
                        self._entries.move_to_end(tid)
                    self._keep(fresh)
                    return out
        rows = await nodes.any_of(*thread_ids).to_list()
        out, fresh = _shape(rows, thread_ids)
        if live:
            self._keep(fresh)
        return out

    def _keep(self, fresh: dict[str, dict[str, Any]]) -> None:
        for thread_id, entry in fresh.items():
            self._drop(thread_id)
            if len(entry) > MAX_NODES:
                continue
            self._entries[thread_id] = entry
            self._held += len(entry)
        while self._entries and (len(self._entries) > MAX_THREADS or self._held > MAX_NODES):
            self._drop(next(iter(self._entries)))


def _shape(
    rows: list[Any], thread_ids: list[str]
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """``({nodeId: parentId}, {threadId: {nodeId: parentId}})`` of node records."""
    out: dict[str, Any] = {}
    fresh: dict[str, dict[str, Any]] = {tid: {} for tid in thread_ids}
    for node in rows:
        if isinstance(node, dict) and isinstance(node.get("id"), str):
            out[node["id"]] = node.get("parentId")
            mine = fresh.get(node.get("threadId"))  # type: ignore[arg-type]
            if mine is not None:
                mine[node["id"]] = node.get("parentId")
    return out, fresh


_MEMOS: WeakKeyDictionary[Database, BranchMemo] = WeakKeyDictionary()


def branch_memo(db: Database) -> BranchMemo:
    """The connection's :class:`BranchMemo` (made on first use)."""
    memo = _MEMOS.get(db)
    if memo is None:
        memo = _MEMOS[db] = BranchMemo(db)
    return memo
