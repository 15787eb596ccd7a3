"""The pause after a backup restore: how the sync section sees that a restore committed.

A restore (``backup.restore``) replaces ``panelot_v1`` wholesale; what the sync state
knows of the server then describes data that is gone. The signal is the restore's own
command receipt: the bus writes it in the restore's transaction, in ``panelot_v1``'s
``commandReceipts`` (which a restore keeps), so it exists exactly when the restore
committed, in whichever context ran it, and every context reads it.

The state keeps what it has acknowledged (meta ``restoreSeen``: ``{at, ids}``): every
completed restore receipt created at ``at`` or later is in ``ids``, and any that is not
pauses sync (:func:`check`) until ``sync.resume`` acknowledges it. ``at`` trails the
clock by :data:`WINDOW_MS` (a receipt's ``createdAt`` is taken when its command starts,
before a long restore commits), so a check reads only the receipts of that window, not
30 days of them; it moves forward as checks find nothing new.

A state without ``restoreSeen`` (made before this, or configured fresh) takes the
receipts there are as seen: it knows nothing of the server that a restore could have
made stale.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from panelot.idb import Database, Transaction
from panelot.sync.state import read_meta, write_meta

__all__ = ["RESTORE", "WINDOW_MS", "Check", "acknowledge", "check", "current", "seen_now"]

RESTORE = "backup.restore"
"""The command whose commit pauses sync."""

WINDOW_MS = 3_600_000
"""How far ``restoreSeen.at`` trails the clock (an hour: longer than any restore takes)."""


@dataclass
class Check:
    """What :func:`check` found: whether sync is paused, and the restores it read."""

    paused: bool
    receipts: list[tuple[int, str]] = field(default_factory=list)
    """``(createdAt, id)`` of the completed restore receipts read."""


async def _restores(db: Database, since: int) -> list[tuple[int, str]]:
    """``(createdAt, id)`` of the completed restore receipts created at ``since`` or later."""

    async def read(tx: Transaction) -> list[Any]:
        table = tx.table("commandReceipts")
        return await table.where("createdAt").above_or_equal(since).to_list()

    rows = await db.transaction("r", ["commandReceipts"], read)
    found: list[tuple[int, str]] = []
    for row in rows:
        if not isinstance(row, dict) or row.get("commandType") != RESTORE:
            continue
        created, rid = row.get("createdAt"), row.get("id")
        if row.get("status") == "completed" and isinstance(created, int):
            if isinstance(rid, str):
                found.append((created, rid))
    return found


def seen_now(receipts: list[tuple[int, str]], now: int) -> dict[str, Any]:
    """``restoreSeen`` acknowledging ``receipts`` (and nothing later) at ``now``."""
    at = now - WINDOW_MS
    return {"at": at, "ids": sorted({rid for created, rid in receipts if created >= at})}


async def current(db: Database, now: int) -> dict[str, Any]:
    """``restoreSeen`` acknowledging every restore there is at ``now``."""
    return seen_now(await _restores(db, now - WINDOW_MS), now)


def _seen(value: Any) -> tuple[int, set[str]] | None:
    if not isinstance(value, dict) or not isinstance(value.get("at"), int):
        return None
    ids = value.get("ids")
    return value["at"], {i for i in ids if isinstance(i, str)} if isinstance(ids, list) else set()


async def check(db: Database, state: Database, now: int) -> Check:
    """Whether a restore committed that the state has not acknowledged (sync is paused)."""

    async def seen_of(tx: Transaction) -> Any:
        return await read_meta(tx, "restoreSeen")

    seen = _seen(await state.transaction("r", ["meta"], seen_of))
    if seen is None:  # a state from before the pause: what is there counts as seen
        receipts = await _restores(db, now - WINDOW_MS)
        await acknowledge(state, seen_now(receipts, now))
        return Check(False, receipts)
    at, ids = seen
    receipts = await _restores(db, at)
    if any(rid not in ids for _, rid in receipts):
        return Check(True, receipts)
    if at < now - 2 * WINDOW_MS:  # nothing new: the window moves on
        await acknowledge(state, seen_now(receipts, now))
    return Check(False, receipts)


async def acknowledge(state: Database, seen: dict[str, Any], tx: Transaction | None = None) -> None:
    """Keep ``seen`` (from :func:`seen_now`) as the restores acknowledged."""
    if tx is not None:
        await write_meta(tx, "restoreSeen", seen)
        return

    async def write(inner: Transaction) -> None:
        await write_meta(inner, "restoreSeen", seen)

    await state.transaction("rw", ["meta"], write)
