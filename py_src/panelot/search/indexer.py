"""``Indexer``: keeps the index database true from ``panelot_v1``'s change feed.

It listens to ``db.feed`` (this context's commits and every other context's: panels,
the service worker, Dexie code). A change set names key ranges, not records: the
listener only notes the changed node, thread and attachment keys (a range, or a table
changed wholesale, marks the batch *wide*) and arms a timer; nothing runs on the write
path. :data:`BATCH_DELAY` seconds later one batch reads the changed records from
``panelot_v1`` (one read-only transaction), then the changed attachments' Blobs (after
that transaction), and writes their docs and postings in one transaction of the index
database. A wide batch runs :meth:`Indexer.catch_up_now`.

At start-up the index is checked: missing, of another format, or damaged (a record
that does not read) is rebuilt; otherwise it catches up: every thread whose stamp
(``updatedAt``, node and attachment counts) differs from ``panelot_v1`` is indexed
again, and the docs of threads that are gone are dropped. One lock orders batches,
catch-ups and rebuilds.

**One indexer per origin.** Given a ``lock`` (the host's ``search_lock``: a Web Lock
named :func:`lock_name` in the extension's runtime), an indexer indexes only once the
lock is granted: the first context of the origin to open the store holds it and
indexes for every context; the others only query (their :attr:`Indexer.indexing` is
false, their batches never run). When the holder goes (closed, crashed: a Web Lock
dies with its page), the next in the queue is granted it, starts up like a store
being opened (catch-up from the thread stamps) and indexes from then on. Without a
lock every indexer indexes (CPython, the test harness).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Coroutine
from contextlib import asynccontextmanager
from typing import Any

from panelot.clock import Clock, now_ms
from panelot.host.locks import Locks, Release
from panelot.idb import Database, Transaction
from panelot.idb.observe.changes import ALL, ObsSet
from panelot.schema import DB_NAME
from panelot.search.extract import att_doc_id, thread_gone
from panelot.search.reading import (
    SOURCE_TABLES,
    attachment_counts,
    attachment_docs,
    count_attachments,
    node_doc,
    stamp_of,
    thread_doc,
    thread_docs,
)
from panelot.search.schema import FORMAT, thread_doc_id
from panelot.search.tally import Tallies, seq_key
from panelot.search.writes import (
    INDEX_TABLES,
    Bulk,
    read_stats,
    replace_docs,
    reset,
    thread_doc_ids,
)
from panelot.tree.reading import count_nodes

__all__ = ["BATCH_DELAY", "CHUNK", "LOCK_NAME", "REBUILD_CHUNK", "Indexer", "lock_name"]

BATCH_DELAY = 0.05
"""Seconds from the first change heard to the batch that indexes it."""

CHUNK = 25
"""Threads indexed per index transaction by a catch-up."""

REBUILD_CHUNK = 10
"""Threads read and whose docs are written at a time by a rebuild: each chunk's docs are
held while its postings are gathered (with 100 messages a thread, ~12 MB in CPython for
10 threads, ~31 MB for 25), on top of the whole index's postings."""

LOCK_NAME = "panelot-search-indexer"
"""The lock that elects the indexer of ``panelot_v1`` among the contexts of the origin."""

log = logging.getLogger("panelot.search")


def lock_name(db_name: str) -> str:
    """The lock electing the indexer of the store database ``db_name``."""
    return LOCK_NAME if db_name == DB_NAME else f"{LOCK_NAME}:{db_name}"


class _Damaged(Exception):
    """The index is missing, of another format, or holds a record that does not read."""


class Indexer:
    """Keeps ``index`` (the index database) true from ``db`` (``panelot_v1``)."""

    def __init__(
        self,
        db: Database,
        index: Database,
        clock: Clock = now_ms,
        delay: float = BATCH_DELAY,
        *,
        lock: Locks | None = None,
    ) -> None:
        self.db = db
        self.index = index
        self._clock = clock
        self._delay = delay
        self._nodes: set[str] = set()
        self._threads: set[str] = set()
        self._atts: set[str] = set()
        self._wide = False
        self.tallies = Tallies()
        """Each thread's node tally, for its stamp (:mod:`panelot.search.tally`)."""
        self._lock = asyncio.Lock()
        self._timer: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._prefix = f"idb://{db.name}/"
        self.started = False
        self._rebuild_due = False
        self.building = False
        """Whether a rebuild is under way."""
        self.batches = 0
        """How many batches have been written (for tests and diagnostics)."""
        self.failures = 0
        """How many batches, catch-ups or rebuilds failed (logged)."""
        self.closed = False
        self._locks = lock
        self._release: Release | None = None
        self._election: asyncio.Task[None] | None = None
        self.indexing = lock is None
        """Whether this context indexes (without a lock, always; with one, once granted)."""
        self._unseen = False
        self._unsubscribe = db.feed.subscribe(self._heard)
        self._unsubscribe_index = (
            index.feed.subscribe(self._index_heard) if lock is not None else None
        )

    # -- hearing changes: cheap, synchronous, on the committing context's turn --------------

    def _heard(self, changes: ObsSet) -> None:
        if self.closed:
            return
        noted = False
        for part, ranges in changes.items():
            if part == ALL:
                self._wide = noted = True
                continue
            if not part.startswith(self._prefix):
                continue
            table, _, sub = part[len(self._prefix) :].partition("/")
            into = self._heard_keys.get(table)
            if into is None or sub not in ("", ":dels"):
                continue
            for lo, hi in ranges:
                if isinstance(lo, str) and lo == hi:
                    into.add(lo)
                else:
                    self._wide = True  # a range: which records is not known
                noted = True
        if noted and not self.indexing:
            self._unseen = True  # another context indexes it: its commit will say so
            self._nodes.clear()
            self._threads.clear()
            self._atts.clear()
            self._wide = False
        elif noted:
            self._arm()

    def _index_heard(self, changes: ObsSet) -> None:
        """An index commit (the indexing context's): what this one heard is being indexed."""
        if not self.indexing:
            self._unseen = False

    @property
    def _heard_keys(self) -> dict[str, set[str]]:
        """The changed keys noted per ``panelot_v1`` table the index follows."""
        return {"nodes": self._nodes, "threads": self._threads, "attachments": self._atts}

    def _arm(self) -> None:
        if self._timer is None and not self.closed:
            self._timer = asyncio.get_event_loop().call_later(self._delay, self._fire)

    def _fire(self) -> None:
        self._timer = None
        self._spawn(self._drain())

    def _spawn(self, work: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    @property
    def lagging(self) -> bool:
        """Whether changes heard are not yet in the index (or start-up is not done).

        In a context that does not index: whether it heard writes that no index commit
        has followed yet (the indexing context's batch comes ~:data:`BATCH_DELAY` after).
        """
        if not self.indexing:
            return self._unseen
        return (
            not self.started
            or self.building
            or self._rebuild_due
            or self._timer is not None
            or self._lock.locked()
            or bool(self._nodes or self._threads or self._atts or self._wide)
        )

    # -- start, batches, catch-up, rebuild --------------------------------------------------

    def start(self) -> None:
        """Check the index and catch up (or rebuild) in the background.

        With a lock, first wait for it (in the background): only its holder indexes.
        """
        if self._locks is None:
            self._spawn(self._start_up())
        else:  # never cancelled: a lock granted after close() must still be released
            self._election = asyncio.ensure_future(self._elect(self._locks))

    async def _elect(self, locks: Locks) -> None:
        """Wait for the indexer lock; once granted, start up and index from then on."""
        try:
            release = await locks(lock_name(self.db.name))
        except Exception:
            self.failures += 1
            log.exception("%s: the indexer lock was refused", self.index.name)
            return
        if self.closed:
            release()
            return
        self._release = release
        self.indexing = True
        self._unseen = False
        log.info("%s: this context indexes now", self.index.name)
        await self._spawn(self._start_up())

    async def _start_up(self) -> None:
        async with self._lock:
            try:
                await self._check()
                await self.catch_up_now()
            except _Damaged as why:
                log.info("%s: rebuilding the index (%s)", self.index.name, why)
                await self._rebuild_now()
            except Exception:
                self.failures += 1
                log.exception("%s: start-up failed; rebuilding", self.index.name)
                await self._rebuild_now()
            finally:
                self.started = True

    async def _check(self) -> None:
        """Raise :class:`_Damaged` unless the index has the current format."""
        found = await self.index.table("meta").get("format")
        if not isinstance(found, dict) or found.get("value") != FORMAT:
            raise _Damaged(f"format {found!r}, expected {FORMAT}")

    async def _drain(self) -> None:
        async with self._lock:
            if self.closed:
                return
            nodes, self._nodes = self._nodes, set()
            threads, self._threads = self._threads, set()
            atts, self._atts = self._atts, set()
            wide, self._wide = self._wide, False
            if self._rebuild_due:
                return  # a rebuild waits for the lock: it reads everything after this
            try:
                await self._check()
                if wide:
                    await self.catch_up_now()
                else:
                    await self._batch(nodes, threads, atts)
                self.batches += 1
            except _Damaged as why:
                log.info("%s: rebuilding the index (%s)", self.index.name, why)
                await self._rebuild_now()
            except Exception:
                if self.closed:
                    return
                self.failures += 1
                log.exception("%s: an index batch failed", self.index.name)
                if self.failures < 3:  # a catch-up next time, a little later
                    self._wide = True
                    self._arm()

    async def _batch(
        self, nodes: set[str], threads: set[str], atts: set[str] | None = None
    ) -> None:
        """Index the changed nodes, threads and attachments.

        One read of ``panelot_v1``; then, outside it, the changed attachments' Blobs;
        then one index write.
        """
        node_ids = sorted(nodes)
        att_ids = sorted(atts or ())
        old_ids = [*node_ids, *(att_doc_id(a) for a in att_ids)]
        olds = await self.index.table("docs").bulk_get(old_ids) if old_ids else []
        affected = set(threads)
        affected.update(
            str(d["threadId"])
            for d in olds
            if isinstance(d, dict) and isinstance(d.get("threadId"), str)
        )

        async def read(
            tx: Transaction,
        ) -> tuple[list[Any], list[Any], dict[str, Any], dict[str, tuple[int, int]]]:
            records = await tx.table("nodes").bulk_get(node_ids) if node_ids else []
            files = await tx.table("attachments").bulk_get(att_ids) if att_ids else []
            self._check_tallies(records, olds[: len(node_ids)])
            affected.update(
                str(n["threadId"])
                for n in [*records, *files]
                if isinstance(n, dict) and isinstance(n.get("threadId"), str)
            )
            ids = sorted(affected)
            found = await tx.table("threads").bulk_get(ids)
            owners = dict(zip(ids, found, strict=True))
            counts = {}
            for tid, t in owners.items():
                if thread_gone(t):
                    self.tallies.forget(tid)
                else:
                    counts[tid] = (
                        await self.tallies.count(tx, tid),
                        await count_attachments(tx, tid),
                    )
            return records, files, owners, counts

        records, files, owners, counts = await self.db.transaction("r", SOURCE_TABLES, read)
        att_new: dict[str, dict[str, Any] | None] = dict.fromkeys(att_doc_id(a) for a in att_ids)
        att_new.update(await attachment_docs(self.db, files))  # the Blobs, after the read

        async def write(tx: Transaction) -> None:
            new: dict[str, dict[str, Any] | None] = {}
            for tid, thread in owners.items():
                if thread_gone(thread):
                    new.update(dict.fromkeys(await thread_doc_ids(tx, tid)))
                else:
                    new[thread_doc_id(tid)] = thread_doc(thread, stamp_of(thread, *counts[tid]))
            for nid, node in zip(node_ids, records, strict=True):
                owner = node.get("threadId") if isinstance(node, dict) else None
                live = isinstance(owner, str) and not thread_gone(owners.get(owner))
                new[nid] = node_doc(node, owner) if live and isinstance(owner, str) else None
            for doc_id, doc in att_new.items():
                live = doc is not None and not thread_gone(owners.get(doc["threadId"]))
                new[doc_id] = doc if live else None
            await replace_docs(tx, new)
            await self._checkpoint(tx)

        await self.index.transaction("rw", INDEX_TABLES, write)

    def _check_tallies(self, records: list[Any], olds: list[Any]) -> None:
        """Forget the tallies that the changed nodes may have made wrong (:mod:`.tally`).

        ``records`` are the changed nodes now, ``olds`` their docs before (in order). A
        node indexed in its thread before is counted; one above its thread's ``top`` is
        counted by the next tally. Any other change (a node removed or moved, one new at
        or below ``top``, or unseen before) makes its threads be counted whole.
        """
        for record, old in zip(records, olds, strict=True):
            now = record.get("threadId") if isinstance(record, dict) else None
            was = old.get("threadId") if isinstance(old, dict) else None
            if not isinstance(now, str):
                if isinstance(was, str):
                    self.tallies.forget(was)
                else:  # a node gone, from which thread is not known
                    self.tallies.clear()
                continue
            if was == now:
                continue
            if isinstance(was, str):
                self.tallies.forget(was)
            known = self.tallies.get(now)
            seq = seq_key(record)
            if known is not None and (seq is None or known.covers(seq)):
                self.tallies.forget(now)

    async def _checkpoint(self, tx: Transaction) -> None:
        await tx.table("meta").put({"key": "checkpoint", "value": {"at": self._clock()}})

    async def catch_up_now(self) -> int:
        """Index again every thread whose stamp differs; drop gone threads. Hold the lock."""

        async def source(tx: Transaction) -> dict[str, Any]:
            threads = await tx.table("threads").to_list()
            live = [t for t in threads if not thread_gone(t)]
            self.tallies.clear()  # a catch-up follows changes not heard: count anew
            # issued together: one round trip, not one per thread (300 threads: ~75 ms
            # against ~110 ms in the page)
            counts = await tx.gather(*(count_nodes(tx, str(t["id"])) for t in live))
            files = await attachment_counts(tx)
            return {
                str(t["id"]): stamp_of(t, n, files.get(str(t["id"]), 0))
                for t, n in zip(live, counts, strict=True)
            }

        stamps = await self.db.transaction("r", SOURCE_TABLES, source)

        async def held(tx: Transaction) -> tuple[list[Any], list[Any]]:
            docs = tx.table("docs")
            heads = await docs.where("id").between("thread:", "thread:\uffff").to_list()
            owners = await docs.order_by("threadId").unique_keys()
            return heads, owners

        heads, owners = await self.index.transaction("r", INDEX_TABLES, held)
        for head in heads:
            if not isinstance(head, dict) or not isinstance(head.get("threadId"), str):
                raise _Damaged(f"a thread doc that does not read: {head!r}")
        seen = {str(h["threadId"]): h.get("stamp") for h in heads}
        stale = [tid for tid, stamp in stamps.items() if seen.get(tid) != stamp]
        gone = [str(t) for t in owners if isinstance(t, str) and t not in stamps]
        await self._reindex(stale, gone)
        return len(stale) + len(gone)

    async def _reindex(self, threads: list[str], gone: list[str] | None = None) -> int:
        """Index ``threads`` again and drop ``gone``; return how many docs were written."""
        written = 0
        if gone:

            async def drop(tx: Transaction) -> None:
                new: dict[str, dict[str, Any] | None] = {}
                for tid in gone:
                    new.update(dict.fromkeys(await thread_doc_ids(tx, tid)))
                await replace_docs(tx, new)

            await self.index.transaction("rw", INDEX_TABLES, drop)
        for at in range(0, len(threads), CHUNK):
            built = await thread_docs(self.db, threads[at : at + CHUNK])

            async def write(tx: Transaction, built: dict[str, Any] = built) -> int:
                new: dict[str, dict[str, Any] | None] = {}
                for tid, docs in built.items():
                    new.update(dict.fromkeys(await thread_doc_ids(tx, tid)))
                    for doc in docs or []:
                        new[doc["id"]] = doc
                await replace_docs(tx, new)
                await self._checkpoint(tx)
                return sum(1 for d in new.values() if d is not None)

            written += await self.index.transaction("rw", INDEX_TABLES, write)
        return written

    async def _rebuild_now(self) -> dict[str, int]:
        """Empty the index and index every thread. Hold the lock.

        Docs are written per chunk of :data:`REBUILD_CHUNK` threads; the postings and stats are
        gathered in memory (:class:`~panelot.search.writes.Bulk`, about 4 bytes a posting)
        and written at the end as blocks (:mod:`panelot.search.postings`).
        """
        self.building = True
        self.tallies.clear()  # a rebuild follows a restore: count every thread whole
        try:
            await self.index.transaction("rw", INDEX_TABLES, reset)

            async def ids(tx: Transaction) -> list[str]:
                threads = await tx.table("threads").to_list()
                return [str(t["id"]) for t in threads if not thread_gone(t)]

            threads = await self.db.transaction("r", SOURCE_TABLES, ids)
            bulk = Bulk()
            for at in range(0, len(threads), REBUILD_CHUNK):
                built = await thread_docs(self.db, threads[at : at + REBUILD_CHUNK])
                docs = [doc for found in built.values() for doc in found or []]
                if docs:
                    await self.index.table("docs").bulk_put(bulk.add(docs))
            await self.index.transaction("rw", INDEX_TABLES, bulk.write)
            return {"threads": len(threads), "docs": bulk.docs}
        finally:
            self.building = False

    async def rebuild(self) -> dict[str, int]:
        """Rebuild the whole index from ``panelot_v1``: ``{threads, docs}``."""
        async with self._lock:
            self._rebuild_due = False
            return await self._rebuild_now()

    def rebuild_soon(self) -> None:
        """Rebuild in the background (after a restore); it lags until the rebuild is done."""
        if not self.closed:
            self._rebuild_due = True
            self._spawn(self.rebuild())

    @asynccontextmanager
    async def paused(self) -> AsyncIterator[None]:
        """Hold every batch back while the block runs (tests: search while it lags)."""
        async with self._lock:
            yield

    def ensure(self) -> None:
        """Rebuild in the background if the index is missing (a query found no format).

        Only the indexing context does: the others wait for its rebuild.
        """
        if not self.building and not self.closed and self.indexing:
            self._wide = True  # the next batch checks the format first, and rebuilds
            self._arm()

    async def status(self) -> dict[str, Any]:
        """``{format, docs, lagging, building}``."""

        async def body(tx: Transaction) -> tuple[Any, dict[str, Any]]:
            return await tx.table("meta").get("format"), await read_stats(tx)

        found, stats = await self.index.transaction("r", INDEX_TABLES, body)
        fmt = found.get("value") if isinstance(found, dict) else None
        if fmt != FORMAT:
            self.ensure()
        return {
            "format": fmt,
            "docs": stats["docs"],
            "lagging": self.lagging,
            "building": self.building,
        }

    def close(self) -> None:
        """Stop listening and indexing; close the index database."""
        if self.closed:
            return
        self.closed = True
        self._unsubscribe()
        if self._unsubscribe_index is not None:
            self._unsubscribe_index()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        for task in list(self._tasks):
            task.cancel()
        if self._release is not None:  # the next context in the queue indexes now
            self._release()
            self._release = None
        self.index.close()
