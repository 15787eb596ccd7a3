"""The progress of a sync in flight, kept where every context sees it (docs/sync.md).

A push or pull reports its phase and how many documents it has done of how many it
knows so far (:class:`Progress`): ``comparing`` (reading the server's changes, or
comparing the records here with what the server has), ``receiving`` (the server's
documents and their bytes), ``writing`` (into ``panelot_v1``) and ``sending`` (the
batches of ``_bulk_docs``). It goes to the meta row ``progress`` of
``panelot_sync_v1``, so ``sync.status`` in any context (another panel, the one whose
loop does not hold the lock) shows it: ``{phase, done, total, at, source, id}``.

It costs nothing measurable: a row is written when the phase changes and otherwise at
most every :data:`EVERY_SECONDS`, each in a small transaction of its own, between the
sync's steps and never inside a transaction of ``panelot_v1``. A quick sync writes
none: a phase of fewer than :data:`MANY` documents (or of a total not known yet) is
written only once the sync has lasted :data:`EVERY_SECONDS` (the continuous loop's
rounds of a change or two neither cost a write nor flash on the status line). It is cleared when the
sync ends, on failure too (only the row this sync wrote: another context's stays). A
context killed mid-sync leaves its row behind: :func:`shown` treats a row older than
:data:`STALE_MS` (by its ``at``) as gone. A write that fails is logged and never fails
the sync.
"""

from __future__ import annotations

import logging
import uuid
from time import monotonic
from typing import Any

from panelot.clock import Clock
from panelot.idb import Database, Transaction
from panelot.sync.state import read_meta, write_meta

__all__ = [
    "BACKGROUND",
    "COMMAND",
    "EVERY_SECONDS",
    "KEY",
    "LOOP",
    "MANY",
    "PHASES",
    "STALE_MS",
    "Progress",
    "shown",
]

KEY = "progress"
"""The meta key of the progress row."""

PHASES = ("comparing", "receiving", "writing", "sending")
"""The phases a push or pull reports."""

LOOP = "loop"
"""The source of a continuous loop's sync."""

BACKGROUND = "background"
"""The source of a background sync (the service worker's alarm)."""

COMMAND = "command"
"""The source of a sync asked for (``sync.push``, ``sync.pull``, ``sync.now``)."""

EVERY_SECONDS = 0.5
"""Within a phase, the row is written at most this often."""

MANY = 50
"""A phase of at least this many documents is shown from its start."""

STALE_MS = 120_000
"""A progress row older than this (2 minutes; a step waits on one call to the server,
30 s at most) is a killed context's: it is not shown."""

log = logging.getLogger("panelot.sync")


def shown(value: Any, now: int) -> dict[str, Any] | None:
    """The progress row ``value`` as ``sync.status`` gives it; ``None``: none or stale."""
    if not isinstance(value, dict) or value.get("phase") not in PHASES:
        return None
    at = value.get("at")
    if not isinstance(at, int) or now - at > STALE_MS:
        return None
    return {k: value.get(k) for k in ("phase", "done", "total", "at", "source")}


class Progress:
    """The progress reporter of one push or pull (or one ``sync.now``)."""

    def __init__(self, state: Database, clock: Clock, source: str) -> None:
        """Report into ``state``'s meta, stamped with ``clock`` and ``source``.

        ``source``: which kind of context syncs (``loop``, ``background``, ``command``).
        """
        self._state = state
        self._clock = clock
        self.source = source
        self.id = uuid.uuid4().hex
        """This sync's mark: :meth:`clear` drops only the row it wrote."""
        self._phase: str | None = None
        """The phase last written (``None``: nothing written)."""
        self._last = 0.0
        self._started = monotonic()
        self.writes = 0
        """Rows written (for tests and diagnostics)."""

    async def step(self, phase: str, done: int, total: int | None) -> None:
        """``done`` documents of ``total`` (``None``: not known yet) in ``phase``.

        Written when the phase changes, else at most every :data:`EVERY_SECONDS`; a
        phase of fewer than :data:`MANY` documents only once the sync has lasted that.
        """
        moment = monotonic()
        if phase == self._phase:
            if moment - self._last < EVERY_SECONDS:
                return
        elif (total is None or total < MANY) and moment - self._started < EVERY_SECONDS:
            return  # a quick sync shows no progress
        self._phase, self._last = phase, moment
        row = {"phase": phase, "done": done, "total": total, "at": self._clock()}
        row.update(source=self.source, id=self.id)

        async def write(tx: Transaction) -> None:
            await write_meta(tx, KEY, row)

        try:
            await self._state.transaction("rw", ["meta"], write)
            self.writes += 1
        except Exception:
            log.exception("%s: the progress write failed", self._state.name)

    async def clear(self) -> None:
        """Drop the row, if it is still this sync's (the sync ended, or failed)."""
        if self._phase is None:
            return
        self._phase = None

        async def drop(tx: Transaction) -> None:
            row = await read_meta(tx, KEY)
            if isinstance(row, dict) and row.get("id") == self.id:
                await tx.table("meta").delete(KEY)

        try:
            await self._state.transaction("rw", ["meta"], drop)
        except Exception:
            log.exception("%s: clearing the progress failed", self._state.name)
