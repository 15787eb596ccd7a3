"""What a store does when it opens: finish what was interrupted, then keep the bounds.

Expired receipts are deleted, delete marks left by a context that died are lifted,
interrupted attachment evictions are finished, threads older than the retention
setting are archived, and the attachment budget is enforced.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TypedDict

from panelot.attachments.eviction import evict, finish_interrupted
from panelot.bus.receipts import cleanup_receipts
from panelot.clock import Clock
from panelot.idb import Database
from panelot.lifecycle.retention import archive_old_threads, spared_ids
from panelot.lifecycle.thread_delete import release_stale_deletes

__all__ = ["StartUp", "start_up"]


class StartUp(TypedDict):
    """How many interrupted evictions were finished, threads archived, records evicted."""

    finished: int
    archived: int
    evicted: int


async def start_up(
    db: Database,
    clock: Clock,
    budget: int,
    retention_days: int | None = None,
    active_thread_id: str | None = None,
    spared_thread_ids: Collection[str] = (),
) -> StartUp:
    """Start-up housekeeping (see the module docstring); ``None`` days: retention off.

    ``budget`` is the store's attachment budget (its host's ``storage.budget``).
    Retention and the attachment budget spare ``active_thread_id`` and every id of
    ``spared_thread_ids``.
    """
    await cleanup_receipts(db, clock())
    await release_stale_deletes(db, clock())
    finished = await finish_interrupted(db)
    spared = spared_ids(active_thread_id, spared_thread_ids)
    archived = await archive_old_threads(db, retention_days, spared, clock)
    evicted = await evict(db, budget, active_thread_id, spared)
    return {"finished": finished, "archived": len(archived), "evicted": evicted["evicted"]}
