"""Commands and queries of threads: create, update, import, delete; list, read, export.

Commands (payload → response)::

    thread.create  {title?, folderId?, tags?, preset?, reuseEmpty?} → {threadId, reused?}
    thread.update  {threadId, patch, expect?} → {thread}
    thread.import  {data} → {threadId, nodes} | {threadIds, threads, nodes}
    thread.delete  {threadId} → {threadId, deleted: {nodes, attachments, runs, ...}}
    thread.count_shown {limit?} → {counted, remaining}

Queries (args → result)::

    thread.list {archived?, folderId?, tag?, limit?} · thread.get {threadId}
    thread.context {threadId, leafId?} · thread.snapshot {threadId, limit?, before?}
    thread.siblings {nodeId} · thread.export {threadId, format?} · thread.check {threadId}
    thread.summary {threadId} → {attachmentId, markdown, createdAt, notice} | null
    db.describe {} · receipts.list {clientId?, limit?}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, NotRequired, TypedDict

from panelot.bus import Call, Env, Handler, Query, Staged
from panelot.bus.receipts import list_receipts
from panelot.codec import Raw
from panelot.errors import ConflictError
from panelot.idb import Transaction
from panelot.idb.errors import PanelotError, ValidationError
from panelot.lifecycle.summaries import (
    removal_notice,
    retention_summary,
    summary_json,
    with_summary,
)
from panelot.lifecycle.thread_delete import CASCADE_TABLES, cascade_delete, stop_thread, unmark
from panelot.runs.executions import executions_of
from panelot.tree.admission import read_thread
from panelot.tree.backfill import Counted, check_limit, count_unheld, write_counted
from panelot.tree.listing import list_threads
from panelot.tree.loading import check_thread
from panelot.tree.nodes import (
    PATCHABLE,
    TREE_TABLES,
    create_thread,
    get_thread,
    siblings,
    updated_thread,
)
from panelot.tree.records import thread_to_wire
from panelot.tree.shown import counts_held
from panelot.tree.transfer import export_thread, import_thread
from panelot.tree.views import context_of, markdown_of, snapshot_of, window_of

__all__ = ["COMMANDS", "QUERIES"]


# -- commands -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ThreadCreate:
    """``thread.create``: ``reuseEmpty`` takes the newest plain, empty thread of that title."""

    title: str | None = None
    folder_id: str | None = None
    tags: list[Raw] | None = None
    preset: str | None = None
    reuse_empty: bool | None = None


class Created(TypedDict):
    """The new (or reused) thread."""

    threadId: str
    reused: NotRequired[bool]


async def _empty_thread(tx: Transaction, title: str) -> str | None:
    """The newest thread with no message yet, titled ``title`` and otherwise plain."""
    plain = [
        t
        for t in await tx.table("threads").to_list()
        if t.get("leafId") is None
        and t.get("title") == title
        and not (t.get("archived") or t.get("pinned") or t.get("deleting"))
        and not (t.get("folderId") or t.get("tags") or t.get("preset"))
    ]
    if not plain:
        return None
    return str(max(plain, key=lambda t: (t.get("createdAt") or 0, str(t["id"])))["id"])


async def _create(tx: Transaction, call: Call[ThreadCreate]) -> Created:
    p = call.payload
    title = p.title or ""
    plain = p.folder_id is None and p.tags is None and p.preset is None
    if p.reuse_empty and plain:
        reused = await _empty_thread(tx, title)
        if reused is not None:
            return {"threadId": reused, "reused": True}
    thread = await create_thread(
        tx, title=title, folder_id=p.folder_id, tags=p.tags, preset=p.preset, clock=call.clock
    )
    return {"threadId": thread.id}


@dataclass(frozen=True, slots=True)
class ThreadUpdate:
    """``thread.update``: ``expect`` holds the values the caller saw."""

    thread_id: str
    patch: dict[str, Raw]
    expect: dict[str, Raw] | None = None


class Updated(TypedDict):
    """The thread as stored after the update."""

    thread: dict[str, Any]


def _check_expected(raw_thread: Any, expect: dict[str, Any] | None) -> None:
    """Refuse an update made on a view that is out of date (``payload.expect``).

    When the stored thread no longer has one of the values the caller saw, the update
    is refused with a ConflictError naming that field, and nothing is written.
    """
    if not expect or not isinstance(raw_thread, dict):
        return
    for name, seen in expect.items():
        where = f"payload.expect.{name}"
        if name not in PATCHABLE:
            raise ValidationError(f"{where}: cannot be expected", field=where)
        current = raw_thread.get(name)
        if current != seen or type(current) is not type(seen):
            raise ConflictError(
                f"{where}: the thread's {name} changed since it was read", field=where
            )


async def _update(tx: Transaction, call: Call[ThreadUpdate]) -> Staged:
    p = call.payload
    raw = await read_thread(tx, call, p.thread_id)
    _check_expected(raw, p.expect)
    wire = thread_to_wire(updated_thread(raw, p.thread_id, p.patch, call.clock))
    response: Updated = {"thread": wire}
    return Staged(response, (tx.table("threads").put(wire),))


@dataclass(frozen=True, slots=True)
class ThreadImport:
    """``thread.import``: a ``thread.export`` JSON, or a ``panelot.all`` bundle of them."""

    data: Raw


async def _import(tx: Transaction, call: Call[ThreadImport]) -> dict[str, Any]:
    if not isinstance(call.payload.data, dict):
        raise ValidationError("payload.data: must be an object", field="payload.data")
    try:
        return await import_thread(tx, call.payload.data)
    except PanelotError as exc:  # the pre-check names fields inside the file
        if exc.field and not exc.field.startswith("payload"):
            exc.field = f"payload.data.{exc.field}"
        raise


@dataclass(frozen=True, slots=True)
class ThreadDelete:
    """``thread.delete``."""

    thread_id: str


async def _stop(env: Env, p: ThreadDelete) -> None:
    await stop_thread(env.db, executions_of(env), p.thread_id, env.clock())


async def _unmark(env: Env, p: ThreadDelete) -> None:
    await unmark(env.db, p.thread_id, env.clock())


async def _delete(tx: Transaction, call: Call[ThreadDelete]) -> dict[str, Any]:
    return await cascade_delete(tx, call.payload.thread_id)


@dataclass(frozen=True, slots=True)
class CountShown:
    """``thread.count_shown``: count ``shown`` for up to ``limit`` threads lacking it."""

    limit: int | None = None


class CountedShown(TypedDict):
    """Threads whose ``shown`` was written, and those still without counts that hold."""

    counted: int
    remaining: int


async def _count_unheld(env: Env, p: CountShown) -> Counted:
    """Count outside the command's read-write transaction (read-only, bounded)."""
    return await count_unheld(env.db, check_limit(p.limit))


async def _count_shown(tx: Transaction, call: Call[CountShown]) -> Staged:
    counted: Counted = call.prepared
    writes = await write_counted(tx, counted)
    response: CountedShown = {
        "counted": len(writes),
        "remaining": counted.unheld - len(writes),
    }
    return Staged(response, tuple(writes))


COMMANDS: dict[str, Handler[Any]] = {
    "thread.create": Handler(payload=ThreadCreate, tables=("threads",), run=_create),
    "thread.update": Handler(payload=ThreadUpdate, tables=("threads",), run=_update),
    "thread.import": Handler(payload=ThreadImport, tables=TREE_TABLES, run=_import),
    "thread.delete": Handler(
        payload=ThreadDelete,
        tables=CASCADE_TABLES,
        run=_delete,
        prepare=_stop,
        undo=_unmark,
        status="acknowledged",
        skips=frozenset({"admission"}),
        durability="strict",
    ),
    "thread.count_shown": Handler(
        payload=CountShown, tables=("threads",), run=_count_shown, prepare=_count_unheld
    ),
}
"""The thread commands."""


# -- queries --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ListArgs:
    """``thread.list``: ``archived`` null lists archived and active threads alike."""

    archived: bool | None = False
    folder_id: str | None = None
    tag: str | None = None
    limit: int | None = None


@dataclass(frozen=True, slots=True)
class ThreadArgs:
    """A query about one thread."""

    thread_id: str


@dataclass(frozen=True, slots=True)
class SnapshotArgs:
    """``thread.snapshot``: the whole visible path, or a window of it.

    ``limit``: the last ``limit`` shown nodes (leaf upward); ``before``: only those above
    that node of the path. Either gives ``hasMore``: whether shown nodes remain above.
    """

    thread_id: str
    limit: int | None = None
    before: str | None = None


@dataclass(frozen=True, slots=True)
class ContextArgs:
    """``thread.context``: of the current leaf, or of ``leafId``."""

    thread_id: str
    leaf_id: str | None = None


@dataclass(frozen=True, slots=True)
class NodeArgs:
    """A query about one node."""

    node_id: str


@dataclass(frozen=True, slots=True)
class ExportArgs:
    """``thread.export``."""

    thread_id: str
    format: Literal["json", "markdown"] = "json"


@dataclass(frozen=True, slots=True)
class NoArgs:
    """A query without arguments."""


@dataclass(frozen=True, slots=True)
class ReceiptArgs:
    """``receipts.list``: the newest receipts, of one client or all."""

    client_id: str | None = None
    limit: int | None = None


async def _list(env: Env, a: ListArgs) -> list[dict[str, Any]]:
    return await list_threads(
        env.db, archived=a.archived, folder_id=a.folder_id, tag=a.tag, limit=a.limit
    )


async def _get(env: Env, a: ThreadArgs) -> dict[str, Any]:
    thread = await env.db.transaction("r", TREE_TABLES, lambda tx: get_thread(tx, a.thread_id))
    return counts_held(thread_to_wire(thread))


async def _context(env: Env, a: ContextArgs) -> dict[str, Any]:
    return await context_of(env.db, a.thread_id, a.leaf_id, env.clock)


async def _snapshot(env: Env, a: SnapshotArgs) -> dict[str, Any]:
    if a.limit is None and a.before is None:
        return await snapshot_of(env.db, a.thread_id, env.clock)
    return await window_of(env.db, a.thread_id, a.limit, a.before, env.clock)


async def _siblings(env: Env, a: NodeArgs) -> list[dict[str, Any]]:
    return await env.db.transaction("r", TREE_TABLES, lambda tx: siblings(tx, a.node_id))


async def _export(env: Env, a: ExportArgs) -> dict[str, Any]:
    """The thread, with the summary retention kept of its removed messages, if any."""
    if a.format == "json":
        data = await export_thread(env.db, a.thread_id, env.clock)
        return {"data": {**data, **summary_json(await retention_summary(env.db, a.thread_id))}}
    markdown = await markdown_of(env.db, a.thread_id, env.clock)
    summary = await retention_summary(env.db, a.thread_id)
    return {"markdown": markdown if summary is None else with_summary(summary, markdown)}


async def _summary(env: Env, a: ThreadArgs) -> dict[str, Any] | None:
    """The retention summary of a thread and the sentence saying what happened, or None."""
    summary = await retention_summary(env.db, a.thread_id)
    return None if summary is None else {**summary, "notice": removal_notice(summary)}


async def _check(env: Env, a: ThreadArgs) -> dict[str, Any]:
    return await check_thread(env.db, a.thread_id)


async def _describe(env: Env, a: NoArgs) -> dict[str, Any]:
    await env.db.ready()  # after another context's upgrade: the database as it is now
    return env.db.describe()


async def _counts(env: Env, a: NoArgs) -> dict[str, int]:
    """Records per table, in one readonly transaction (what a restore would replace)."""
    core = await env.db.ready()
    names = list(core.tables)

    async def body(tx: Transaction) -> list[int]:
        return list(await tx.gather(*(tx.table(n).count() for n in names)))

    return dict(zip(names, await env.db.transaction("r", names, body), strict=True))


async def _receipts(env: Env, a: ReceiptArgs) -> list[dict[str, Any]]:
    limit = 50 if a.limit is None else a.limit
    if limit < 0:
        raise ValidationError("limit: must be a non-negative integer", field="limit")
    return await list_receipts(env.db, a.client_id, limit)


QUERIES: dict[str, Query[Any]] = {
    "thread.list": Query(args=ListArgs, run=_list),
    "thread.get": Query(args=ThreadArgs, run=_get),
    "thread.context": Query(args=ContextArgs, run=_context),
    "thread.snapshot": Query(args=SnapshotArgs, run=_snapshot),
    "thread.siblings": Query(args=NodeArgs, run=_siblings),
    "thread.export": Query(args=ExportArgs, run=_export),
    "thread.check": Query(args=ThreadArgs, run=_check),
    "thread.summary": Query(args=ThreadArgs, run=_summary),
    "db.describe": Query(args=NoArgs, run=_describe),
    "db.counts": Query(args=NoArgs, run=_counts),
    "receipts.list": Query(args=ReceiptArgs, run=_receipts),
}
"""The thread queries."""
