"""``thread.delete``: stop admission, stop executions, then one cascade.

1. One transaction marks the thread ``deleting`` (from then on every command for it
   is refused with :class:`AdmissionError`, in every context) and cancels its active
   or recovered runs.
2. Executions registered in this context are asked to stop and awaited.
3. One transaction deletes the thread's nodes, attachments, runs, approvals,
   interactions and ThreadMeta, and writes the command's receipt as ``acknowledged``.
   The receipt stays, so a replay after a lost acknowledgement returns the same answer.

If step 3 fails, IndexedDB rolls it back whole and the mark of step 1 is lifted again:
nothing of the thread is lost. Runs cancelled in step 1 stay cancelled. If the page
dies between the steps, the next start lifts marks older than
:data:`STALE_DELETE_MS` or dated in the future (:func:`release_stale_deletes`), so the
thread is back as it was; replaying the command runs the whole delete again. A backup
restore copies a mark as it is, and the next start lifts it the same way.
"""

from __future__ import annotations

from typing import Any

from panelot.faults import FAULTS
from panelot.idb import Database, Transaction
from panelot.idb.errors import NotFoundError
from panelot.runs.executions import ExecutionRegistry
from panelot.runs.records import ACTIVE_STATES, RUN_TABLES, apply_transition

__all__ = [
    "CASCADE_TABLES",
    "DELETE_BATCH",
    "STALE_DELETE_MS",
    "cascade_delete",
    "release_stale_deletes",
    "stop_thread",
    "unmark",
]

CASCADE_TABLES = ("threads", "nodes", "attachments", "runs", "approvals", "interactions")
"""Every table holding records of a thread."""

_MARK_TABLES = ("threads", *RUN_TABLES)

STALE_DELETE_MS = 2 * 60 * 1000
"""A ``deleting`` mark older than this belongs to a delete that died half-way."""

DELETE_BATCH = 500
"""Node deletions issued per batch inside the cascade (a fault point between batches)."""


async def _mark(tx: Transaction, thread_id: str, deleting: bool, now: int) -> int:
    thread = await tx.table("threads").get(thread_id)
    if thread is None:
        raise NotFoundError(f"thread {thread_id!r} does not exist", field="threadId")
    if deleting:
        thread["deleting"], thread["deletingSince"] = True, now
    else:
        thread.pop("deleting", None)
        thread.pop("deletingSince", None)
    await tx.table("threads").put(thread)
    if not deleting:
        return 0
    cancelled = 0
    for state in sorted(ACTIVE_STATES):
        active = tx.table("runs").where("[threadId+state]").equals([thread_id, state])
        for run in await active.to_list():
            # through the run state machine, which also closes its pending approvals
            await apply_transition(tx, run, "cancelled", lambda: now)
            cancelled += 1
    return cancelled


async def stop_thread(db: Database, executions: ExecutionRegistry, thread_id: str, now: int) -> int:
    """Steps 1 and 2: refuse new commands, cancel runs, await executions; count cancelled runs."""
    cancelled = await db.transaction("rw", _MARK_TABLES, lambda tx: _mark(tx, thread_id, True, now))
    executions.cancel(thread_id)
    await executions.wait_idle(thread_id)
    return cancelled


async def unmark(db: Database, thread_id: str, now: int) -> None:
    """Lift the ``deleting`` mark after a failed cascade."""
    await db.transaction("rw", _MARK_TABLES, lambda tx: _mark(tx, thread_id, False, now))


async def cascade_delete(tx: Transaction, thread_id: str) -> dict[str, Any]:
    """Step 3, inside the receipt's transaction: delete everything of the thread."""
    if await tx.table("threads").get(thread_id) is None:
        raise NotFoundError(f"thread {thread_id!r} does not exist", field="threadId")
    counts: dict[str, int] = {}
    keys = await tx.table("nodes").where("threadId").equals(thread_id).primary_keys()
    for start in range(0, len(keys), DELETE_BATCH):
        FAULTS.hit("thread.delete.batch")
        await tx.table("nodes").bulk_delete(keys[start : start + DELETE_BATCH])
    counts["nodes"] = len(keys)
    for table in ("attachments", "runs", "approvals", "interactions"):
        counts[table] = await tx.table(table).where("threadId").equals(thread_id).delete()
    await tx.table("threads").delete(thread_id)
    return {"threadId": thread_id, "deleted": counts}


async def release_stale_deletes(db: Database, now: int) -> list[str]:
    """On start-up, lift ``deleting`` marks left by an interrupted delete; return the ids.

    A mark is stale when it is older than :data:`STALE_DELETE_MS`, has no time, or is
    dated after ``now``: no delete running here set it (a backup restored from a machine
    whose clock ran ahead), and waiting for it to age would leave the thread refusing
    every command until the clock caught up.
    """

    def stale(thread: Any) -> bool:
        since = thread.get("deletingSince") if isinstance(thread, dict) else None
        return bool(thread.get("deleting")) and (
            not isinstance(since, int) or now - since > STALE_DELETE_MS or since > now
        )

    rows = await (
        db.table("threads").to_collection().pick("id", "deleting", "deletingSince").to_list()
    )
    ids = [r["id"] for r in rows if stale(r)]
    for thread_id in ids:
        await unmark(db, str(thread_id), now)
    return [str(i) for i in ids]
