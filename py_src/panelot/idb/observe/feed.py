"""``ChangeFeed``: one connection's committed changes, to its live queries and beyond.

Each :class:`~panelot.idb.database.Database` has a feed. After a read-write
transaction commits, the database hands the feed what it changed
(:meth:`ChangeFeed.committed`): the feed tells this connection's listeners at once and
publishes the set (in a burst of commits, merged with the others of a frame) on its
:class:`Channel`, which carries it to the other contexts (the
browser core: Dexie's ``x-storagemutated-1`` event and BroadcastChannel; the memory
core: the other connections of the same :class:`~panelot.idb.memory.core.MemoryFactory`).
What arrives on the channel (:meth:`ChangeFeed.received`) goes to the same listeners. A
message that is not a change set is ignored, and logged once per feed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Protocol

from panelot.idb.observe.changes import ObsSet, decode_set, merge_sets

__all__ = ["BATCH", "BURST", "Channel", "ChangeFeed", "Listener"]

BATCH = 0.016
"""The shortest time, in seconds, between two messages of one connection in a burst."""

BURST = 0.006
"""A commit this soon (seconds) after the previous one is part of a burst."""

log = logging.getLogger("panelot.idb.observe")

Listener = Callable[[ObsSet], None]
"""Called with each change set (it must not keep it: the set may be shared)."""


class Channel(Protocol):
    """Carries change sets to the other connections and contexts of one database."""

    def publish(self, changes: ObsSet) -> None:
        """Send one change set to every other connection (as wire JSON where it must)."""
        ...

    def later(self, delay: float, callback: Callable[[], None]) -> None:
        """Call ``callback`` once, ``delay`` seconds from now, on the host's own timer.

        Not at all once the channel is closed. (The browser core's channel uses a
        ``setTimeout`` and one proxy for its life: under Pyodide an asyncio timer makes
        a proxy per call and runs it through the event loop's task machinery.)
        """
        ...

    def close(self) -> None:
        """Stop sending and receiving; release what the channel holds."""
        ...


class ChangeFeed:
    """Fans one database's changes out to listeners and to the other contexts.

    ``clock`` gives the time in seconds (the event loop's by default; tests pass one).
    """

    def __init__(self, db_name: str, clock: Callable[[], float] | None = None) -> None:
        self.db_name = db_name
        self.clock = clock
        """The time source in seconds (``None``: the event loop's); a test may set one."""
        self.channel: Channel | None = None
        self._listeners: list[Listener] = []
        self._outbox: ObsSet | None = None
        self._last_flush = -1e9
        self._last_commit = -1e9
        self.published = 0
        """How many change sets this feed has published (for tests and diagnostics)."""
        self.ignored = 0
        """How many received messages were not change sets."""

    @property
    def listeners(self) -> int:
        """How many listeners are subscribed."""
        return len(self._listeners)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` with every change set; return the function that stops it."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def has(self, listener: Listener) -> bool:
        """Whether ``listener`` is subscribed (a closed feed has none)."""
        return listener in self._listeners

    def committed(self, changes: ObsSet) -> None:
        """A transaction of this connection committed ``changes``: tell everyone.

        This connection's listeners hear at once, and so do the other connections,
        unless the commit is part of a burst (it came within :data:`BURST` seconds of
        the previous one): then it waits until :data:`BATCH` seconds have passed since
        the last message, and goes out with the others committed meanwhile. A burst
        (back-to-back appends, an import in many transactions) costs a few messages,
        not one per transaction; a commit after a pause (a user's send, one write in
        answer to what another context showed) is not held back.
        """
        if not any(changes.values()):
            return
        self._deliver(changes)
        if self.channel is None:
            return
        now = self._now()
        burst = now - self._last_commit < BURST
        self._last_commit = now
        if self._outbox is not None:
            merge_sets(self._outbox, changes)  # a message is already due
            if not burst:
                self.flush()  # after a pause: what waited goes out now, with this one
            return
        delay = self._last_flush + BATCH - now
        if delay <= 0 or not burst:
            self._last_flush = now
            self.published += 1
            self.channel.publish(changes)
            return
        self._outbox = {}
        merge_sets(self._outbox, changes)
        self.channel.later(delay, self.flush)

    def flush(self) -> None:
        """Publish what has been committed and not yet published (done on its own)."""
        outbox, self._outbox = self._outbox, None
        if outbox and self.channel is not None:
            self._last_flush = self._now()
            self.published += 1
            self.channel.publish(outbox)

    def _now(self) -> float:
        return self.clock() if self.clock is not None else asyncio.get_event_loop().time()

    def received_set(self, changes: ObsSet) -> None:
        """A change set from another connection of this interpreter (already decoded)."""
        self._deliver(changes)

    def received(self, message: object) -> None:
        """A change set arrived from another context (wire JSON, or junk to ignore)."""
        try:
            changes = decode_set(message)
        except ValueError as exc:
            self.ignored += 1
            if self.ignored == 1:
                log.warning("%s: ignored a change message that is not one (%s)", self.db_name, exc)
            return
        if changes:
            self._deliver(changes)

    def _deliver(self, changes: ObsSet) -> None:
        for listener in list(self._listeners):
            try:
                listener(changes)
            except Exception:  # one listener's bug must not stop the others
                log.exception("%s: a change listener failed", self.db_name)

    def close(self) -> None:
        """Close the channel and drop every listener."""
        self.flush()  # nothing committed goes unannounced
        if self.channel is not None:
            self.channel.close()
            self.channel = None
        self._listeners.clear()
