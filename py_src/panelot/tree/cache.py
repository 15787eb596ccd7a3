"""Recently read threads' node records: a view of a long thread reads only what is new.

Loading a 10,000-node thread reads every record from IndexedDB (~250 ms in Chromium);
the view that follows a turn needs the same records plus the two or three just
appended. :class:`ThreadCache` keeps, per connection, the records of the last few
threads a view loaded at least twice (a one-off read costs nothing more) or a model
request loaded once (a turn's request is followed by the next turn's), and serves
the next load of one of them from a transaction that reads only the thread record,
the thread's last node and the nodes after the cached ones (by ``[threadId+seq]``).

What keeps it true:

* **The change feed.** Every change set the connection hears (its own commits at once,
  other contexts' and Dexie's as they arrive) is checked: a change to a cached node
  (written or deleted) drops that thread's entry; a node of the thread that is new to
  the entry is remembered as *touched*; a change too wide to name its keys, or an
  upgrade, drops every entry. A read-only transaction sees the database as it was when
  it started and no overlapping write commits while it runs, so an entry made inside
  one cannot miss a change the feed has not yet announced: such a change is announced
  after the entry is made, and drops or touches it then.
* **The read that uses it.** It checks that the thread's last node by seq is the
  cached last one or follows it, reads the nodes after it, and requires every touched
  node to be among them. Anything else (a node added below the top, a seq that is not a
  number, a removed node) reads the whole thread again.
* **No shared objects.** An entry holds its records as ``marshal`` bytes and each read
  decodes fresh objects, so a caller changing what a view returned cannot change what
  the next view sees. The one exception is asked for: ``records(..., shared=True)``
  lends the decoded records the entries of the two most recently read threads keep
  (decoding 10,000 records costs ~20 ms in the page), to a reader that neither changes
  them nor returns them (the model request copies what it returns).
* **Derived values.** An entry's ``memo`` (:meth:`ThreadCache.memo`) holds what a
  reader computed from its records; it goes when the entry goes, so it never outlives
  the records it was computed from, and when the entry stops lending its decoded
  records (which the memo may hold).

A connection opened with ``observe=False`` does not hear its own commits, and a closed
one hears nothing, so their views read without the cache. Only views use it
(:func:`panelot.tree.loading.load_thread`); commands read inside their own read-write
transactions. A write that bypasses Dexie's protocol (raw IndexedDB code that
announces nothing) to a node already cached is not seen by this connection's views
until the entry is dropped: the same limit as its live queries.
"""

from __future__ import annotations

import marshal
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from panelot.codec import id_field
from panelot.idb import Database, Transaction
from panelot.idb.observe import ObsSet, RangeSet
from panelot.idb.observe.changes import ALL, part_name
from panelot.idb.observe.follow import FeedMemo, PerConnection
from panelot.tree.integrity import numeric_seq
from panelot.tree.reading import last_node, load_thread_records, seq_after

__all__ = ["MAX_BYTES", "MAX_THREADS", "ThreadCache", "thread_cache"]

MAX_THREADS = 4
"""How many threads an entry is kept for (the least recently read goes first)."""

MAX_BYTES = 64 * 1024 * 1024
"""The most bytes of encoded records kept in all; a thread larger than this is not kept."""

SHARED_THREADS = 2
"""How many of the most recently read threads keep their decoded records to lend."""

_COMPACT = 8
"""Chunks an entry may grow to before they are merged into one."""

_ONCE = 64
"""How many threads read once (and not kept) are remembered: the second read keeps one."""

_OTHER = object()
"""A changed key that is no string (so no cached node's id): touched, never trusted."""


@dataclass(slots=True)
class _Entry:
    """One thread's cached records: encoded chunks in seq order, and what they hold."""

    chunks: list[bytes]
    ids: set[str]
    top: int | float
    last_id: str
    size: int
    touched: set[object] = field(default_factory=set)
    shared: list[Any] | None = None
    """Decoded records lent to readers that promise not to change them (see ``records``)."""
    memo: dict[str, Any] = field(default_factory=dict)
    """Values derived from the records, by name; they go when the entry goes."""

    def rows(self) -> list[Any]:
        """Fresh copies of the records, in seq order."""
        if len(self.chunks) == 1:
            out: list[Any] = marshal.loads(self.chunks[0])
            return out
        return [row for chunk in self.chunks for row in marshal.loads(chunk)]


def _cacheable(rows: list[Any]) -> tuple[set[str], int | float, str] | None:
    """``(ids, top seq, last id)`` of rows in strictly rising numeric seq order, else ``None``."""
    if not rows:
        return None
    try:  # comprehensions over well-formed records; anything else raises and is not kept
        seqs = [row["seq"] for row in rows]
        ids = {row["id"] for row in rows}
    except (KeyError, TypeError):
        return None
    if not all(type(ident) is str for ident in ids) or len(ids) != len(rows):
        return None
    if not all(type(seq) is int for seq in seqs) and any(numeric_seq(s) is None for s in seqs):
        return None
    if any(a >= b for a, b in zip(seqs, seqs[1:], strict=False)):
        return None
    return ids, seqs[-1], rows[-1]["id"]


def _encode(rows: list[Any]) -> bytes | None:
    try:
        return marshal.dumps(rows)
    except ValueError:  # a value marshal cannot hold: not kept
        return None


class ThreadCache(FeedMemo):
    """Cached node records of the threads a connection's views read last (see the module)."""

    def __init__(self, db: Database) -> None:
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._once: OrderedDict[str, None] = OrderedDict()  # read once, not kept yet
        self._nodes = part_name(db.name, "nodes", "")
        self._dels = part_name(db.name, "nodes", ":dels")
        self._by_thread = part_name(db.name, "nodes", "threadId")
        self.hits = 0
        """Loads served from an entry (for tests and diagnostics)."""
        self.misses = 0
        """Loads that read the whole thread."""
        super().__init__(db)  # heard from now on

    @property
    def threads(self) -> list[str]:
        """The ids of the threads held, least recently read first."""
        return list(self._entries)

    @property
    def lending(self) -> list[str]:
        """The ids of the threads whose decoded records are kept to lend (see ``records``)."""
        return [tid for tid, entry in self._entries.items() if entry.shared is not None]

    def clear(self) -> None:
        """Drop every entry."""
        self._entries.clear()

    # -- keeping it true ----------------------------------------------------------------

    def _changed(self, changes: ObsSet) -> None:
        if not self._entries:
            return
        if ALL in changes:
            self._entries.clear()
            return
        written = [changes.get(self._nodes), changes.get(self._dels)]
        if not any(written):
            return
        keys: set[object] = set()
        for ranges in written:
            for lo, hi in ranges or RangeSet():
                if lo is not hi and lo != hi:
                    self._entries.clear()  # a range, not keys: anything may have changed
                    return
                keys.add(lo if isinstance(lo, str) else _OTHER)
        by_thread = changes.get(self._by_thread)
        for thread_id, entry in list(self._entries.items()):
            if not keys.isdisjoint(entry.ids):
                del self._entries[thread_id]  # a cached node was written or deleted
            elif by_thread is None or by_thread.has_key(thread_id):
                entry.touched |= keys  # maybe new nodes of this thread: the next read checks

    # -- reading ------------------------------------------------------------------------

    def memo(self, thread_id: str) -> dict[str, Any] | None:
        """The entry's memo of values derived from its records (``None``: no entry)."""
        entry = self._entries.get(thread_id)
        return None if entry is None else entry.memo

    async def records(
        self, tx: Transaction, thread_id: str, shared: bool = False
    ) -> tuple[Any, list[Any]]:
        """What :func:`~panelot.tree.reading.load_thread_records` returns, read with the entry.

        ``shared``: the records may be the entry's own decoded ones, which the caller must
        neither change nor return.
        """
        id_field(thread_id, "threadId")
        entry = self._entries.get(thread_id) if self.live() else None
        if entry is not None:
            raw, last = await tx.gather(
                tx.table("threads").get(thread_id), last_node(tx, thread_id)
            )
            tail = await self._tail(tx, thread_id, entry, last)
            # Decided after the reads: a change heard while they ran (committed before
            # this transaction began) may have dropped or touched the entry meanwhile.
            if (
                tail is not None
                and self._entries.get(thread_id) is entry
                and not entry.touched - {row["id"] for row in tail}
            ):
                self.hits += 1
                self._entries.move_to_end(thread_id)
                kept = not tail or self._extend(thread_id, entry, tail)
                entry.touched.clear()
                if not kept:  # the tail could not be encoded: the entry went
                    return raw, entry.rows() + tail
                return raw, self._lend(entry) if shared else entry.rows()
            if self._entries.get(thread_id) is entry:
                del self._entries[thread_id]
        self.misses += 1
        raw, rows = await load_thread_records(tx, thread_id)
        if shared or thread_id in self._once:  # a model request: the next turn reads it again
            self._keep(thread_id, rows)
            entry = self._entries.get(thread_id)
            if shared and entry is not None:
                self._lend(entry, rows)
        else:  # a thread read once is not kept, so a one-off read costs nothing more
            self._once[thread_id] = None
            while len(self._once) > _ONCE:
                self._once.popitem(last=False)
        return raw, rows

    async def _tail(
        self, tx: Transaction, thread_id: str, entry: _Entry, last: Any
    ) -> list[Any] | None:
        """The records after the entry's, or ``None`` when they show the entry is stale."""
        seq = numeric_seq(last.get("seq")) if isinstance(last, dict) else None
        if seq is None or seq < entry.top:
            return None
        if seq == entry.top:
            tail: list[Any] = []
            if last.get("id") != entry.last_id:
                return None
        else:
            tail = await seq_after(tx, thread_id, entry.top)
            if _cacheable(tail) is None:
                return None
        return tail

    def _lend(self, entry: _Entry, rows: list[Any] | None = None) -> list[Any]:
        """The entry's decoded records (``rows`` if given); only the last few read keep theirs."""
        if entry.shared is None:
            entry.shared = entry.rows() if rows is None else rows
        lent = entry.shared
        recent = list(self._entries.values())[-SHARED_THREADS:]
        for other in self._entries.values():
            if other is not entry and other not in recent and other.shared is not None:
                other.shared = None
                other.memo.clear()  # what it holds may keep the decoded records alive
        return lent

    def _extend(self, thread_id: str, entry: _Entry, tail: list[Any]) -> bool:
        """Add ``tail`` to the entry; ``False`` (and the entry dropped) if it cannot be kept."""
        chunk = _encode(tail)
        if chunk is None:
            del self._entries[thread_id]
            return False
        entry.chunks.append(chunk)
        if entry.shared is not None:
            entry.shared.extend(tail)
        entry.ids.update(row["id"] for row in tail)
        entry.top, entry.last_id = tail[-1]["seq"], tail[-1]["id"]
        entry.size += len(chunk)
        if len(entry.chunks) > _COMPACT:
            merged = marshal.dumps(entry.rows())
            entry.chunks, entry.size = [merged], len(merged)
        self._trim()
        return True

    def _keep(self, thread_id: str, rows: list[Any]) -> None:
        if not self.live():
            return
        shape = _cacheable(rows)
        chunk = _encode(rows) if shape is not None else None
        if shape is None or chunk is None or len(chunk) > MAX_BYTES:
            return
        ids, top, last_id = shape
        self._entries[thread_id] = _Entry([chunk], ids, top, last_id, len(chunk))
        self._entries.move_to_end(thread_id)
        self._trim()

    def _trim(self) -> None:
        total = sum(entry.size for entry in self._entries.values())
        while self._entries and (len(self._entries) > MAX_THREADS or total > MAX_BYTES):
            _, dropped = self._entries.popitem(last=False)
            total -= dropped.size


thread_cache: PerConnection[ThreadCache] = PerConnection(ThreadCache)
"""The connection's :class:`ThreadCache` (made on first use): ``thread_cache(db)``."""
