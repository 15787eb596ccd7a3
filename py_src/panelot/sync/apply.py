"""Writing pulled records into ``panelot_v1`` (docs/sync.md "The protocol", pull step 4).

Every pulled record first goes through the reader a restore uses
(:data:`panelot.backup.checks.READERS`) and a thread's tree through the tree's
integrity rules (parents inside the thread, no cycle, a leaf that reaches a root); a
record the domain would refuse is not written and comes back as a refusal naming its
document. A seq taken twice is kept (two devices appended offline): readers order by
seq, then id.

:func:`apply_thread` writes a thread's records (the thread, its nodes, its
attachments) in ONE transaction of ``panelot_v1``, so its nodes never land half and
the change feed announces them like any other commit. :func:`apply_library` writes one
library record (whole record, the newer clock).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from panelot.backup.checks import READERS
from panelot.codec import encode
from panelot.idb import Database, Transaction
from panelot.idb.errors import PanelotError
from panelot.sync.docid import doc_id
from panelot.sync.mapping import (
    ATTACHMENT,
    clocked_fields,
    content_digest,
    local_view,
)
from panelot.sync.merge import (
    early_leaf,
    known_with_leaf,
    library_wins,
    merge_node,
    merge_thread,
    settle_leaf,
)
from panelot.tree.integrity import index_nodes
from panelot.tree.reading import load_nodes
from panelot.tree.shown import count_in
from panelot.tree.transfer import stats_of, tree_problems

__all__ = ["Applied", "Incoming", "apply_library", "apply_thread", "check_record"]

_REASON = 300
_THREAD_TABLES = ["threads", "nodes", "attachments"]


@dataclass(slots=True)
class Incoming:
    """One pulled document: its winning revision and the merged body of its leaves."""

    id: str
    table: str
    key: str
    rev: str
    deleted: bool
    record: dict[str, Any] | None = None
    clocks: dict[str, str] | None = None
    attachment: dict[str, Any] | None = None
    """The CouchDB attachment's ``{content_type, digest, length, revpos}``."""
    data: Any = None
    """Its bytes as a Blob, when they were fetched."""
    losers: list[str] = field(default_factory=list)
    """The other live leaf revisions (a conflict), deleted when it is resolved."""

    def row(self, thread_id: str | None = None) -> dict[str, Any]:
        """The state's row: what the server has of this document now."""
        row: dict[str, Any] = {"id": self.id, "table": self.table, "rev": self.rev}
        if thread_id is not None:
            row["threadId"] = thread_id
        if self.deleted or self.record is None:
            row["deleted"] = True
            return row
        digest = None if self.attachment is None else self.attachment.get("digest")
        row["digest"] = content_digest(local_view(self.table, self.record), digest)
        if self.attachment is not None:
            row["attachment"] = dict(self.attachment)
        if self.table == "threads":
            row["fields"] = clocked_fields(self.record)
        if self.clocks is not None:
            row["clocks"] = dict(self.clocks)
        return row


@dataclass(slots=True)
class Applied:
    """What applying pulled documents did."""

    written: int = 0
    rows: list[dict[str, Any]] = field(default_factory=list)
    refused: list[dict[str, str]] = field(default_factory=list)
    on_server: list[str] = field(default_factory=list)

    def refuse(self, item: Incoming, reason: str) -> None:
        """Report ``item`` as refused (it is not written)."""
        self.refused.append({"id": item.id, "reason": reason[:_REASON]})


def check_record(table: str, record: Any, where: str) -> str | None:
    """Why the domain would refuse ``record`` of ``table`` (``None``: it would not)."""
    try:
        READERS[table](record, where)
    except PanelotError as exc:
        return exc.message
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        return f"{where}: {exc}"
    return None


def _with_bytes(item: Incoming) -> dict[str, Any] | None:
    """The record to store: the server's, with its fetched bytes (``None``: none yet)."""
    if item.record is None:
        return None
    record = dict(item.record)
    if item.attachment is not None:
        if item.data is None:
            return None
        record[ATTACHMENT] = item.data
    return record


async def apply_thread(
    db: Database,
    thread_id: str,
    thread: Incoming | None,
    nodes: list[Incoming],
    attachments: list[Incoming],
    known: dict[str, dict[str, Any]],
) -> Applied:
    """Merge and write one thread's pulled records in one transaction of ``db``."""
    out = Applied()

    async def body(tx: Transaction) -> None:
        local = await tx.table("threads").get(thread_id)
        if isinstance(local, dict) and local.get("deleting"):
            return  # its cascade runs here: it decides
        remote = _checked_thread(thread, thread_id, out)
        if not isinstance(local, dict) and remote is None:
            for item in nodes + attachments:
                out.refuse(item, f"its thread {thread_id!r} is not here")
            return
        local_nodes = {n["id"]: n for n in await load_nodes(tx, thread_id) if isinstance(n, dict)}
        merged_nodes = dict(local_nodes)
        writes, fresh = await _merge_nodes(tx, thread_id, nodes, merged_nodes, out)
        base = local if isinstance(local, dict) else None
        local_leaf = None if base is None else base.get("leafId")
        row = known_row = known.get(doc_id("threads", thread_id))
        early = early_leaf(row, local_nodes, local_leaf)
        if early is not None:  # the leaf kept meanwhile is not a change made here
            row = known_with_leaf(row, local_leaf)
        merged = (
            merge_thread(base, row, remote, thread.clocks or {})
            if remote is not None and thread is not None
            else dict(base or {})
        )
        target = merged.get("leafId")
        if thread is None and early is not None:
            target = early  # its node may have come now: the server's leaf is taken
        index = index_nodes(thread_id, list(merged_nodes.values()))
        leaf = settle_leaf(index, target, local_leaf, fresh)
        merged["leafId"] = leaf
        all_nodes = list(merged_nodes.values())
        merged["stats"] = stats_of(all_nodes)
        merged["shown"] = encode(count_in(merged_nodes, leaf))
        problems = tree_problems(thread_id, leaf, all_nodes)
        reason = "; ".join(problems) or check_record("threads", merged, f"threads:{thread_id}")
        if reason:
            out.rows.clear()  # nothing of this thread is written
            for item in ([thread] if thread is not None else []) + nodes:
                out.refuse(item, reason)
            return
        files = await _attachments(tx, thread_id, attachments, out)
        if thread is None and not writes and not files:
            return  # nothing new for this thread
        await tx.table("threads").put(merged)
        if writes:
            await tx.table("nodes").bulk_put(writes)
        if files:
            await tx.table("attachments").bulk_put(files)
        out.written += 1 + len(writes) + len(files)
        # The state's row; while the server's leaf has no node here, with the leaf kept.
        if thread is not None and remote is not None:
            pulled = thread.row()
            server_leaf = remote.get("leafId")
            if isinstance(server_leaf, str) and server_leaf not in merged_nodes:
                # The merge chose the server's leaf: it waits, this one is kept. Else a
                # leaf changed here won (None: no leaf kept, the push sends this one).
                pulled["keptLeaf"] = leaf if target == server_leaf else None
            out.rows.append(pulled)
        elif known_row is not None and early is not None and early not in merged_nodes:
            out.rows.append({**known_row, "keptLeaf": leaf})

    await db.transaction("rw", _THREAD_TABLES, body)
    return out


def _checked_thread(item: Incoming | None, thread_id: str, out: Applied) -> dict[str, Any] | None:
    if item is None or item.record is None:
        return None
    reason = check_record("threads", item.record, item.id)
    if reason is not None:
        out.refuse(item, reason)
        return None
    return item.record


async def _merge_nodes(
    tx: Transaction,
    thread_id: str,
    nodes: list[Incoming],
    merged: dict[str, dict[str, Any]],
    out: Applied,
) -> tuple[list[dict[str, Any]], list[str]]:
    """The node records to write and the ids of the new ones (parents first)."""
    writes: list[dict[str, Any]] = []
    waiting: dict[str, Incoming] = {}
    others = [i.key for i in nodes if i.key not in merged]
    elsewhere = dict(zip(others, await tx.table("nodes").bulk_get(others), strict=True))
    for item in nodes:
        record = item.record
        if record is None:
            continue
        reason = check_record("nodes", record, item.id)
        if reason is None and record.get("threadId") != thread_id:
            reason = f"{item.id}.threadId: not the thread {thread_id!r}"
        if reason is None and isinstance(elsewhere.get(item.key), dict):
            reason = f"{item.id}: a node of another thread has this id"
        if reason is not None:
            out.refuse(item, reason)
            continue
        if item.key in merged:
            chosen = merge_node(merged[item.key], record)
            if chosen is not None:
                merged[item.key] = chosen
                writes.append(chosen)
            out.rows.append(item.row(thread_id))
        else:
            waiting[item.key] = item
    fresh: list[str] = []
    progress = True
    while waiting and progress:  # a node comes in once its parent is in the thread
        progress = False
        for key, item in list(waiting.items()):
            assert item.record is not None
            parent = item.record.get("parentId")
            if parent is None or parent in merged:
                merged[key] = dict(item.record)
                writes.append(merged[key])
                fresh.append(key)
                out.rows.append(item.row(thread_id))
                del waiting[key]
                progress = True
    for item in waiting.values():
        assert item.record is not None
        parent = item.record.get("parentId")
        out.refuse(item, f"{item.id}.parentId: {parent!r} is not a node of the thread")
    return writes, fresh


async def _attachments(
    tx: Transaction, thread_id: str, items: list[Incoming], out: Applied
) -> list[dict[str, Any]]:
    """The attachment records to write: new ones whose bytes came, checked."""
    files: list[dict[str, Any]] = []
    keys = [i.key for i in items if i.record is not None]
    present = dict(zip(keys, await tx.table("attachments").bulk_get(keys), strict=True))
    for item in items:
        if item.record is None:
            continue
        if item.record.get("threadId") != thread_id:
            out.refuse(item, f"{item.id}.threadId: not the thread {thread_id!r}")
            continue
        if isinstance(present.get(item.key), dict):
            out.rows.append(item.row(thread_id))  # its bytes never change: ours stay
            continue
        record = _with_bytes(item)
        if record is None:  # kept in the state as on the server, reported
            out.on_server.append(item.id)
            out.rows.append({**item.row(thread_id), "onServer": True})
            continue
        reason = check_record("attachments", record, item.id)
        if reason is not None:
            out.refuse(item, reason)
            continue
        files.append(record)
        out.rows.append(item.row(thread_id))
    return files


async def apply_library(db: Database, item: Incoming, known: dict[str, Any] | None) -> Applied:
    """Merge and write one library record (whole record, the newer clock)."""
    out = Applied()
    record = _with_bytes(item)
    if not item.deleted and record is None:  # kept in the state as on the server
        out.on_server.append(item.id)
        out.rows.append({**item.row(), "onServer": True})
        return out
    if record is not None:
        reason = check_record(item.table, record, item.id)
        if reason is not None:
            out.refuse(item, reason)
            return out

    async def body(tx: Transaction) -> None:
        table = tx.table(item.table)
        local = await table.get(item.key)
        local = local if isinstance(local, dict) else None
        changed = local is not None and _changed_here(item.table, local, known)
        if item.deleted:
            if local is not None and not changed:
                await table.delete(item.key)
                out.written += 1
            out.rows.append(item.row())
            return
        if library_wins(local, changed, known, item.clocks):
            await table.put(record)
            out.written += 1
        out.rows.append(item.row())

    await db.transaction("rw", [item.table], body)
    return out


def _changed_here(table: str, local: dict[str, Any], known: dict[str, Any] | None) -> bool:
    """Whether ``local`` differs from what the server last had of it (or nothing is known)."""
    if known is None or known.get("deleted"):
        return True
    attachment = known.get("attachment")
    digest = attachment.get("digest") if isinstance(attachment, dict) else None
    return bool(content_digest(local_view(table, local), digest) != known.get("digest"))
