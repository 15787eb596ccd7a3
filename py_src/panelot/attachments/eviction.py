"""The attachment budget and its two-step eviction.

When the attachments' total size exceeds the budget (200 MiB by default; each store's
own, on its host: :class:`~panelot.host.storage.StorageState`), the oldest
attachments by ``createdAt`` are evicted, skipping the active thread, until the total
is within the budget. Each eviction is two transactions:

1. :func:`mark_for_eviction`: every node referencing the attachments gets its image or
   file blocks marked ``evicted: true`` (so no node points at bytes about to vanish),
   and each attachment record gets ``deleting: true`` (reads treat it as gone);
2. :func:`delete_marked`: every record marked ``deleting`` is deleted.

Step 1 writes the marked record back *without* its Blob (``bytes: null``; ``size``
stays): Chromium stores the bytes of a Blob again whenever a record holding it is
put, charged to the quota, so re-putting the Blob made eviction itself fail with
QuotaExceededError when storage was full (measured). The bytes are thus released
with the marks, and the records in step 2.

A context killed between the two leaves records marked ``deleting`` and nodes already
marked; :func:`finish_interrupted`, run by ``PanelotStore.open``, completes them. The
fault point ``attachment.evict.between`` lets tests stop there.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from panelot.attachments.marks import set_marks
from panelot.attachments.records import record_size, sized_rows
from panelot.faults import FAULTS
from panelot.host.storage import DEFAULT_BUDGET
from panelot.idb import Database, QuotaExceededError, Transaction, validate_key

__all__ = [
    "DEFAULT_BUDGET",
    "EVICTION_TABLES",
    "delete_marked",
    "evict",
    "finish_interrupted",
    "mark_for_eviction",
    "plan_eviction",
    "step_one",
]

EVICTION_TABLES = ("nodes", "attachments")
"""The tables step 1 covers."""


def mark_node(node: dict[str, Any], ids: set[str]) -> bool:
    """Mark the node's image/file blocks (and tool details) naming ``ids``; True if changed."""
    return set_marks(node, ids, evicted=True)


async def plan_eviction(
    tx: Transaction,
    budget: int,
    active_thread_id: str | None = None,
    spared: Collection[str] = (),
    free: int = 0,
) -> dict[str, Any]:
    """Choose what to evict, oldest first, skipping the active and ``spared`` threads.

    Down to ``budget``, and by at least ``free`` bytes (the excess of the storage in use
    over its target), both decided on the records' stored sizes as this transaction
    reads them. Returns ``{total, ids, freed, leftovers}``: ``leftovers`` counts records
    already marked ``deleting``, which are not in ``total`` (step 2 deletes them).
    """
    rows = await sized_rows(tx, by_created=True)
    leftovers = sum(1 for r in rows if r.get("deleting"))
    total = sum(record_size(r) for r in rows if not r.get("deleting"))
    budget = min(budget, max(0, total - free)) if free > 0 else budget
    ids: list[str] = []
    freed = 0
    for row in rows:
        if total <= budget:
            break
        if row.get("deleting") or row.get("threadId") == active_thread_id:
            continue
        if row.get("threadId") in spared:
            continue
        size = record_size(row)
        ids.append(row["id"])
        total -= size
        freed += size
    return {"total": total + freed, "ids": ids, "freed": freed, "leftovers": leftovers}


async def _nodes_to_mark(tx: Transaction, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The nodes referencing ``records``, marked ``evicted`` (only those that changed).

    Referencing nodes are every node of the attachment's thread with a block naming it,
    plus those in its ``refs.nodeIds``. The threads' nodes are read together, in one
    round trip.
    """
    marked = {r["id"] for r in records}
    threads = sorted({str(r["threadId"]) for r in records if isinstance(r.get("threadId"), str)})
    table = tx.table("nodes")
    nodes: dict[str, dict[str, Any]] = {}
    lists = await tx.gather(*(table.where("threadId").equals(t).to_list() for t in threads))
    for found in lists:
        for node in found:
            nodes[node["id"]] = node
    extra = {
        n
        for r in records
        for n in (r.get("refs") or {}).get("nodeIds") or []
        if isinstance(n, str) and n not in nodes
    }
    for node in await table.bulk_get(sorted(extra)) if extra else []:
        if node is not None:
            nodes[node["id"]] = node
    return [n for n in nodes.values() if mark_node(n, marked)]


def _tombstone(record: dict[str, Any]) -> dict[str, Any]:
    """A record marked ``deleting`` and holding no Blob (``size`` kept for the count)."""
    return {**record, "deleting": True, "bytes": None, "size": record_size(record)}


FEW_IDS = 8
"""Up to this many victims are read by key; more are read with one ranged query."""


def _utf16(key: Any) -> bytes:
    """A string's sort key in IndexedDB order (UTF-16 code units, not code points)."""
    return str(key).encode("utf-16-be", "surrogatepass")


async def _victims(tx: Transaction, ids: list[str]) -> list[dict[str, Any]]:
    """The records of ``ids`` (those that exist), read without their Blob when many.

    A few (or non-string ids) are read by key (``bulk_get``: one native request each).
    More are read with one query over the primary-key range from the least to the
    greatest id, the ``bytes`` field left out before the records cross into Python (so
    they stay plain JSON data), and kept when their id is wanted: one request and one
    callback instead of one per record. The tombstones drop the Blob anyway. A record
    without a numeric ``size`` (written by other code) is read again whole, for its
    Blob's size.
    """
    table = tx.table("attachments")
    keys = [validate_key(i, f"ids[{n}]") for n, i in enumerate(ids)]
    if len(keys) <= FEW_IDS or not all(type(k) is str for k in keys):
        return [r for r in await table.bulk_get(keys) if r is not None]
    lo, hi = min(keys, key=_utf16), max(keys, key=_utf16)  # JS's string order
    wanted = set(ids)
    rows = await table.where(":id").between(lo, hi, True, True).omit("bytes").to_list()
    found = [r for r in rows if r.get("id") in wanted]
    unsized = [r["id"] for r in found if record_size(r) == 0 and r.get("size") != 0]
    if unsized:
        whole = {r["id"]: r for r in await table.bulk_get(unsized) if isinstance(r, dict)}
        found = [whole.get(r["id"], r) for r in found]
    return found


async def mark_for_eviction(tx: Transaction, ids: list[str]) -> dict[str, int]:
    """Step 1: mark referencing nodes ``evicted`` and the attachments ``deleting``.

    Idempotent. Returns ``{attachments, nodes}``.
    """
    records = await _victims(tx, ids)
    changed = await _nodes_to_mark(tx, records)
    # without the Blob: re-putting it would store its bytes again
    fresh = [_tombstone(r) for r in records if not r.get("deleting")]
    await _write_marks(tx, changed, fresh)
    return {"attachments": len(records), "nodes": len(changed)}


async def _write_marks(
    tx: Transaction, nodes: list[dict[str, Any]], tombstones: list[dict[str, Any]]
) -> None:
    """Write the marked nodes and the tombstones together (one round trip)."""
    writes = []
    if nodes:
        writes.append(tx.table("nodes").bulk_put(nodes))
    if tombstones:
        writes.append(tx.table("attachments").bulk_put(tombstones))
    if writes:
        await tx.gather(*writes)


async def _free_one(db: Database, attachment_id: str) -> None:
    """Over quota, free space with a pure delete, then restore step 1's state for it.

    Chromium refuses every transaction that writes anything while the origin's usage
    is over its quota (measured: an aborted put's Blob stays counted), but a
    transaction that only deletes commits. So one victim is deleted first; the next
    transaction writes its tombstone (``deleting``, no Blob) and marks its nodes, as
    step 1 would have. Only a kill between those two leaves nodes unmarked.
    """
    record = await db.table("attachments").get(attachment_id)
    if record is None:
        return
    await db.table("attachments").delete(attachment_id)

    async def body(tx: Transaction) -> None:
        await _write_marks(tx, await _nodes_to_mark(tx, [record]), [_tombstone(record)])

    await db.transaction("rw", EVICTION_TABLES, body)


async def step_one(db: Database, ids: list[str]) -> None:
    """Run step 1 for ``ids``; when the quota is exhausted, free one victim first."""
    try:
        await db.transaction("rw", EVICTION_TABLES, lambda tx: mark_for_eviction(tx, ids))
    except QuotaExceededError:
        if not ids:
            raise
        await _free_one(db, ids[0])
        await db.transaction("rw", EVICTION_TABLES, lambda tx: mark_for_eviction(tx, ids[1:]))


async def delete_marked(tx: Transaction) -> dict[str, int]:
    """Step 2: delete every attachment marked ``deleting``; ``{evicted, freed}``."""
    table = tx.table("attachments")
    rows = await table.to_collection().pick("id", "deleting", "size").to_list()
    marked = [r for r in rows if r.get("deleting")]
    if marked:
        await table.bulk_delete([r["id"] for r in marked])
    return {"evicted": len(marked), "freed": sum(record_size(r) for r in marked)}


async def _marked_ids(db: Database) -> list[str]:
    async def body(tx: Transaction) -> list[str]:
        rows = await tx.table("attachments").to_collection().pick("id", "deleting").to_list()
        return [r["id"] for r in rows if r.get("deleting")]

    return await db.transaction("r", ["attachments"], body)


async def evict(
    db: Database,
    budget: int,
    active_thread_id: str | None = None,
    spared: Collection[str] = (),
) -> dict[str, Any]:
    """Evict until the total is within ``budget`` bytes (a store's: ``host.storage.budget``).

    Returns ``{evicted, freed, total}``; ``total`` is the attachments' total after the
    eviction. Leftovers of an interrupted eviction are deleted too (and counted).
    """
    plan = await db.transaction(
        "r", ["attachments"], lambda tx: plan_eviction(tx, budget, active_thread_id, spared)
    )
    if not plan["ids"] and not plan["leftovers"]:
        return {"evicted": 0, "freed": 0, "total": plan["total"]}
    if plan["ids"]:
        await step_one(db, plan["ids"])
        FAULTS.hit("attachment.evict.between")
    done = await db.transaction("rw", ["attachments"], delete_marked)
    return {**done, "total": plan["total"] - plan["freed"]}


async def finish_interrupted(db: Database) -> int:
    """Complete evictions interrupted between their two steps; return how many records.

    Step 1 is re-run for the leftovers first (it is idempotent), so even a record marked
    ``deleting`` by other code leaves no node pointing at missing bytes.
    """
    ids = await _marked_ids(db)
    if not ids:
        return 0
    await db.transaction("rw", EVICTION_TABLES, lambda tx: mark_for_eviction(tx, ids))
    done = await db.transaction("rw", ["attachments"], delete_marked)
    return int(done["evicted"])
