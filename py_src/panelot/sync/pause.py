"""The pause after a backup restore: how the sync section sees that a restore committed.

A restore (``backup.restore``) replaces ``panelot_v1`` wholesale; what the sync state
knows of the server then describes data that is gone. The signal is the restore's own
command receipt: the bus writes it in the restore's transaction, in ``panelot_v1``'s
``commandReceipts`` (which a restore keeps), so it exists exactly when the restore
committed, in whichever context ran it, and every context reads it. The state keeps the
restores it has acknowledged (meta ``restoreSeen``: ``{at, ids}``, the newest receipts'
``createdAt`` and the ids at that time); a completed ``backup.restore`` receipt newer
than that pauses sync (:func:`restore_pending`) until ``sync.resume`` acknowledges it
(:func:`acknowledge`).

A state without ``restoreSeen`` (made before this, or configured fresh) takes the
receipts there are as seen: it knows nothing of the server that a restore could have
made stale. Receipts expire after 30 days (``RECEIPT_TTL_MS``): a restore nobody synced
after for that long no longer pauses.
"""

from __future__ import annotations

from typing import Any

from panelot.idb import Database, Transaction
from panelot.sync.state import read_meta, write_meta

__all__ = ["RESTORE", "Seen", "acknowledge", "latest_restores", "restore_pending"]

RESTORE = "backup.restore"
"""The command whose commit pauses sync."""

Seen = dict[str, Any]
"""``{at, ids}``: the newest acknowledged restore receipts (``at`` -1: none)."""


async def latest_restores(db: Database, since: int = -1) -> Seen:
    """The newest completed restore receipts of ``db`` created at ``since`` or later."""

    async def read(tx: Transaction) -> list[Any]:
        table = tx.table("commandReceipts")
        return await table.where("createdAt").above_or_equal(since).to_list()

    rows = await db.transaction("r", ["commandReceipts"], read)
    at, ids = -1, []
    for row in rows:
        if not isinstance(row, dict) or row.get("commandType") != RESTORE:
            continue
        if row.get("status") != "completed" or not isinstance(row.get("id"), str):
            continue
        created = row.get("createdAt")
        if not isinstance(created, int):
            continue
        if created > at:
            at, ids = created, [row["id"]]
        elif created == at:
            ids.append(row["id"])
    return {"at": at, "ids": sorted(ids)}


def _seen(value: Any) -> Seen | None:
    if not isinstance(value, dict) or not isinstance(value.get("at"), int):
        return None
    ids = value.get("ids")
    listed = [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else []
    return {"at": value["at"], "ids": listed}


async def restore_pending(db: Database, state: Database) -> bool:
    """Whether a restore committed that the state has not acknowledged (sync is paused)."""

    async def seen_of(tx: Transaction) -> Any:
        return await read_meta(tx, "restoreSeen")

    seen = _seen(await state.transaction("r", ["meta"], seen_of))
    if seen is None:  # a state from before the pause: what is there counts as seen
        await acknowledge(state, await latest_restores(db))
        return False
    newest = await latest_restores(db, seen["at"])
    if newest["at"] > seen["at"]:
        return True
    known = set(seen["ids"])
    return newest["at"] == seen["at"] and not set(newest["ids"]) <= known


async def acknowledge(state: Database, seen: Seen, tx: Transaction | None = None) -> None:
    """Keep ``seen`` (from :func:`latest_restores`) as the restores acknowledged."""
    if tx is not None:
        await write_meta(tx, "restoreSeen", seen)
        return

    async def write(inner: Transaction) -> None:
        await write_meta(inner, "restoreSeen", seen)

    await state.transaction("rw", ["meta"], write)
