"""Un-doing an eviction: an attachment's bytes are back, its nodes no longer say evicted.

Eviction (:mod:`panelot.attachments.eviction`) marks every block naming an attachment
``evicted: true`` (image and file blocks of ``content`` and ``contentForLlm``, and any
object naming it in a tool result's free-form ``details``) before its record goes.
When the same attachment is written again (sync's on-demand fetch brings it back from
the server, :mod:`panelot.sync.demand`), :func:`restore_attachment` writes the record
and drops those marks in the caller's transaction, so the nodes show it again.
"""

from __future__ import annotations

from typing import Any

from panelot.attachments.marks import set_marks
from panelot.idb import Transaction

__all__ = ["RESTORE_TABLES", "restore_attachment", "unmark_node"]

RESTORE_TABLES = ("threads", "nodes", "attachments")
"""The tables :func:`restore_attachment` covers (the thread is read, never written)."""


def unmark_node(node: dict[str, Any], ids: set[str]) -> bool:
    """Drop the ``evicted`` marks of the node's blocks naming ``ids``; True if changed."""
    return set_marks(node, ids, evicted=False)


async def restore_attachment(tx: Transaction, record: dict[str, Any]) -> bool:
    """Write ``record`` (checked by the caller) unless it is here; unmark its nodes.

    Decided inside ``tx``: a record already here and not being evicted is kept (another
    context wrote it first) and ``False`` comes back. Otherwise the record is put (over a
    tombstone of an eviction under way, whose second step then leaves it) and every node
    of its thread, and those in its ``refs.nodeIds``, loses the marks naming it.
    """
    table = tx.table("attachments")
    present = await table.get(record["id"])
    if isinstance(present, dict) and not present.get("deleting"):
        return False
    ids = {str(record["id"])}
    nodes = {
        n["id"]: n
        for n in await tx.table("nodes").where("threadId").equals(record["threadId"]).to_list()
    }
    refs = record.get("refs")
    listed = refs.get("nodeIds") if isinstance(refs, dict) else None
    extra = sorted({n for n in listed or [] if isinstance(n, str) and n not in nodes})
    for node in await tx.table("nodes").bulk_get(extra) if extra else []:
        if isinstance(node, dict):
            nodes[node["id"]] = node
    changed = [n for n in nodes.values() if unmark_node(n, ids)]
    await table.put(record)
    if changed:
        await tx.table("nodes").bulk_put(changed)
    return True
