"""Reading ``panelot_v1`` for the index: a thread's docs, built from its records.

The records are read inside one read-only transaction of ``panelot_v1`` over
``threads``, ``nodes`` and ``attachments``, so what is built is one consistent state.
An attachment's text is in a Blob, whose contents are a foreign await in the browser:
it is read AFTER that transaction (:func:`thread_docs`, :func:`attachment_docs`),
through :mod:`panelot.idb.blobs`, never inside one.

Queries check an attachment hit through :func:`att_nodes` (inside their read of
``panelot_v1``): the attachment must still exist, not be evicted, and be referenced
by a live node of its thread, whose id the hit carries. Its text comes from
:func:`att_texts` of the database, a bounded memo filled by this context's indexer
and by :func:`load_att_texts` before the query's transaction.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from panelot.idb import Database, Transaction
from panelot.idb.blobs import blob_head
from panelot.idb.observe.follow import PerConnection
from panelot.search.extract import (
    ATT_BYTES,
    ATT_PREFIX,
    MESSAGE_TYPES,
    att_doc_id,
    attachment_text,
    build_doc,
    indexed_attachment,
    node_text,
    thread_gone,
    thread_text,
)
from panelot.search.schema import thread_doc_id
from panelot.tree.descent import is_tombstone

__all__ = [
    "SOURCE_TABLES",
    "AttTexts",
    "Stamp",
    "att_nodes",
    "attachment_counts",
    "att_texts",
    "attachment_docs",
    "count_attachments",
    "load_att_texts",
    "node_doc",
    "read_threads",
    "stamp_of",
    "thread_doc",
    "thread_docs",
]

SOURCE_TABLES = ("threads", "nodes", "attachments")
"""The ``panelot_v1`` tables the index is built from."""

Stamp = dict[str, Any]
"""``{updatedAt, nodes, attachments}``: what a thread was when it was indexed."""

log = logging.getLogger("panelot.search")


def stamp_of(thread: dict[str, Any], nodes: int, attachments: int = 0) -> Stamp:
    """A thread's stamp: its ``updatedAt``, how many nodes and attachment records it has."""
    return {"updatedAt": thread.get("updatedAt"), "nodes": nodes, "attachments": attachments}


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


async def count_attachments(tx: Transaction, thread_id: str) -> int:
    """How many attachment records a thread has (derived and evicting ones included)."""
    return await tx.table("attachments").where("threadId").equals(thread_id).count()


async def attachment_counts(tx: Transaction) -> dict[str, int]:
    """How many attachment records each thread has: one read of the ``threadId`` index."""
    counts: dict[str, int] = {}
    for key in await tx.table("attachments").order_by("threadId").keys():
        if isinstance(key, str):
            counts[key] = counts.get(key, 0) + 1
    return counts


@dataclass(slots=True)
class Read:
    """What one read of threads gives: their docs, and the attachments left to read."""

    docs: dict[str, list[dict[str, Any]] | None]
    """Each thread's docs without its attachments' (``None``: the thread is gone)."""
    attachments: list[dict[str, Any]] = field(default_factory=list)
    """The records whose text is indexed: their Blobs are read after the transaction."""


async def read_threads(tx: Transaction, thread_ids: Iterable[str]) -> Read:
    """Every doc of each thread but its attachments', and the attachments to read."""
    ids = list(thread_ids)
    threads = await tx.table("threads").bulk_get(ids)
    owned: dict[str, list[dict[str, Any]]] = {}
    if ids:  # the chunk's attachments in one request
        for record in await tx.table("attachments").where("threadId").any_of(*ids).to_list():
            owned.setdefault(str(record.get("threadId")), []).append(record)
    out = Read({})
    for tid, thread in zip(ids, threads, strict=True):
        if thread_gone(thread):
            out.docs[tid] = None
            continue
        nodes = await tx.table("nodes").where("threadId").equals(tid).to_list()
        files = owned.get(tid, [])
        docs = [thread_doc(thread, stamp_of(thread, len(nodes), len(files)))]
        docs.extend(d for d in (node_doc(n, tid) for n in nodes) if d is not None)
        out.docs[tid] = docs
        out.attachments.extend(f for f in files if indexed_attachment(f))
    return out


async def thread_docs(
    db: Database, thread_ids: list[str]
) -> dict[str, list[dict[str, Any]] | None]:
    """Every doc of each thread (``None``: gone), its attachments' text included.

    One read-only transaction of ``panelot_v1``; then, after it, the attachments' Blobs.
    """

    async def read(tx: Transaction) -> Read:
        return await read_threads(tx, thread_ids)

    found = await db.transaction("r", SOURCE_TABLES, read)
    for _, doc in await attachment_docs(db, found.attachments):
        docs = found.docs.get(doc["threadId"]) if doc is not None else None
        if doc is not None and docs is not None:
            docs.append(doc)
    return found.docs


async def attachment_docs(
    db: Database,
    records: list[Any],
) -> list[tuple[str, dict[str, Any] | None]]:
    """``(doc id, doc)`` of each attachment record (``None``: nothing of it is indexed).

    Reads each Blob's contents: call it outside any transaction. A Blob that does not
    read (evicted meanwhile) gives no doc; the text read is remembered in
    :func:`att_texts` of ``db`` for this context's queries.
    """
    out: list[tuple[str, dict[str, Any] | None]] = []
    for record in records:
        if not isinstance(record, dict) or not isinstance(record.get("id"), str):
            continue
        aid = record["id"]
        text = await _read_text(db, record) if indexed_attachment(record) else None
        doc = None
        if text is not None:
            doc = build_doc(
                att_doc_id(aid), record["threadId"], "attachment", text, record.get("createdAt")
            )
        out.append((att_doc_id(aid), doc))
    return out


async def _read_text(db: Database, record: dict[str, Any]) -> str | None:
    """An indexed attachment's bounded text, read from its Blob (``None``: unreadable)."""
    try:
        data = await blob_head(record["bytes"], ATT_BYTES + 1)  # never a big file whole
    except Exception as why:  # evicted or unreadable meanwhile: not indexed now
        log.info("search: attachment %s does not read (%s)", record["id"], why)
        return None
    text = attachment_text(data)
    if text is not None:
        att_texts(db).remember(record["id"], record.get("size"), text)
    return text


class AttTexts:
    """A bounded memo of attachments' indexed text: ``id -> (size, text)``.

    A Blob's contents cannot be read inside the query's transaction; the text read
    before it (or by this context's indexer) is kept here, the least recently used
    dropped past :attr:`limit` characters. An entry is used only while the record's
    ``size`` is the one it was read with.
    """

    def __init__(self, limit: int = 4_000_000) -> None:
        self.limit = limit
        self._held: OrderedDict[str, tuple[Any, str]] = OrderedDict()
        self._chars = 0

    def remember(self, attachment_id: str, size: Any, text: str) -> None:
        """Keep ``text`` for the attachment (read at ``size`` bytes)."""
        self.forget(attachment_id)
        self._held[attachment_id] = (size, text)
        self._chars += len(text)
        while self._chars > self.limit and len(self._held) > 1:
            _, (_, dropped) = self._held.popitem(last=False)
            self._chars -= len(dropped)

    def forget(self, attachment_id: str) -> None:
        """Drop what is kept for the attachment."""
        held = self._held.pop(attachment_id, None)
        if held is not None:
            self._chars -= len(held[1])

    def text(self, attachment_id: str, size: Any) -> str | None:
        """The kept text of the attachment at ``size`` bytes (``None``: not kept)."""
        held = self._held.get(attachment_id)
        if held is None or held[0] != size:
            return None
        self._held.move_to_end(attachment_id)
        return held[1]

    def __contains__(self, attachment_id: object) -> bool:
        return attachment_id in self._held

    def clear(self) -> None:
        """Forget everything."""
        self._held.clear()
        self._chars = 0


att_texts: PerConnection[AttTexts] = PerConnection(lambda db: AttTexts())
"""The memo of the attachments' indexed text of a database (``att_texts(db)``).

Each opened database has its own, so two stores in one process (two databases, tests)
never answer from each other's attachments; it goes with the database.
"""


async def load_att_texts(db: Database, doc_ids: Iterable[str]) -> None:
    """Read into :func:`att_texts` of ``db`` the text of the ``att:`` docs among ``doc_ids``.

    Call it before a query's transaction: one read-only transaction for the records,
    then their Blobs. Stops once half the memo's room is read, so it never evicts what
    it just read.
    """
    wanted = [d.removeprefix(ATT_PREFIX) for d in doc_ids if d.startswith(ATT_PREFIX)]
    memo = att_texts(db)
    missing = [a for a in dict.fromkeys(wanted) if a not in memo]
    if not missing:
        return

    async def read(tx: Transaction) -> list[Any]:
        return await tx.table("attachments").bulk_get(missing)

    records = await db.transaction("r", ["attachments"], read)
    room = memo.limit // 2
    for record in records:
        if room <= 0:
            break
        if indexed_attachment(record):
            text = await _read_text(db, record)
            room -= len(text or "")


async def att_nodes(tx: Transaction, doc_ids: list[str]) -> dict[str, dict[str, Any]]:
    """The node each ``att:`` doc stands for, carrying the attachment's text.

    Inside a query's read of ``panelot_v1`` (over ``attachments`` and ``nodes``): an
    attachment that is gone, evicted, no longer indexed or whose text is not in the
    :func:`att_texts` of the transaction's database gives nothing; otherwise its node is
    the latest live node of its thread that references it (``refs.nodeIds``), with the
    attachment's text as its content (``{id, threadId, type, ts, payload: {content:
    text}}``), so the query
    checks and quotes it like a message. No live referencing node: no hit.
    """
    ids = [d.removeprefix(ATT_PREFIX) for d in doc_ids if d.startswith(ATT_PREFIX)]
    if not ids:
        return {}
    records = await tx.table("attachments").bulk_get(ids)
    refs: dict[str, list[str]] = {}
    for aid, record in zip(ids, records, strict=True):
        if indexed_attachment(record):
            named = (record.get("refs") or {}).get("nodeIds")
            refs[aid] = [n for n in named if isinstance(n, str)] if isinstance(named, list) else []
    wanted = sorted({n for named in refs.values() for n in named})
    nodes = dict(zip(wanted, await tx.table("nodes").bulk_get(wanted), strict=True))
    out: dict[str, dict[str, Any]] = {}
    for aid, record in zip(ids, records, strict=True):
        if aid not in refs:
            continue
        text = att_texts(tx.db).text(aid, record.get("size"))
        node = _latest_live([nodes.get(n) for n in refs[aid]], record["threadId"])
        if text is None or node is None:
            continue
        kind = node.get("type") if node.get("type") in MESSAGE_TYPES else "user_message"
        out[att_doc_id(aid)] = {
            "id": node["id"],
            "threadId": node["threadId"],
            "type": kind,
            "ts": node.get("ts"),
            "payload": {"content": text},
        }
    return out


def _latest_live(nodes: list[Any], thread_id: str) -> dict[str, Any] | None:
    """The latest (``ts``, then id) of ``nodes`` that exists, lives, and is in the thread."""
    live = [
        n
        for n in nodes
        if isinstance(n, dict)
        and isinstance(n.get("id"), str)
        and n.get("threadId") == thread_id
        and not is_tombstone(n)
    ]
    if not live:
        return None

    def order(n: dict[str, Any]) -> tuple[float, str]:
        ts = n.get("ts")
        return (float(ts) if isinstance(ts, int | float) else 0.0, str(n["id"]))

    return max(live, key=order)
