"""Decoded postings blocks kept by the reading context, dropped when the index changes.

Search as you type asks for the same terms again and again, and a common term's block
is large (48,000 docs for ``the`` at 100,000 messages: ~1.3 MB of JSON to read, copy
and decode). :class:`BlockMemo` keeps the blocks one connection of the index database
decoded last, least recently used first out, up to :data:`MEMO_ENTRIES` postings.

It stays true through the index database's change feed, which carries this context's
commits and every other context's (another panel's indexer, the service worker's): a
block key written or deleted is dropped, a range or ``all`` drops every block. A
block from the memo is still *read* as far as a live query can tell: the reader asks
for its key (``primary_keys``, a request that returns no record), so the query is
woken when the block changes, as if it had read it. Between another context's commit
and the moment its change set arrives a block may be the one before the commit: the
index may lag, as it may anyway; every hit is still checked on ``panelot_v1``.
"""

from __future__ import annotations

from collections import OrderedDict

from panelot.idb import Database
from panelot.idb.observe.changes import ALL, DELS, PRIMARY, ObsSet, part_name
from panelot.idb.observe.follow import FeedMemo, PerConnection

__all__ = ["MEMO_ENTRIES", "Block", "BlockMemo", "block_memo"]

Block = dict[str, dict[str, int]]
"""A block's terms and their postings ``{term: {docId: tf}}``."""

MEMO_ENTRIES = 200_000
"""The most postings (docId, tf) the memo of one connection holds (~20 MB decoded)."""


class BlockMemo(FeedMemo):
    """The decoded blocks of one index connection, by record key (see the module)."""

    def __init__(self, db: Database) -> None:
        self._blocks: OrderedDict[str, tuple[Block, int]] = OrderedDict()
        self._entries = 0
        self._parts = tuple(part_name(db.name, "postings", p) for p in (PRIMARY, DELS))
        self.hits = 0
        """Blocks served from the memo (for tests and diagnostics)."""
        self.version = 0
        """Counts the index's postings changes heard: a block read before one is not kept."""
        super().__init__(db)  # heard from now on

    def clear(self) -> None:
        """Drop every block."""
        self._blocks.clear()
        self._entries = 0

    def _changed(self, changes: ObsSet) -> None:
        if ALL not in changes and not any(changes.get(part) for part in self._parts):
            return
        self.version += 1
        if ALL in changes:
            self.clear()
            return
        for part in self._parts:
            for lo, hi in changes.get(part) or ():
                if lo is not hi and lo != hi:
                    self.clear()  # a range: any block may have changed
                    return
                if isinstance(lo, str):
                    self._drop(lo)

    def _drop(self, key: str) -> None:
        held = self._blocks.pop(key, None)
        if held is not None:
            self._entries -= held[1]

    def get(self, key: str) -> Block | None:
        """The decoded block of record ``key``, if held (it must not be changed)."""
        held = self._blocks.get(key)
        if held is None:
            return None
        self._blocks.move_to_end(key)
        self.hits += 1
        return held[0]

    def put(self, key: str, block: Block, version: int) -> None:
        """Keep the block of record ``key``, read when the memo was at ``version``.

        Not kept if a change was heard since (the block may be the one before it), or if
        it is larger than the whole memo; the least recently used go first.
        """
        size = sum(map(len, block.values()))
        if size > MEMO_ENTRIES or version != self.version:
            return
        self._drop(key)
        self._blocks[key] = (block, size)
        self._entries += size
        while self._entries > MEMO_ENTRIES:
            _, (_, dropped) = self._blocks.popitem(last=False)
            self._entries -= dropped


block_memo: PerConnection[BlockMemo] = PerConnection(BlockMemo)
"""The connection's :class:`BlockMemo` (made on first use): ``block_memo(db)``."""
