"""One push, local to server (docs/sync.md "The protocol", push steps 1-4).

1. Read the synced tables (one read-only transaction of ``panelot_v1``) and build each
   record's view; drop those whose digest equals what the server last had (kept in
   ``panelot_sync_v1``). A thread being deleted here (``deleting``) waits, with its
   nodes and attachments, for its cascade. A record whose thread is gone and which
   the server had (a thread deleted here) becomes a deleted document; an attachment
   gone while its thread is there was evicted, which is local: the server keeps it.
   A library record gone here is deleted on the server.
2. ``POST /db/_revs_diff`` with the new revisions: only the missing ones go on (the
   others are recorded as the server's).
3. ``POST /db/_bulk_docs {docs, new_edits: false}`` in batches of at most
   :data:`BATCH_DOCS` documents or :data:`BATCH_BYTES` bytes; an attachment's bytes go
   inline (base64) with the revision that adds them, as a stub after. Each batch's
   documents are recorded in the state when the server has taken them, so a push cut
   short resumes where it stopped. Each batch's revisions (their parent, digest, clocks
   and history) are kept (meta ``sent``, a strict commit) until the server answers: a
   push after a lost answer (a cut answer, a killed browser) builds the same revisions
   (the server may have them), and a record changed or deleted since gets a child of
   the revision sent, never a sibling of it.
4. Write the push checkpoint, ``_local/<replication id>`` on the server and in the
   state.

Without an outbox (``sync.push``, the start of the continuous loop) step 1 compares
everything with what the server last had (the start-up comparison of docs/sync.md
"Continuous"). Given the outbox's rows (:mod:`panelot.sync.outbox`), it reads only
those records (and the threads they belong to) and compares only them; an outbox that
holds :data:`~panelot.sync.outbox.WIDE` compares everything. Once the server has what
was sent, the rows taken are cleared, except those of a thread being deleted here.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from panelot.idb import Database, Transaction
from panelot.idb.blobs import blob_bytes, blob_size, is_blob
from panelot.sync.clock import Hlc
from panelot.sync.couch import Couch
from panelot.sync.docid import SYNCED_TABLES, doc_id, split_doc_id
from panelot.sync.mapping import (
    ATTACHMENT,
    LIBRARY_TABLES,
    attachment_digest,
    binary_of,
    body_of,
    clocked_fields,
    content_digest,
    library_clocks,
    local_view,
    thread_clocks,
)
from panelot.sync.merge import early_leaf
from panelot.sync.outbox import WIDE, clear
from panelot.sync.progress import Progress
from panelot.sync.revs import next_rev, rev_hash, rev_number, revisions
from panelot.sync.state import read_meta, record_docs, write_meta

__all__ = ["BATCH_BYTES", "BATCH_DOCS", "Outgoing", "PushReport", "push", "replication_id"]

BATCH_DOCS = 100
"""At most this many documents per ``_bulk_docs``."""

BATCH_BYTES = 8 * 1024 * 1024
"""At most this many bytes of JSON per ``_bulk_docs`` (a larger document goes alone)."""

_THREADED = ("nodes", "attachments")
_NOT_EARLY = object()
_DIFF_CHUNK = 100


def replication_id(device: str, server: str, database: str, direction: str) -> str:
    """The MD5 of the device id, the server URL, the database and the direction."""
    text = "\n".join((device, server, database, direction)).encode()
    return hashlib.md5(text, usedforsecurity=False).hexdigest()


@dataclass(slots=True)
class Outgoing:
    """A document to send, and the state row that records it once the server has it."""

    doc: dict[str, Any]
    row: dict[str, Any]
    size: int = 0
    parent: str | None = None
    """The revision it follows (``None``: the document's first)."""


@dataclass(slots=True)
class PushReport:
    """What a push did."""

    pushed: int = 0
    deleted: int = 0
    unchanged: int = 0
    batches: int = 0
    checkpoint: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """``{pushed, deleted, unchanged, batches, checkpoint}``."""
        return {
            "pushed": self.pushed,
            "deleted": self.deleted,
            "unchanged": self.unchanged,
            "batches": self.batches,
            "checkpoint": self.checkpoint,
        }


async def _read_local(db: Database) -> dict[str, list[dict[str, Any]]]:
    async def read(tx: Transaction) -> dict[str, list[dict[str, Any]]]:
        return {t: await tx.table(t).to_collection().to_list() for t in SYNCED_TABLES}

    return await db.transaction("r", list(SYNCED_TABLES), read)


async def _read_known(state: Database) -> dict[str, dict[str, Any]]:
    async def read(tx: Transaction) -> list[dict[str, Any]]:
        return await tx.table("docs").to_collection().to_list()

    return {row["id"]: row for row in await state.transaction("r", ["docs"], read)}


async def _read_known_of(state: Database, ids: list[str]) -> dict[str, dict[str, Any]]:
    async def read(tx: Transaction) -> list[Any]:
        return await tx.table("docs").bulk_get(ids)

    rows = await state.transaction("r", ["docs"], read)
    return {row["id"]: row for row in rows if isinstance(row, dict)}


async def _read_some(
    db: Database, ids: list[str], known: dict[str, dict[str, Any]]
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, dict[str, Any]]]:
    """The records of ``ids`` by table, and the threads they belong to.

    The threads of what the server had of them too; one read-only transaction.
    """
    keys: dict[str, list[str]] = {t: [] for t in SYNCED_TABLES}
    for did in ids:
        table, key = split_doc_id(did)
        keys[table].append(key)

    async def read(
        tx: Transaction,
    ) -> tuple[dict[str, list[dict[str, Any]]], dict[str, dict[str, Any]]]:
        local: dict[str, list[dict[str, Any]]] = {}
        for table, wanted in keys.items():
            found = await tx.table(table).bulk_get(wanted) if wanted else []
            local[table] = [r for r in found if isinstance(r, dict)]
        owners = {r.get("threadId") for t in _THREADED for r in local[t]}
        owners |= {row.get("threadId") for row in known.values()}
        owners |= {r.get("id") for r in local["threads"]}
        named = sorted(o for o in owners if isinstance(o, str))
        threads = await tx.table("threads").bulk_get(named) if named else []
        return local, {t["id"]: t for t in threads if isinstance(t, dict)}

    return await db.transaction("r", list(SYNCED_TABLES), read)


class _Builder:
    """Builds the documents of one push from the local records and the known rows."""

    def __init__(
        self,
        known: dict[str, dict[str, Any]],
        tick: Callable[[], str],
        sent: dict[str, Any] | None = None,
        early: dict[str, str] | None = None,
    ) -> None:
        self.known = known
        self.tick = tick
        self.sent = sent or {}
        """The clocks of revisions sent without an answer (:func:`_sent_entry`)."""
        self.early = early or {}
        """Threads whose server leaf has not come here yet: that leaf (see _early_leaves)."""
        self.out: list[Outgoing] = []
        self.unchanged = 0
        self.waiting: set[str] = set()
        """Document ids left for a thread's cascade (they stay in the outbox)."""

    async def record(self, table: str, record: dict[str, Any], thread_id: str | None) -> None:
        key = record["id"]
        kept = _NOT_EARLY
        if table == "threads" and key in self.early:
            kept = record.get("leafId")  # the leaf kept meanwhile stays here
            record = {**record, "leafId": self.early[key]}
        did = doc_id(table, key)
        last = self.known.get(did)
        view = local_view(table, record)
        binary = binary_of(record)
        att = await self._attachment(binary, last)
        digest = content_digest(view, None if att is None else att["digest"])
        parent = None if last is None else last.get("rev")
        follows = self.follows(did, parent)
        if follows is not None and follows.get("digest") == digest:
            follows = None  # the same content: the same revision again (below)
        elif (
            follows is None
            and last is not None
            and not last.get("deleted")
            and last.get("digest") == digest
        ):
            self.unchanged += 1
            return
        row: dict[str, Any] = {"id": did, "table": table, "digest": digest}
        if thread_id is not None:
            row["threadId"] = thread_id
        # changed after a revision was sent without an answer: a child of that revision
        base = last if follows is None else follows
        clocks = self._clocks(table, record, base, row)
        again = self.sent.get(did)
        if (
            clocks is not None
            and follows is None
            and isinstance(again, dict)
            and again.get("parent") == parent
            and again.get("digest") == digest
            and isinstance(again.get("clocks"), dict)
        ):
            # sent before without an answer: the same revision again, never a sibling
            clocks = dict(again["clocks"])
            row["clocks"] = clocks
        if kept is not _NOT_EARLY:
            row["keptLeaf"] = kept  # still waiting for the server's leaf
        body = body_of(table, view, clocks)
        rev_body = dict(body)
        if att is not None:
            meta = {k: att[k] for k in ("content_type", "digest", "length")}
            rev_body["_attachments"] = {ATTACHMENT: meta}
        doc: dict[str, Any] = {}
        if follows is None:
            rev = next_rev(parent, False, rev_body)
            doc.update({"_id": did, "_rev": rev, "_revisions": revisions(rev, parent)})
        else:
            rev = next_rev(follows["rev"], False, rev_body)
            history = {"start": rev_number(rev), "ids": [rev_hash(rev), *follows["ids"]]}
            doc.update({"_id": did, "_rev": rev, "_revisions": history})
        doc.update(body)
        if att is not None:
            doc["_attachments"] = {ATTACHMENT: self._attachment_doc(att, rev, last)}
            row["attachment"] = {
                **{k: att[k] for k in ("content_type", "digest", "length")},
                "revpos": doc["_attachments"][ATTACHMENT]["revpos"],
            }
        row["rev"] = rev
        self.out.append(Outgoing(doc, row, parent=parent))

    def follows(self, did: str, parent: str | None) -> dict[str, Any] | None:
        """The revision sent of ``did`` without an answer, as a child of ``parent``.

        ``None`` when there is none (or it was recorded by an older version, without
        its revision). The server may have it: what follows must be its child.
        """
        again = self.sent.get(did)
        if not isinstance(again, dict) or again.get("parent") != parent:
            return None
        rev, ids = again.get("rev"), again.get("ids")
        if not isinstance(rev, str) or not isinstance(ids, list) or not ids:
            return None
        return again

    async def _attachment(
        self, binary: tuple[Any, str] | None, last: dict[str, Any] | None
    ) -> dict[str, Any] | None:
        """The attachment's ``{content_type, digest, length, data?}``; bytes read once."""
        if binary is None:
            return None
        value, content_type = binary
        size = blob_size(value) if is_blob(value) else len(value)
        before = None if last is None or last.get("deleted") else last.get("attachment")
        if isinstance(before, dict) and before.get("length") == size:
            # an attachment's bytes never change once written: the server has them
            return {"content_type": content_type, "digest": before["digest"], "length": size}
        data = await blob_bytes(value) if is_blob(value) else bytes(value)
        return {
            "content_type": content_type,
            "digest": attachment_digest(data),
            "length": len(data),
            "data": data,
        }

    @staticmethod
    def _attachment_doc(att: dict[str, Any], rev: str, last: dict[str, Any] | None) -> Any:
        before = None if last is None else last.get("attachment")
        if "data" not in att and isinstance(before, dict) and before.get("revpos"):
            return {
                "stub": True,
                "content_type": att["content_type"],
                "digest": att["digest"],
                "length": att["length"],
                "revpos": before["revpos"],
            }
        return {
            "content_type": att["content_type"],
            "data": base64.b64encode(att["data"]).decode(),
            "digest": att["digest"],
            "revpos": int(rev.partition("-")[0]),
        }

    def _clocks(
        self, table: str, record: dict[str, Any], last: dict[str, Any] | None, row: dict[str, Any]
    ) -> dict[str, str] | None:
        if table == "threads":
            fields = clocked_fields(record)
            known = None if last is None or last.get("deleted") else last
            clocks = thread_clocks(
                record,
                None if known is None else known.get("fields"),
                None if known is None else known.get("clocks"),
                self.tick,
            )
            row["fields"], row["clocks"] = fields, clocks
            return clocks
        if table in LIBRARY_TABLES:
            clocks = library_clocks(self.tick)
            row["clocks"] = clocks
            return clocks
        return None

    def deletion(self, last: dict[str, Any]) -> None:
        """A deleted child of what the server has of ``last`` (or of a revision sent since)."""
        parent = last.get("rev")
        follows = self.follows(last["id"], parent)
        doc: dict[str, Any] = {"_id": last["id"]}
        if follows is None:
            rev = next_rev(parent, True, {})
            doc.update({"_rev": rev, "_revisions": revisions(rev, parent)})
        else:
            rev = next_rev(follows["rev"], True, {})
            history = {"start": rev_number(rev), "ids": [rev_hash(rev), *follows["ids"]]}
            doc.update({"_rev": rev, "_revisions": history})
        doc["_deleted"] = True
        row = {"id": last["id"], "table": last["table"], "rev": rev, "deleted": True}
        if "threadId" in last:
            row["threadId"] = last["threadId"]
        self.out.append(Outgoing(doc, row, parent=parent))


async def _build(
    local: dict[str, list[dict[str, Any]]],
    known: dict[str, dict[str, Any]],
    hlc: Hlc,
    now: int,
    threads: dict[str, dict[str, Any]] | None = None,
    sent: dict[str, Any] | None = None,
    early: dict[str, str] | None = None,
    scope: set[str] | None = None,
) -> _Builder:
    """The documents to send.

    ``threads``: every thread ``local``'s records belong to (default: ``local``'s
    threads, when ``local`` holds every record). ``sent``: the state's ``sent`` meta.
    ``early``: :func:`_early_leaves`. ``scope``: the document ids compared (``None``:
    every one).
    """
    if threads is None:
        threads = {t["id"]: t for t in local["threads"] if isinstance(t.get("id"), str)}
    builder = _Builder(known, lambda: hlc.tick(now), sent, early)
    waiting = {tid for tid, t in threads.items() if t.get("deleting")}
    present: set[str] = set()
    for table in SYNCED_TABLES:
        for record in local[table]:
            key = record.get("id")
            if not isinstance(key, str):
                continue
            present.add(doc_id(table, key))
            thread_id = key if table == "threads" else record.get("threadId")
            if table in _THREADED and (thread_id not in threads or thread_id in waiting):
                if thread_id in waiting:
                    builder.waiting.add(doc_id(table, key))
                continue  # being deleted here (or an orphan): its cascade decides
            if table == "threads" and key in waiting:
                builder.waiting.add(doc_id(table, key))
                continue
            owner = thread_id if table in _THREADED and isinstance(thread_id, str) else None
            await builder.record(table, record, owner)
    for did, last in sorted(known.items()):
        if did in present or last.get("deleted"):
            continue
        table, _ = split_doc_id(did)
        if table == "threads" or table in LIBRARY_TABLES:
            builder.deletion(last)
        elif last.get("threadId") not in threads:  # the thread is gone: deleted here
            builder.deletion(last)
        # else: an evicted attachment (local), kept on the server
    for did, entry in sorted(builder.sent.items()):
        # sent without an answer, never recorded, gone here since: the server may have it
        if did in present or did in known or (scope is not None and did not in scope):
            continue
        if not isinstance(entry, dict) or builder.follows(did, None) is None:
            continue
        table, _ = split_doc_id(did)
        owner = entry.get("threadId")
        if table in _THREADED and (owner in threads or not isinstance(owner, str)):
            continue  # its thread is here: evicted (local), or its cascade decides
        gone: dict[str, Any] = {"id": did, "table": table, "rev": None}
        if isinstance(owner, str):
            gone["threadId"] = owner
        builder.deletion(gone)
    return builder


async def _early_leaves(
    db: Database, threads: list[dict[str, Any]], known: dict[str, dict[str, Any]]
) -> dict[str, str]:
    """The threads whose leaf on the server names a node not here yet: ``{id: that leaf}``.

    A thread's document can arrive before its nodes; the leaf the device keeps meanwhile
    is not a change made here, so the push sends the server's leaf (docs/sync.md
    "Merges", the leaf).
    """
    wanted: dict[str, str] = {}
    for thread in threads:
        tid = thread.get("id")
        row = known.get(doc_id("threads", tid)) if isinstance(tid, str) else None
        mine = thread.get("leafId")
        leaf = early_leaf(row, (mine,) if isinstance(mine, str) else (), mine)
        if isinstance(tid, str) and leaf is not None:
            wanted[tid] = leaf
    if not wanted:
        return {}

    async def read(tx: Transaction) -> list[Any]:
        return await tx.table("nodes").bulk_get(list(wanted.values()))

    found = await db.transaction("r", ["nodes"], read)
    here = {n["id"] for n in found if isinstance(n, dict)}  # node ids are unique
    return {tid: leaf for tid, leaf in wanted.items() if leaf not in here}


def _batches(out: list[Outgoing], most: int = BATCH_DOCS) -> list[list[Outgoing]]:
    batches: list[list[Outgoing]] = []
    current: list[Outgoing] = []
    size = 0
    for item in out:
        item.size = len(json.dumps(item.doc, ensure_ascii=False, separators=(",", ":")))
        if current and (len(current) >= most or size + item.size > BATCH_BYTES):
            batches.append(current)
            current, size = [], 0
        current.append(item)
        size += item.size
    if current:
        batches.append(current)
    return batches


async def push(
    db: Database,
    state: Database,
    couch: Couch,
    hlc: Hlc,
    now: int,
    outbox: dict[str, str] | None = None,
    *,
    batch_docs: int = BATCH_DOCS,
    progress: Progress | None = None,
) -> PushReport:
    """Push what the server lacks of ``db``; ``state`` records what it then has.

    ``outbox``: the outbox's rows (``{id: mark}``) this push answers: only their
    records are compared (all, when it holds :data:`~panelot.sync.outbox.WIDE`), and
    they are cleared once the server has what was sent. ``batch_docs``: at most this
    many documents per ``_bulk_docs``. ``progress``: where the push reports its
    phases (``comparing``, then ``sending``; :mod:`panelot.sync.progress`).
    """
    report = PushReport()
    await couch.info()  # the database is there and the credentials are accepted
    if progress is not None:
        await progress.step("comparing", 0, None)
    sent = await _read_sent(state)
    if outbox is None or WIDE in outbox:
        local = await _read_local(db)
        known = await _read_known(state)
        early = await _early_leaves(db, local["threads"], known)
        builder = await _build(local, known, hlc, now, None, sent, early)
    else:
        ids = sorted(outbox)
        known = await _read_known_of(state, ids)
        owners = {did: e for did, e in sent.items() if did in outbox and isinstance(e, dict)}
        local, threads = await _read_some(db, ids, {**owners, **known})
        early = await _early_leaves(db, local["threads"], known)
        builder = await _build(local, known, hlc, now, threads, sent, early, set(ids))
    report.unchanged = builder.unchanged
    wanted: list[Outgoing] = []
    on_server: list[dict[str, Any]] = []
    for start in range(0, len(builder.out), _DIFF_CHUNK):
        if progress is not None:
            await progress.step("comparing", start, len(builder.out))
        chunk = builder.out[start : start + _DIFF_CHUNK]
        missing = await couch.revs_diff({o.doc["_id"]: [o.doc["_rev"]] for o in chunk})
        for item in chunk:
            if item.doc["_rev"] in missing.get(item.doc["_id"], set()):
                wanted.append(item)
            else:
                on_server.append(item.row)  # the server has this revision already
    report.unchanged += len(on_server)
    if on_server:
        for row in on_server:
            sent.pop(row["id"], None)
        await record_docs(state, on_server, str(hlc), sent)
    done = 0
    for batch in _batches(wanted, batch_docs):
        if progress is not None:
            await progress.step("sending", done, len(wanted))
        done += len(batch)
        clocked = {o.doc["_id"]: _sent_entry(o) for o in batch if not o.doc.get("_deleted")}
        if clocked:  # kept until the server answers: a retry sends the same revisions
            sent.update(clocked)
            await _write_sent(state, sent)
        await couch.bulk_docs([item.doc for item in batch])
        for did in clocked:
            sent.pop(did, None)
        await record_docs(state, [item.row for item in batch], str(hlc), sent)
        report.batches += 1
        for item in batch:
            if item.doc.get("_deleted"):
                report.deleted += 1
            else:
                report.pushed += 1
    report.checkpoint = await _checkpoint(state, couch, hlc, now, report)
    if outbox is not None:
        await clear(state, {k: v for k, v in outbox.items() if k not in builder.waiting})
    return report


def _sent_entry(item: Outgoing) -> dict[str, Any]:
    """What makes a sent revision again, or its child.

    Its parent (the state's revision), content digest, clocks and clocked fields, the
    revision and its history's hashes, its thread.
    """
    entry = {
        "parent": item.parent,
        "digest": item.row.get("digest"),
        "clocks": item.doc.get("clocks"),
        "rev": item.doc["_rev"],
        "ids": item.doc["_revisions"]["ids"],
    }
    for name in ("fields", "threadId"):
        if name in item.row:
            entry[name] = item.row[name]
    return entry


async def _read_sent(state: Database) -> dict[str, Any]:
    async def read(tx: Transaction) -> Any:
        return await read_meta(tx, "sent")

    sent = await state.transaction("r", ["meta"], read)
    return dict(sent) if isinstance(sent, dict) else {}


async def _write_sent(state: Database, sent: dict[str, Any]) -> None:
    """Keep ``sent`` before the batch goes.

    Strict (reported committed once flushed): a power loss or an OS crash right after
    the server took the batch cannot lose it (docs/reliability.md "Durability").
    """

    async def write(tx: Transaction) -> None:
        await write_meta(tx, "sent", sent)

    await state.transaction("rw", ["meta"], write, durability="strict")


async def _checkpoint(
    state: Database, couch: Couch, hlc: Hlc, now: int, report: PushReport
) -> dict[str, Any]:
    """Step 4: ``_local/<replication id>`` on the server, then in the state."""

    async def previous(tx: Transaction) -> Any:
        return await read_meta(tx, "push")

    before = await state.transaction("r", ["meta"], previous)
    seq = (before.get("seq", 0) if isinstance(before, dict) else 0) + 1
    local_id = replication_id(hlc.device, couch.target.server, couch.target.database, "push")
    written = report.pushed + report.deleted
    await couch.put_local(local_id, {"last_seq": seq, "at": now, "written": written})
    checkpoint = {"id": f"_local/{local_id}", "seq": seq, "at": now, "written": written}

    async def save(tx: Transaction) -> None:
        await write_meta(tx, "push", checkpoint)

    await state.transaction("rw", ["meta"], save)
    return checkpoint
