"""One pull, server to local (docs/sync.md "The protocol", pull steps 1-5).

1. The pull checkpoint: ``_local/<replication id>`` on the server and in the state;
   start from the smaller ``since`` when they disagree (from 0 when either is missing).
2. ``GET /db/_changes?since=…&style=all_docs`` (:func:`~panelot.sync.fetch.read_changes`).
3. Against the state (what the server last had of each document): the leaf revisions
   it does not know are read with ``_bulk_get`` (:func:`~panelot.sync.fetch.read_leaves`).
   A document's leaves (a conflict) merge into one body by the rules
   (:func:`~panelot.sync.merge.merge_leaves`); a thread with a deleted leaf is deleted
   (deleting a thread wins), and the merge goes back to the server as a child of the
   winning revision with the other leaves deleted (:mod:`~panelot.sync.resolve`). An
   attachment's bytes are fetched (size-limited, checked against their digest) while
   the attachment budget has room for them; otherwise it stays *on the server*,
   reported (``onServer``).
4. Each thread's records are checked, merged and written in one transaction
   (:func:`~panelot.sync.apply.apply_thread`); a thread deleted on the server runs the
   store's own ``thread.delete`` through the bus (``send``), never record by record,
   and a node or attachment of a thread deleted (here or there) is not written: its
   document is deleted on the server (deleting a thread wins over an append).
   Library records merge by whole record (:func:`~panelot.sync.apply.apply_library`).
   What the server has of each document is recorded in the state, so the next push
   does not send back what was just pulled.
5. The pull checkpoint on both sides.
"""

from __future__ import annotations

import urllib.parse
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from panelot.attachments.records import record_size, sized_rows
from panelot.idb import Database, Transaction
from panelot.idb.blobs import make_blob
from panelot.sync.apply import Applied, Incoming, apply_library, apply_thread
from panelot.sync.clock import Hlc, parse_hlc
from panelot.sync.couch import Couch
from panelot.sync.docid import doc_id, split_doc_id
from panelot.sync.fetch import GET_CHUNK, NOT_ANSWERED, check_leaf, read_changes, read_leaves
from panelot.sync.mapping import ATTACHMENT, LIBRARY_TABLES, attachment_digest, local_view
from panelot.sync.merge import merge_leaves, winner
from panelot.sync.progress import Progress
from panelot.sync.push import replication_id
from panelot.sync.resolve import MERGED, resolve
from panelot.sync.revs import next_rev, revisions
from panelot.sync.state import read_meta, record_docs, write_meta

__all__ = ["FUTURE_MS", "MAX_PULLED_BYTES", "PullReport", "Send", "pull"]

MAX_PULLED_BYTES = 16 * 1024 * 1024
"""The largest attachment whose bytes a pull fetches (a larger one stays on the server)."""

Send = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
"""The store's bus, as a client of its own: a command envelope in, ``{status, ...}`` out."""

_MAX_REFUSED = 100


@dataclass(slots=True)
class PullReport:
    """What a pull did."""

    pulled: int = 0
    written: int = 0
    refused: list[dict[str, str]] = field(default_factory=list)
    deleted: int = 0
    resolved: int = 0
    on_server: list[str] = field(default_factory=list)
    checkpoint: dict[str, Any] = field(default_factory=dict)

    def add(self, applied: Applied) -> None:
        """Count what one apply did."""
        self.written += applied.written
        self.refused += applied.refused
        self.on_server += applied.on_server

    def to_json(self) -> dict[str, Any]:
        """``{pulled, written, refused, deleted, resolved, onServer, checkpoint}``."""
        return {
            "pulled": self.pulled,
            "written": self.written,
            "refused": self.refused[:_MAX_REFUSED],
            "deleted": self.deleted,
            "resolved": self.resolved,
            "onServer": self.on_server[:_MAX_REFUSED],
            "checkpoint": self.checkpoint,
        }


async def _known(state: Database) -> dict[str, dict[str, Any]]:
    async def read(tx: Transaction) -> list[dict[str, Any]]:
        return await tx.table("docs").to_collection().to_list()

    return {row["id"]: row for row in await state.transaction("r", ["docs"], read)}


def _since(server: Any, local: Any) -> Any:
    """Where to start: the one ``since`` both sides hold, else the smaller, else 0."""
    theirs = server.get("last_seq") if isinstance(server, dict) else None
    mine = local.get("since") if isinstance(local, dict) else None
    if theirs is None or mine is None:
        return 0
    if theirs == mine:
        return mine
    if isinstance(theirs, int) and isinstance(mine, int):
        return min(theirs, mine)
    return 0


def _incoming(
    doc_id_: str, leaves: list[dict[str, Any]], asked: list[str], report: PullReport
) -> Incoming | None:
    """One document's leaves, checked and merged (``None``: nothing usable)."""
    table, key = split_doc_id(doc_id_)
    good = []
    if not leaves:
        report.refused.append({"id": doc_id_, "reason": NOT_ANSWERED})
    for leaf in leaves:
        reason = check_leaf(doc_id_, leaf, asked)
        if reason is None:
            good.append(leaf)
        else:
            report.refused.append({"id": doc_id_, "reason": reason})
    if not good:
        return None
    best = winner(good)
    live = [leaf["_rev"] for leaf in good if not leaf.get("_deleted")]
    gone = [leaf for leaf in good if leaf.get("_deleted") and leaf.get(MERGED) is not True]
    if table == "threads" and gone and live:  # deleting a thread wins
        best = winner(gone)
    deleted = bool(best.get("_deleted"))
    item = Incoming(doc_id_, table, key, best["_rev"], deleted)
    item.losers = sorted(rev for rev in live if rev != best["_rev"])
    if deleted:
        return item
    body = merge_leaves(table, good)
    item.record = local_view(table, body["record"])  # what stays on a device never comes in
    clocks = body.get("clocks")
    item.clocks = dict(clocks) if isinstance(clocks, dict) else None
    stub = (body.get("_attachments") or {}).get(ATTACHMENT)
    if isinstance(stub, dict):
        meta = {k: stub.get(k) for k in ("content_type", "digest", "length", "revpos")}
        length = meta["length"]
        if isinstance(meta["digest"], str) and isinstance(length, int) and length >= 0:
            item.attachment = meta
    return item


async def _attachments_size(db: Database) -> int:
    """What the attachments here weigh, as the budget counts them."""

    async def read(tx: Transaction) -> int:
        return sum(record_size(r) for r in await sized_rows(tx) if not r.get("deleting"))

    return await db.transaction("r", ["attachments"], read)


async def _fetch_bytes(db: Database, couch: Couch, item: Incoming, report: PullReport) -> None:
    """The attachment's bytes as a Blob, when they fit and match their digest.

    An attachment's bytes are streamed into a Blob (``Couch.get_blob``: never whole in
    Python's heap in a page); a plugin asset's come as bytes, which its record keeps.
    """
    meta = item.attachment
    if meta is None or meta["length"] > MAX_PULLED_BYTES:
        return
    path = "/" + urllib.parse.quote(item.id, safe="") + "/" + ATTACHMENT  # ids may hold '/'
    mime = meta.get("content_type")
    mime = mime if isinstance(mime, str) else "application/octet-stream"
    if item.table == "pluginAssets":  # an asset keeps its bytes as bytes, not a Blob
        data = await couch.get_bytes(path, MAX_PULLED_BYTES)
        got = None if data is None else (data, len(data), attachment_digest(data))
    else:
        got = await couch.get_blob(
            path, MAX_PULLED_BYTES, mime, lambda data, kind: make_blob(db, data, kind)
        )
    if got is None:
        return
    value, size, digest = got
    if digest != meta["digest"] or size != meta["length"]:
        report.refused.append({"id": item.id, "reason": "bytes: not the digest the server gave"})
        item.record = None
        return
    item.data = value


async def pull(
    db: Database,
    state: Database,
    couch: Couch,
    hlc: Hlc,
    now: int,
    send: Send,
    client: str,
    budget: int = MAX_PULLED_BYTES,
    progress: Progress | None = None,
) -> PullReport:
    """Pull what the server has that ``db`` lacks; ``state`` records what it then has.

    ``budget`` is the attachment budget: an attachment's bytes are fetched while the
    attachments here and those fetched stay within it. ``progress``: where the pull
    reports its phases (``comparing``, ``receiving``, ``writing``;
    :mod:`panelot.sync.progress`).
    """
    report = PullReport()
    await couch.info()
    if progress is not None:
        await progress.step("comparing", 0, None)
    local_id = replication_id(hlc.device, couch.target.server, couch.target.database, "pull")

    async def previous(tx: Transaction) -> Any:
        return await read_meta(tx, "pull")

    mine = await state.transaction("r", ["meta"], previous)
    since = _since(await couch.get_local(local_id), mine)
    changed, last_seq = await read_changes(couch, since)
    known = await _known(state)
    wanted = {
        did: revs
        for did, revs in changed.items()
        if not (len(revs) == 1 and known.get(did, {}).get("rev") == revs[0])
    }
    leaves = await _read_leaves(couch, wanted, progress)
    items: list[Incoming] = []
    for did in sorted(wanted):
        item = _incoming(did, leaves.get(did, []), wanted[did], report)
        if item is not None:
            items.append(item)
            for clock in (item.clocks or {}).values():
                _see(hlc, clock, now)
    report.pulled = len(items)
    room = budget - await _attachments_size(db)
    for item in items:
        if item.record is None or item.attachment is None:
            continue
        if item.table == "attachments":
            length = item.attachment["length"]
            if length > room:
                continue  # kept on the server, reported (on-demand fetch: a later step)
            room -= length
        await _fetch_bytes(db, couch, item, report)
        if progress is not None:
            await progress.step("receiving", len(wanted), len(wanted))
    report.resolved = await resolve(couch, items)
    rows, orphans = await _apply(db, items, known, report, send, client, progress)
    rows += await _delete_orphans(couch, orphans)
    await record_docs(state, rows, str(hlc))
    report.checkpoint = await _checkpoint(state, couch, local_id, last_seq, now, report)
    return report


async def _read_leaves(
    couch: Couch, wanted: dict[str, list[str]], progress: Progress | None
) -> dict[str, list[dict[str, Any]]]:
    """:func:`~panelot.sync.fetch.read_leaves` a chunk at a time, reporting ``receiving``."""
    if progress is None:
        return await read_leaves(couch, wanted)
    ids = sorted(wanted)
    leaves: dict[str, list[dict[str, Any]]] = {}
    for start in range(0, max(len(ids), 1), GET_CHUNK):
        await progress.step("receiving", start, len(ids))
        part = ids[start : start + GET_CHUNK]
        leaves.update(await read_leaves(couch, {did: wanted[did] for did in part}))
    return leaves


FUTURE_MS = 24 * 60 * 60 * 1000
"""A pulled clock further ahead of the wall clock than this is not taken into the
device's clock (a server's far-future clock would otherwise hold every later local
clock hostage); it still merges as it is."""


def _see(hlc: Hlc, clock: str, now: int) -> None:
    try:
        ms, _, _ = parse_hlc(clock)
    except ValueError:
        return
    if ms <= now + FUTURE_MS:
        hlc.see(clock)


async def _apply(
    db: Database,
    items: list[Incoming],
    known: dict[str, dict[str, Any]],
    report: PullReport,
    send: Send,
    client: str,
    progress: Progress | None = None,
) -> tuple[list[dict[str, Any]], list[Incoming]]:
    rows: list[dict[str, Any]] = []
    done = 0

    async def step(count: int) -> None:
        nonlocal done
        done += count
        if progress is not None:
            await progress.step("writing", done, len(items))

    await step(0)
    threads: dict[str, Incoming] = {}
    owned: dict[str, tuple[list[Incoming], list[Incoming]]] = {}
    for item in items:
        if item.table in LIBRARY_TABLES:
            applied = await apply_library(db, item, known.get(item.id))
            report.add(applied)
            rows += applied.rows
            await step(1)
        elif item.table == "threads":
            threads[item.key] = item
        elif item.deleted or item.record is None:
            rows.append(item.row(known.get(item.id, {}).get("threadId")))
        else:
            owner = item.record.get("threadId")
            if not isinstance(owner, str):
                report.refused.append({"id": item.id, "reason": "record.threadId: not an id"})
                continue
            pair = owned.setdefault(owner, ([], []))
            pair[0 if item.table == "nodes" else 1].append(item)
    gone = {tid for tid, item in threads.items() if item.deleted}
    for tid in sorted(gone):
        report.deleted += await _delete_thread(db, tid, send, client, report)
        rows.append(threads[tid].row())
    for tid in sorted((set(threads) | set(owned)) - gone):
        known_thread = known.get(doc_id("threads", tid))
        if known_thread is not None and known_thread.get("deleted"):
            gone.add(tid)  # deleted here: its records are not written
            continue
        nodes, files = owned.get(tid, ([], []))
        applied = await apply_thread(db, tid, threads.get(tid), nodes, files, known)
        report.add(applied)
        rows += applied.rows
        await step(int(tid in threads) + len(nodes) + len(files))
    orphans = [item for tid in sorted(gone) for part in owned.get(tid, ([], [])) for item in part]
    return rows, orphans


async def _delete_orphans(couch: Couch, orphans: list[Incoming]) -> list[dict[str, Any]]:
    """Delete on the server the live nodes and attachments of deleted threads.

    Deleting a thread wins over a concurrent append: such a record is not written here,
    and its document gets a deleted child (the revision a push of the deletion makes).
    """
    docs, rows = [], []
    for item in orphans:
        rev = next_rev(item.rev, True, {})
        docs.append(
            {"_id": item.id, "_rev": rev, "_revisions": revisions(rev, item.rev), "_deleted": True}
        )
        item.rev, item.deleted = rev, True
        owner = item.record.get("threadId") if item.record is not None else None
        rows.append(item.row(owner if isinstance(owner, str) else None))
    if docs:
        await couch.bulk_docs(docs)
    return rows


async def _delete_thread(
    db: Database, tid: str, send: Send, client: str, report: PullReport
) -> int:
    """The store's own ``thread.delete`` for a thread deleted on the server (1 if it ran)."""
    local = await db.table("threads").get(tid)
    if not isinstance(local, dict):
        return 0
    envelope = await send(
        {
            "type": "thread.delete",
            "clientId": client,
            "submissionId": f"sync-{uuid.uuid4().hex}",
            "payload": {"threadId": tid},
        }
    )
    if envelope.get("status") != "completed":
        error = envelope.get("error")
        said = error.get("message") if isinstance(error, dict) else None
        report.refused.append({"id": doc_id("threads", tid), "reason": f"thread.delete: {said}"})
        return 0
    return 1


async def _checkpoint(
    state: Database, couch: Couch, local_id: str, last_seq: Any, now: int, report: PullReport
) -> dict[str, Any]:
    """Step 5: ``_local/<replication id>`` on the server, then in the state."""
    await couch.put_local(local_id, {"last_seq": last_seq, "at": now})
    checkpoint = {"id": f"_local/{local_id}", "since": last_seq, "at": now}
    refused = report.refused[:_MAX_REFUSED]

    async def save(tx: Transaction) -> None:
        await write_meta(tx, "pull", {**checkpoint, "refused": refused})

    await state.transaction("rw", ["meta"], save)
    return checkpoint
