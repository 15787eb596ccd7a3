"""The shape of the threads a query's hits were in: ``onVisibleBranch`` without their records.

Telling whether a hit is on its thread's visible branch walks up from the thread's
leaf, so it needs the ``parentId`` of every node of the hit threads. Reading their
records for it (every payload crossing into Python) was a third of a warm query's
time; the next query, or the next keystroke, finds hits in the same threads again.
:class:`BranchMemo` keeps, per thread, each node's ``parentId`` (and, for the nodes a
query read, their thread: a node in a thread the filters refuse need not be read
again). What keeps it true:

* **The change feed.** A change the connection hears to a node an entry holds (its own
  commits at once, other contexts' and Dexie's as they arrive) drops that entry (and
  that node's thread); a change too wide to name its keys, or an upgrade, drops every
  entry. A read-only transaction sees the database as it was when it started, and no
  write to the nodes commits while it runs, so an entry made in it cannot miss a
  change: such a change is heard after the entry is made, and drops it then.
* **The leaf.** A thread is served from its entry only when the entry holds the
  thread's leaf as read now: a new node at the leaf (or anything that moved it to a
  node not held) reads the records again. A path from a held leaf runs through held
  nodes, whose ``parentId`` the feed keeps true; a node added off it is off the path.
* **Live queries.** What a query did not read because the memo knew it is recorded as
  read all the same (:meth:`BranchMemo.watcher`): a change to those records runs a
  live search again, as if they had been read.

A change made in another context is heard when its announcement arrives: until then an
entry may be stale, as the thread cache's may (the same limit). A connection opened
with ``observe=False`` does not hear its own commits: it reads the records every time,
as does a closed one. The memo is bounded (threads and nodes held).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any

from panelot.idb import Database, Transaction
from panelot.idb.observe import ObsSet, RangeSet
from panelot.idb.observe.changes import ALL, PRIMARY, part_name
from panelot.idb.observe.follow import FeedMemo, PerConnection
from panelot.idb.observe.track import reading

__all__ = ["MAX_KNOWN", "MAX_NODES", "MAX_THREADS", "BranchMemo", "Watch", "branch_memo"]

Watch = Callable[[str, list[str]], None]
"""``watch(index, keys)``: records reads of ``nodes`` for a live query (see ``watcher``)."""

MAX_THREADS = 256
"""The most threads held (the least recently used go first)."""

MAX_NODES = 50_000
"""The most nodes held in all."""

MAX_KNOWN = 200_000
"""The most nodes whose thread is remembered (past it, they are forgotten at once)."""


class BranchMemo(FeedMemo):
    """Each node's ``parentId``, per thread, for the threads hits were in (see the module)."""

    def __init__(self, db: Database) -> None:
        self._entries: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._held = 0
        self._thread_of: dict[str, str] = {}
        self._db_name = db.name
        self._nodes = part_name(db.name, "nodes", PRIMARY)
        self._dels = part_name(db.name, "nodes", ":dels")
        self.hits = 0
        """Threads served from an entry (for tests and diagnostics)."""
        super().__init__(db)  # heard from now on

    @property
    def threads(self) -> list[str]:
        """The ids of the threads held, least recently used first."""
        return list(self._entries)

    def _changed(self, changes: ObsSet) -> None:
        if not self._entries and not self._thread_of:
            return
        if ALL in changes:
            self.clear()
            return
        written = [changes.get(self._nodes), changes.get(self._dels)]
        if not any(written):
            return
        keys: set[object] = set()
        for ranges in written:
            for lo, hi in ranges or RangeSet():
                if lo is not hi and lo != hi:
                    self.clear()  # a range, not keys: anything may have changed
                    return
                keys.add(lo)
        for key in keys:
            self._thread_of.pop(key, None)  # type: ignore[call-overload]
        for thread_id, entry in list(self._entries.items()):
            if not keys.isdisjoint(entry):
                self._drop(thread_id)

    def clear(self) -> None:
        """Forget every thread and node held."""
        self._entries.clear()
        self._held = 0
        self._thread_of.clear()

    def _drop(self, thread_id: str) -> None:
        entry = self._entries.pop(thread_id, None)
        if entry is not None:
            self._held -= len(entry)

    def threads_of(self, node_ids: list[str]) -> dict[str, str]:
        """``{nodeId: threadId}`` of the nodes of ``node_ids`` whose thread it knows."""
        if not self._thread_of or not self.live():
            return {}
        known = self._thread_of
        return {nid: known[nid] for nid in node_ids if nid in known}

    def watcher(self) -> Watch:
        """A function that records reads of ``nodes`` for the live query running now.

        ``watch(index, keys)``: as if the records of ``keys`` had been read on ``index``
        (``""``: by primary key, as a ``bulk_get``; ``"threadId"``: as a ``threadId``
        query). Call it outside the transaction (where the live query's context is set)
        and use what it returns inside, for what a query did not read because it knew
        the answer: a change to those records still runs the live query again. Outside
        a live query it does nothing.
        """
        reads = reading.get()
        name = self._db_name

        def watch(index: str, keys: list[str]) -> None:
            if reads is None or not keys:
                return
            part_of = part_name(name, "nodes", index)
            part = reads.get(part_of)
            if part is None:
                part = reads[part_of] = RangeSet()
            part.add_keys(keys)

        return watch

    def note(self, nodes: Iterable[Any]) -> None:
        """Remember the thread of each node record read (in the transaction that read it)."""
        if not self.live():
            return
        known = self._thread_of
        for node in nodes:
            if isinstance(node, dict):
                nid, tid = node.get("id"), node.get("threadId")
                if isinstance(nid, str) and isinstance(tid, str):
                    known[nid] = tid
        if len(known) > MAX_KNOWN:
            known.clear()

    async def parents(
        self, tx: Transaction, leaves: dict[str, Any], watch: Watch
    ) -> dict[str, Any]:
        """``{nodeId: parentId}`` of the nodes of the threads of ``leaves`` (id -> leafId).

        A thread whose entry holds its leaf (read now, with the thread) is served from
        the entry, and recorded with ``watch`` as the ``threadId`` range a read of its
        nodes would have recorded; the others' records are read (one range).
        """
        live = self.live()
        held = {
            tid: entry
            for tid, leaf in leaves.items()
            if (entry := self._entries.get(tid)) is not None
            and (leaf is None or (isinstance(leaf, str) and leaf in entry))
        }
        if not live:
            held = {}
        missing = [tid for tid in leaves if tid not in held]
        out: dict[str, Any] = {}
        if missing:
            rows = await tx.table("nodes").where("threadId").any_of(*missing).to_list()
            out, fresh = _shape(rows, missing)
            if live:
                self._keep(fresh)
        if held:
            watch("threadId", list(held))
            self.hits += len(held)
            for tid, entry in held.items():
                out.update(entry)
                if tid in self._entries:
                    self._entries.move_to_end(tid)
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


branch_memo: PerConnection[BranchMemo] = PerConnection(BranchMemo)
"""The connection's :class:`BranchMemo` (made on first use): ``branch_memo(db)``."""
