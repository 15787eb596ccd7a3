"""Reading ``panelot_v1`` for the index: a thread's docs, built from its records.

Each function runs inside one read-only transaction of ``panelot_v1`` over
``threads`` and ``nodes``, so what it builds is one consistent state.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from panelot.idb import Transaction
from panelot.search.extract import build_doc, node_text, thread_gone, thread_text
from panelot.search.schema import thread_doc_id

__all__ = ["SOURCE_TABLES", "Stamp", "node_doc", "read_threads", "stamp_of", "thread_doc"]

SOURCE_TABLES = ("threads", "nodes")
"""The ``panelot_v1`` tables the index is built from."""

Stamp = dict[str, Any]
"""``{updatedAt, nodes}``: what a thread was when it was indexed (catch-up compares it)."""


def stamp_of(thread: dict[str, Any], nodes: int) -> Stamp:
    """A thread's stamp: its ``updatedAt`` and how many nodes it has."""
    return {"updatedAt": thread.get("updatedAt"), "nodes": nodes}


def thread_doc(thread: dict[str, Any], stamp: Stamp) -> dict[str, Any]:
    """The doc of a thread's title and tags, with its stamp."""
    tid = str(thread["id"])
    doc = build_doc(thread_doc_id(tid), tid, "thread", thread_text(thread), thread.get("updatedAt"))
    doc["stamp"] = stamp
    return doc


def node_doc(node: Any, thread_id: str) -> dict[str, Any] | None:
    """The doc of a node of ``thread_id`` (``None``: nothing of it is indexed)."""
    text = node_text(node)
    if text is None or node.get("threadId") != thread_id:
        return None
    nid = str(node["id"])
    return build_doc(nid, thread_id, "node", text, node.get("ts"), nid)


async def count_nodes(tx: Transaction, thread_id: str) -> int:
    """How many nodes a thread has."""
    return await tx.table("nodes").where("threadId").equals(thread_id).count()


async def read_threads(
    tx: Transaction, thread_ids: Iterable[str]
) -> dict[str, list[dict[str, Any]] | None]:
    """Every doc of each thread (``None``: the thread is gone or being deleted)."""
    ids = list(thread_ids)
    threads = await tx.table("threads").bulk_get(ids)
    out: dict[str, list[dict[str, Any]] | None] = {}
    for tid, thread in zip(ids, threads, strict=True):
        if thread_gone(thread):
            out[tid] = None
            continue
        nodes = await tx.table("nodes").where("threadId").equals(tid).to_list()
        docs = [thread_doc(thread, stamp_of(thread, len(nodes)))]
        docs.extend(d for d in (node_doc(n, tid) for n in nodes) if d is not None)
        out[tid] = docs
    return out
