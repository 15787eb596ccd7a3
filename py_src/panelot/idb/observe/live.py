"""``LiveQuery``: a query that runs again whenever a committed change touches its reads.

>>> recent = lambda tx: tx.table("threads").where("updatedAt").above(0).to_list()
>>> with db.live_query(recent) as live:
...     async for threads in live:      # the first result, then one per relevant change
...         show(threads)

(``with`` closes it on the way out; or call :meth:`LiveQuery.close`.)

The querier runs with :data:`~panelot.idb.observe.track.reading` set, so every
transaction it starts records what its requests read. A change set from the
connection's :class:`~panelot.idb.observe.feed.ChangeFeed` (this context's commits,
or another context's, Dexie's included) that overlaps those reads schedules a new run;
one that does not is ignored. Changes that arrive during a run are kept and checked
against the new run's reads when it ends, so none is missed.

Runs are coalesced. The *gap* is ``interval`` seconds, or the last run's duration if
longer, up to :data:`MAX_GAP`. A relevant change after a quiet spell (no relevant
change for a gap) runs the query at once. A change that follows another within a gap
is part of a burst: its run starts no sooner than a gap after the previous run ended,
and however many changes arrive meanwhile, they cause one run. A burst of N commits
therefore costs a few runs, not N, and a single change is never held back because
the last run was slow (its wall-clock time also counts whatever ran beside it).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, Generic, TypeVar

from panelot.idb.observe.changes import ObsSet, merge_sets, sets_overlap
from panelot.idb.observe.feed import ChangeFeed
from panelot.idb.observe.reuse import Reuse
from panelot.idb.observe.track import reading, reusing

__all__ = ["DEFAULT_INTERVAL", "LiveQuery"]

T = TypeVar("T")
log = logging.getLogger("panelot.idb.observe")

DEFAULT_INTERVAL = 0.05
"""The shortest time, in seconds, between the end of one run and the start of the next."""

MAX_GAP = 0.25
"""The longest wait, in seconds, a long last run imposes before the next."""


class LiveQuery(AsyncIterator[T], Generic[T]):
    """Results of ``querier()``, again after each committed change that touches its reads.

    Use it as an async iterator (it yields the newest result; a result superseded
    before it is taken is skipped), or pass ``on_result`` (and ``on_error``) to be
    called with each. A failing run raises from the iterator, or goes to ``on_error``;
    either way the query stays live and runs again on the next relevant change.
    :meth:`close` ends it: no further run, no listener left. As a context manager
    (``with db.live_query(...) as live:``) it is closed on leaving the block.

    ``feed`` may be several feeds, one per database the querier reads (the store's
    search reads ``panelot_v1`` and its index database): reads are recorded by
    database, so a change to either wakes it when it touches what was read there.
    """

    def __init__(
        self,
        feed: ChangeFeed | Sequence[ChangeFeed],
        querier: Callable[[], Awaitable[T]],
        *,
        on_result: Callable[[T], Any] | None = None,
        on_error: Callable[[BaseException], Any] | None = None,
        interval: float = DEFAULT_INTERVAL,
    ) -> None:
        self._querier = querier
        self._on_result = on_result
        self._on_error = on_error
        self._interval = interval
        self._loop = asyncio.get_event_loop()
        self._reads: ObsSet = {}
        self._pending: ObsSet = {}
        self._since: ObsSet = {}  # every change heard since the last run began, that may matter
        self._reuse: Reuse | None = None
        self._running = False
        self._handle: asyncio.TimerHandle | asyncio.Handle | None = None
        self._task: asyncio.Task[None] | None = None
        self._last_end = -1e9
        self._last_duration = 0.0
        self._last_change = -1e9  # when the last relevant change arrived
        self._outcome: tuple[bool, Any] | None = None
        self._seq = 0
        self._taken = 0
        self._event = asyncio.Event()
        self.closed = False
        self.runs = 0
        """How many times the querier has run (the first run included)."""
        self.served = 0
        """Queries of its re-runs answered with the last result unchanged (no request)."""
        self.patched = 0
        """Queries of its re-runs answered by reading only the changed keys."""
        feeds = [feed] if isinstance(feed, ChangeFeed) else list(feed)
        self._unsubscribes = [f.subscribe(self._changed) for f in feeds]
        self._handle = self._loop.call_soon(self._start)

    # -- scheduling ---------------------------------------------------------------------

    def _changed(self, changes: ObsSet) -> None:
        if self.closed:
            return
        if self._handle is not None:  # a run is already due, and will see these changes
            merge_sets(self._since, changes)
            if sets_overlap(changes, self._reads):
                self._last_change = self._loop.time()
            return
        if self._running:
            merge_sets(self._pending, changes)  # checked against this run's reads
            merge_sets(self._since, changes)
            self._last_change = self._loop.time()
            return
        if sets_overlap(changes, self._reads):
            merge_sets(self._since, changes)
            now = self._loop.time()
            quiet = now - self._last_change >= self._gap()
            self._last_change = now
            if quiet:
                self._start()  # a lone change: no reason to wait
            else:
                self._schedule()

    def _gap(self) -> float:
        # A slow query waits as long as it ran, so a burst never keeps it running more
        # than half the time; capped, because a run's wall-clock time also counts
        # whatever ran beside it (a model request being built), not only the query.
        return max(self._interval, min(self._last_duration, MAX_GAP))

    def _schedule(self) -> None:
        if self.closed or self._handle is not None or self._running:
            return
        delay = self._last_end + self._gap() - self._loop.time()
        if delay <= 0:
            self._start()  # idle long enough: no hop through the event loop
            return
        self._handle = self._loop.call_later(delay, self._start)

    def _start(self) -> None:
        self._handle = None
        if self.closed:
            return
        self._running = True
        self._pending = {}
        since, self._since = self._since, {}
        last = self._reuse
        self._task = self._loop.create_task(
            self._run(Reuse() if last is None else last.next_run(since))
        )

    async def _run(self, reuse: Reuse) -> None:
        reads: ObsSet = {}
        token = reading.set(reads)
        token_reuse = reusing.set(reuse)
        started = self._loop.time()
        outcome: tuple[bool, Any]
        try:
            outcome = (True, await self._querier())
        except Exception as exc:  # delivered to the consumer, never lost
            outcome = (False, exc)
        finally:
            reusing.reset(token_reuse)
            reading.reset(token)
            self.runs += 1
            self._running = False
            self._task = None
            self._last_end = self._loop.time()
            self._last_duration = self._last_end - started
        if self.closed:
            return
        self._reads = reads
        self._reuse = reuse if outcome[0] else None  # a failed run's results are not kept
        self.served += reuse.served
        self.patched += reuse.patched
        self._deliver(outcome)
        pending, self._pending = self._pending, {}
        if sets_overlap(pending, reads):
            self._schedule()

    def _deliver(self, outcome: tuple[bool, Any]) -> None:
        self._outcome = outcome
        self._seq += 1
        self._event.set()
        ok, value = outcome
        callback = self._on_result if ok else self._on_error
        if callback is not None:
            try:
                callback(value)
            except Exception:  # the consumer's bug must not end the query
                log.exception("a live query callback failed")

    # -- consuming ----------------------------------------------------------------------

    def __aiter__(self) -> LiveQuery[T]:
        """The live query itself."""
        return self

    async def __anext__(self) -> T:
        """The next result (the newest one, if several arrived since the last)."""
        while True:
            if self.closed:
                raise StopAsyncIteration
            if self._seq > self._taken and self._outcome is not None:
                self._taken = self._seq
                ok, value = self._outcome
                if ok:
                    return value  # type: ignore[no-any-return]
                raise value
            self._event.clear()
            await self._event.wait()

    def __enter__(self) -> LiveQuery[T]:
        """The live query itself; leaving the ``with`` block closes it."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close it (see :meth:`close`); an exception propagates."""
        self.close()

    @property
    def reads(self) -> ObsSet:
        """What the last run read (the parts and ranges a change must touch)."""
        return self._reads

    def close(self) -> None:
        """Stop: no further run or delivery; the feed's listener is removed."""
        if self.closed:
            return
        self.closed = True
        for unsubscribe in self._unsubscribes:
            unsubscribe()
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        self._reads = {}
        self._pending = {}
        self._since = {}
        self._reuse = None
        self._event.set()  # wake an iterator, which then stops
