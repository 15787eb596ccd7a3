"""``Live``: continuous sync, the loop ``sync.start`` runs until ``sync.stop`` (docs/sync.md).

* **Local changes.** While running, the loop hears ``panelot_v1``'s change feed (every
  context's commits). The listener only notes the changed document ids
  (:func:`~panelot.sync.outbox.changed_ids`); a task writes them to the outbox after
  the commit, and a push follows :data:`DEBOUNCE` seconds later (within a second),
  reading only the outbox's records. The first push after a start compares everything
  (the start-up comparison: a context killed between a commit and its outbox write
  loses nothing).
* **Remote changes.** A long-poll on ``_changes?feed=longpoll&since=<pull checkpoint>``
  (:func:`~panelot.sync.fetch.wait_changes`, :attr:`Live.poll_seconds` at most) runs
  beside it; when it answers with a change, the existing pull runs and writes through
  the normal write path, so live queries follow.
* **One sync per profile.** Given ``locks`` (the host's Web Locks in a page), the loop
  first waits for the lock :func:`lock_name` (``panelot-sync``): one context of the
  profile syncs; the others queue and take over when it goes. Without (CPython): no lock.
* **Paused after a restore.** Given ``paused`` (the section's check of
  :mod:`panelot.sync.pause`), the loop asks it before each round; while it says so (or a
  push or pull refuses with ``SyncPausedError``) the loop neither pushes nor pulls: it
  waits for :meth:`Live.wake` (``sync.resume`` in this context) or
  :attr:`Live.poll_seconds` (a resume in another context), then asks again. After the
  pause it starts over: a pull, then the start-up comparison.
* **Failures are kept for every context.** Given ``outcome``, the loop reports each
  round: ``outcome(None, None)`` after a success, ``outcome(error, next_try)`` after a
  failure (the section keeps it in ``panelot_sync_v1``, :mod:`panelot.sync.failure`).
  A failure to report is logged, never raised.
* **Failures back off** exponentially: :data:`BACKOFF_FIRST` seconds, doubling to
  :data:`BACKOFF_MAX`, reset by a success. The wait goes through the injected ``sleep``
  and ``nextTry`` through the injected clock, so tests never wait real minutes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from panelot.clock import Clock
from panelot.errors import SyncPausedError
from panelot.host.locks import Locks, Release
from panelot.idb import Database
from panelot.idb.observe.changes import ObsSet
from panelot.schema import DB_NAME
from panelot.sync.outbox import WIDE, changed_ids, note, taken

__all__ = [
    "BACKOFF_FIRST",
    "BACKOFF_MAX",
    "DEBOUNCE",
    "LOCK_NAME",
    "POLL_SECONDS",
    "Live",
    "Outcome",
    "Sleep",
    "backoff",
    "lock_name",
]

BACKOFF_FIRST = 1.0
"""Seconds before the first retry after a failure."""

BACKOFF_MAX = 300.0
"""The longest wait between retries (5 minutes)."""

DEBOUNCE = 0.25
"""Seconds from a change heard to the push that sends it."""

POLL_SECONDS = 20.0
"""The long-poll's ``timeout`` (under the host's 30 s HTTP timeout)."""

LOCK_NAME = "panelot-sync"
"""The lock that lets one context of a profile sync ``panelot_v1``."""

Sleep = Callable[[float], Awaitable[None]]
"""Waits a number of seconds (``asyncio.sleep``; a test's own)."""

Outcome = Callable[[Exception | None, int | None], Awaitable[None]]
"""Hears each round's outcome: ``(None, None)`` after a success, else ``(error, next try)``."""

log = logging.getLogger("panelot.sync")


def lock_name(db_name: str) -> str:
    """The lock of the continuous sync of the store database ``db_name``."""
    return LOCK_NAME if db_name == DB_NAME else f"{LOCK_NAME}:{db_name}"


def backoff(failures: int) -> float:
    """Seconds to wait after ``failures`` failures in a row (1, 2, 4, … 300)."""
    doubled: float = BACKOFF_FIRST * float(2 ** min(max(failures - 1, 0), 20))
    return min(doubled, BACKOFF_MAX)


class Live:
    """The continuous loop of one store's sync section."""

    def __init__(
        self,
        db: Database,
        state: Database,
        *,
        push: Callable[[dict[str, str]], Awaitable[Any]],
        pull: Callable[[], Awaitable[Any]],
        wait: Callable[[float], Awaitable[bool]],
        clock: Clock,
        sleep: Sleep = asyncio.sleep,
        locks: Locks | None = None,
        poll_seconds: float = POLL_SECONDS,
        debounce: float = DEBOUNCE,
        paused: Callable[[], Awaitable[bool]] | None = None,
        outcome: Outcome | None = None,
    ) -> None:
        """The loop over ``db``, its outbox in ``state``.

        ``push`` sends the outbox rows given, ``pull`` pulls, ``wait`` long-polls the
        server (whether a change came), ``paused`` says whether sync is paused,
        ``outcome`` hears each round's success or failure.
        """
        self._db = db
        self._state = state
        self._push = push
        self._pull = pull
        self._wait = wait
        self._clock = clock
        self._sleep = sleep
        self._locks = locks
        self._paused = paused
        self._outcome = outcome
        self._woken = asyncio.Event()
        self.paused = False
        """Whether the loop waits out a pause (after a backup restore)."""
        self.poll_seconds = poll_seconds
        self.debounce = debounce
        self.running = False
        """Whether the loop is started (and not stopped)."""
        self.syncing = False
        """Whether this context holds the lock and syncs (not queued behind another)."""
        self.last_error: str | None = None
        self.next_try: int | None = None
        """When the next try after a failure comes (ms, the injected clock)."""
        self.failures = 0
        """Failures in a row (reset by a success)."""
        self.pushes = 0
        """Pushes the loop made (for tests and diagnostics)."""
        self.pulls = 0
        """Pulls the loop made."""
        self.last_push: Any = None
        """The report of the loop's last push."""
        self._pending: set[str] = set()
        self._lost = False
        self._noting: asyncio.Task[None] | None = None
        self._wanted = asyncio.Event()
        self._main: asyncio.Task[None] | None = None
        self._poll: asyncio.Task[bool] | None = None
        self._release: Release | None = None
        self._unsubscribe: Callable[[], None] | None = None

    # -- hearing changes: cheap, synchronous, on the committing context's turn ----------

    def _heard(self, changes: ObsSet) -> None:
        if not self.running or not self.syncing:
            return  # queued behind another context: it hears the same commits
        ids = changed_ids(changes, self._db.name)
        if not ids:
            return
        self._pending |= ids
        if self._noting is None or self._noting.done():
            self._noting = asyncio.ensure_future(self._note())

    async def _note(self) -> None:
        """Write what was heard to the outbox (its own transaction), then wake the loop."""
        while self._pending:
            ids, self._pending = self._pending, set()
            try:
                await note(self._state, ids)
            except Exception:
                log.exception("%s: the outbox write failed", self._state.name)
                self._lost = True  # the next push compares everything
            self._wanted.set()

    # -- start and stop -------------------------------------------------------------------

    def start(self) -> None:
        """Start the loop (idempotent): it syncs once it holds the lock."""
        if self.running:
            return
        self.running = True
        self._unsubscribe = self._db.feed.subscribe(self._heard)
        self._main = asyncio.ensure_future(self._run())

    async def stop(self) -> None:
        """Stop the loop and wait until it has stopped (a push under way is cut short)."""
        tasks = self._halt()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def close(self) -> None:
        """Stop the loop without waiting (the store is closing)."""
        self._halt()

    def _halt(self) -> list[asyncio.Task[Any]]:
        self.running = False
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        tasks = [t for t in (self._main, self._poll, self._noting) if t is not None]
        for task in tasks:
            task.cancel()
        self._main = self._poll = self._noting = None
        self.next_try = None
        return tasks

    # -- the loop -------------------------------------------------------------------------

    async def _run(self) -> None:
        try:
            if self._locks is not None:
                self._release = await self._locks(lock_name(self._db.name))
            self.syncing = True
            await self._loop()
        finally:
            self.syncing = False
            if self._release is not None:
                self._release()
                self._release = None

    def wake(self) -> None:
        """Ask a paused loop to check the pause again now."""
        self._woken.set()

    async def _wait_pause(self) -> None:
        """Wait for :meth:`wake` or :attr:`poll_seconds`, whichever comes first."""
        self.paused = True
        self._woken.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._woken.wait(), self.poll_seconds)

    async def _loop(self) -> None:
        full, stale = True, True  # the start-up comparison, then a pull
        while self.running:
            try:
                if self._paused is not None and await self._paused():
                    await self._wait_pause()
                    full, stale = True, True
                    continue
                self.paused = False
                if stale:
                    await self._pull()
                    self.pulls += 1
                    stale = False
                self._wanted.clear()
                await self._flushed()
                rows = await taken(self._state)
                if full or self._lost or rows:
                    whole, self._lost = full or self._lost, False
                    self.last_push = await self._push({**rows, WIDE: ""} if whole else rows)
                    self.pushes += 1
                    full = False
                self._succeeded()
                await self._report(None, None)
                stale = await self._next()
            except asyncio.CancelledError:
                raise
            except SyncPausedError:  # a restore committed meanwhile: no backoff, wait
                full, stale = True, True
            except Exception as error:
                stale = True
                await self._failed(error)

    async def _flushed(self) -> None:
        """Wait until what was heard is in the outbox."""
        while self._noting is not None and not self._noting.done():
            await asyncio.shield(self._noting)

    async def _next(self) -> bool:
        """Wait for a local change or a remote one; whether the server has a change."""
        if self._poll is None:
            self._poll = asyncio.ensure_future(self._wait(self.poll_seconds))
        waker = asyncio.ensure_future(self._wanted.wait())
        try:
            await asyncio.wait({self._poll, waker}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waker.cancel()
        changed = False
        if self._poll.done():
            poll, self._poll = self._poll, None
            changed = poll.result()  # a failed long-poll raises here
        if self._wanted.is_set() and self.debounce > 0:
            await asyncio.sleep(self.debounce)  # gather a burst of commits into one push
        return changed

    def _succeeded(self) -> None:
        self.failures = 0
        self.last_error = None
        self.next_try = None

    async def _failed(self, error: Exception) -> None:
        if self._poll is not None and self._poll.done():
            self._poll = None
        self.failures += 1
        delay = backoff(self.failures)
        self.last_error = str(error) or type(error).__name__
        self.next_try = self._clock() + int(delay * 1000)
        log.info("%s: sync failed (%s); next try in %s s", self._db.name, error, delay)
        await self._report(error, self.next_try)
        await self._sleep(delay)

    async def _report(self, error: Exception | None, next_try: int | None) -> None:
        """Tell ``outcome`` (a failure to do so is logged: the loop goes on)."""
        if self._outcome is None:
            return
        try:
            await self._outcome(error, next_try)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("%s: keeping the sync's outcome failed", self._db.name)
